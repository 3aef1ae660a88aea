#!/usr/bin/env bash
# The three thread-ranks' staged ring ROUNDS times by each of build-gpu/ and build-old/,
# alternating; verdicts and times in DIR/ring-runs.txt, a failed run's output in DIR.
# Exits non-zero when a run failed. Usage: ring-runs.sh DIR ROUNDS   (from the repository root)
set -uo pipefail
dir=$1 rounds=$2 failed=0
verdicts="$dir/ring-runs.txt"
for ((i = 1; i <= rounds; i++)); do
  for tree in build-gpu build-old; do
    log="$dir/ring-$tree-$i.log" t0=$SECONDS
    if CUDA_VISIBLE_DEVICES=0 timeout 60 "$tree/tests/baselines/test_baselines_gpu" \
      --gtest_filter='StagedGroup.RingOfThreeRanksOnOneNode' >"$log" 2>&1; then
      echo "$tree run $i: passed ($((SECONDS - t0)) s)" >>"$verdicts"
      rm -f "$log"
    else
      echo "$tree run $i: FAILED ($((SECONDS - t0)) s)" >>"$verdicts"
      failed=1
    fi
  done
done
for tree in build-gpu build-old; do
  echo "$tree: $(grep -c "^$tree .*passed" "$verdicts") of $rounds passed" | tee -a "$verdicts"
done
exit $failed
