#!/usr/bin/env bash
# Checkpoint throughput (docs/Checkpoints.md): bytes/s per rank of a save
# (the writer thread: CRC, write, fsync) and of a resume under another
# strategy (ranged preads), against `dd` to and from the same disk, and the
# step-time cost of saving every step, overlapped and synchronous.
#
# The model is a dense GPT in f64 (hidden 512, 4 layers, FFN 2048,
# vocabulary 4096, sequence 32): about 17 M parameters, 3 tensors each with
# AdamW's moments, so a checkpoint is about 0.4 GB. It is saved under DP2
# ZeRO-3 (each rank writes half) and resumed serially (one rank reads all).
#
#   bench/ckpt-throughput.sh            # DIR defaults to a fresh mktemp -d
#   DIR=/mnt/fast bench/ckpt-throughput.sh
#   bench/ckpt-throughput.sh --smoke    # tiny-gpt: checks the script runs
#
# Reads from the page cache unless the machine's cache is dropped first
# (root: echo 3 > /proc/sys/vm/drop_caches); dd's read is measured the same
# way, right after its write, so the two compare like with like.
# Builds nothing: piper-gen, piper-compile and piper-run come from $BUILD/bin
# (PIPER_BIN overrides).
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${PIPER_BIN:-${BUILD:-build}/bin}
DIR=${DIR:-$(mktemp -d)}
STEPS=${STEPS:-4}
MPIEXEC=(env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  mpiexec --oversubscribe)
GEN=(--model=gpt --config=tiny-gpt --hidden=512 --layers=4 --ffn=2048
  --vocab=4096 --seq=32 --heads=4)
if [[ "${1:-}" == --smoke ]]; then
  GEN=(--model=gpt --config=tiny-gpt)
  STEPS=2
fi
mkdir -p "$DIR"
echo '{"mesh": "mesh", "directives": [{"replicate": {"filter": {}, "devices": ["dp"], "zero": 3}}]}' >"$DIR/z3.json"
"$BIN/piper-gen" "${GEN[@]}" --dtype=f64 --mesh=dp=2 --batch=1 -o "$DIR/dp2.mlir"
"$BIN/piper-gen" "${GEN[@]}" --dtype=f64 --mesh=dp=1 --batch=2 -o "$DIR/serial.mlir"
"$BIN/piper-compile" "$DIR/dp2.mlir" --directives="$DIR/z3.json" -o "$DIR/dp2.plan"
"$BIN/piper-compile" "$DIR/serial.mlir" -o "$DIR/serial.plan"

# Mean seconds per step (the entry calls) from a --log file, and the wall
# seconds of the whole run.
mean() { awk -F'"seconds": ' '{split($2, a, ","); s += a[1]; n++} END {printf "%.4f", s / n}' "$1"; }

run() { # name, flags...
  local name=$1
  shift
  local t0 t1
  rm -rf "$DIR/ckpt.$name"
  t0=$(date +%s.%N)
  "${MPIEXEC[@]}" -np 2 "$BIN/piper-run" "$DIR/dp2.plan" --threads=1 --steps="$STEPS" \
    --log="$DIR/$name.jsonl" "$@" >/dev/null 2>"$DIR/$name.err"
  t1=$(date +%s.%N)
  printf '%-28s %s s/step (entry), %.2f s wall\n' "$name" "$(mean "$DIR/$name.jsonl")" \
    "$(echo "$t1 - $t0" | bc)"
}

echo "== step time, DP2 ZeRO-3, $STEPS steps"
run no-save
run save-every-step-overlap --save="$DIR/ckpt.o" --save-every=1 --keep=1 --ckpt-stats
run save-every-step-sync --save="$DIR/ckpt.s" --save-every=1 --keep=1 --save-sync --ckpt-stats
grep 'piper-run: rank' "$DIR/save-every-step-overlap.err" | sed 's/^/  overlap: /'
grep 'piper-run: rank' "$DIR/save-every-step-sync.err" | sed 's/^/  sync:    /'

echo "== save (per rank, writer thread: CRC + write + fsync)"
awk '/piper-run: rank/ {
  for (i = 1; i <= NF; ++i) { if ($i == "saved") b = $(i+1); if ($i == "writer") w = $(i+1) }
  printf "  %s %s %.1f MB/s (%d bytes in %.3f s, %d saves)\n", $2, $3, b / w / 1e6, b, w, '"$STEPS"'
}' "$DIR/save-every-step-sync.err"
CKPT_BYTES=$(awk '/piper-run: rank 0/ {for (i = 1; i <= NF; ++i) if ($i == "saved") print $(i+1)}' "$DIR/save-every-step-sync.err")
PER_SAVE=$((CKPT_BYTES / STEPS))

echo "== resume serially (one rank reads everything)"
"$BIN/piper-run" "$DIR/serial.plan" --threads=1 --steps="$STEPS" --resume="$DIR/ckpt.s" --ckpt-stats \
  >/dev/null 2>"$DIR/resume.err"
awk '/piper-run: rank/ {printf "  rank 0: %.1f MB/s (%d bytes in %.3f s)\n", $5 / $8 / 1e6, $5, $8}' "$DIR/resume.err"

echo "== dd to and from the same disk ($PER_SAVE bytes, the size of one rank's save)"
BLOCKS=$(((PER_SAVE + 1048575) / 1048576))
dd if=/dev/zero of="$DIR/dd.bin" bs=1M count="$BLOCKS" conv=fsync 2>&1 | tail -1 | sed 's/^/  write: /'
dd if="$DIR/dd.bin" of=/dev/null bs=1M 2>&1 | tail -1 | sed 's/^/  read:  /'
du -sh "$DIR/ckpt.s" | sed 's/^/  checkpoints on disk: /'
