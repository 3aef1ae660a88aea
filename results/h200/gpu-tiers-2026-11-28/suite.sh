#!/usr/bin/env bash
# On a one-GPU node: the GPU tests through scripts/test.sh (every GPU test says how many GPUs it
# needs; those needing two or more skip, saying so), timed. Usage: suite.sh OUT_DIR
set -uo pipefail
out=${1:?usage: suite.sh OUT_DIR}
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../../.."
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 NCCL_NVLS_ENABLE=0
{ date -u; nvidia-smi -L; nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv; } >"$out/system.txt" 2>&1
start=$(date +%s)
P2PBENCH_BUILD_DIR=build-gpu scripts/test.sh -L gpu >"$out/suite.log" 2>&1
rc=$?
echo "test.sh -L gpu: exit $rc after $(( $(date +%s) - start )) s" | tee "$out/summary.txt"
grep -E "tests passed|Test +#|^  [a-z_]+: " "$out/suite.log" | tee -a "$out/summary.txt"

# The atomics across two ranks (both on this GPU): the code before the sign fix (this folder's
# atomics-fix.patch reversed) and after it, on the same cases.
old=/tmp/p2pbench-before-atomics-fix
rm -rf "$old" && mkdir -p "$old" && tar --exclude=./build-gpu -cf - . | tar -C "$old" -xf -
( cd "$old" && patch -R -p1 <"$here/atomics-fix.patch" && cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_CUDA_ARCHITECTURES=90 >/dev/null && cmake --build build --target p2pbench >/dev/null ) >"$out/build-before.log" 2>&1 \
  || { echo "building the code before the fix failed (build-before.log)" | tee -a "$out/summary.txt"; exit 1; }
for which in before after; do
  bin=build-gpu/src/p2pbench
  [ $which = before ] && bin=$old/build/src/p2pbench
  mpirun -np 2 --bind-to none "$bin" --config tests/gpu_driver/baselines.json --methods atomic --modes uni \
    --allow-same-device --devices 0,0 --output "$out/atomics-$which.json" >"$out/atomics-$which.log" 2>&1
  echo "atomics $which the fix: exit $? $(python3 -c "import json,sys; r=json.load(open(sys.argv[1]))['results']; \
print(sum(x['status']=='ok' and x['verified'] for x in r), 'of', len(r), 'ok and verified;', \
next((x.get('error','') for x in r if x['status']!='ok'), '')[:160])" "$out/atomics-$which.json")" | tee -a "$out/summary.txt"
done
exit $rc
