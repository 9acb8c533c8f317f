#!/usr/bin/env bash
# Joint scheduling's value, simulated: one strategy (a Qwen3-style MoE over
# PP x DP/EP with ZeRO-1 and DualPipeV, 4 nodes x 8 A100 with NVLink inside
# a node and EFA across), run two ways:
#   overlapped   as partitioned: the second task of each F&B pair on its own
#                stream ("compute_overlap"), so one task's expert
#                all-to-alls (inside its body) run under the other's
#                compute; gradient reduce-scatters on "dp_grad" and
#                parameter all-gathers on "dp_param", synchronised with
#                the compute stream by events;
#   serialised   the same programs with every launch and every EP/DP
#                collective on the one "compute" stream (set_stream for
#                the collectives, the overlap stream folded into compute),
#                as a runtime with a single stream would run them.
# Both are verified and simulated; the script prints step time, exposed
# communication and the speedup of overlapped over serialised.
#
#   bench/joint-scheduling.sh                 # qwen3_9b, PP4 x EP4
#   bench/joint-scheduling.sh --tiny          # tiny-moe (CI smoke)
#   MODEL=qwen3_1b RANKS=8 bench/joint-scheduling.sh
#
# Environment: PIPER_BIN (default build/bin), MODEL, RANKS, EP, MB,
# SCHEDULE, DEVICE.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${PIPER_BIN:-build/bin}
GEN_EXTRA=()
if [ "${1:-}" = "--tiny" ]; then
  MODEL=tiny-moe RANKS=2 EP=2 MB=4 GEN_EXTRA=(--layers=4)
fi
MODEL=${MODEL:-qwen3_9b}
RANKS=${RANKS:-4}
EP=${EP:-4}
MB=${MB:-16}
SCHEDULE=${SCHEDULE:-dualpipev}
DEVICE=${DEVICE:-a100}
stages=$RANKS
case $SCHEDULE in dualpipev | zb-v) stages=$((2 * RANKS)) ;; esac
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$BIN/piper-gen" --model=moe --config="$MODEL" --pp="$stages" \
  --mesh="dp=1,ep=$EP,pp=$RANKS" --dtype=bf16 --zero=1 "${GEN_EXTRA[@]}" |
  sed "s/\[dp = 1, ep = $EP, pp = $RANKS\]/[dp = 1, ep = $EP : efa(bandwidth = 6.25, latency = 15), pp = $RANKS : nvlink(bandwidth = 300, latency = 3)]/" \
    > "$tmp/model.mlir"

step() { # serialise? [strategy options] -> step time in ms
  local serialise=$1
  shift
  python3 bench/strategy.py "$SCHEDULE" "$RANKS" "$MB" --ep ep --zero 1 \
    --piper-schedule "$BIN/piper-schedule" "$@" > "$tmp/strategy.mlir"
  "$BIN/piper-opt" "$tmp/model.mlir" --piper-autodiff \
    --piper-optimizer="optimizer=adamw lr=0.001" --piper-build-dag \
    --transform-preload-library="transform-library-paths=$tmp/strategy.mlir" \
    --transform-interpreter --piper-partition -o "$tmp/programs.mlir"
  if [ "$serialise" = yes ]; then
    sed -i 's/on "compute_overlap"/on "compute"/' "$tmp/programs.mlir"
  fi
  "$BIN/piper-opt" "$tmp/programs.mlir" --piper-verify-programs \
    --piper-simulate="device=$DEVICE" -o /dev/null > "$tmp/summary"
  awk '/^step time/ {print $3}' "$tmp/summary"
}

overlapped=$(step no)
exposed=$(awk '/^step time/ {print $9}' "$tmp/summary")
serialised=$(step yes --comm-stream compute)
exposed_serial=$(awk '/^step time/ {print $9}' "$tmp/summary")
echo "$MODEL $SCHEDULE, PP$RANKS x DP/EP$EP, $MB microbatches, ZeRO-1, $DEVICE"
printf '%-12s %12s %22s\n' variant "step ms" "exposed comm ms/device"
printf '%-12s %12s %22s\n' overlapped "$overlapped" "$exposed"
printf '%-12s %12s %22s\n' serialised "$serialised" "$exposed_serial"
awk -v a="$overlapped" -v b="$serialised" \
  'BEGIN { printf "speedup of joint scheduling (serialised / overlapped): %.3fx\n", b / a }'
