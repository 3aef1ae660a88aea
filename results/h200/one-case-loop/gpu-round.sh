#!/usr/bin/env bash
# Before (HEAD~1) against after (HEAD) on one GPU, then every method under MPS.
set -uo pipefail
export PATH="$PATH:/usr/local/cuda/bin" OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
source scripts/lib/steps.sh  # run from the repository root: each failed step named, exit 1 at the end
O=${OUT:?}
summary=$O/summary.txt
mpiexec=(mpirun --oversubscribe --mca btl_vader_single_copy_mechanism none)
{ date -u; nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; mpirun --version | head -n1; git log --oneline -2; } > $O/system.txt 2>&1
mkdir -p /tmp/before && git archive ${BEFORE:-HEAD~1} | tar -x -C /tmp/before
record_step "git archive ${BEFORE:-HEAD~1}" $?
build() { cmake -S $1 -B $2 -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 >$O/build-$3.log 2>&1 && cmake --build $2 -j 16 >>$O/build-$3.log 2>&1; record_step "build $3" $? "$O/build-$3.log"; }
[ -x build-gpu/src/p2pbench ] || build . build-gpu after
[ -x /tmp/build-before/src/p2pbench ] || build /tmp/before /tmp/build-before before
bin_after=build-gpu/src/p2pbench; bin_before=/tmp/build-before/src/p2pbench
export CUDA_MPS_PIPE_DIRECTORY=/tmp/mps-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/mps-log
mkdir -p $CUDA_MPS_PIPE_DIRECTORY $CUDA_MPS_LOG_DIRECTORY
nvidia-cuda-mps-control -d
record_step "mps: started" $?
run() {  # tree config tag round
  local bin=bin_$1
  timeout 300 "${mpiexec[@]}" -np 2 ${!bin} --config $2 --allow-same-device --devices 0,0 --output $O/runs/$3-$1-$4.json > $O/runs/$3-$1-$4.txt 2>&1
  record_step "$3 $1 round $4" $? "$(grep -m1 -E '^results:' $O/runs/$3-$1-$4.txt)"
}
mkdir -p $O/runs
for round in 1 2; do
  for tree in before after; do
    run $tree configs/latency.json latency $round
    run $tree tests/gpu_driver/interference.json interference $round
    run $tree configs/host-link.json host-link $round
    run $tree results/h200/registry/local.json local $round
  done
done
for t in latency interference host-link local; do
  python3 scripts/before-after.py $t $O/runs/$t-before-1.json $O/runs/$t-after-1.json $O/runs/$t-before-2.json $O/runs/$t-after-2.json >> $O/before-after.txt 2>&1
  record_step "$t before/after" $? "$O/before-after.txt"
done
echo quit | nvidia-cuda-mps-control
unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
scripts/end-of-run-check.sh $O/eorc build-gpu mps
record_step "end-of-run-check mps" $? "$O/eorc/summary.txt"
cat $O/eorc/summary.txt >> $O/summary.txt
timeout 120 build-gpu/tests/example_method/test_example_method > $O/example-method.txt 2>&1
record_step "example method" $? "$O/example-method.txt"
rm -f $O/runs/*.json.tmp*
tail -n 6 $O/before-after.txt
cat $O/summary.txt
python3 results/h200/one-case-loop/verified.py $O/eorc/mps-*.json $O/runs/*-after-1.json > $O/verified.txt 2>&1
record_step "every method verified" $? "$O/verified.txt"
cat $O/verified.txt
mkdir -p $O/keep && mv $O/runs/*-1.txt $O/keep/ 2>/dev/null
tar -czf $O/all.tgz --exclude=mps-pipe -C $O runs eorc 2>/dev/null; rm -rf $O/runs $O/eorc
finish_steps gpu-round
