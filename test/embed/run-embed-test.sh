#!/usr/bin/env bash
#===- run-embed-test.sh - Embed an installed Piper in a host compiler -----===#
#
# Part of the Piper project, under the Apache License v2.0 with LLVM
# Exceptions. See LICENSE for license information.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#
#===------------------------------------------------------------------------===#
#
# Proves that an installed Piper is enough to build a host compiler:
#   1. installs the Piper build into <scratch>/install;
#   2. configures and builds examples/embed (embed-opt) against that install
#      only, with the compilers, launcher and linker of the Piper build;
#   3. runs embed-opt on test/embed/input.mlir: the IR round-trips and
#      --piper-print-summary works.
#
# Usage: run-embed-test.sh <piper-build-dir> <piper-source-dir> <scratch-dir>
#
# Everything else (compilers, MLIR, FileCheck) is read from the Piper build's
# CMakeCache.txt; FILECHECK in the environment overrides FileCheck. The
# installed targets must be built first (ctest does not build).
#
#===------------------------------------------------------------------------===#

set -euo pipefail

if [[ $# -ne 3 ]]; then
  echo "usage: $0 <piper-build-dir> <piper-source-dir> <scratch-dir>" >&2
  exit 2
fi

abspath() { mkdir -p "$1" && cd "$1" && pwd; }
BUILD_DIR=$(cd "$1" && pwd)
SOURCE_DIR=$(cd "$2" && pwd)
SCRATCH_DIR=$(abspath "$3")
INSTALL_DIR=$SCRATCH_DIR/install
EMBED_BUILD_DIR=$SCRATCH_DIR/build
INPUT=$SOURCE_DIR/test/embed/input.mlir

CURRENT_STEP="start"
step() {
  CURRENT_STEP=$1
  echo "== [${SECONDS}s] $1"
}
trap 'echo "FAIL: embed test failed during: ${CURRENT_STEP}" >&2' ERR

# Reads VAR from the Piper build's CMake cache (empty if unset).
CACHE=$BUILD_DIR/CMakeCache.txt
[[ -f $CACHE ]] || { echo "FAIL: $CACHE not found" >&2; exit 1; }
cache_get() {
  sed -n "s/^$1:[A-Z]*=//p" "$CACHE" | head -n 1
}

# Only the arguments decide which Piper is found.
unset Piper_DIR Piper_ROOT PIPER_DIR PIPER_ROOT CMAKE_PREFIX_PATH || true

MLIR_DIR=$(cache_get MLIR_DIR)
[[ -n $MLIR_DIR ]] || { echo "FAIL: MLIR_DIR not in $CACHE" >&2; exit 1; }
# <prefix>/lib/cmake/mlir -> <prefix>/bin, where the LLVM tools live.
LLVM_TOOLS_DIR=$(cd "$MLIR_DIR/../../../bin" && pwd)
FILECHECK=${FILECHECK:-$LLVM_TOOLS_DIR/FileCheck}
[[ -x $FILECHECK ]] || { echo "FAIL: FileCheck not found at $FILECHECK" >&2; exit 1; }

#===------------------------------------------------------------------------===#
step "install $BUILD_DIR into $INSTALL_DIR"
rm -rf "$INSTALL_DIR" "$EMBED_BUILD_DIR"
if ! cmake --install "$BUILD_DIR" --prefix "$INSTALL_DIR" > "$SCRATCH_DIR/install.log"; then
  cat "$SCRATCH_DIR/install.log" >&2
  echo "FAIL: cmake --install failed (a missing file is named above): every" \
       "target installed into PiperTargets must be built first;" \
       "ninja -C $BUILD_DIR builds them all" >&2
  exit 1
fi
[[ -f $INSTALL_DIR/lib/cmake/piper/PiperConfig.cmake ]]
[[ -f $INSTALL_DIR/include/piper/InitAllPiper.h ]]

#===------------------------------------------------------------------------===#
step "configure examples/embed"
CONFIGURE_ARGS=(
  -G Ninja
  -S "$SOURCE_DIR/examples/embed"
  -B "$EMBED_BUILD_DIR"
  "-DCMAKE_PREFIX_PATH=$INSTALL_DIR"
  "-DMLIR_DIR=$MLIR_DIR"
)
# Same compilers, build type, sanitizers and linker as the Piper build: an
# instrumented Piper (debug preset) needs an instrumented consumer.
for var in CMAKE_BUILD_TYPE CMAKE_C_COMPILER CMAKE_CXX_COMPILER LLVM_USE_LINKER \
           LLVM_USE_SANITIZER \
           CMAKE_EXE_LINKER_FLAGS; do
  value=$(cache_get "$var")
  if [[ -n $value ]]; then
    CONFIGURE_ARGS+=("-D$var=$value")
  fi
done
for var in CMAKE_C_COMPILER_LAUNCHER CMAKE_CXX_COMPILER_LAUNCHER; do
  value=$(cache_get "$var")
  if [[ -n $value ]] && command -v "$value" > /dev/null; then
    CONFIGURE_ARGS+=("-D$var=$value")
  fi
done
cmake "${CONFIGURE_ARGS[@]}"

# The example must have found the install, not the build tree or a package
# registry entry.
FOUND_PIPER_DIR=$(sed -n 's/^Piper_DIR:[A-Z]*=//p' "$EMBED_BUILD_DIR/CMakeCache.txt")
if [[ $FOUND_PIPER_DIR != "$INSTALL_DIR/lib/cmake/piper" ]]; then
  echo "FAIL: examples/embed found Piper in '$FOUND_PIPER_DIR'," \
       "not in $INSTALL_DIR/lib/cmake/piper" >&2
  exit 1
fi

#===------------------------------------------------------------------------===#
step "build embed-opt"
cmake --build "$EMBED_BUILD_DIR" --target embed-opt
EMBED_OPT=$EMBED_BUILD_DIR/bin/embed-opt
[[ -x $EMBED_OPT ]]

# Static MLIR libraries only: libMLIR.so next to them would mean two copies
# of every MLIR global.
step "check embed-opt does not load libMLIR.so"
"$LLVM_TOOLS_DIR/llvm-readelf" -d "$EMBED_OPT" > "$SCRATCH_DIR/dynamic.txt"
if grep -q 'libMLIR\.so' "$SCRATCH_DIR/dynamic.txt"; then
  echo "FAIL: embed-opt links libMLIR.so as well as static MLIR libraries" >&2
  exit 1
fi

#===------------------------------------------------------------------------===#
step "embed-opt --help names the host and Piper's passes"
"$EMBED_OPT" --help > "$SCRATCH_DIR/help.txt"
grep -q 'OVERVIEW: Example host compiler embedding Piper' "$SCRATCH_DIR/help.txt"
grep -q -- '--piper-print-summary' "$SCRATCH_DIR/help.txt"

step "round trip of piper.mesh and piper.annotate"
"$EMBED_OPT" "$INPUT" > "$SCRATCH_DIR/roundtrip.mlir"
"$EMBED_OPT" "$SCRATCH_DIR/roundtrip.mlir" \
  | "$FILECHECK" -enable-var-scope --check-prefix=ROUNDTRIP "$INPUT"

step "embed-opt --piper-print-summary"
"$EMBED_OPT" --piper-print-summary "$INPUT" -o /dev/null \
  > "$SCRATCH_DIR/summary.txt"
"$FILECHECK" --check-prefix=SUMMARY "$INPUT" < "$SCRATCH_DIR/summary.txt"

trap - ERR
echo "PASS: embed-opt built against $INSTALL_DIR in ${SECONDS}s"
