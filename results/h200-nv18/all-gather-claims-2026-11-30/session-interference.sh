#!/usr/bin/env bash
# On a node of two GPUs: the all-gathers beside the GEMM (config-interference-claims.json: the
# kernel writers' table, the SM all-gathers with fixed and with claimed pieces), and the collective
# kernel's machine code (registers, local memory) for the 1024-thread puzzle.
# Usage: session-interference.sh OUT_DIR
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../../../scripts/lib/node-session.sh"
session_open session-interference.sh "${1:-}"
session_build session-interference.sh
session_step interference-claims 420 mpirun -np 2 --bind-to none --allow-run-as-root build-gpu/src/p2pbench \
  --devices 0,1 --config "$here/config-interference-claims.json" --output "$work/interference-claims.json"
session_step collective-sass 60 bash -c "cuobjdump -res-usage build-gpu/src/p2pbench 2>&1 | grep -A1 collective; \
  cuobjdump -sass build-gpu/src/p2pbench | awk '/Function : .*collective/{on=1} /Function : /{if (!/collective/) on=0} on' \
  | grep -cE 'STL|LDL' | sed 's/^/local-memory instructions in the collective kernels: /'"
finish_steps session-interference.sh
