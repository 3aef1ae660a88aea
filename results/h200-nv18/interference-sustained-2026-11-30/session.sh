#!/usr/bin/env bash
# On a node of two GPUs: the interference configurations the docs' GEMM tables cite, run again
# with the GEMM's check mended (samples back to back, the GPUs at their power cap), so that those
# tables can name the current binary: 64 MiB transfers in 1 MiB puts and NCCL's send/receive
# (configs/interference-ce-batch.json), transfers sharing every SM with the GEMM
# (configs/interference-shared-sms.json, and the same config with the transfer's streams at the
# highest priority, written beside the results), and the README's 1 GiB pushes beside the GEMM
# and the HBM stream (configs/interference.json). Each sweep's time checks the dry run's estimate.
# Usage: session.sh OUT_DIR [NAME...]   (NAME: a configuration's name, to run only those)
set -uo pipefail
source "$(dirname "$0")/../../../scripts/lib/node-session.sh"
session_open session.sh "${1:-}"
session_build session.sh
two=(mpirun -np 2 --bind-to none --allow-run-as-root build-gpu/src/p2pbench --devices 0,1)
mkdir -p "$work/configs"
python3 -c 'import json,sys; c=json.load(open(sys.argv[1])); c["label"]+="-high-priority"; c["interference"]["transfer_high_priority"]=True; json.dump(c,open(sys.argv[2],"w"),indent=2)' \
  configs/interference-shared-sms.json "$work/configs/interference-shared-sms-high-priority.json"
for config in configs/interference-ce-batch.json configs/interference-shared-sms.json \
  "$work/configs/interference-shared-sms-high-priority.json" configs/interference.json; do
  name=$(basename "$config" .json)
  if [ $# -gt 1 ] && ! printf '%s\n' "${@:2}" | grep -qx "$name"; then continue; fi
  build-gpu/src/p2pbench --dry-run --config "$config" --ranks 2 --devices 0,1 | grep estimated >"$work/$name-estimate.txt"
  session_step "$name" 200 "${two[@]}" --config "$config" --output "$work/$name.json"
done
finish_steps session.sh
