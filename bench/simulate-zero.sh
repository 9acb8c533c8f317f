#!/usr/bin/env bash
# Largest batch under pipeline x ZeRO on Piper's published settings: qwen3_9b
# at PP8 x DP4 on 32 A100 80GB (4 nodes of 8: the pipeline inside a node on
# NVLink, data parallelism across nodes on EFA), 1F1B over MB microbatches,
# bf16-mixed byte counts (f32 master weights, gradients and AdamW moments,
# bf16 activations and working copies), every weight replicated over dp at
# ZeRO-1, 2 or 3 with a node per stage and pass, and ZeRO-3 with a node per
# layer ("3L": a PP chunk per layer, the stage's layers consecutive on its
# rank, so each node gathers one layer). Peak memory per stage is the memory plan's
# (--piper-memory-plan, the simulator's peak column): it is affine in the
# batch, so batches 1, 2 and 3 give it and check it. Then the breakdown of
# every stage at its peak for batch 1, which says where the bytes go.
#
#   bench/simulate-zero.sh            # qwen3_9b PP8 x DP4 (about a minute)
#   bench/simulate-zero.sh --tiny     # tiny-moe PP2 x DP2, for CI
#
# Environment: PIPER_BIN (default build/bin), MB (default 16).
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${PIPER_BIN:-build/bin}
MB=${MB:-16}
MODEL=qwen3_9b PP=8 DP=4 LPS=3 GEN_EXTRA=()
if [ "${1:-}" = "--tiny" ]; then
  MODEL=tiny-moe PP=2 DP=2 MB=4 LPS=2 GEN_EXTRA=(--layers=4)
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
NVLINK='nvlink(bandwidth = 300, latency = 3)'
EFA='efa(bandwidth = 6.25, latency = 15)'

# dag ZERO BATCH: the placed, replicated, scheduled DAG in $tmp/dag.mlir.
# ZERO is 1, 2 or 3 (a node per stage and pass), or 3L: ZeRO-3 with a node
# per layer (a PP chunk per layer, LPS consecutive chunks on each rank, run
# as one stage), so a node gathers one layer's parameters.
dag() {
  local zero=${1%L} batch=$2 chunks=$PP consecutive=1
  if [ "$1" = 3L ]; then chunks=$((PP * LPS)) consecutive=$LPS; fi
  "$BIN/piper-gen" --model=moe --config="$MODEL" --pp="$chunks" \
    --mesh="dp=$DP,pp=$PP" --batch="$batch" --dtype=f32 --zero="$zero" \
    "${GEN_EXTRA[@]}" |
    sed "s/\[dp = $DP, pp = $PP\]/[dp = $DP : $EFA, pp = $PP : $NVLINK]/" \
      > "$tmp/model.mlir"
  python3 bench/strategy.py 1f1b "$PP" "$MB" --dp dp --zero "$zero" \
    --consecutive "$consecutive" \
    --piper-schedule "$BIN/piper-schedule" > "$tmp/strategy.mlir"
  "$BIN/piper-opt" "$tmp/model.mlir" --piper-mixed-precision="precision=bf16-mixed" \
    --piper-autodiff --piper-optimizer="optimizer=adamw lr=0.001" \
    --piper-build-dag \
    --transform-preload-library="transform-library-paths=$tmp/strategy.mlir" \
    --transform-interpreter -o "$tmp/dag.mlir"
}
# Largest peak over the stages, MiB.
peak_mib() {
  "$BIN/piper-opt" "$tmp/dag.mlir" --piper-memory-plan -o /dev/null |
    awk '/: peak / {if ($3 + 0 > m) m = $3 + 0} END {printf "%.1f", m / 1048576}'
}

echo "$MODEL PP$PP x DP$DP, 1F1B, $MB microbatches, bf16-mixed, 80 GB per GPU"
printf '%-7s %12s %12s %12s %14s %10s %8s\n' zero "peak@1 MiB" "peak@2 MiB" \
  "peak@3 MiB" "MiB/sequence" "max batch" "vs ZeRO-1"
base=""
for zero in 1 2 3 3L; do
  peaks=()
  for b in 1 2 3; do
    dag "$zero" "$b"
    peaks+=("$(peak_mib)")
  done
  line=$(awk -v p1="${peaks[0]}" -v p2="${peaks[1]}" -v p3="${peaks[2]}" \
      -v cap=81920 -v zero="$zero" -v base="$base" '
    BEGIN {
      per = p2 - p1; fixed = p1 - per
      if ((p3 - p2 - per) > 1 || (p3 - p2 - per) < -1)
        printf "warning: peak is not affine in the batch (%s %s %s)\n", p1, p2, p3 > "/dev/stderr"
      best = per > 0 ? int((cap - fixed) / per) : 0
      ratio = base > 0 ? sprintf("%.2fx", best / base) : "1.00x"
      printf "ZeRO-%-2s %11.1f %12.1f %12.1f %14.1f %10d %8s\n", zero, p1, p2, p3, per, best, ratio
    }')
  echo "$line"
  [ -n "$base" ] || base=$(awk '{print $6}' <<< "$line")
done

echo
echo "per-stage breakdown at the peak, batch 1 (MiB)"
printf '%-7s %-6s %10s %10s %10s %10s %12s %10s %10s  %s\n' zero stage peak params \
  grads optimizer activations comm other "at"
for zero in 1 2 3 3L; do
  dag "$zero" 1
  "$BIN/piper-opt" "$tmp/dag.mlir" --piper-memory-plan -o /dev/null |
    awk -v zero="$zero" '
      function mib(x) { return sprintf("%.1f", x / 1048576) }
      /: peak / { stage = $1; sub(":", "", stage); peak = $3; at = $0
                  sub(/.* at /, "", at) }
      /^  params / && stage != "" {
        printf "ZeRO-%-2s %-6s %10s %10s %10s %10s %12s %10s %10s  %s\n", zero, stage,
          mib(peak), mib($2), mib($4), mib($6), mib($8), mib($10), mib($12), at
        stage = "" }'
done
