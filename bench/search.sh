#!/usr/bin/env bash
# The automatic strategy search (piper-search, docs/Search.md) on Piper's
# published settings: qwen3_1b and qwen3_9b on 4 nodes x 8 A100 80GB, NVLink
# inside a node and EFA across (bench/simulate-published.sh's links), 64
# sequences per step (the published runs: 16 microbatches of 1 on each of
# the 4 ep replicas). For each model:
#   - the hand-written strategies of bench/simulate-published.sh (1F1B, the
#     published configuration, interleaved 1F1B and DualPipeV at PP x EP4)
#     and their simulated step times;
#   - the search's best strategy, its simulated step time and the search's
#     wall and CPU time;
#   - the search under a memory budget of 95% of the published 1F1B
#     configuration's peak (which therefore exceeds it).
# Then deepseek_v3 on 1,024 and 16,384 devices (8 per node, InfiniBand
# across; one sequence per device per step), with recompute as a dimension
# (1F1B without it saves ~1.2 GiB per layer and sequence: 61 layers' worth
# on rank 0, over 80 GB), the whole space (about 166 s and 226 s on the
# 2-core machine; DS_TIME_LIMIT bounds it).
#
#   bench/search.sh             # everything (several minutes)
#   bench/search.sh --qwen      # the two qwen3 models only
#
# Environment: PIPER_BIN (default build/bin), BUDGET_FRACTION (default
# 0.95), DS_TIME_LIMIT (seconds; default none: the whole space).
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${PIPER_BIN:-build/bin}
BUDGET_FRACTION=${BUDGET_FRACTION:-0.95}
# deepseek_v3 has hundreds of structures of 61 layers; DS_TIME_LIMIT
# (seconds of wall time) bounds its searches with --time-limit.
DS_LIMIT=()
if [ -n "${DS_TIME_LIMIT:-}" ]; then
  DS_LIMIT=(--time-limit="$DS_TIME_LIMIT")
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

QWEN_CLUSTER=(--mesh=4x8 --device=a100 --intra-link=nvlink:300:3
              --inter-link=efa:6.25:15 --global-batch=64)

# search OUT [flags...]: runs piper-search, the table into OUT, and prints
# "wall cpu" seconds.
search() {
  local out=$1
  shift
  # A search where nothing fits exits 1 after its table: keep going.
  /usr/bin/time -f '%e %U' -o "$tmp/time" "$BIN/piper-search" "$@" > "$out" 2>&1 || true
  tail -n 1 "$tmp/time"
}
best_ms() { awk '/^best:/ {print $(NF-4)}' "$1"; }
best_label() { sed -n 's/^best: \(.*\), step.*/\1/p' "$1"; }

# published_peak_mib MODEL: the planned peak (MiB, busiest device) of the
# published 1F1B configuration at ZeRO-1, microbatch 1, as
# bench/simulate-published.sh builds it (qwen3_1b PP8 x EP4, qwen3_9b PP4 x
# EP4, 16 microbatches).
published_peak_mib() {
  local model=$1 ranks=8
  [ "$model" = qwen3_9b ] && ranks=4
  "$BIN/piper-gen" --model=moe --config="$model" --pp=$ranks \
    --mesh="dp=1,ep=4,pp=$ranks" --batch=1 --dtype=bf16 --zero=1 \
    > "$tmp/paper.mlir"
  python3 bench/strategy.py 1f1b $ranks 16 --ep ep --zero 1 \
    --piper-schedule "$BIN/piper-schedule" > "$tmp/paper.strategy.mlir"
  "$BIN/piper-opt" "$tmp/paper.mlir" --piper-autodiff \
    --piper-optimizer="optimizer=adamw lr=0.001" --piper-build-dag \
    --transform-preload-library="transform-library-paths=$tmp/paper.strategy.mlir" \
    --transform-interpreter --piper-partition --piper-verify-programs \
    -o "$tmp/paper.programs.mlir"
  "$BIN/piper-opt" "$tmp/paper.programs.mlir" --piper-simulate=device=a100 \
    -o /dev/null | awk '/^@/ {if ($NF+0 > m) m = $NF+0} END {print m}'
}

echo "== hand-written strategies (bench/simulate-published.sh)"
bench/simulate-published.sh | tee "$tmp/published"

for model in qwen3_1b qwen3_9b; do
  echo
  echo "== $model: search"
  read -r wall cpu < <(search "$tmp/$model.txt" --config="$model" \
    "${QWEN_CLUSTER[@]}" --rows=10 -o "$tmp/$model.json")
  cat "$tmp/$model.txt"
  found=$(best_ms "$tmp/$model.txt")
  echo "search time: ${wall} s wall, ${cpu} s CPU"
  awk -v model="$model" -v found="$found" '
    $1 == model && $2 ~ /1f1b|dualpipev/ {
      printf "%-10s %-18s %12s ms   search %12s ms   %.2fx\n", model, $2, $5, found, $5 / found
    }' "$tmp/published"

  # Budget: BUDGET_FRACTION (default 0.95) x the published 1F1B configuration's planned peak
  # (ZeRO-1, microbatch 1: the memory study's "peak@1").
  paper_mib=$(published_peak_mib "$model")
  budget=$(awk -v p="$paper_mib" -v frac="$BUDGET_FRACTION" \
    'BEGIN { printf "%.0f", p * frac * 1048576 }')
  echo
  echo "== $model: budget $budget B ($BUDGET_FRACTION x the published 1F1B peak, $paper_mib MiB)"
  read -r wall cpu < <(search "$tmp/$model.budget.txt" --config="$model" \
    "${QWEN_CLUSTER[@]}" --rows=5 --memory-budget="$budget")
  tail -n +3 "$tmp/$model.budget.txt"
  echo "search time: ${wall} s wall, ${cpu} s CPU"
done

[ "${1:-}" = "--qwen" ] && exit 0

for nodes in 128 2048; do
  devices=$((nodes * 8))
  echo
  echo "== deepseek_v3 on $devices devices ($nodes x 8)"
  read -r wall cpu < <(search "$tmp/ds.txt" --config=deepseek_v3 \
    --mesh="${nodes}x8" --intra-link=nvlink:300:3 \
    --inter-link=infiniband:50:5 --global-batch="$devices" \
    --max-microbatches=32 --rows=5 --recompute "${DS_LIMIT[@]}")
  cat "$tmp/ds.txt"
  echo "search time: ${wall} s wall, ${cpu} s CPU"
done
