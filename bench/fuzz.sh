#!/usr/bin/env bash
# Runs Piper's libFuzzer targets (fuzz/*.cpp) for a bounded time each and
# prints, per target, the executions, the corpus size and the crashes found.
# Built here with clang-22 and -fsanitize=fuzzer,address, outside the
# CMake build (which never builds them), into build-fuzz/.
#
#   bench/fuzz.sh [SECONDS]     # default 60 per target; the issue asks 600
#
# Targets: plan.json loading, JSON directives, the schedule CSV importer,
# checkpoint indexes and safetensors headers. Seeds: plan.json of a compiled
# plan (build/test/... after ctest, or one compiled here), the JSON
# strategies in examples/ and the tests, the unit tests' schedule CSVs, and
# a checkpoint saved here.
# Crashing inputs are kept in build-fuzz/<target>/crashes/.
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_PER_TARGET=${1:-60}
OUT=build-fuzz
CXX=${CXX_FUZZ:-clang++-22}
LLVM=/usr/lib/llvm-22
mkdir -p "$OUT/bin"
FLAGS=(-std=c++17 -O1 -g -fsanitize=fuzzer,address -Iinclude -Ibuild/include
       -Iruntime/include)

"$CXX" "${FLAGS[@]}" fuzz/plan_manifest_fuzzer.cpp runtime/lib/plan/Json.cpp \
  runtime/lib/plan/Manifest.cpp runtime/lib/plan/ManifestReader.cpp \
  runtime/lib/plan/ManifestWriter.cpp runtime/lib/plan/ManifestValidate.cpp \
  -o "$OUT/bin/plan_manifest_fuzzer"
"$CXX" "${FLAGS[@]}" -isystem "$LLVM/include" -fno-rtti \
  fuzz/json_directives_fuzzer.cpp lib/Directives/JSONDirectives.cpp \
  lib/Directives/JSONPositions.cpp \
  -L"$LLVM/lib" -lLLVM -Wl,-rpath,"$LLVM/lib" -o "$OUT/bin/json_directives_fuzzer"
"$CXX" "${FLAGS[@]}" fuzz/schedule_csv_fuzzer.cpp lib/Schedule/PyTorchCSV.cpp \
  lib/Schedule/Action.cpp lib/Schedule/Validate.cpp lib/Schedule/Simulator.cpp \
  -o "$OUT/bin/schedule_csv_fuzzer"
"$CXX" "${FLAGS[@]}" fuzz/checkpoint_index_fuzzer.cpp runtime/lib/ckpt/*.cpp \
  runtime/lib/plan/Json.cpp runtime/lib/plan/Manifest.cpp \
  runtime/lib/plan/ManifestReader.cpp runtime/lib/plan/ManifestWriter.cpp \
  runtime/lib/plan/ManifestValidate.cpp -lpthread \
  -o "$OUT/bin/checkpoint_index_fuzzer"

# Seed corpora.
mkdir -p "$OUT/plan_manifest_fuzzer/seeds" "$OUT/json_directives_fuzzer/seeds"
if ! ls "$OUT"/plan_manifest_fuzzer/seeds/*.json >/dev/null 2>&1; then
  build/bin/piper-gen --model=mlp --config=tiny-mlp --mesh=dp=1 -o "$OUT/mlp.mlir"
  build/bin/piper-compile "$OUT/mlp.mlir" -o "$OUT/seed.plan"
  cp "$OUT/seed.plan/plan.json" "$OUT/plan_manifest_fuzzer/seeds/serial.json"
  { find build/test -name plan.json 2>/dev/null || true; } | head -20 |
    while read -r f; do
      cp "$f" "$OUT/plan_manifest_fuzzer/seeds/$(echo "$f" | md5sum | cut -c1-12).json"
    done || true
fi
cp examples/strategies/*.json "$OUT/json_directives_fuzzer/seeds/"
{ find build/test -name '*.json' -size -8k 2>/dev/null || true; } |
  grep -v plan.json | head -50 | while read -r f; do
    cp "$f" "$OUT/json_directives_fuzzer/seeds/$(echo "$f" | md5sum | cut -c1-12).json"
  done || true

# The schedule CSVs of the unit tests; checkpoint indexes (first byte 0)
# and safetensors headers (first byte 1) of a small checkpoint saved here.
mkdir -p "$OUT/schedule_csv_fuzzer/seeds" "$OUT/checkpoint_index_fuzzer/seeds"
cp test/unit/Schedule/Inputs/*.csv "$OUT/schedule_csv_fuzzer/seeds/"
if ! ls "$OUT"/checkpoint_index_fuzzer/seeds/* >/dev/null 2>&1; then
  [ -d "$OUT/seed.plan" ] || {
    build/bin/piper-gen --model=mlp --config=tiny-mlp --mesh=dp=1 -o "$OUT/mlp.mlir"
    build/bin/piper-compile "$OUT/mlp.mlir" -o "$OUT/seed.plan"; }
  rm -rf "$OUT/seed.ckpt"
  build/bin/piper-run "$OUT/seed.plan" --steps=1 --save="$OUT/seed.ckpt" >/dev/null
  build/bin/piper-ckpt consolidate "$OUT/seed.ckpt" -o "$OUT/seed.safetensors" >/dev/null
  { printf '\x00'; cat "$OUT"/seed.ckpt/step-*/index.json; } \
    >"$OUT/checkpoint_index_fuzzer/seeds/index"
  { printf '\x01'; head -c 65535 "$OUT/seed.safetensors"; } \
    >"$OUT/checkpoint_index_fuzzer/seeds/safetensors"
fi

printf '%-24s %10s %12s %8s %8s\n' target seconds executions corpus crashes
for target in plan_manifest_fuzzer json_directives_fuzzer schedule_csv_fuzzer \
    checkpoint_index_fuzzer; do
  dir="$OUT/$target"
  mkdir -p "$dir/corpus" "$dir/crashes"
  log="$dir/last.log"
  set +e
  "$OUT/bin/$target" "$dir/corpus" "$dir/seeds" -max_total_time="$SECONDS_PER_TARGET" \
    -max_len=65536 -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$dir/crashes/" >"$log" 2>&1
  set -e
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo "?")
  corpus=$(ls "$dir/corpus" | wc -l)
  crashes=$(ls "$dir/crashes" | wc -l)
  printf '%-24s %10s %12s %8s %8s\n' "$target" "$SECONDS_PER_TARGET" "$execs" "$corpus" "$crashes"
done
