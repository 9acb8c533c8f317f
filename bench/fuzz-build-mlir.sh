#!/usr/bin/env bash
# Builds the two libFuzzer targets that link MLIR (piper_ir_fuzzer,
# directive_seq_fuzzer) into build-fuzz/bin/; called by bench/fuzz.sh.
#
# Piper's dialect (PiperIR), its front-half passes (PiperTransforms), its
# transform ops, the JSON directives and the front half of lib/Compile are
# compiled again here, from the release build's compile commands
# (build/compile_commands.json), with -O1 -g, assertions on (except in
# PiperTransformOps.cpp, whose registration of transform ops calls a check
# that only assertion-enabled MLIR libraries define) and
# -fsanitize=fuzzer-no-link,address, into build-fuzz/obj/; the rest is linked
# as piper-compile is, from the release build's archives and the Debian MLIR
# libraries, which have no coverage instrumentation and no ASan: coverage
# feedback comes only from Piper's code. Needs the release build of
# piper-compile (ninja -C build piper-compile). Compiles go through the
# machine-wide build lock (FUZZ_LOCK_HELD=1: the caller holds it already).
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=build-fuzz
mkdir -p "$OUT/obj" "$OUT/bin"
LOCK=(flock /tmp/piper-build.lock)
[ "${FUZZ_LOCK_HELD:-0}" = 1 ] && LOCK=()
[ -f build/compile_commands.json ] && [ -f build/lib/libPiperCompile.a ] || {
  echo "fuzz-build-mlir: build piper-compile first (ninja -C build piper-compile)" >&2
  exit 1; }

INSTRUMENTED=(lib/Dialect/Piper/IR/*.cpp lib/Dialect/Piper/Transforms/*.cpp
              lib/TransformOps/*.cpp lib/Directives/*.cpp lib/Analysis/*.cpp
              lib/Compile/FrontHalf.cpp lib/Compile/ModelDirectives.cpp)
SAN=(-O1 -g -fsanitize=fuzzer-no-link,address)

# One compile command per source: the release build's, with the sanitizer
# flags for -O3 -DNDEBUG, no ccache, and the object under build-fuzz/obj/.
python3 - "$OUT/obj" "${SAN[*]}" "${INSTRUMENTED[@]}" fuzz/piper_ir_fuzzer.cpp \
    fuzz/directive_seq_fuzzer.cpp >"$OUT/obj/commands.txt" <<'EOF'
import json, os, shlex, sys
out, san, sources = sys.argv[1], sys.argv[2].split(), sys.argv[3:]
root = os.getcwd()
db = {os.path.relpath(e["file"], root): e["command"]
      for e in json.load(open("build/compile_commands.json"))}
template = db["lib/Compile/FrontHalf.cpp"]
for src in sources:
    words = shlex.split(db.get(src, template))
    drop = ("-O3", "ccache") if src.endswith("PiperTransformOps.cpp") else \
        ("-O3", "-DNDEBUG", "ccache")
    words = [w for w in words if w not in drop]
    i = words.index("-o"); del words[i:i + 2]
    i = words.index("-c"); del words[i:i + 2]
    obj = os.path.join(out, src.replace("/", "_") + ".o")
    # Rebuild when the source or any Piper header is newer than the object.
    print(obj, src, shlex.join(words[:1] + san + words[1:] + ["-c", src, "-o", obj]))
EOF
newest_header=$(find include build/include -name '*.h' -o -name '*.inc' | xargs ls -t | head -1)
todo=()
while read -r obj src cmd; do
  if [ ! -e "$obj" ] || [ "$src" -nt "$obj" ] || [ "$newest_header" -nt "$obj" ]; then
    todo+=("$cmd")
  fi
done <"$OUT/obj/commands.txt"
if [ ${#todo[@]} -gt 0 ]; then
  echo "fuzz-build-mlir: compiling ${#todo[@]} files" >&2
  printf '%s\0' "${todo[@]}" |
    "${LOCK[@]}" xargs -0 -P2 -I{} bash -c '{}'
fi

# Link as piper-compile links (its archives and MLIR libraries), with the
# instrumented objects first so that their archive members are not used.
link=$(cd build && ninja -t commands piper-compile | tail -1)
libs=$(echo "$link" | tr ' ' '\n' | grep -E '\.a$|\.so[.0-9]*$|^-l' | sed 's|^lib/|build/lib/|')
OBJS=()
for src in "${INSTRUMENTED[@]}"; do OBJS+=("$OUT/obj/${src//\//_}.o"); done
for target in piper_ir_fuzzer directive_seq_fuzzer; do
  obj="$OUT/obj/fuzz_$target.cpp.o"
  if [ ! -e "$OUT/bin/$target" ] || [ -n "$(find "${OBJS[@]}" "$obj" -newer "$OUT/bin/$target")" ]; then
    # shellcheck disable=SC2086
    "${LOCK[@]}" clang++-22 -fsanitize=fuzzer,address -fuse-ld=lld \
      "$obj" "${OBJS[@]}" -Wl,--start-group $libs -Wl,--end-group \
      -Wl,-rpath,/usr/lib/llvm-22/lib -o "$OUT/bin/$target"
  fi
done
