#!/usr/bin/env bash
# On a one-GPU node: (1) where a copy-engine put with signal spends its time (the probe, one GPU:
# the commands' cost, not a P2P figure); (2) a rank stopped inside NCCL, both ranks on the GPU as
# two emulated nodes (--ranks-per-node 1: NCCL over sockets between two MPS clients), with the
# stacks of whatever still runs after 45 s. Everything lands in OUT_DIR, packed as session.tar.gz.
# Usage: session.sh OUT_DIR
set -uo pipefail
out=${1:?usage: session.sh OUT_DIR}
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../../.."
work=$(mktemp -d)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1
{ date -u; nvidia-smi -L; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  python3 -m pip show nvidia-nccl-cu13 2>&1 | head -3
  find / -name 'libnccl.so*' -not -path '/proc/*' 2>/dev/null | while read -r f; do
    echo "$f: $(strings "$f" 2>/dev/null | grep -m1 -o 'NCCL version [0-9.+a-z]*')"; done
  command -v gdb || echo "no gdb"; } >"$work/system.txt" 2>&1
finish() { tar -C "$work" -czf "$out/session.tar.gz" . ; cp "$work/summary.txt" "$out/" 2>/dev/null; }
trap finish EXIT
{ cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 &&
  cmake --build build-gpu -j16 --target p2pbench p2pbench-probe-ce-signal; } >"$work/build.log" 2>&1 \
  || { echo "build failed (build.log)" | tee "$work/summary.txt"; exit 1; }
build-gpu/src/p2pbench --version >"$work/version.txt" 2>&1

start=$(date +%s)
probe=build-gpu/tools/p2pbench-probe-ce-signal
for v in $($probe --list); do  # a process each: a variant that never finishes ends only itself
  timeout -s KILL 60 $probe --variant "$v" >>"$work/ce-signal-probe.jsonl" 2>>"$work/ce-signal-probe.log"
  echo "ce-signal probe $v: exit $?" >>"$work/summary.txt"
done
echo "ce-signal probe: $(( $(date +%s) - start )) s" | tee -a "$work/summary.txt"

export CUDA_MPS_PIPE_DIRECTORY=/tmp/p2pbench-mps CUDA_MPS_LOG_DIRECTORY=/tmp/p2pbench-mps-log
mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
nvidia-cuda-mps-control -d || echo "MPS did not start" | tee -a "$work/summary.txt"
trap 'echo quit | nvidia-cuda-mps-control; finish' EXIT
nccl=(mpirun -np 2 --bind-to none build-gpu/src/p2pbench --config tests/gpu_driver/baselines.json --methods nccl
      --allow-same-device --devices 0,0 --ranks-per-node 1)
start=$(date +%s)
timeout -s KILL 120 "${nccl[@]}" --output "$work/nccl-clean.json" >"$work/nccl-clean.log" 2>&1
echo "nccl, no fault: exit $? after $(( $(date +%s) - start )) s" | tee -a "$work/summary.txt"
for fault in "rank=1,case=2,fault=stop,step=3" "rank=0,case=2,fault=stop,step=3"; do
  tag=${fault%%,*}; tag=${tag#rank=}
  start=$(date +%s)
  P2PBENCH_FAULT=$fault timeout -s KILL 100 "${nccl[@]}" --output "$work/nccl-stop$tag.json" >"$work/nccl-stop$tag.log" 2>&1 &
  job=$!
  for _ in $(seq 45); do sleep 1; kill -0 $job 2>/dev/null || break; done
  if kill -0 $job 2>/dev/null; then
    ps -eo pid,ppid,stat,etimes,wchan:24,args | grep -E "mpirun|p2pbench|orted" | grep -v grep >>"$work/nccl-stop$tag-stacks.txt"
    for pid in $(pgrep -f "build-gpu/src/p2pbench --config"); do
      { echo "== pid $pid state $(awk '/State/{print $2}' /proc/$pid/status)"; \
        for t in /proc/$pid/task/*; do echo "$(cat $t/comm) $(cat $t/wchan) $(cut -d' ' -f1 $t/syscall)"; done; } \
        >>"$work/nccl-stop$tag-stacks.txt"
    done
  fi
  wait $job
  echo "nccl, $fault: exit $? after $(( $(date +%s) - start )) s" | tee -a "$work/summary.txt"
done
