#!/usr/bin/env bash
# One training step of a dense GPT: piper-run's compiled serial plan against
# the same model and step in PyTorch (bench/gpt_baseline.py: forward,
# backward, AdamW), at the same dtype and thread count.
#
# The default size is the one issue 14 measures: hidden 256, 4 layers,
# 4 heads, FFN 1024, sequence 64, batch 8, vocabulary 256, f32, 1 thread.
# Each side runs STEPS+1 steps; the first is a warm-up and the figure is the
# median of the others (piper: rank 0's "seconds" in piper-run's --log).
# "vs torch" is torch's seconds over piper's (> 1: piper is faster).
#
#   bench/gpt-step.sh            # the table (about a minute on 2 cores)
#   bench/gpt-step.sh --smoke    # tiny sizes, 1 timed step each
#
# Builds nothing: piper-gen, piper-compile and piper-run come from
# $BUILD/bin (BUILD default build; PIPER_BIN overrides). Environment:
# THREADS (default 1), STEPS, HIDDEN, LAYERS, HEADS, FFN, SEQ, BATCH,
# VOCAB, DTYPE (f32 or f64), PYTHON (default /usr/bin/python3, Debian's
# python3-torch).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
BIN=${PIPER_BIN:-$BUILD/bin}
PYTHON=${PYTHON:-/usr/bin/python3}

case "${1:-}" in
--smoke)
  HIDDEN=${HIDDEN:-16} LAYERS=${LAYERS:-1} HEADS=${HEADS:-2} FFN=${FFN:-32}
  SEQ=${SEQ:-8} BATCH=${BATCH:-2} VOCAB=${VOCAB:-32} STEPS=${STEPS:-1}
  ;;
"") ;;
-h | --help)
  sed -n '2,/^set /p' "$0" | grep '^#' | sed 's/^# \{0,1\}//'
  exit 0
  ;;
*)
  echo "gpt-step.sh: unknown option '$1' (--smoke, --help)" >&2
  exit 2
  ;;
esac
HIDDEN=${HIDDEN:-256} LAYERS=${LAYERS:-4} HEADS=${HEADS:-4} FFN=${FFN:-1024}
SEQ=${SEQ:-64} BATCH=${BATCH:-8} VOCAB=${VOCAB:-256} STEPS=${STEPS:-5}
DTYPE=${DTYPE:-f32} THREADS=${THREADS:-1}
export OMP_NUM_THREADS=$THREADS OPENBLAS_NUM_THREADS=$THREADS

for tool in piper-gen piper-compile piper-run; do
  if [ ! -x "$BIN/$tool" ]; then
    echo "gpt-step.sh: $BIN/$tool not found; build it first or set BUILD" >&2
    exit 1
  fi
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$BIN/piper-gen" --model=gpt --config=tiny-gpt --hidden="$HIDDEN" \
  --layers="$LAYERS" --heads="$HEADS" --ffn="$FFN" --seq="$SEQ" \
  --batch="$BATCH" --vocab="$VOCAB" --dtype="$DTYPE" --mesh=dp=1 \
  -o "$tmp/gpt.mlir"
compile_start=$(date +%s.%N)
"$BIN/piper-compile" "$tmp/gpt.mlir" -o "$tmp/plan"
compile_end=$(date +%s.%N)
"$BIN/piper-run" "$tmp/plan" --steps=$((STEPS + 1)) --threads="$THREADS" --log="$tmp/log.jsonl" \
  >/dev/null
piper=$("$PYTHON" - "$tmp/log.jsonl" <<'PY'
import json, statistics, sys
steps = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
times = [s["seconds"] for s in steps[1:]] or [s["seconds"] for s in steps]
print(f"{statistics.median(times):.9f}")
PY
)
torch=$("$PYTHON" bench/gpt_baseline.py "$tmp/plan" --steps="$STEPS" \
  --heads="$HEADS" --threads="$THREADS")

tokens=$((BATCH * SEQ))
echo "model: piper-gen --model=gpt --hidden=$HIDDEN --layers=$LAYERS" \
  "--heads=$HEADS --ffn=$FFN --seq=$SEQ --batch=$BATCH --vocab=$VOCAB," \
  "$DTYPE, AdamW; $STEPS timed step(s) after 1 warm-up; $THREADS thread(s)"
awk -v c0="$compile_start" -v c1="$compile_end" \
  'BEGIN { printf "piper-compile: %.1f s\n", c1 - c0 }'
awk -v p="$piper" -v t="$torch" -v n="$tokens" 'BEGIN {
  printf "%-8s %12s %12s %9s\n", "system", "ms/step", "tokens/s", "vs torch"
  printf "%-8s %12.1f %12.0f %8.2fx\n", "piper", 1000 * p, n / p, t / p
  printf "%-8s %12.1f %12.0f %9s\n", "torch", 1000 * t, n / t, "1.00x"
}'
