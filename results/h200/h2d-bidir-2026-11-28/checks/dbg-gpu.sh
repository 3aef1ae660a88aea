#!/usr/bin/env bash
set -u
source scripts/lib/steps.sh  # run from the checkout's root: each failed step named, exit 1 at the end
R=$PWD
OUT=$1; W=$OUT/w; mkdir -p $W
trap 'tar czf $OUT/logs.tgz -C $OUT w' EXIT
export PATH=$PATH:/usr/local/cuda/bin
echo "== probe2"; timeout 60 x/probe2 2>&1 | tee $W/probe2.txt
record_step probe2 "${PIPESTATUS[0]}"
rm -rf /tmp/dbg && mkdir -p /tmp/dbg && tar -cf - --exclude=./x --exclude=./build --exclude=./.git . | tar -xf - -C /tmp/dbg
(cd /tmp/dbg && patch -p1 < $R/x/debug.patch) > $W/patch.log 2>&1
record_step "debug.patch" $? "$W/patch.log"
cat $W/patch.log
(cd /tmp/dbg && cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DP2PBENCH_BUILD_TESTS=OFF > /dev/null && cmake --build build -j 16 --target p2pbench > build.log 2>&1)
record_step build $? || tail -20 /tmp/dbg/build.log
echo "built at $SECONDS s"
cat > /tmp/both.json <<'J'
{"label": "dbg", "methods": ["h2d_bidir", "d2h_bidir"], "sizes": ["512MiB"], "samples": 5}
J
timeout 120 /tmp/dbg/build/src/p2pbench --config /tmp/both.json --output $W/dbg.json > $W/dbg.txt 2> $W/dbg.err
record_step "debug run" $? "$W/dbg.err"
grep DBG $W/dbg.err | head -30; grep -E "failed|ok" $W/dbg.txt | head
finish_steps dbg-gpu
