#!/usr/bin/env bash
# One training step of a dense GPT: piper-run's compiled serial plan against
# the same model and step in PyTorch (bench/gpt_baseline.py: forward,
# backward, AdamW), at the same dtype and thread count.
#
# The default size is the one issue 14 measures: hidden 256, 4 layers,
# 4 heads, FFN 1024, sequence 64, batch 8, vocabulary 256, f32, 1 thread;
# --large: hidden 512, 8 layers, 8 heads, FFN 2048 (same sequence, batch and
# vocabulary). Each side runs STEPS+1 steps; the first is a warm-up and the
# figure is the median of the others (piper: rank 0's "seconds" in
# piper-run's --log). "vs torch" is torch's seconds over piper's (> 1: piper
# is faster). Both sides get THREADS threads (piper-run --threads,
# torch.set_num_threads).
#
# GFLOP/s counts the model's GEMM work, the same for both sides:
#   tokens * (6 * W + 12 * layers * seq * hidden)
# W = the elements of the plan's 2-D weights other than embedding tables
# (every linear layer and the output head: 2 FLOPs per weight per token
# forward, 4 backward), plus attention's scores and values as dense
# seq x seq products (4 * seq * hidden per token and layer forward, 8
# backward). Norms, softmax, activations and the optimizer are not counted.
# "GEMM share" is piper's: the time inside OpenBLAS's cblas_sgemm/dgemm
# (bench/blas_time.c, preloaded into piper-run, no perf needed) over the
# time of all steps; the rest is the generated kernels and the kernel
# library.
#
#   bench/gpt-step.sh            # the table (about a minute on 2 cores)
#   bench/gpt-step.sh --large    # the larger model (a few minutes)
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
--large)
  HIDDEN=${HIDDEN:-512} LAYERS=${LAYERS:-8} HEADS=${HEADS:-8} FFN=${FFN:-2048}
  ;;
"") ;;
-h | --help)
  sed -n '2,/^set /p' "$0" | grep '^#' | sed 's/^# \{0,1\}//'
  exit 0
  ;;
*)
  echo "gpt-step.sh: unknown option '$1' (--smoke, --large, --help)" >&2
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
# The GEMM timer (bench/blas_time.c), built here: a C file, no CMake target.
CC=${CC:-clang-22}
"$CC" -O2 -shared -fPIC -o "$tmp/blas_time.so" bench/blas_time.c -ldl
PIPER_BLAS_TIME="$tmp/blas.txt" LD_PRELOAD="$tmp/blas_time.so" \
  "$BIN/piper-run" "$tmp/plan" --steps=$((STEPS + 1)) --threads="$THREADS" \
  --log="$tmp/log.jsonl" >/dev/null
# Median step seconds, then the share of all steps' time inside BLAS GEMMs.
read -r piper gemm_share < <("$PYTHON" - "$tmp/log.jsonl" "$tmp/blas.txt" <<'PY'
import json, statistics, sys
steps = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
times = [s["seconds"] for s in steps[1:]] or [s["seconds"] for s in steps]
calls, blas = open(sys.argv[2]).read().split()
print(f"{statistics.median(times):.9f} {float(blas) / sum(s['seconds'] for s in steps):.4f}")
PY
)
# GEMM FLOPs per step (see the header): the plan's 2-D non-embedding weights.
flops=$("$PYTHON" - "$tmp/plan/plan.json" "$LAYERS" "$SEQ" "$HIDDEN" \
  "$((BATCH * SEQ))" <<'PY'
import json, math, sys
plan = json.load(open(sys.argv[1]))
layers, seq, hidden, tokens = map(int, sys.argv[2:])
weights = sum(math.prod(a["shape"]) for a in plan["arguments"]
              if a["kind"] == "param" and len(a["shape"]) == 2
              and "embed" not in a["name"])
print(tokens * (6 * weights + 12 * layers * seq * hidden))
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
awk -v p="$piper" -v t="$torch" -v n="$tokens" -v f="$flops" \
  -v g="$gemm_share" 'BEGIN {
  printf "GEMM FLOPs per step: %.3f G\n", f / 1e9
  printf "%-8s %12s %12s %9s %9s %11s\n", "system", "ms/step", "tokens/s",
    "GFLOP/s", "vs torch", "GEMM share"
  printf "%-8s %12.1f %12.0f %9.2f %8.2fx %10.1f%%\n", "piper", 1000 * p,
    n / p, f / p / 1e9, t / p, 100 * g
  printf "%-8s %12.1f %12.0f %9.2f %9s %11s\n", "torch", 1000 * t, n / t,
    f / t / 1e9, "1.00x", "-"
}'
