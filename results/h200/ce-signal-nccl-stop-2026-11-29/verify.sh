#!/usr/bin/env bash
# On an offline one-GPU node, after the non-blocking NCCL communicator and the stop grace: the
# README's two set-up commands (install-deps, then every test; the fault checks run NCCL's faults
# between two emulated nodes), then NCCL's send/receive and collectives between two emulated nodes
# on the one GPU (over sockets: functional, not P2P figures). Logs under OUT_DIR, packed.
# Usage: verify.sh OUT_DIR
set -uo pipefail
out=${1:?usage: verify.sh OUT_DIR}
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../../.."
work=$(mktemp -d)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1
finish() { tar -C "$work" -czf "$out/verify.tar.gz" . ; cp "$work/summary.txt" "$out/" 2>/dev/null; }
trap finish EXIT
start=$(date +%s)
scripts/install-deps.sh >"$work/install-deps.log" 2>&1
echo "install-deps.sh: exit $? after $(( $(date +%s) - start )) s" | tee "$work/summary.txt"
start=$(date +%s)
scripts/test.sh >"$work/test.log" 2>&1
echo "test.sh: exit $? after $(( $(date +%s) - start )) s" | tee -a "$work/summary.txt"
grep -E "tests passed|Failed|\*\*\*|^  [a-z_0-9]+: " "$work/test.log" | tee -a "$work/summary.txt"
cp build/Testing/Temporary/LastTest.log "$work/LastTest.log" 2>/dev/null
build/src/p2pbench --version >"$work/version.txt" 2>&1
# NCCL's collectives need both ranks' kernels at once: an MPS daemon of this script's own.
export CUDA_MPS_PIPE_DIRECTORY=/tmp/p2pbench-mps CUDA_MPS_LOG_DIRECTORY=/tmp/p2pbench-mps-log
mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
nvidia-cuda-mps-control -d || echo "MPS did not start" | tee -a "$work/summary.txt"
trap 'echo quit | nvidia-cuda-mps-control; finish' EXIT
two_nodes=(mpirun -np 2 --bind-to none build/src/p2pbench --allow-same-device --devices 0,0 --ranks-per-node 1)
for run in "baselines:tests/gpu_driver/baselines.json:nccl" \
           "collectives:tests/gpu_driver/collectives-small.json:nccl_reduce_scatter,nccl_all_gather,nccl_all_reduce:--patterns all_to_all"; do
  IFS=: read -r tag config methods flags <<<"$run"
  start=$(date +%s)
  timeout -s KILL 120 "${two_nodes[@]}" --config "$config" --methods "$methods" $flags --output "$work/nccl-$tag.json" \
    >"$work/nccl-$tag.log" 2>&1
  rc=$?
  echo "nccl $tag ($methods, two emulated nodes): exit $rc after $(( $(date +%s) - start )) s; $(python3 -c "import json,sys
r=json.load(open(sys.argv[1]))['results']
print(sum(x['status']=='ok' and x.get('verified') is True for x in r), 'of', len(r), 'rows ok and verified;',
      next((x.get('error','') for x in r if x['status']!='ok'), '')[:200])" "$work/nccl-$tag.json" 2>&1)" | tee -a "$work/summary.txt"
done
