#!/usr/bin/env bash
# Compile-time benchmark of the model level and the DAG builder: for a model
# config and a list of meshes, times piper-gen -> autodiff -> optimizer ->
# build-dag and prints the DAG's size. Symmetry means the DAG (and the
# time) must not grow with the data- or expert-parallel degree: only the
# pipeline degree adds nodes.
#
#   bench/dag-build.sh [CONFIG] [PP] [MESH...]
#   bench/dag-build.sh qwen3_9b 8 dp=1,pp=8,ep=1 dp=4,pp=8,ep=4 dp=64,pp=8,ep=8
#
# Directives (replicate/shard) are not applied yet: today this measures the
# front half only, and the node count is the PP x pass count.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${PIPER_BIN:-build/bin}
CONFIG=${1:-qwen3_9b}
PP=${2:-8}
shift 2 2>/dev/null || true
MESHES=("$@")
[ ${#MESHES[@]} -gt 0 ] || MESHES=("dp=1,pp=$PP,ep=1" "dp=4,pp=$PP,ep=4" "dp=64,pp=$PP,ep=8")

first_dag=""
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf '%-24s %10s %10s  %s\n' "mesh" "devices" "seconds" "DAG"
for mesh in "${MESHES[@]}"; do
  devices=1
  for axis in ${mesh//,/ }; do devices=$((devices * ${axis#*=})); done
  start=$(date +%s.%N)
  "$BIN/piper-gen" --model=moe --config="$CONFIG" --pp="$PP" --mesh="$mesh" \
    --zero=1 -o "$tmp/model.mlir"
  "$BIN/piper-opt" "$tmp/model.mlir" --piper-autodiff \
    --piper-optimizer="optimizer=adamw lr=0.001" --piper-build-dag \
    --piper-print-summary -o "$tmp/dag.mlir" > "$tmp/summary.txt"
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
