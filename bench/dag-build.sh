#!/usr/bin/env bash
# Compile-time benchmark of the model level, the DAG builder and the
# strategy directives: for a MoE config and a list of meshes, times
# piper-gen -> autodiff -> optimizer -> build-dag -> directives (split into
# microbatches, place every pipeline stage, shard the experts over ep,
# replicate dense parameters over dp x ep and experts over dp with ZeRO-1,
# order by 1F1B) and prints the DAG's size. Symmetry means the DAG (and the time) must not
# grow with the data- or expert-parallel degree: only the pipeline degree
# and the microbatch count add nodes.
#
#   bench/dag-build.sh [CONFIG] [PP] [MICROBATCHES] [MESH...]
#   bench/dag-build.sh qwen3_9b 8 16 dp=1,pp=8,ep=1 dp=4,pp=8,ep=4
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${PIPER_BIN:-build/bin}
CONFIG=${1:-qwen3_9b}
PP=${2:-8}
MB=${3:-$((2 * PP))}
shift 3 2>/dev/null || true
MESHES=("$@")
[ ${#MESHES[@]} -gt 0 ] || MESHES=("dp=1,pp=$PP,ep=1" "dp=4,pp=$PP,ep=4" "dp=64,pp=$PP,ep=8")

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The strategy, the same for every mesh (only the axis sizes differ).
any='(!transform.any_op) -> !transform.any_op'
{
  echo 'module attributes {transform.with_named_sequence} {'
  echo '  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {'
  echo "    %all = transform.piper.match_nodes {} in %root : $any"
  echo "    %mb = transform.piper.split %all into $MB microbatches : $any"
  for ((s = 0; s < PP; s++)); do
    echo "    %s$s = transform.piper.match_nodes {PP = $s} in %root : $any"
    echo "    %x$s = transform.piper.place %s$s on @mesh {pp = $s} : $any"
  done
  echo "    %nodes = transform.piper.match_nodes {} in %root : $any"
  echo "    %ep = transform.piper.shard %nodes expert over @mesh [\"ep\"] : $any"
  echo "    %dense = transform.piper.replicate %nodes over @mesh [\"dp\", \"ep\"] zero = 1 where {EP = \"none\"} : $any"
  echo "    %experts = transform.piper.replicate %nodes over @mesh [\"dp\"] zero = 1 where {EP = \"*\"} : $any"
  echo "    transform.piper.schedule \"1f1b\" in %root : !transform.any_op"
  echo '    transform.yield'
  echo '  }'
  echo '}'
} > "$tmp/strategy.mlir"

first_dag=""
printf '%-24s %10s %10s  %s\n' "mesh" "devices" "seconds" "DAG"
for mesh in "${MESHES[@]}"; do
  devices=1
  for axis in ${mesh//,/ }; do devices=$((devices * ${axis#*=})); done
  start=$(date +%s.%N)
  "$BIN/piper-gen" --model=moe --config="$CONFIG" --pp="$PP" --mesh="$mesh" \
    -o "$tmp/model.mlir"
  "$BIN/piper-opt" "$tmp/model.mlir" --piper-autodiff \
    --piper-optimizer="optimizer=adamw lr=0.001" --piper-build-dag \
    --transform-preload-library="transform-library-paths=$tmp/strategy.mlir" \
    --transform-interpreter --piper-print-summary -o "$tmp/dag.mlir" \
    > "$tmp/summary.txt"
  end=$(date +%s.%N)
  dag=$(grep -m1 'dag:' "$tmp/summary.txt" | sed 's/^ *dag: //')
  printf '%-24s %10d %10.3f  %s\n' "$mesh" "$devices" \
    "$(awk "BEGIN { print $end - $start }")" "$dag"
  # Symmetry: the DAG is the same whatever the dp/ep degree.
  if [ -z "$first_dag" ]; then
    first_dag=$dag
  elif [ "$dag" != "$first_dag" ]; then
    echo "dag-build: the DAG changed with the mesh ($mesh): symmetry broken" >&2
    exit 1
  fi
done
