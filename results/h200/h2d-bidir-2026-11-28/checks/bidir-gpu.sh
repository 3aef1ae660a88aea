#!/usr/bin/env bash
# x/bidir-gpu.sh OUT: h2d under a reverse copy, p2pbench against nvbandwidth, alternated.
set -u
source scripts/lib/steps.sh  # run from the checkout's root: each failed step named, exit 1 at the end
OUT=$1; W=$OUT/w; mkdir -p $W
trap 'tar czf $OUT/logs.tgz -C $OUT w' EXIT
export PATH=$PATH:/usr/local/cuda/bin
B=/tmp/b/src/p2pbench
{ cmake -S . -B /tmp/b -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DP2PBENCH_BUILD_TESTS=OFF &&
  cmake --build /tmp/b -j 16 --target p2pbench; } > $W/build.log 2>&1 || { record_step build 1 "$W/build.log"; tail -30 $W/build.log; finish_steps bidir-gpu; }
echo "built at $SECONDS s"
{ nvidia-smi -L; nvidia-smi -q -d PCIE,CLOCK,PERFORMANCE; nproc; free -g; } > $W/system.txt 2>&1
grep -iE "name|gen|width|Current" $W/system.txt | head -20
rounds=${ROUNDS:-6}
for r in $(seq 1 $rounds); do
  timeout 120 x/nvbandwidth -t host_to_device_bidirectional_memcpy_ce -i 10 -v > $W/nvbw-$r.txt 2>&1
  record_step "nvbandwidth round $r" $?
  timeout 120 $B --config x/bidir-long.json --output $W/long-$r.json > $W/long-$r.txt 2>&1
  record_step "long $r" $?
  timeout 120 $B --config x/bidir-short.json --output $W/short-$r.json > $W/short-$r.txt 2>&1
  record_step "short $r" $?
  echo "round $r at $SECONDS s"
done
timeout 120 x/nvbandwidth -t device_to_host_bidirectional_memcpy_ce host_to_device_memcpy_ce -i 10 -v > $W/nvbw-other.txt 2>&1
record_step "nvbandwidth d2h bidir, h2d" $?
python3 x/bidir-summary.py $W | tee $W/summary.txt
record_step summary "${PIPESTATUS[0]}"
finish_steps bidir-gpu
