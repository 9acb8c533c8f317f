#!/usr/bin/env bash
# The THERE half of scripts/gpu-check (run.sh in the bundle): on one GPU
# (an H200 with the CUDA 13 driver and Python with PyTorch and its pip CUDA
# libraries), without MLIR, LLVM, apt or the network, in under 5 minutes.
# Prints one table and checks every row; exits 1 if a row FAILED, 77 if
# there is no GPU (every row SKIPPED), else 0.
#
#   (1) each plan NAME in plans/ (tiny GPT/MoE, f32/bf16-mixed, GPT with
#       gradient clipping) for as many steps as its reference.txt (the CPU
#       plan's or interpreter's losses): every loss within 1e-4 relative
#       (f32) or 2e-2 (bf16)
#   (2) bf16 GEMM TFLOP/s through piper_gpu_gemm vs cuBLAS alone (>= 0.9x);
#       HBM GB/s of an elementwise copy kernel vs cuMemcpy (>= 0.7x)
#   (3) SM partition: a GEMM on N-k SMs beside a copy on k SMs (green
#       contexts) vs each alone and both unpartitioned
#   (4) one-rank NCCL all-reduce and self send/recv through the runtime
#       (PiperCudaGpuTest), with GEMMs and the caching allocator
#   (5) a GPT plan's training step: tokens/s and MFU beside the same model
#       in this machine's PyTorch (python/gpt_baseline.py --device=cuda)
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
BIN=$HERE/bin
export LD_LIBRARY_PATH=$HERE/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export OPAL_PREFIX=$HERE/openmpi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_plm=isolated OMPI_MCA_btl=self OMPI_MCA_pml=ob1
PYTHON=${PYTHON:-python3}
PEAK_BF16_TFLOPS=${PEAK_BF16_TFLOPS:-989} # H200 dense bf16
PEAK_F32_TFLOPS=${PEAK_F32_TFLOPS:-67}

# NCCL and cuBLAS from PyTorch's pip wheels unless given.
find_lib() { # name pattern
  [ -n "${!1:-}" ] && return
  local dir
  dir=$("$PYTHON" -c 'import nvidia, os; print(os.path.dirname(nvidia.__path__[0]))' 2>/dev/null)
  local hit
  hit=$(find ${dir:+"$dir"} /usr/local/cuda/lib /usr/local/cuda/lib64 -name "$2" 2>/dev/null | sort | tail -1)
  if [ -n "$hit" ]; then
    export "$1=$hit"
    export LD_LIBRARY_PATH=$(dirname "$hit"):$LD_LIBRARY_PATH
  fi
}
find_lib PIPER_RT_NCCL 'libnccl.so.2'
find_lib PIPER_RT_CUBLAS 'libcublas.so.1[2-9]'

ROWS=()
FAILED=0
row() { # number check result figures
  ROWS+=("$(printf '%-3s %-46s %-8s %s' "$1" "$2" "$3" "$4")")
  [ "$3" = FAIL ] && FAILED=1
}
value() { grep -m1 "^$1 " <<<"$2" | cut -d' ' -f2-; }
ratio_ok() { awk -v a="$1" -v b="$2" -v r="$3" 'BEGIN { exit !(a >= r * b) }'; }

echo "gpu-check: NCCL ${PIPER_RT_NCCL:-?}, cuBLAS ${PIPER_RT_CUBLAS:-?}"
if ! out=$("$BIN/piper-gpu-bench" mpi 2>&1); then
  echo "gpu-check: the bundle's MPI does not start: $out"
fi

# (4) first: it also says whether there is a GPU at all.
out=$(timeout 120 "$BIN/PiperCudaGpuTest" 2>&1)
status=$?
echo "$out" | sed 's/^/  [4] /'
if [ $status -eq 77 ]; then
  NOGPU=1
  row 4 "NCCL all-reduce, self send/recv (1 rank)" SKIPPED "$(head -1 <<<"$out")"
else
  NOGPU=0
  [ $status -eq 0 ] && r=PASS || r=FAIL
  row 4 "NCCL all-reduce, self send/recv (1 rank)" $r "$(grep -E '^(allocator|gemm)' <<<"$out" | tr '\n' ';')"
fi

# (1)
shopt -s nullglob
plans=("$HERE"/plans/*/)
if [ $NOGPU = 1 ]; then
  row 1 "training steps vs the CPU plan (interpreter)" SKIPPED "no GPU"
elif [ ${#plans[@]} -eq 0 ]; then
  row 1 "training steps vs the CPU plan (interpreter)" SKIPPED "no plans in the bundle (scripts/gpu-check NAME=PLAN:REF)"
fi
for p in "${plans[@]}"; do
  [ $NOGPU = 1 ] && break
  name=$(basename "$p")
  ref=$p/reference.txt
  if [ ! -f "$ref" ]; then
    row 1 "$name" SKIPPED "no reference.txt"
    continue
  fi
  steps=$(grep -c '^step ' "$ref")
  tol=1e-4
  [[ $name == *bf16* ]] && tol=2e-2
  log=$(mktemp)
  if timeout 120 "$BIN/piper-run-cuda" "$p" --steps="$steps" >"$log" 2>&1; then
    worst=$(paste <(grep '^step ' "$ref" | awk '{print $4}') \
                  <(grep '^step ' "$log" | awk '{print $4}') |
            awk '{ d = ($1 - $2) / ($1 == 0 ? 1 : $1); d = d < 0 ? -d : d;
                   if (d > w) w = d; n++ } END { printf "%.3g %d", w, n }')
    set -- $worst
    if [ "$2" = "$steps" ] && awk -v w="$1" -v t="$tol" 'BEGIN { exit !(w <= t) }'; then
      row 1 "$name ($steps steps)" PASS "max rel. loss diff $1 (tol $tol)"
    else
      row 1 "$name ($steps steps)" FAIL "max rel. loss diff $1 over $2 steps (tol $tol)"
    fi
  else
    row 1 "$name" FAIL "$(tail -1 "$log")"
  fi
  rm -f "$log"
done

# (2) and (3)
if [ $NOGPU = 1 ]; then
  row 2 "GEMM TFLOP/s, HBM GB/s" SKIPPED "no GPU"
  row 3 "SM partition (green contexts)" SKIPPED "no GPU"
else
  g=$(timeout 120 "$BIN/piper-gpu-bench" gemm 2>&1)
  rt=$(value gemm_tflops_runtime "$g") cb=$(value gemm_tflops_cublas "$g")
  if [ -n "$rt" ] && ratio_ok "$rt" "$cb" 0.9; then r=PASS; else r=FAIL; fi
  row 2a "bf16 GEMM 8192^3: piper_gpu_gemm vs cuBLAS" $r "${rt:-?} vs ${cb:-?} TFLOP/s"
  h=$(timeout 120 "$BIN/piper-gpu-bench" hbm "$BIN/piper-gpu-bench.cubin" 2>&1)
  k=$(value hbm_gbs_kernel "$h") m=$(value hbm_gbs_memcpy "$h")
  if [ -n "$k" ] && ratio_ok "$k" "$m" 0.7; then r=PASS; else r=FAIL; fi
  row 2b "HBM: elementwise copy kernel vs cuMemcpy" $r "${k:-?} vs ${m:-?} GB/s"
  s=$(timeout 120 "$BIN/piper-gpu-bench" smpart "$BIN/piper-gpu-bench.cubin" 2>&1)
  echo "$s" | sed 's/^/  [3] /'
  green=$(value smpart_green_contexts "$s")
  if [ "$green" = 1 ]; then r=PASS; elif [ "$green" = 0 ]; then r=FALLBACK; else r=FAIL; fi
  row 3 "SM partition: GEMM on N-k SMs + copy on k" $r "$(grep '^smpart_ms' <<<"$s" | cut -d' ' -f2- | tr '\n' ' ')"
fi

# (5)
gpt=("$HERE"/plans/gpt*/)
if [ $NOGPU = 1 ] || [ ${#gpt[@]} -eq 0 ]; then
  row 5 "GPT step tokens/s and MFU vs PyTorch" SKIPPED "$([ $NOGPU = 1 ] && echo 'no GPU' || echo 'no gpt plan')"
else
  p=${gpt[0]}
  log=$(mktemp)
  if timeout 120 "$BIN/piper-run-cuda" "$p" --steps=6 --log="$log.jsonl" >"$log" 2>&1; then
    torch=$("$PYTHON" "$HERE/python/gpt_baseline.py" "$p" --steps=5 --heads="$(cat "$p/heads" 2>/dev/null || echo "${GPT_HEADS:-4}")" --device=cuda 2>&1 | tail -1)
    # Median step after the warm-up; tokens = the token data's elements;
    # MFU = 6 x (2-D weights) FLOPs per token (forward and backward).
    fig=$("$PYTHON" - "$p" "$log.jsonl" "$torch" "$PEAK_BF16_TFLOPS" "$PEAK_F32_TFLOPS" <<'PY'
import json, statistics, sys
plan = json.load(open(sys.argv[1] + "/plan.json"))
steps = [json.loads(l) for l in open(sys.argv[2]) if l.startswith("{")]
secs = statistics.median([s["seconds"] for s in steps[1:]] or [1e9])
data = [a for a in plan["arguments"] if a["kind"] == "data"]
tokens = 1
for d in data[0]["shape"]:
    tokens *= d
weights = sum(a["shape"][0] * a["shape"][1] for a in plan["arguments"]
              if a["kind"] == "param" and len(a["shape"]) == 2)
bf16 = any(a.get("dtype") == "bf16" for a in plan["arguments"]) or plan.get("mixed")
peak = float(sys.argv[4] if bf16 else sys.argv[5]) * 1e12
try:
    torch = float(sys.argv[3])
except ValueError:
    torch = float("nan")
mfu = 6 * weights * tokens / secs / peak
print(f"piper {tokens / secs:.0f} tok/s MFU {100 * mfu:.1f}%, "
      f"torch {tokens / torch:.0f} tok/s ({secs:.4f} vs {torch:.4f} s/step)")
PY
)
    row 5 "GPT step ($(basename "$p")): piper vs torch" PASS "$fig"
  else
    row 5 "GPT step" FAIL "$(tail -1 "$log")"
  fi
  rm -f "$log" "$log.jsonl"
fi

echo
printf '%-3s %-46s %-8s %s\n' row check result figures
printf '%s\n' "${ROWS[@]}" | sort -s -k1,1
[ $FAILED = 1 ] && exit 1
[ $NOGPU = 1 ] && exit 77
exit 0
