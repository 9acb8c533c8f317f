#!/usr/bin/env bash
# Compile-scale benchmark: the whole pipeline from model to verified device
# programs, for a qwen3_9b- and a DeepSeek-V3-shaped MoE, under 1F1B and
# DualPipeV, at 16, 1,024 and 16,384 devices (data x expert x tensor
# parallelism growing, the pipeline fixed). Per case: piper-gen ->
# --piper-autodiff -> --piper-optimizer (AdamW) -> --piper-build-dag ->
# directives (split into microbatches, place the stages, shard experts over
# ep and attention over tp, replicate dense parameters over dp x ep and
# experts over dp with ZeRO-1, schedule) -> --piper-partition ->
# --piper-verify-programs, in one piper-opt process. Prints wall time (the
# best of REPEAT runs; the machine is shared) and peak RSS (the larger of
# piper-gen's and piper-opt's), and time(largest) / time(smallest) per model
# and schedule. Replicas share programs, so the programs must not change
# with the device count: the script fails if they do.
#
#   bench/compile-scale.sh            # the full table (about 3 minutes)
#   bench/compile-scale.sh --tiny     # tiny-moe at small meshes (CI smoke)
#
# Environment: PIPER_BIN (default build/bin), MB (microbatches, default 64;
# 4 with --tiny), REPEAT (default 5; 1 with --tiny).
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${PIPER_BIN:-build/bin}

# model schedule ranks stages | dp,ep,tp per device count
if [ "${1:-}" = "--tiny" ]; then
  MB=${MB:-4}
  REPEAT=${REPEAT:-1}
  CASES=(
    "tiny-moe 1f1b 2 2 | 1,1,1 2,2,2 4,4,2"
    "tiny-moe dualpipev 1 2 | 1,1,1 2,2,2 4,4,2"
  )
else
  MB=${MB:-64}
  REPEAT=${REPEAT:-5}
  # PP 16 with 16 stages (1F1B) or 32 in V order (DualPipeV). qwen3_9b has
  # 24 layers, too few for 32 stages: its DualPipeV runs 8 ranks x 2 stages
  # and twice the data parallelism, for the same device counts.
  CASES=(
    "qwen3_9b 1f1b 16 16 | 1,1,1 8,4,2 64,8,2"
    "qwen3_9b dualpipev 8 16 | 2,1,1 16,4,2 128,8,2"
    "deepseek_v3 1f1b 16 16 | 1,1,1 4,8,2 16,32,2"
    "deepseek_v3 dualpipev 16 32 | 1,1,1 4,8,2 16,32,2"
  )
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The strategy for one case; the mesh sizes never appear in it.
strategy() { # schedule ranks stages
  local schedule=$1 ranks=$2 stages=$3 s rank
  local any='(!transform.any_op) -> !transform.any_op'
  echo 'module attributes {transform.with_named_sequence} {'
  echo '  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {'
  echo "    %all = transform.piper.match_nodes {} in %root : $any"
  echo "    %mb = transform.piper.split %all into $MB microbatches : $any"
  for ((s = 0; s < stages; s++)); do
    # V order: rank r holds stages r and 2 ranks - 1 - r.
    rank=$s
    [ "$s" -lt "$ranks" ] || rank=$((2 * ranks - 1 - s))
    echo "    %s$s = transform.piper.match_nodes {PP = $s} in %root : $any"
    echo "    %x$s = transform.piper.place %s$s on @mesh {pp = $rank} : $any"
  done
  echo "    %nodes = transform.piper.match_nodes {} in %root : $any"
  echo "    %ep = transform.piper.shard %nodes expert over @mesh [\"ep\"] : $any"
  echo "    %tp = transform.piper.shard %nodes tensor over @mesh [\"tp\"] column [\"layers.*.attn.w[qkv]\"] row [\"layers.*.attn.wo\"] : $any"
  echo "    %dense = transform.piper.replicate %nodes over @mesh [\"dp\", \"ep\"] zero = 1 where {EP = \"none\"} : $any"
  echo "    %experts = transform.piper.replicate %nodes over @mesh [\"dp\"] zero = 1 where {EP = \"*\"} : $any"
  echo "    transform.piper.schedule \"$schedule\" in %root : !transform.any_op"
  echo '    transform.yield'
  echo '  }'
  echo '}'
}

# Peak RSS in KiB of a command (GNU time's %M), its output discarded.
rss() {
  /usr/bin/time -f '%M' -o "$tmp/rss" "$@" > /dev/null
  cat "$tmp/rss"
}

printf '%-12s %-10s %-22s %7s %8s %9s  %s\n' model schedule mesh devices seconds "RSS MiB" programs
for line in "${CASES[@]}"; do
  read -r model schedule ranks stages _ meshes <<< "$line"
  strategy "$schedule" "$ranks" "$stages" > "$tmp/strategy.mlir"
  first_time="" first_programs="" time=""
  for sizes in $meshes; do
    IFS=, read -r dp ep tp <<< "$sizes"
    mesh="dp=$dp,pp=$ranks,ep=$ep,tp=$tp"
    devices=$((dp * ranks * ep * tp))
    best=""
    for ((r = 0; r < REPEAT; r++)); do
      start=$(date +%s.%N)
      gen_kib=$(rss "$BIN/piper-gen" --model=moe --config="$model" \
        --pp="$stages" --mesh="$mesh" -o "$tmp/model.mlir")
      opt_kib=$(rss "$BIN/piper-opt" "$tmp/model.mlir" --piper-autodiff \
        --piper-optimizer="optimizer=adamw lr=0.001" --piper-build-dag \
        --transform-preload-library="transform-library-paths=$tmp/strategy.mlir" \
        --transform-interpreter --piper-partition --piper-verify-programs \
        -o "$tmp/programs.mlir")
      end=$(date +%s.%N)
      time=$(awk "BEGIN { print $end - $start }")
      if [ -z "$best" ] || awk "BEGIN { exit !($time < $best) }"; then
        best=$time
      fi
    done
    peak=$(( (gen_kib > opt_kib ? gen_kib : opt_kib) / 1024 ))
    # Programs and their instructions (lines inside piper.program bodies).
    programs=$(awk '/^  piper.program /{n++; inside=1; next}
                    inside && /^  }/{inside=0}
                    inside{i++}
                    END{printf "%d programs, %d instructions", n, i}' \
               "$tmp/programs.mlir")
    printf '%-12s %-10s %-22s %7d %8.2f %9d  %s\n' "$model" "$schedule" \
      "$mesh" "$devices" "$best" "$peak" "$programs"
    # Symmetry: the programs do not depend on the dp/ep/tp degree.
    if [ -z "$first_programs" ]; then
      first_programs=$programs first_time=$best
    elif [ "$programs" != "$first_programs" ]; then
      echo "compile-scale: the programs changed with the mesh ($mesh): symmetry broken" >&2
      exit 1
    fi
  done
  printf '%-12s %-10s time(%s devices) / time(first) = %.2f\n' "$model" \
    "$schedule" "$devices" "$(awk "BEGIN { print $best / $first_time }")"
done
