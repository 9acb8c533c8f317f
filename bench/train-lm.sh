#!/usr/bin/env bash
# Trains a byte-level GPT on the fortunes corpus (scripts/make-corpus) on 4
# MPI ranks, PP2 x DP2 (1F1B, 4 microbatches, ZeRO-1), with warmup + cosine
# learning rate and gradient clipping, evaluating on the held-out text (the
# plan's forward-only evaluation entry), then samples text from the trained
# parameters through the plan and writes the loss curve.
#
#   bench/train-lm.sh [STEPS] [SIZE]     SIZE: small (default, ~0.9M
#                                        parameters) or 10m (~8.5M)
#
# Environment: LR (peak learning rate; 3e-3 for small, 1e-3 for 10m, where
# 3e-3 stalled the held-out loss from step 200 on), MIN_LR (the cosine's
# floor, default LR / 10), PIPER_BIN (default build/bin).
#
# Prints the unigram baseline the held-out loss must beat, the loss and
# held-out loss as it trains, a sample, and where the curve and checkpoint
# are. The first steps equal the serial interpreter's (checked here on 20
# steps before the long run). Not a CI test: a long run on this machine.
set -euo pipefail
cd "$(dirname "$0")/.."
STEPS=${1:-2000}
SIZE=${2:-small}
B=${PIPER_BIN:-build/bin}
OUT=build/train-lm
mkdir -p "$OUT"
case "$SIZE" in
  small) DIMS="--hidden=128 --layers=4 --heads=4 --ffn=512 --seq=64"
         LR=${LR:-0.003} ;;
  10m)   DIMS="--hidden=256 --layers=8 --heads=4 --ffn=1024 --seq=128"
         LR=${LR:-0.001} ;;
  *) echo "train-lm: SIZE is small or 10m, got $SIZE" >&2; exit 1 ;;
esac
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
MPI="mpiexec -np 4 --oversubscribe"
MIN_LR=${MIN_LR:-$(python3 -c "print($LR / 10)")}
OPT="--lr=$LR --weight-decay=0.1"
SCHED="--warmup-steps=100 --lr-schedule=cosine --min-lr=$MIN_LR"

scripts/make-corpus "$OUT/corpus"
# One statement of the batch: 2 sequences per microbatch, 4 microbatches,
# 2 data-parallel replicas: 16 sequences per step.
$B/piper-gen --model=gpt --config=tiny-gpt --vocab=256 $DIMS --dtype=f32 \
  --pp=2 --mesh=pp=2,dp=2 --batch=2 -o "$OUT/lm.mlir"
$B/piper-compile "$OUT/lm.mlir" --directives=examples/strategies/lm-pp2-dp2-1f1b.json \
  $OPT --clip-grad-norm=1.0 -o "$OUT/lm.plan"

echo "== the first 20 steps, PP2 x DP2 against the serial interpreter (f32)"
$B/piper-gen --model=gpt --config=tiny-gpt --vocab=256 $DIMS --dtype=f32 \
  --batch=16 -o "$OUT/serial.mlir"
$B/piper-interp "$OUT/serial.mlir" --steps=20 --precision=f32 $OPT $SCHED \
  --decay-steps="$STEPS" --clip-grad-norm=1.0 --data="$OUT/corpus/train.txt" \
  > "$OUT/interp20.txt"
$MPI $B/piper-run "$OUT/lm.plan" --steps=20 $SCHED --decay-steps="$STEPS" \
  --data="$OUT/corpus/train.txt" > "$OUT/run20.txt"
python3 test/utils/numdiff.py --rel 1e-4 "$OUT/interp20.txt" "$OUT/run20.txt" \
  && echo "   equal (f32, relative 1e-4)"

echo "== training $STEPS steps"
$MPI $B/piper-run "$OUT/lm.plan" --steps="$STEPS" $SCHED \
  --data="$OUT/corpus/train.txt" --eval-data="$OUT/corpus/heldout.txt" \
  --eval-every=$((STEPS / 10 > 0 ? STEPS / 10 : 1)) --eval-batches=8 \
  --log="$OUT/train.jsonl" --plot="$OUT/loss.svg" \
  --save="$OUT/ckpt" --save-every=$((STEPS / 4 > 0 ? STEPS / 4 : 1)) --keep=1 \
  --params-out="$OUT/params.txt" | grep -E '^eval|00 loss' || true
echo "== a sample from the trained model (the compiled plan, PP2 x DP2)"
# --steps=0: no training, the trained parameters in; every rank runs its
# sampling entry, rank 0 prints (piper-interp --sample draws the same bytes).
$MPI $B/piper-run "$OUT/lm.plan" --steps=0 --params-in="$OUT/params.txt" \
  --sample=200 --prompt="The " --temperature=0.8 | sed -n '/^sample/,$p'
echo "== loss curve: $OUT/loss.svg; checkpoint: $OUT/ckpt"
