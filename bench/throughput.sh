#!/usr/bin/env bash
# Training throughput of compiled plans under piper-run against PyTorch DDP
# (gloo) on the same model, global batch, rank count and threads per rank,
# side by side in one run, then the runtime's host cost per plan
# instruction (piper-bench-runtime, with the runtime's progress thread on, as
# piper-run runs, and off).
#
# The model is piper-gen's MLP (f32; bench/ddp_baseline.py is the same
# model in PyTorch). Plans:
#   serial  one role, `piper-run PLAN`             vs DDP world=1
#   pp2     --pp=2, 1F1B over MB microbatches,     vs DDP world=2
#           `mpiexec -np 2 piper-run PLAN`
#   dp2     --mesh=dp=2, replicate over dp (ZeRO-0) vs DDP world=2
#           `mpiexec -np 2 piper-run PLAN`; a build whose piper-compile
#           rejects it prints "dp2: not supported by this build (...)"
# Each plan runs STEPS+1 steps; the first is a warm-up and the figure is
# the median of the others' "seconds" in piper-run's --log (rank 0's time
# for the compiled step). samples/s = global batch / median step; for the
# MLP a sample is one token, so tokens/s = samples/s. "vs DDP" is piper's
# samples/s over DDP's at the same rank count (> 1: piper is faster).
#
#   bench/throughput.sh            # the table (about 1-2 minutes on 2 cores)
#   bench/throughput.sh --smoke    # tiny sizes, 2 steps each (a ctest could run it)
#
# Builds nothing: it runs piper-gen, piper-compile, piper-run and
# piper-bench-runtime from $BUILD/bin (BUILD default build; PIPER_BIN
# overrides the bin directory). Environment: THREADS (per rank, default 1:
# OMP_NUM_THREADS and OPENBLAS_NUM_THREADS for piper-run, the same and
# torch.set_num_threads for DDP), STEPS, MB, LAYERS, HIDDEN, IN_FEATURES,
# VOCAB, BATCH (global), PYTHON (default /usr/bin/python3, Debian's
# python3-torch), MPIEXEC (default mpiexec).
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
BIN=${PIPER_BIN:-$BUILD/bin}
PYTHON=${PYTHON:-/usr/bin/python3}
MPIEXEC=${MPIEXEC:-mpiexec}

SMOKE=0
for arg in "$@"; do
  case $arg in
  --smoke) SMOKE=1 ;;
  -h | --help)
    sed -n '2,/^set /p' "$0" | grep '^#' | sed 's/^# \{0,1\}//'
    exit 0
    ;;
  *)
    echo "throughput.sh: unknown option '$arg' (--smoke, --help)" >&2
    exit 2
    ;;
  esac
done

if [ "$SMOKE" = 1 ]; then
  LAYERS=${LAYERS:-2} HIDDEN=${HIDDEN:-32} IN_FEATURES=${IN_FEATURES:-16}
  VOCAB=${VOCAB:-8} BATCH=${BATCH:-8} STEPS=${STEPS:-1} MB=${MB:-2}
  RT_ARGS=--smoke
else
  LAYERS=${LAYERS:-4} HIDDEN=${HIDDEN:-512} IN_FEATURES=${IN_FEATURES:-512}
  VOCAB=${VOCAB:-512} BATCH=${BATCH:-64} STEPS=${STEPS:-10} MB=${MB:-4}
  RT_ARGS=
fi
THREADS=${THREADS:-1}
DTYPE=f32
CORES=$(getconf _NPROCESSORS_ONLN) # not nproc: it obeys OMP_NUM_THREADS

for tool in piper-gen piper-compile piper-run; do
  if [ ! -x "$BIN/$tool" ]; then
    echo "throughput.sh: $BIN/$tool not found; build it first (ninja -C $BUILD" \
      "piper-gen piper-compile piper-run piper-bench-runtime) or set BUILD" >&2
    exit 1
  fi
done
if [ $((BATCH % MB)) -ne 0 ] || [ $((BATCH % 2)) -ne 0 ]; then
  echo "throughput.sh: BATCH=$BATCH must be divisible by MB=$MB and by 2" >&2
  exit 1
fi

# The same thread count for every process of both systems, OpenMPI as root
# and with more ranks than cores; no core binding (DDP's processes have none).
export OMP_NUM_THREADS=$THREADS OPENBLAS_NUM_THREADS=$THREADS MKL_NUM_THREADS=$THREADS
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
MPIRUN=("$MPIEXEC" --oversubscribe --bind-to none
  -x OMP_NUM_THREADS -x OPENBLAS_NUM_THREADS -x MKL_NUM_THREADS)

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

SIZES=(--layers="$LAYERS" --hidden="$HIDDEN" --in-features="$IN_FEATURES"
  --vocab="$VOCAB")
GEN=("$BIN/piper-gen" --model=mlp --config=tiny-mlp "${SIZES[@]}" --dtype=$DTYPE)
RUNSTEPS=$((STEPS + 1))

echo "model: piper-gen --model=mlp --layers=$LAYERS --hidden=$HIDDEN" \
  "--in-features=$IN_FEATURES --vocab=$VOCAB, $DTYPE, global batch $BATCH," \
  "AdamW; $STEPS timed step(s) after 1 warm-up; $THREADS thread(s) per rank;" \
  "$CORES cores"

# The median step of a piper-run log, without the first (warm-up) step.
median_step() { # log.jsonl -> seconds
  "$PYTHON" - "$1" <<'EOF'
import json, statistics, sys
steps = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
times = [s["seconds"] for s in steps[1:]] or [s["seconds"] for s in steps]
print(f"{statistics.median(times):.9f}")
EOF
}

# Rows of the table: config ranks seconds-per-step (or a note).
FAILED=0 # a run that fails (not a strategy this build rejects) fails the script
declare -A SECONDS_OF RANKS_OF NOTE_OF
ORDER=()
row() { # config ranks seconds [note]
  ORDER+=("$1")
  RANKS_OF[$1]=$2
  SECONDS_OF[$1]=$3
  NOTE_OF[$1]=${4:-}
}

calc() { awk "BEGIN { printf \"%.9f\", $1 }"; } # bc is not always installed

first_error() { # file -> the first line that says error, else the first line
  local line
  line=$(grep -m1 -i 'error' "$1" || head -n1 "$1")
  echo "${line:-no output}"
}

# dp2 needs the data-parallel lowering (collectives over MPI), which a build
# may not have yet: its rejection is reported, not a failure. The serial and
# pp2 plans must compile.
rejected() { # name output-file
  if [ "$1" = dp2 ]; then
    echo "$1: not supported by this build ($(first_error "$2"))"
  else
    echo "$1: piper-gen/piper-compile failed ($(first_error "$2"))"
    FAILED=1
  fi
}

# Generates, compiles and runs one plan; adds its row or a "not supported"
# line. piper_case NAME RANKS DIRECTIVES|- GEN-ARGS...
piper_case() {
  local name=$1 ranks=$2 directives=$3
  shift 3
  local model=$tmp/$name.mlir plan=$tmp/$name.plan log=$tmp/$name.jsonl
  local compile_args=()
  [ "$directives" != - ] && compile_args=(--directives="$directives")
  if ! "${GEN[@]}" "$@" -o "$model" >"$tmp/$name.gen.txt" 2>&1; then
    rejected "$name" "$tmp/$name.gen.txt"
    return
  fi
  local t0 t1
  t0=$(date +%s.%N)
  if ! "$BIN/piper-compile" "$model" "${compile_args[@]}" -o "$plan" \
    >"$tmp/$name.compile.txt" 2>&1; then
    rejected "$name" "$tmp/$name.compile.txt"
    return
  fi
  t1=$(date +%s.%N)
  local runner=("$BIN/piper-run")
  [ "$ranks" -gt 1 ] && runner=("${MPIRUN[@]}" -np "$ranks" "$BIN/piper-run")
  if ! "${runner[@]}" "$plan" --steps=$RUNSTEPS --log="$log" \
    >"$tmp/$name.run.txt" 2>&1; then
    echo "$name: piper-run failed ($(first_error "$tmp/$name.run.txt"))"
    FAILED=1
    return
  fi
  local loss
  loss=$(awk '/^step /{l=$4} END{print l}' "$tmp/$name.run.txt")
  printf '%s: compiled in %.1f s; final loss %s\n' "$name" \
    "$(calc "$t1 - $t0")" "$loss"
  row "piper $name" "$ranks" "$(median_step "$log")"
}

ddp_case() { # world
  local world=$1 out=$tmp/ddp$1.txt
  if ! "$PYTHON" bench/ddp_baseline.py "${SIZES[@]}" --batch="$BATCH" \
    --steps="$STEPS" --warmup=1 --world="$world" --threads="$THREADS" \
    --dtype=$DTYPE >"$out" 2>&1; then
    echo "ddp world=$world: failed ($(tail -n1 "$out"))"
    FAILED=1
    return
  fi
  local line ms
  line=$(grep '^ddp ' "$out")
  echo "$line"
  ms=$(sed -n 's/.*step_ms=\([0-9.]*\).*/\1/p' <<<"$line")
  row "torch ddp world=$world" "$world" "$(calc "$ms / 1000")"
}

# Strategies (Piper's JSON directive lists).
cat >"$tmp/pp2.json" <<EOF
{"mesh": "mesh", "directives": [
  {"split": {"filter": {}, "n": $MB}},
  {"place": {"filter": {"PP": 0}, "devices": {"pp": 0}, "stream": "pp"}},
  {"place": {"filter": {"PP": 1}, "devices": {"pp": 1}, "stream": "pp"}},
  {"schedule": {"name": "1f1b"}}]}
EOF
cat >"$tmp/dp2.json" <<'EOF'
{"mesh": "mesh", "directives": [
  {"replicate": {"filter": {}, "devices": ["dp"], "zero": 0}}]}
EOF

# The model is written at the size one device computes at once: the global
# batch for serial, a microbatch (BATCH / MB) for pp2 (split widens the data
# to MB x that), a replica's share (BATCH / 2) for dp2.
piper_case serial 1 - --mesh=dp=1 --batch="$BATCH"
ddp_case 1
piper_case pp2 2 "$tmp/pp2.json" --pp=2 --mesh=pp=2 --batch=$((BATCH / MB))
piper_case dp2 2 "$tmp/dp2.json" --mesh=dp=2 --batch=$((BATCH / 2))
ddp_case 2

echo
printf '%-24s %5s %7s %12s %12s %10s %8s\n' config ranks threads samples/s \
  tokens/s "step ms" "vs DDP"
for config in "${ORDER[@]}"; do
  ranks=${RANKS_OF[$config]}
  s=${SECONDS_OF[$config]}
  ddp=${SECONDS_OF["torch ddp world=$ranks"]:-}
  ratio=-
  [ -n "$ddp" ] && ratio=$(printf '%.3f' "$(calc "$ddp / $s")")
  [[ $config == torch* ]] && ratio=1.000
  sps=$(calc "$BATCH / $s")
  printf '%-24s %5d %7d %12.1f %12.1f %10.3f %8s\n' "$config" "$ranks" \
    "$THREADS" "$sps" "$sps" "$(calc "$s * 1000")" "$ratio"
done

# The runtime's host cost per instruction, as piper-run runs it (progress
# thread on) and with the progress thread off (PIPER_RT_PROGRESS_THREAD=0).
if [ -x "$BIN/piper-bench-runtime" ]; then
  for progress in 1 0; do
    echo
    if ! PIPER_RT_PROGRESS_THREAD=$progress "${MPIRUN[@]}" -np 2 \
      -x PIPER_RT_PROGRESS_THREAD "$BIN/piper-bench-runtime" $RT_ARGS \
      >"$tmp/rt.txt" 2>&1; then
      echo "runtime overhead per instruction: piper-bench-runtime failed" \
        "($(first_error "$tmp/rt.txt"))"
      FAILED=1
    else
      cat "$tmp/rt.txt"
    fi
  done
else
  echo
  echo "runtime overhead per instruction: $BIN/piper-bench-runtime not built" \
    "(ninja -C $BUILD piper-bench-runtime)"
fi
exit $FAILED
