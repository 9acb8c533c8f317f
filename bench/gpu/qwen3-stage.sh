#!/usr/bin/env bash
# One qwen3_1b pipeline stage compiled for the GPU (issue 20): every kernel
# of the stage's role object must be an sm_90 cubin whose PTX ptxas accepts.
#
#   full    qwen3_1b in f32 (hidden 1024, 8 heads of 128 with 4 key/value
#           heads, q/k norm, RoPE, 4 experts of width 3584, top-2,
#           vocabulary 151936, sequence 512), PP8 over 8 microbatches of
#           one sequence, 1F1B: eight roles of two layers each (the first
#           with the embedding, the last with the LM head); the stage
#           checked is pp1 (two decoder layers, their backward and AdamW)
#   --tiny  the same model at a reduced width (hidden 256, 4 heads, expert
#           width 256, vocabulary 512, sequence 16, 2 layers), PP2 over 2
#           microbatches: both roles checked (test/GPU/qwen3-stage.test)
#
# Prints piper-compile's wall and CPU time and peak RSS for the whole plan
# (--target=cuda, --gpu-arch=sm_90; MLIR's gpu-module-to-binary runs ptxas
# and fatbinary for every kernel), then per checked role the object's
# bytes, its .rodata (where the fatbins live) and
# test/utils/check-cubins.py's line: fatbins (one per distinct kernel),
# cubins for sm_90, PTX images that ptxas assembles again, kernel entries
# found in the cubins. Fails if a check fails.
#
#   bench/gpu/qwen3-stage.sh            # ~5 min wall on the 2-core machine
#   bench/gpu/qwen3-stage.sh --tiny     # ~1 min
#   ROLES="step.pp1.so step.pp7.so" bench/gpu/qwen3-stage.sh
#
# Builds nothing: piper-gen and piper-compile come from $BUILD/bin (BUILD
# default build; PIPER_BIN overrides); ptxas from $CUDA_HOME/bin
# (/usr/local/cuda). Environment: JOBS (piper-compile --jobs, default 0).
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
BIN=${PIPER_BIN:-$BUILD/bin}
JOBS=${JOBS:-0}
PTXAS=${CUDA_HOME:-/usr/local/cuda}/bin/ptxas

case "${1:-}" in
"") tiny=0 ;;
--tiny) tiny=1 ;;
-h | --help)
  sed -n '2,/^set /p' "$0" | grep '^#' | sed 's/^# \{0,1\}//'
  exit 0
  ;;
*)
  echo "qwen3-stage.sh: unknown argument '$1' (--tiny, --help)" >&2
  exit 2
  ;;
esac
for tool in "$BIN/piper-gen" "$BIN/piper-compile" "$PTXAS"; do
  if [ ! -x "$tool" ]; then
    echo "qwen3-stage.sh: $tool not found; build it first or set BUILD/CUDA_HOME" >&2
    exit 1
  fi
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if [ $tiny = 1 ]; then
  stages=2
  gen=(--layers=2 --hidden=256 --heads=4 --ffn=256 --vocab=512 --seq=16
    --batch=2)
  default_roles="step.pp0.so step.pp1.so"
  echo "qwen3_1b at reduced width (hidden 256, 2 layers), f32, PP2, 2 microbatches, 1F1B, --target=cuda"
else
  stages=8
  gen=(--batch=8)
  default_roles="step.pp1.so"
  echo "qwen3_1b, f32, PP8, 8 microbatches, 1F1B, --target=cuda (sm_90)"
fi
ROLES=${ROLES:-$default_roles}

# Split into one microbatch per sequence, stage s on pipeline rank s, 1F1B.
{
  echo '{"mesh": "mesh", "directives": ['
  echo "  {\"split\": {\"filter\": {}, \"n\": $stages}},"
  for ((s = 0; s < stages; s++)); do
    echo "  {\"place\": {\"filter\": {\"PP\": $s}, \"devices\": {\"pp\": $s}, \"stream\": \"pp\"}},"
  done
  echo '  {"schedule": {"name": "1f1b"}}]}'
} > "$tmp/strategy.json"
"$BIN/piper-gen" --model=moe --config=qwen3_1b --dtype=f32 --pp=$stages \
  --mesh=pp=$stages "${gen[@]}" -o "$tmp/model.mlir"

/usr/bin/time -f '%e %U %S %M' -o "$tmp/time" \
  "$BIN/piper-compile" "$tmp/model.mlir" --target=cuda --gpu-arch=sm_90 \
  --directives="$tmp/strategy.json" --jobs="$JOBS" -o "$tmp/plan" \
  > /dev/null 2> "$tmp/log" || { cat "$tmp/log" >&2; exit 1; }
read -r wall user sys rss < "$tmp/time"
awk -v w="$wall" -v u="$user" -v s="$sys" -v r="$rss" -v n="$stages" 'BEGIN {
  printf "piper-compile --target=cuda: %.1f s wall, %.1f s CPU, %.0f MiB peak RSS, %d roles\n",
    w, u + s, r / 1024, n }'

role_args=()
for role in $ROLES; do
  so="$tmp/plan/$role"
  [ -f "$so" ] || { echo "qwen3-stage.sh: the plan has no $role" >&2; exit 1; }
  rodata=$(size -A "$so" | awk '$1 == ".rodata" { print $2 }')
  printf '%s: %d bytes, .rodata %d bytes\n' "$role" "$(stat -c %s "$so")" "$rodata"
  role_args+=(--role "$role")
done
python3 test/utils/check-cubins.py "$tmp/plan" sm_90 --ptxas "$PTXAS" \
  "${role_args[@]}"
