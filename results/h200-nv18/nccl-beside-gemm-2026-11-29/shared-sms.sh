#!/usr/bin/env bash
# On a node of two GPUs: transfers that share every SM with the GEMM (configs/interference-shared-sms.json),
# at the default stream priority and with the transfer's streams at the highest
# (the same config with interference.transfer_high_priority true, written beside the results);
# then the interference GPU tests (P2PBENCH_REQUIRE_GPUS=2: a skip is a failure). Every step has a
# deadline; OUT_DIR holds summary.txt and session.tar.gz (every log and result) after each step.
# Usage: shared-sms.sh OUT_DIR
set -uo pipefail
out=${1:?usage: shared-sms.sh OUT_DIR}
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../../.." || exit 2
source scripts/lib/node-session.sh
session_start "$out"
session_build shared-sms.sh
two=(mpirun -np 2 --bind-to none --allow-run-as-root build-gpu/src/p2pbench --devices 0,1)
python3 -c 'import json,sys; c=json.load(open(sys.argv[1])); c["label"]+="-high-priority"; c["interference"]["transfer_high_priority"]=True; json.dump(c,open(sys.argv[2],"w"),indent=2)' \
  configs/interference-shared-sms.json "$work/interference-shared-sms-high-priority.json"

session_step shared-sms 150 "${two[@]}" --config configs/interference-shared-sms.json --output "$work/shared-sms.json"
session_step shared-sms-high-priority 150 "${two[@]}" --config "$work/interference-shared-sms-high-priority.json" \
  --output "$work/shared-sms-high-priority.json"
session_step gpu-tests 150 env P2PBENCH_REQUIRE_GPUS=2 P2PBENCH_TEST_JOBS=6 scripts/run-ctest.sh build-gpu -R \
  'gpu_interference_put_signal|test_interference_gpu'
grep -E "tests passed|tests failed|\*\*\*|^  " "$work/gpu-tests.log" | tail -20 >>"$summary"
finish_steps shared-sms.sh
