#!/usr/bin/env bash
# The HERE half of scripts/gpu-check, end to end on this GPU-less machine:
# the bundle builds within 60 MiB, unpacks elsewhere, its relocated MPI
# starts a singleton (no mpiexec, the bundle's orted), and run.sh prints the
# table with every row SKIPPED (never PASS) and exits 77. On a GPU machine
# this test exits 77 itself: run.sh is the check there.
#   gpu-check-bundle.sh SOURCE_DIR BUILD_DIR
set -u
src=$1 build=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
BUILD=$build "$src/scripts/gpu-check" -o "$tmp/b.tar.gz" || fail "gpu-check"
mkdir "$tmp/there" && tar -C "$tmp/there" -xzf "$tmp/b.tar.gz" || fail "untar"
out=$(cd / && env -u PIPER_RT_CUDA_DRIVER "$tmp/there/gpu-bundle/run.sh" 2>&1)
status=$?
echo "$out"
[ $status -eq 77 ] || { [ $status -ne 1 ] && exit 77; fail "run.sh exit $status"; }
grep -q "the bundle's MPI does not start" <<<"$out" && fail "relocated MPI"
[ "$(grep -cE '^[1-5] .* SKIPPED ' <<<"$out")" -eq 5 ] || fail "5 SKIPPED rows"
grep -qE '^[0-9a-z]+ .* PASS ' <<<"$out" && fail "a row passed without a GPU"
echo "PASS"
