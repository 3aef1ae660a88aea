#!/usr/bin/env bash
# latency_signal flag_in_data on one GPU under MPS: before/after binaries, lazy and eager module loading.
set -uo pipefail
export PATH="$PATH:/usr/local/cuda/bin" OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
source scripts/lib/steps.sh  # run from the repository root: each failed step named, exit 1 at the end
O=${OUT:?}
mpiexec=(mpirun --oversubscribe --mca btl_vader_single_copy_mechanism none)
mkdir -p /tmp/before && git archive ${BEFORE:-HEAD~1} | tar -x -C /tmp/before
record_step "git archive ${BEFORE:-HEAD~1}" $?
build() { cmake -S $1 -B $2 -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 >$O/build-$3.log 2>&1 && cmake --build $2 -j 16 --target p2pbench >>$O/build-$3.log 2>&1; }
build . build-gpu after & after=$!
build /tmp/before /tmp/build-before before & before=$!
wait $after; record_step "build after" $? "$O/build-after.log"
wait $before; record_step "build before" $? "$O/build-before.log"
export CUDA_MPS_PIPE_DIRECTORY=/tmp/mps-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/mps-log
mkdir -p $CUDA_MPS_PIPE_DIRECTORY $CUDA_MPS_LOG_DIRECTORY; nvidia-cuda-mps-control -d
record_step "mps: started" $?
declare -A bin=([after]=build-gpu/src/p2pbench [before]=/tmp/build-before/src/p2pbench)
for loading in LAZY EAGER; do for round in 1 2 3; do for tree in before after; do
  f=$O/sig-$tree-$loading-$round.json
  CUDA_MODULE_LOADING=$loading timeout 120 "${mpiexec[@]}" -x CUDA_MODULE_LOADING -np 2 ${bin[$tree]} --config results/h200/one-case-loop/latency-signal-ab.json --allow-same-device --devices 0,0 --output $f > $f.txt 2>&1 ||
    { echo "$tree $loading $round: FAILED (exit $?, $f.txt)"; continue; }
  python3 -c "
import json,sys; d=json.load(open('$f'))
print('$tree $loading $round', ' '.join(f\"{r['bytes']}B {r['src_rank']}->{r['dst_rank']}: {r['latency_us']['median']:.3f}\" for r in d['results']))"
done; done; done | tee $O/sig-ab.txt
! grep -q ": FAILED" $O/sig-ab.txt  # the runs are recorded in a pipe's subshell: read back from the file
record_step "the latency_signal runs" $? "$O/sig-ab.txt"
echo quit | nvidia-cuda-mps-control
finish_steps sig-ab
