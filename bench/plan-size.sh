#!/usr/bin/env bash
# Compile time, peak memory and object sizes of piper-compile, model to
# plan directory, for issue 14's two cases:
#
#   gpt       the dense GPT of bench/gpt-step.sh (hidden 256, 4 layers,
#             4 heads, FFN 1024, sequence 64, batch 8, vocabulary 256, f32),
#             serial: one program
#   qwen3_1b  qwen3_1b in f32, PP8 x DP4 x EP4, 16 microbatches of one
#             sequence, 1F1B, experts sharded over ep, dense parameters
#             replicated over dp x ep with ZeRO-1, experts over dp: eight
#             programs, one per pipeline rank
#
# Per case: wall seconds, CPU seconds (user + system, the compile's own
# work whatever the machine's load), peak RSS, the share of each stage
# (piper-compile --timing, summed over the programs' threads: front half,
# MLIR lowering, LLVM translation, O2, codegen, link), and every role's .so
# with its size and its data (.rodata + .data + .bss): a plan's data must
# not grow with the model. The script fails if a .so exceeds LIMIT_MIB
# (default 16).
#
#   bench/plan-size.sh            # both cases (qwen3_1b: ~35 s of CPU)
#   bench/plan-size.sh gpt        # one case
#   bench/plan-size.sh --smoke    # tiny-gpt serial and tiny-moe PP2 x DP2 x
#                                 # EP2 (a ctest, bench-plan-size-smoke)
#
# Builds nothing: piper-gen and piper-compile come from $BUILD/bin (BUILD
# default build; PIPER_BIN overrides). Environment: JOBS (piper-compile
# --jobs; default 0, one per core), LIMIT_MIB.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
BIN=${PIPER_BIN:-$BUILD/bin}
JOBS=${JOBS:-0}
LIMIT_MIB=${LIMIT_MIB:-16}

case "${1:-}" in
--smoke) CASES=(tiny-gpt tiny-moe) ;;
"") CASES=(gpt qwen3_1b) ;;
gpt | qwen3_1b | tiny-gpt | tiny-moe) CASES=("$1") ;;
-h | --help)
  sed -n '2,/^set /p' "$0" | grep '^#' | sed 's/^# \{0,1\}//'
  exit 0
  ;;
*)
  echo "plan-size.sh: unknown case '$1' (gpt, qwen3_1b, --smoke, --help)" >&2
  exit 2
  ;;
esac

for tool in piper-gen piper-compile; do
  if [ ! -x "$BIN/$tool" ]; then
    echo "plan-size.sh: $BIN/$tool not found; build it first or set BUILD" >&2
    exit 1
  fi
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The pipeline strategy as a transform script: split into MB microbatches,
# stage s on pipeline rank s, experts sharded over ep, dense parameters
# replicated over dp x ep with ZeRO-1, experts over dp, 1F1B.
moe_strategy() { # stages microbatches
  local stages=$1 mb=$2 s
  local any='(!transform.any_op) -> !transform.any_op'
  echo 'module attributes {transform.with_named_sequence} {'
  echo '  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {'
  echo "    %all = transform.piper.match_nodes {} in %root : $any"
  echo "    %mb = transform.piper.split %all into $mb microbatches : $any"
  for ((s = 0; s < stages; s++)); do
    echo "    %s$s = transform.piper.match_nodes {PP = $s} in %root : $any"
    echo "    %x$s = transform.piper.place %s$s on @mesh {pp = $s} : $any"
  done
  echo "    %nodes = transform.piper.match_nodes {} in %root : $any"
  echo "    %ep = transform.piper.shard %nodes expert over @mesh [\"ep\"] : $any"
  echo "    %dense = transform.piper.replicate %nodes over @mesh [\"dp\", \"ep\"] zero = 1 where {EP = \"none\"} : $any"
  echo "    %experts = transform.piper.replicate %nodes over @mesh [\"dp\"] where {EP = \"*\"} : $any"
  echo "    transform.piper.schedule \"1f1b\" in %root : !transform.any_op"
  echo '    transform.yield'
  echo '  }'
  echo '}'
}

# Writes $tmp/model.mlir (and $tmp/strategy.mlir) for a case; prints its
# description.
generate() { # case
  local gen=("$BIN/piper-gen") strategy=""
  case $1 in
  gpt)
    gen+=(--model=gpt --config=tiny-gpt --hidden=256 --layers=4 --heads=4
      --ffn=1024 --seq=64 --batch=8 --vocab=256 --dtype=f32 --mesh=dp=1)
    echo "GPT hidden 256, 4 layers, f32, serial" ;;
  tiny-gpt)
    gen+=(--model=gpt --config=tiny-gpt --dtype=f32 --mesh=dp=1)
    echo "tiny-gpt, f32, serial" ;;
  qwen3_1b)
    gen+=(--model=moe --config=qwen3_1b --dtype=f32 --pp=8
      --mesh=dp=4,pp=8,ep=4 --batch=16)
    strategy=$(moe_strategy 8 16)
    echo "qwen3_1b, f32, PP8 x DP4 x EP4, 16 microbatches, 1F1B, dense ZeRO-1" ;;
  tiny-moe)
    gen+=(--model=moe --config=tiny-moe --dtype=f32 --pp=2
      --mesh=dp=2,pp=2,ep=2 --batch=4)
    strategy=$(moe_strategy 2 4)
    echo "tiny-moe, f32, PP2 x DP2 x EP2, 4 microbatches, 1F1B, dense ZeRO-1" ;;
  esac
  "${gen[@]}" -o "$tmp/model.mlir"
  rm -f "$tmp/strategy.mlir"
  if [ -n "$strategy" ]; then
    echo "$strategy" > "$tmp/strategy.mlir"
  fi
}

# Bytes of data (.rodata, .data, .bss and their variants) in an object.
data_bytes() {
  size -A "$1" | awk '$1 ~ /^\.(l?rodata|l?data|data\.rel\.ro|l?bss|tdata|tbss)$/ { d += $2 } END { print d + 0 }'
}

status=0
for name in "${CASES[@]}"; do
  description=$(generate "$name")
  flags=(-o "$tmp/plan" --jobs="$JOBS" --timing)
  [ -f "$tmp/strategy.mlir" ] && flags+=(--directives="$tmp/strategy.mlir")
  rm -rf "$tmp/plan"
  /usr/bin/time -f '%e %U %S %M' -o "$tmp/time" \
    "$BIN/piper-compile" "$tmp/model.mlir" "${flags[@]}" 2> "$tmp/timing"
  read -r wall user sys rss < "$tmp/time"
  echo "$name: $description"
  awk -v w="$wall" -v u="$user" -v s="$sys" -v r="$rss" 'BEGIN {
    printf "  piper-compile: %.1f s wall, %.1f s CPU, %.0f MiB peak RSS\n",
      w, u + s, r / 1024 }'
  # The report's top-level stages (two spaces before the name; passes are
  # nested deeper), first column: seconds summed over threads.
  awk 'match($0, /%\)  [^ ]/) && $0 !~ /(Total|Rest)$/ {
         name = substr($0, RSTART + 4); t[name] += $1; order[++n] = name; all += $1 }
       END { printf "  stages:"; for (i = 1; i <= n; i++) if (!seen[order[i]]++)
               printf " %s %.0f%%%s", order[i], 100 * t[order[i]] / all, i < n ? "," : ""
             printf "\n" }' "$tmp/timing"
  printf '  %-16s %12s %12s\n' object bytes "data bytes"
  largest=0
  for so in "$tmp"/plan/*.so; do
    bytes=$(stat -c %s "$so")
    printf '  %-16s %12d %12d\n' "$(basename "$so")" "$bytes" "$(data_bytes "$so")"
    [ "$bytes" -gt "$largest" ] && largest=$bytes
  done
  if [ "$largest" -ge $((LIMIT_MIB * 1024 * 1024)) ]; then
    echo "plan-size.sh: $name: an object of $largest bytes exceeds $LIMIT_MIB MiB" >&2
    status=1
  fi
done
exit $status
