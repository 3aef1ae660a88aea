#!/usr/bin/env bash
# On a one-GPU node: the fault checks' "methods" group with both ranks on the GPU, NCCL between
# two emulated nodes (a rank stopped and a rank exiting inside NCCL's cases among them).
# Usage: faults-methods.sh OUT_DIR [fault_checks.py options, e.g. --method nccl]
set -uo pipefail
out=${1:?usage: faults-methods.sh OUT_DIR}
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../../.."
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1
{ cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 &&
  cmake --build build-gpu -j16 --target p2pbench; } >"$out/build.log" 2>&1 || { echo "build failed"; exit 1; }
start=$(date +%s)
timeout -s KILL 400 python3 tests/gpu_driver/fault_checks.py build-gpu/src/p2pbench mpirun --bind-to none \
  --only methods --one-gpu --keep "$out/kept" "${@:2}" >"$out/faults-methods.log" 2>&1
echo "fault_checks --only methods --one-gpu ${*:2}: exit $? after $(( $(date +%s) - start )) s" | tee -a "$out/faults-methods.log"
tar -C "$out" -czf "$out/kept.tar.gz" kept && rm -rf "$out/kept"
