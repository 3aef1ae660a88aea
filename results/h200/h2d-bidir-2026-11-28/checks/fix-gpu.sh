#!/usr/bin/env bash
# x/fix-gpu.sh OUT: h2d_bidir/d2h_bidir with the beside copies behind the gate, against nvbandwidth, alternated.
set -u
source scripts/lib/steps.sh  # run from the checkout's root: each failed step named, exit 1 at the end
OUT=$1; W=$OUT/w; mkdir -p $W
trap 'tar czf $OUT/logs.tgz -C $OUT w' EXIT
export PATH=$PATH:/usr/local/cuda/bin
B=/tmp/b/src/p2pbench
{ cmake -S . -B /tmp/b -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 &&
  cmake --build /tmp/b -j 16 --target p2pbench; } > $W/build.log 2>&1 || { record_step build 1 "$W/build.log"; tail -30 $W/build.log; finish_steps fix-gpu; }
echo "built at $SECONDS s"
{ nvidia-smi -L; nvidia-smi --query-gpu=name,driver_version,pcie.link.gen.current,pcie.link.width.current,clocks.sm --format=csv; } > $W/system.txt 2>&1
cat $W/system.txt
for r in 1 2 3 4; do
  timeout 120 x/nvbandwidth -t host_to_device_bidirectional_memcpy_ce device_to_host_bidirectional_memcpy_ce -i 10 -v > $W/nvbw-$r.txt 2>&1
  record_step "nvbandwidth round $r" $?
  timeout 200 $B --config x/h2d-bidir-config-long.json --output $W/long-$r.json > $W/long-$r.txt 2>&1
  record_step "long $r" $?
  timeout 200 $B --config x/h2d-bidir-config-short.json --output $W/short-$r.json > $W/short-$r.txt 2>&1
  record_step "short $r" $?
  echo "round $r at $SECONDS s"
done
python3 x/fix-summary.py $W | tee $W/summary.txt
record_step summary "${PIPESTATUS[0]}"
echo "== host-link checks"
timeout 300 python3 tests/host_link/host_link_checks.py $B 2>&1 | tee $W/host-link-checks.txt | tail -25
record_step "host-link checks" "${PIPESTATUS[0]}"
echo "at $SECONDS s"
cmake --build /tmp/b -j 16 > $W/build-all.log 2>&1; record_step "everything built" $? "at $SECONDS s"
left=$((575 - SECONDS))
(cd /tmp/b && timeout $left ctest -R "gpu_driver_end_to_end|test_example_method|test_baselines_gpu|test_interference_gpu|test_host_memory_gpu|gpu_driver_end_of_run|gpu_driver_gds_gemm|test_peer_memory_gpu" --output-on-failure --timeout 300) > $W/ctest-gpu.txt 2>&1
record_step ctest $? "at $SECONDS s"; grep -E "tests passed|Passed|Failed|Not Run|Skipped|\*\*\*" $W/ctest-gpu.txt | tail -40
finish_steps fix-gpu
