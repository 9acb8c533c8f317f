#!/usr/bin/env bash
# Seeds the two MLIR fuzz targets; called by bench/fuzz.sh.
#
# piper_ir_fuzzer: every test/**/*.mlir that uses the piper dialect, split
# at `// -----` as -split-input-file does (each part one seed, at most 64 KiB).
# directive_seq_fuzzer: the tiny GPT and tiny MoE models from piper-gen
# (models/, read by the target), the example strategies as JSON-mode inputs
# (first byte 2: GPT, 3: MoE), and a few structured encodings of working
# strategies (first byte 0/1; see fuzz/directive_seq_fuzzer.cpp).
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=build-fuzz

ir=$OUT/piper_ir_fuzzer/seeds
if ! ls "$ir"/* >/dev/null 2>&1; then
  mkdir -p "$ir"
  grep -rl --include='*.mlir' 'piper\.' test | sort | python3 -c '
import hashlib, sys
out = sys.argv[1]
for path in sys.stdin.read().split():
    for part in open(path, errors="replace").read().split("// -----"):
        data = part.encode()
        if "piper." in part and len(data) <= 65536:
            name = hashlib.md5(data).hexdigest()[:12]
            open(f"{out}/{name}.mlir", "wb").write(data)
' "$ir"
fi

seq=$OUT/directive_seq_fuzzer
mkdir -p "$seq/models" "$seq/seeds"
[ -f "$seq/models/gpt.mlir" ] ||
  build/bin/piper-gen --model=gpt --config=tiny-gpt --pp=2 --mesh=pp=2,dp=2,tp=2 \
    -o "$seq/models/gpt.mlir"
[ -f "$seq/models/moe.mlir" ] ||
  build/bin/piper-gen --model=moe --config=tiny-moe --pp=2 --mesh=pp=2,dp=2,ep=2 \
    -o "$seq/models/moe.mlir"
for f in examples/strategies/tiny-*.json; do
  case $f in *moe*) mode='\x03' ;; *) mode='\x02' ;; esac
  { printf "$mode"; cat "$f"; } >"$seq/seeds/json-$(basename "$f")"
done
# Structured: [op a b c] per directive. split {} n=4; place PP0 -> pp 0 and
# PP1 -> pp 1; replicate over dp, ZeRO-1; schedule 1f1b (GPT), plus an
# expert shard over ep (MoE) and a tensor shard over tp (GPT).
printf '\x00\x00\x00\x02\x00\x02\x02\x00\x00\x02\x0e\x00\x01\x03\x00\x02\x01\x07\x01\x00\x00' \
  >"$seq/seeds/enc-gpt-pp2-dp2-1f1b"
printf '\x01\x00\x00\x02\x00\x02\x02\x00\x00\x02\x0e\x00\x01\x04\x00\x08\x02\x03\x00\x02\x01\x07\x01\x00\x00' \
  >"$seq/seeds/enc-moe-pp2-ep2-dp2-1f1b"
printf '\x00\x00\x00\x02\x00\x02\x02\x00\x00\x02\x0e\x00\x01\x05\x00\x04\x18\x07\x00\x00\x00' \
  >"$seq/seeds/enc-gpt-pp2-tp2-gpipe"
