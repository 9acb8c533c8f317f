#!/usr/bin/env bash
# Runs Piper's libFuzzer targets (fuzz/*.cpp) for a bounded time each, one
# at a time, and prints per target the executions, the corpus size, the peak
# RSS and what was found (crashes, leaks, timeouts, out-of-memory).
# Built here with clang-22 and -fsanitize=fuzzer,address, outside the
# CMake build (which never builds them), into build-fuzz/.
#
#   bench/fuzz.sh [SECONDS] [TARGET...]   # default 60 s, every target
#
# The issue asks 600 s per target, run outside CI. The targets run at
# `nice -n ${FUZZ_NICE:-19}` (the machine is shared).
#
# Targets:
#   plan_manifest_fuzzer      plan.json loading (runtime)
#   json_directives_fuzzer    JSON directives
#   schedule_csv_fuzzer       the schedule CSV importer
#   checkpoint_index_fuzzer   checkpoint indexes and safetensors headers
#   piper_ir_fuzzer           parsing + verifying piper IR
#   directive_seq_fuzzer      directive sequences on generated models
# The last two link the MLIR libraries and Piper's own: Piper's dialect,
# transform ops, directives and front-half passes are compiled here with the
# fuzzer's coverage instrumentation and ASan (build-fuzz/obj/); the Debian
# MLIR libraries are not instrumented, so coverage feedback comes only from
# Piper's code, and dictionaries (fuzz/*.dict) of dialect keywords and
# directive names make up for the parser's blind spots. They need the
# release build (build/: generated headers, piper-gen for the seeds).
#
# Seeds: plan.json of compiled plans, the JSON strategies of examples/ and
# the tests, the unit tests' schedule CSVs, a checkpoint saved here, the
# tests' piper-dialect .mlir files, and tiny GPT / MoE models from piper-gen.
# Findings are kept in build-fuzz/<target>/crashes/ (libFuzzer's
# crash-/leak-/timeout-/oom- prefixes); the log in build-fuzz/<target>/last.log.
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_PER_TARGET=${1:-60}
shift || true
ALL=(plan_manifest_fuzzer json_directives_fuzzer schedule_csv_fuzzer
     checkpoint_index_fuzzer piper_ir_fuzzer directive_seq_fuzzer)
TARGETS=("$@")
[ ${#TARGETS[@]} -gt 0 ] || TARGETS=("${ALL[@]}")
OUT=build-fuzz
CXX=${CXX_FUZZ:-clang++-22}
LLVM=/usr/lib/llvm-22
NICE=(nice -n "${FUZZ_NICE:-19}")
mkdir -p "$OUT/bin" "$OUT/obj"
FLAGS=(-std=c++17 -O1 -g -fsanitize=fuzzer,address -Iinclude -Ibuild/include
       -Iruntime/include)

# True when $1 is missing or older than any of the other files.
stale() {
  local bin=$1; shift
  [ -e "$bin" ] || return 0
  local f
  for f in "$@"; do [ "$f" -nt "$bin" ] && return 0; done
  return 1
}

wants() { local t; for t in "${TARGETS[@]}"; do [ "$t" = "$1" ] && return 0; done; return 1; }

PLAN_SRCS=(runtime/lib/plan/Json.cpp runtime/lib/plan/Manifest.cpp
           runtime/lib/plan/ManifestReader.cpp runtime/lib/plan/ManifestWriter.cpp
           runtime/lib/plan/ManifestValidate.cpp)
build_small() {
  local src
  if wants plan_manifest_fuzzer; then
    src=(fuzz/plan_manifest_fuzzer.cpp "${PLAN_SRCS[@]}")
    stale "$OUT/bin/plan_manifest_fuzzer" "${src[@]}" &&
      "$CXX" "${FLAGS[@]}" "${src[@]}" -o "$OUT/bin/plan_manifest_fuzzer"
  fi
  if wants json_directives_fuzzer; then
    src=(fuzz/json_directives_fuzzer.cpp lib/Directives/JSONDirectives.cpp
         lib/Directives/JSONPositions.cpp)
    stale "$OUT/bin/json_directives_fuzzer" "${src[@]}" &&
      "$CXX" "${FLAGS[@]}" -isystem "$LLVM/include" -fno-rtti "${src[@]}" \
        -L"$LLVM/lib" -lLLVM -Wl,-rpath,"$LLVM/lib" -o "$OUT/bin/json_directives_fuzzer"
  fi
  if wants schedule_csv_fuzzer; then
    src=(fuzz/schedule_csv_fuzzer.cpp lib/Schedule/PyTorchCSV.cpp
         lib/Schedule/Action.cpp lib/Schedule/Validate.cpp lib/Schedule/Simulator.cpp)
    stale "$OUT/bin/schedule_csv_fuzzer" "${src[@]}" &&
      "$CXX" "${FLAGS[@]}" "${src[@]}" -o "$OUT/bin/schedule_csv_fuzzer"
  fi
  if wants checkpoint_index_fuzzer; then
    src=(fuzz/checkpoint_index_fuzzer.cpp runtime/lib/ckpt/*.cpp "${PLAN_SRCS[@]}")
    stale "$OUT/bin/checkpoint_index_fuzzer" "${src[@]}" &&
      "$CXX" "${FLAGS[@]}" "${src[@]}" -lpthread -o "$OUT/bin/checkpoint_index_fuzzer"
  fi
  return 0
}
build_small
if wants piper_ir_fuzzer || wants directive_seq_fuzzer; then
  bench/fuzz-build-mlir.sh
fi

# Seed corpora.
seed_small() {
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
}
if wants plan_manifest_fuzzer || wants json_directives_fuzzer ||
   wants schedule_csv_fuzzer || wants checkpoint_index_fuzzer; then
  seed_small
fi
if wants piper_ir_fuzzer || wants directive_seq_fuzzer; then
  bench/fuzz-seed-mlir.sh
fi

# Extra libFuzzer flags per target: dictionaries, and the IR targets' own
# longer per-input timeout (a whole front half runs per input).
extra_flags() {
  case $1 in
    piper_ir_fuzzer) echo "-dict=fuzz/piper_ir.dict -timeout=20 -close_fd_mask=3" ;;
    directive_seq_fuzzer) echo "-dict=fuzz/directive_seq.dict -timeout=30 -close_fd_mask=3" ;;
    json_directives_fuzzer) echo "-dict=fuzz/directive_seq.dict -timeout=10" ;;
    *) echo "-timeout=10" ;;
  esac
}

printf '%-24s %8s %11s %7s %8s %7s %6s %8s %4s\n' target seconds executions \
  corpus peak_MB crashes leaks timeouts oom
for target in "${TARGETS[@]}"; do
  dir="$OUT/$target"
  mkdir -p "$dir/corpus" "$dir/crashes"
  log="$dir/last.log"
  set +e
  # The MLIR targets mix instrumented and uninstrumented code: LLVM's
  # allocators, inlined into Piper's instrumented objects, poison memory that
  # the uninstrumented MLIR libraries then use as theirs (a false
  # use-after-poison); manual poisoning is therefore ignored.
  # shellcheck disable=SC2046
  ASAN_OPTIONS=${ASAN_OPTIONS:-allow_user_poisoning=0} \
  "${NICE[@]}" "$OUT/bin/$target" "$dir/corpus" "$dir/seeds" \
    -max_total_time="$SECONDS_PER_TARGET" -max_len=65536 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$dir/crashes/" \
    $(extra_flags "$target") >"$log" 2>&1
  set -e
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo "?")
  peak=$(grep -o 'stat::peak_rss_mb: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo "?")
  corpus=$(ls "$dir/corpus" | wc -l)
  count() { ls "$dir/crashes" | grep -c "^$1-" || true; }
  printf '%-24s %8s %11s %7s %8s %7s %6s %8s %4s\n' "$target" "$SECONDS_PER_TARGET" \
    "$execs" "$corpus" "$peak" "$(count crash)" "$(count leak)" "$(count timeout)" \
    "$(count oom)"
done
