#!/usr/bin/env bash
# LOOPS loops at once of ROUNDS runs of the three thread-ranks' staged ring by build-gpu/, loop i
# on GPU i mod 2; verdicts and times in DIR/ring-runs.txt, a failed run's output in DIR.
# Exits non-zero when a run failed. Usage: ring-loops.sh DIR ROUNDS LOOPS   (from the repository root)
set -uo pipefail
dir=$1 rounds=$2 loops=$3
verdicts="$dir/ring-runs.txt"
one_loop() {
  local loop=$1 i log t0
  for ((i = 1; i <= rounds; i++)); do
    log="$dir/ring-loop$loop-$i.log" t0=$SECONDS
    if CUDA_VISIBLE_DEVICES=$((loop % 2)) timeout 90 build-gpu/tests/baselines/test_baselines_gpu \
      --gtest_filter='StagedGroup.RingOfThreeRanksOnOneNode' >"$log" 2>&1; then
      echo "loop $loop run $i: passed ($((SECONDS - t0)) s)" >>"$verdicts"
      rm -f "$log"
    else
      echo "loop $loop run $i: FAILED ($((SECONDS - t0)) s)" >>"$verdicts"
    fi
  done
}
for ((l = 0; l < loops; l++)); do one_loop "$l" & done
wait
failed=0
for ((l = 0; l < loops; l++)); do
  passed=$(grep -c "^loop $l run .*: passed (" "$verdicts")
  echo "loop $l (GPU $((l % 2))): $passed of $rounds passed" | tee -a "$verdicts"
  [ "$passed" -eq "$rounds" ] || failed=1
done
echo "all: $(grep -c ": passed (" "$verdicts") of $((rounds * loops)) passed" | tee -a "$verdicts"
exit $failed
