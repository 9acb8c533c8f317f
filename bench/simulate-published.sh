#!/usr/bin/env bash
# Piper's published settings, simulated: 4 nodes x 8 A100 80GB SXM with
# NVLink inside a node and EFA across nodes (AWS p4d: 400 Gb/s per node of 8
# GPUs, 6.25 GB/s per GPU); qwen3_1b at PP8 x DP/EP4 and qwen3_9b at PP4 x
# DP/EP4 (the pipeline inside a node, the ep axis, data parallel for dense
# weights and expert parallel for experts, across nodes).
#
# For each model: step time of 1F1B, interleaved 1F1B (v = 2) and DualPipeV
# with the same ranks and microbatches, and the speedups over 1F1B; then
# bench/simulate-zero.sh: the largest batch whose peak memory fits in 80 GB
# under 1F1B with ZeRO-1, 2 and 3, on the paper's qwen3_9b PP8 x DP4.
#
#   bench/simulate-published.sh           # the study (about a minute)
#   bench/simulate-published.sh --tiny    # tiny-moe, for CI
#
# Environment: PIPER_BIN (default build/bin), MB (microbatches, default 16),
# DEVICE (default a100).
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${PIPER_BIN:-build/bin}
DEVICE=${DEVICE:-a100}
MB=${MB:-16}
GEN_EXTRA=()
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if [ "${1:-}" = "--tiny" ]; then
  MB=4
  GEN_EXTRA=(--layers=4)
  CASES=("tiny-moe 2 2 1")
else
  # model ranks ep batch(sequences per microbatch)
  CASES=("qwen3_1b 8 4 1" "qwen3_9b 4 4 1")
fi
NVLINK='nvlink(bandwidth = 300, latency = 3)'
EFA='efa(bandwidth = 6.25, latency = 15)'

# programs MODEL STAGES RANKS EP BATCH SCHEDULE ZERO [strategy options...]
programs() {
  local model=$1 stages=$2 ranks=$3 ep=$4 batch=$5 schedule=$6 zero=$7
  shift 7
  "$BIN/piper-gen" --model=moe --config="$model" --pp="$stages" \
    --mesh="dp=1,ep=$ep,pp=$ranks" --batch="$batch" --dtype=bf16 --zero="$zero" \
    "${GEN_EXTRA[@]}" |
    sed "s/\[dp = 1, ep = $ep, pp = $ranks\]/[dp = 1, ep = $ep : $EFA, pp = $ranks : $NVLINK]/" \
      > "$tmp/model.mlir"
  python3 bench/strategy.py "$schedule" "$ranks" "$MB" --ep ep --zero "$zero" \
    --piper-schedule "$BIN/piper-schedule" "$@" > "$tmp/strategy.mlir"
  "$BIN/piper-opt" "$tmp/model.mlir" --piper-autodiff \
    --piper-optimizer="optimizer=adamw lr=0.001" --piper-build-dag \
    --transform-preload-library="transform-library-paths=$tmp/strategy.mlir" \
    --transform-interpreter --piper-partition --piper-verify-programs \
    -o "$tmp/programs.mlir"
}

simulate() {
  "$BIN/piper-opt" "$tmp/programs.mlir" --piper-simulate="device=$DEVICE" \
    -o /dev/null
}

# Field of the summary: step time (ms), MFU, tokens/s, peak memory (bytes).
step_ms() { awk '/^step time/ {print $3}'; }
peak_mib() { awk '/^@/ {if ($NF+0 > m) m = $NF+0} END {print m}'; }

printf '%-10s %-18s %6s %4s %12s %8s %10s %8s %8s\n' model schedule ranks m \
  "step ms" bubble "tokens/s" MFU speedup
for line in "${CASES[@]}"; do
  read -r model ranks ep batch <<< "$line"
  base=""
  for schedule in 1f1b interleaved-1f1b dualpipev; do
    stages=$ranks opts=()
    case $schedule in
      interleaved-1f1b) stages=$((2 * ranks)); opts=(--chunks 2) ;;
      dualpipev) stages=$((2 * ranks)) ;;
    esac
    programs "$model" "$stages" "$ranks" "$ep" "$batch" "$schedule" 1 "${opts[@]}"
    simulate > "$tmp/summary"
    ms=$(step_ms < "$tmp/summary")
    bubble=$(awk '/^step time/ {print $6}' "$tmp/summary" | tr -d ,)
    tps=$(awk '/^throughput/ {print $2}' "$tmp/summary")
    mfu=$(awk '/^throughput/ {print $NF}' "$tmp/summary")
    [ -n "$base" ] || base=$ms
    printf '%-10s %-18s %6d %4d %12s %8s %10s %8s %7.1f%%\n' "$model" \
      "$schedule" "$ranks" "$MB" "$ms" "$bubble" "$tps" "$mfu" \
      "$(awk "BEGIN { print ($base / $ms - 1) * 100 }")"
  done
done

# The largest batch under PP x ZeRO-1/2/3 (qwen3_9b PP8 x DP4, bf16-mixed
# bytes, ZeRO-2/3 resharded per microbatch) with its per-stage breakdown.
echo
PIPER_BIN=$BIN bench/simulate-zero.sh "$@"
