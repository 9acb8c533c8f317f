#!/usr/bin/env bash
# Held-out evaluation time: the forward-only evaluation entry (piper-run's
# default) against the whole training step with its updates dropped
# (--eval-program=step, the earlier implementation), on the tiny GPT
# (f32, byte vocabulary, 64-byte sequences, batch 8) serial and PP2 1F1B,
# 40 held-out batches per evaluation, 3 evaluations each.
#
#   bench/eval-time.sh
#
# Prints per plan the mean seconds per evaluation for both and the ratio;
# both print the same held-out loss (checked here).
set -euo pipefail
cd "$(dirname "$0")/.."
B=build/bin
OUT=build/eval-time
mkdir -p "$OUT"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
head -c 40000 data/corpus/sonnets.txt > "$OUT/train.txt"
cp data/corpus/sonnets.txt "$OUT/heldout.txt"
DIMS="--vocab=256 --hidden=64 --layers=2 --heads=4 --ffn=256 --seq=64 --dtype=f32"
$B/piper-gen --model=gpt --config=tiny-gpt $DIMS --mesh=dp=1 --batch=8 -o "$OUT/gpt.mlir"
$B/piper-compile "$OUT/gpt.mlir" -o "$OUT/serial.plan"
echo '{"mesh": "mesh", "directives": [{"split": {"filter": {}, "n": 2}}, {"place": {"filter": {"PP": 0}, "devices": {"pp": 0}, "stream": "pp"}}, {"place": {"filter": {"PP": 1}, "devices": {"pp": 1}, "stream": "pp"}}, {"schedule": {"name": "1f1b"}}]}' > "$OUT/1f1b.json"
$B/piper-gen --model=gpt --config=tiny-gpt $DIMS --pp=2 --mesh=pp=2 --batch=4 -o "$OUT/pp.mlir"
$B/piper-compile "$OUT/pp.mlir" --directives="$OUT/1f1b.json" -o "$OUT/pp.plan"

mean_eval_seconds() {
  python3 -c 'import json,sys
v=[json.loads(l)["eval_seconds"] for l in open(sys.argv[1]) if "eval_seconds" in l]
print(sum(v)/len(v))' "$1"
}
for plan in serial:1 pp:2; do
  name=${plan%:*}; np=${plan#*:}
  for mode in forward step; do
    mpiexec -np "$np" --oversubscribe $B/piper-run "$OUT/$name.plan" --steps=3 \
      --threads=1 --data="$OUT/train.txt" --eval-data="$OUT/heldout.txt" \
      --eval-every=1 --eval-batches=40 --eval-program=$mode \
      --log="$OUT/$name.$mode.jsonl" > "$OUT/$name.$mode.txt"
  done
  python3 test/utils/numdiff.py --rel 1e-6 "$OUT/$name.step.txt" "$OUT/$name.forward.txt"
  f=$(mean_eval_seconds "$OUT/$name.forward.jsonl")
  s=$(mean_eval_seconds "$OUT/$name.step.jsonl")
  python3 -c "import sys; f,s=float(sys.argv[2]),float(sys.argv[3]); print(f'{sys.argv[1]:>7}: forward-only {f:.4f} s, full step {s:.4f} s per evaluation of 40 batches: {s/f:.2f}x faster')" "$name" "$f" "$s"
done
