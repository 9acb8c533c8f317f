#!/usr/bin/env bash
# Runs one multi-rank runtime test under mpiexec and judges it by its exit
# status, its output and its wall time, so that a hang fails the test (via
# `timeout`) instead of stalling ctest.
#
#   run-mpi.sh <mpiexec> <ranks> <expect: pass|fail> <max-seconds> \
#              <regex that the output must match, or -> -- <program> <args...>
#
# pass: exit 0 and one "PASS" line per rank. fail: a non-zero exit, no
# "UNREACHABLE" line (no rank got past the failure), within max-seconds.
set -u
mpiexec=$1 ranks=$2 expect=$3 max=$4 regex=$5
shift 5
[ "$1" = "--" ] && shift

log=$(mktemp)
# OpenMPI's session directory of its own: two jobs starting at once under
# one TMPDIR race to create the same ompi.<host>.<uid> (orte_init fails).
session=$(mktemp -d)
export OMPI_MCA_orte_tmpdir_base=$session
trap 'rm -f "$log"; rm -rf "$session"' EXIT
start=$(date +%s%N)
# A hard limit well above max-seconds: the test must fail, not hang, if the
# runtime's own timeout does not fire.
timeout --kill-after=5 $((max * 3)) "$mpiexec" -n "$ranks" "$@" >"$log" 2>&1
status=$?
# Milliseconds in plain bash arithmetic (no bc on a minimal Debian).
elapsed_ms=$((($(date +%s%N) - start) / 1000000))
elapsed=$(printf "%d.%03d" $((elapsed_ms / 1000)) $((elapsed_ms % 1000)))
cat "$log"
echo "run-mpi: exit status $status after ${elapsed} s (limit ${max} s)"

die() { echo "run-mpi: FAILED: $*"; exit 1; }
# 124: `timeout` stopped it. (137 alone is not a hang: mpiexec reports a
# rank killed by SIGKILL that way too; the elapsed time below tells them apart.)
[ "$status" -eq 124 ] && die "hung: stopped by timeout"
if [ "$elapsed_ms" -gt $((max * 1000)) ]; then
  die "took ${elapsed} s, more than ${max} s"
fi
if [ "$regex" != "-" ] && ! grep -Eq -- "$regex" "$log"; then
  die "output does not match /$regex/"
fi
if [ "$expect" = pass ]; then
  [ "$status" -eq 0 ] || die "exit status $status"
  passes=$(grep -c '^PASS ' "$log")
  [ "$passes" -eq "$ranks" ] || die "$passes of $ranks ranks passed"
else
  [ "$status" -ne 0 ] || die "exit status 0, expected a failure"
  grep -q UNREACHABLE "$log" && die "a rank got past the failure"
fi
echo "run-mpi: ok"
