#!/usr/bin/env bash
# x/bidir2-gpu.sh OUT: why p2pbench's h2d_bidir beside copies end first; probe + variants.
set -u
source scripts/lib/steps.sh  # run from the checkout's root: each failed step named, exit 1 at the end
OUT=$1; W=$OUT/w; mkdir -p $W
trap 'tar czf $OUT/logs.tgz -C $OUT w' EXIT
export PATH=$PATH:/usr/local/cuda/bin
which nsys ncu > $W/tools.txt 2>&1
echo "== probe"; for i in 1 2; do timeout 60 x/probe; echo "probe exit $?"; done 2>&1 | tee $W/probe.txt
! grep -q "^probe exit [1-9]" $W/probe.txt; record_step probe $? "$W/probe.txt"
cmake -S . -B /tmp/b -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DP2PBENCH_BUILD_TESTS=OFF > $W/build.log 2>&1 &&
  cmake --build /tmp/b -j 16 --target p2pbench >> $W/build.log 2>&1
record_step "base build" $? "$W/build.log"
bash x/variants.sh > $W/variants.log 2>&1
record_step variants $? "$W/variants.log"
cat $W/variants.log
echo "built at $SECONDS s"
declare -A bin=([base]=/tmp/b/src/p2pbench [streambeside]=/tmp/var-streambeside/build/src/p2pbench [hostdriven]=/tmp/var-hostdriven/build/src/p2pbench)
for r in 1 2 3; do
  timeout 120 x/nvbandwidth -t host_to_device_bidirectional_memcpy_ce -i 10 -v > $W/nvbw-$r.txt 2>&1
  record_step "nvbandwidth round $r" $?
  for v in base streambeside hostdriven; do
    for k in short long; do
      timeout 120 ${bin[$v]} --config x/bidir-$k.json --output $W/$v-$k-$r.json > $W/$v-$k-$r.txt 2>&1
      record_step "$v $k $r" $?
    done
  done
  echo "round $r at $SECONDS s"
done
python3 x/bidir2-summary.py $W | tee $W/summary.txt
record_step summary "${PIPESTATUS[0]}"
finish_steps bidir2-gpu
