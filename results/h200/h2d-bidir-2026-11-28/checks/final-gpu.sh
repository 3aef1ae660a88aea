#!/usr/bin/env bash
# x/final-gpu.sh OUT: the bidir fix (GPU-clock coverage check) on one H200, with nvbandwidth alternated.
set -u
source scripts/lib/steps.sh  # run from the checkout's root: each failed step named, exit 1 at the end
OUT=$1; W=$OUT/w; mkdir -p $W
trap 'python3 x/fix-summary.py $W > $W/summary.txt 2>&1; tar czf $OUT/logs.tgz -C $OUT w' EXIT
export PATH=$PATH:/usr/local/cuda/bin
B=/tmp/b/src/p2pbench
{ cmake -S . -B /tmp/b -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DP2PBENCH_BUILD_TESTS=OFF &&
  cmake --build /tmp/b -j 16 --target p2pbench; } > $W/build.log 2>&1 || { record_step build 1 "$W/build.log"; tail -30 $W/build.log; finish_steps final-gpu; }
echo "built at $SECONDS s"
{ nvidia-smi -L; nvidia-smi --query-gpu=name,driver_version,pcie.link.gen.current,pcie.link.width.current --format=csv; } > $W/system.txt 2>&1
timeout 120 python3 tests/host_link/host_link_checks.py $B > $W/host-link-checks.txt 2>&1
record_step "host-link checks" $?
grep -E "FAIL|passed" $W/host-link-checks.txt; echo "checks at $SECONDS s"
for r in 1 2 3 4; do
  [ $SECONDS -lt 185 ] || break
  timeout 60 x/nvbandwidth -t host_to_device_bidirectional_memcpy_ce device_to_host_bidirectional_memcpy_ce -i 10 -v > $W/nvbw-$r.txt 2>&1
  record_step "nvbandwidth round $r" $?
  timeout 60 $B --config x/h2d-bidir-config-short.json --output $W/short-$r.json > $W/short-$r.txt 2>&1
  record_step "short $r" $?
  timeout 60 $B --config x/h2d-bidir-config-long.json --output $W/long-$r.json > $W/long-$r.txt 2>&1
  record_step "long $r" $?
  echo "round $r at $SECONDS s"
done
python3 x/fix-summary.py $W | tail -14
record_step summary "${PIPESTATUS[0]}"
finish_steps final-gpu
