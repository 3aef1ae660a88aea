#!/usr/bin/env bash
# On a GPU node, after a build: the group runs, each timed against its dry-run
# estimate, each results file checked (tests/gpu_driver/group_checks.py), heatmaps and the
# suspect-pairs table made. With two GPUs, four ranks share them (two per GPU: same-GPU pairs
# are marked, never P2P figures); on a node of 4 or 8 GPUs, one rank per GPU.
#
# Usage: scripts/group-check.sh OUT_DIR BUILD_DIR [RANKS]
#   RANKS: ranks of the matrix and pattern runs (default: 4 on a 2-GPU node, else one per GPU)
# Env: P2PBENCH_LABEL (default: the node's GPU count, e.g. "4-ranks-2-gpus")
#      P2PBENCH_GROUP_STEPS (default "default matrix patterns odd crossnode load gbench")
# Every step runs whatever the others did; the summary names each with its exit status and the
# script exits 1 when any failed (scripts/lib/steps.sh).
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/steps.sh
out=${1:?usage: scripts/group-check.sh OUT_DIR BUILD_DIR [RANKS]}
build=${2:?usage: scripts/group-check.sh OUT_DIR BUILD_DIR [RANKS]}
gpus=$(nvidia-smi -L | grep -c '^GPU [0-9]')
if ((gpus == 0)); then
  echo "group-check: nvidia-smi -L lists no GPU: nothing to run" >&2
  exit 1
fi
ranks=${3:-$([ "$gpus" -le 2 ] && echo 4 || echo "$gpus")}
devices=$(seq -s, 0 $((gpus - 1)))
steps=${P2PBENCH_GROUP_STEPS:-default matrix patterns odd crossnode load gbench}
mkdir -p "$out"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 NCCL_NVLS_ENABLE=${NCCL_NVLS_ENABLE:-0}
summary="$out/summary.txt"
: >"$summary"
same=()
[ "$ranks" -gt "$gpus" ] && same=(--allow-same-device)

# run NAME NP CONFIG [FLAGS...]: the dry-run estimate, the run (timed), the checks.
run() {
  local name=$1 np=$2 config=$3
  shift 3
  local dir="$out/$name"
  mkdir -p "$dir"
  "$build/src/p2pbench" --dry-run --ranks "$np" --devices "$devices" --config "$config" "$@" >"$dir/dry-run.txt" 2>&1
  record_step "$name: dry run" $? "$name/dry-run.txt"
  local estimate
  estimate=$(grep -o 'estimate[^0-9]*[0-9.]* s' "$dir/dry-run.txt" | grep -o '[0-9.]* s' | head -1)
  local start end rc
  start=$(date +%s.%N)
  mpirun -np "$np" --oversubscribe --bind-to none --mca btl_vader_single_copy_mechanism none \
    "$build/src/p2pbench" --config "$config" --devices "$devices" "${same[@]}" --label "${P2PBENCH_LABEL:-$np-ranks-$gpus-gpus}" \
    --output "$dir/results.json" "$@" >"$dir/console.txt" 2>"$dir/stderr.txt"
  rc=$?
  end=$(date +%s.%N)
  local wall
  wall=$(python3 -c "print(f'{$end - $start:.1f}')")
  record_step "$name" "$rc" "$np ranks on $gpus GPUs, wall ${wall} s (mpirun start to end), dry-run estimate ${estimate:-?}"
  python3 tests/gpu_driver/group_checks.py "$dir/results.json" --ranks "$np" >"$dir/checks.txt" 2>&1
  record_step "$name checks" $? "$(tail -1 "$dir/checks.txt")"
}

for step in $steps; do
  case $step in
    default) run default-2-ranks 2 configs/default.json ;;
    matrix)
      run matrix "$ranks" configs/matrix.json
      scripts/p2pbench-report suspects "$out/matrix/results.json" >"$out/matrix/suspects.txt" 2>&1
      record_step "matrix: suspects" $? "matrix/suspects.txt"
      scripts/p2pbench-report plot "$out/matrix/results.json" -o "$out/matrix/plots" >"$out/matrix/plot.txt" 2>&1
      record_step "matrix: plot" $? "matrix/plot.txt"
      ;;
    patterns) run patterns "$ranks" configs/patterns.json ;;
    odd) run odd-3-ranks 3 configs/matrix.json --sizes 256M ;;
    crossnode)
      # Ranks 0,1 and 2,3 as two nodes: IPC methods skip the cross-node pairs, nccl runs them
      # over its network (socket) transport.
      run crossnode "$ranks" configs/matrix.json --ranks-per-node 2 --methods ce,nccl --directions push --sizes 64M
      ;;
    load) run latency-under-load "$ranks" configs/latency-under-load.json ;;
    gbench)
      "$build/src/gbench/p2pbench-gbench" --config tests/gbench/small.json --benchmark_format=console \
        >"$out/gbench.txt" 2>&1
      record_step gbench $? "gbench.txt"
      ;;
    *) record_step "step $step" 2 "unknown (default matrix patterns odd crossnode load gbench)" ;;
  esac
done
finish_steps group-check
