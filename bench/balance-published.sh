#!/usr/bin/env bash
# Stage balancing on Piper's published setting (bench/simulate-published.sh:
# qwen3_1b, PP8 x DP/EP4 on 4 nodes x 8 A100, NVLink inside a node, EFA
# across, bf16, AdamW, ZeRO-1): simulated step time of 1F1B and DualPipeV
# with piper-gen's even split (one layer per stage for DualPipeV's 16
# stages, two for 1F1B's 8; the embedding on the first stage, the
# 151,936-word head on the last) and with `transform.piper.balance`
# (roofline on the A100, dense-gradient traffic over ep, expert
# all-to-alls over ep), for 16 and 64 microbatches of one sequence.
# Prints each stage split's step time and DualPipeV's speedup over 1F1B
# with the same kind of split.
#
#   bench/balance-published.sh          # qwen3_1b (about two minutes)
#   bench/balance-published.sh --tiny   # tiny-moe, for CI
#
# Environment: PIPER_BIN (default build/bin), MICROBATCHES (default "16 64").
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${PIPER_BIN:-build/bin}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

model=qwen3_1b ranks=8 ep=4 GEN_EXTRA=()
MICROBATCHES=${MICROBATCHES:-16 64}
if [ "${1:-}" = "--tiny" ]; then
  model=tiny-moe ranks=2 ep=2 GEN_EXTRA=(--layers=4) MICROBATCHES=4
fi
NVLINK='nvlink(bandwidth = 300, latency = 3)'
EFA='efa(bandwidth = 6.25, latency = 15)'

# model STAGES: the model cut by piper-gen into STAGES chunks.
model() {
  "$BIN/piper-gen" --model=moe --config="$model" --pp="$1" \
    --mesh="dp=1,ep=$ep,pp=$ranks" --batch=1 --dtype=bf16 --zero=1 \
    "${GEN_EXTRA[@]}" |
    sed "s/\[dp = 1, ep = $ep, pp = $ranks\]/[dp = 1, ep = $ep : $EFA, pp = $ranks : $NVLINK]/"
}

# balance IN STAGES M OUT: re-cut IN into STAGES by the cost model.
balance() {
  cat > "$tmp/balance.mlir" <<MLIR
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_model(%m: !transform.any_op {transform.readonly}) {
    transform.piper.balance %m into $2 stages {device = "a100", microbatches = $3, grad_axes = ["ep"], expert_axes = ["ep"]} : !transform.any_op
    transform.yield
  }
}
MLIR
  "$BIN/piper-opt" "$1" \
    --transform-preload-library="transform-library-paths=$tmp/balance.mlir" \
    --transform-interpreter=entry-point=__transform_model -o "$4"
}

# step_ms MODEL SCHEDULE M: simulated step time.
step_ms() {
  python3 bench/strategy.py "$2" "$ranks" "$3" --ep ep --zero 1 \
    --piper-schedule "$BIN/piper-schedule" > "$tmp/strategy.mlir"
  "$BIN/piper-opt" "$1" --piper-autodiff \
    --piper-optimizer="optimizer=adamw lr=0.001" --piper-build-dag \
    --transform-preload-library="transform-library-paths=$tmp/strategy.mlir" \
    --transform-interpreter --piper-partition --piper-verify-programs |
    "$BIN/piper-opt" --piper-simulate="device=a100" -o /dev/null |
    awk '/^step time/ {print $3}'
}

model "$ranks" > "$tmp/even.1f1b.mlir"
model $((2 * ranks)) > "$tmp/even.dualpipev.mlir"
printf '%-10s %4s %-10s %14s %14s %10s\n' model m split "1f1b ms" \
  "dualpipev ms" speedup
for m in $MICROBATCHES; do
  balance "$tmp/even.1f1b.mlir" "$ranks" "$m" "$tmp/balanced.1f1b.mlir"
  balance "$tmp/even.dualpipev.mlir" $((2 * ranks)) "$m" \
    "$tmp/balanced.dualpipev.mlir"
  for split in even balanced; do
    a=$(step_ms "$tmp/$split.1f1b.mlir" 1f1b "$m")
    b=$(step_ms "$tmp/$split.dualpipev.mlir" dualpipev "$m")
    printf '%-10s %4d %-10s %14s %14s %9.1f%%\n' "$model" "$m" "$split" \
      "$a" "$b" "$(awk "BEGIN { print ($a / $b - 1) * 100 }")"
  done
done
