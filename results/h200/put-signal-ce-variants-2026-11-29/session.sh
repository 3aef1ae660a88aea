#!/usr/bin/env bash
# On a one-GPU node: (1) the copy engine's put with signal in each signalling design (signal_group,
# signal_copy): the kernels' test on the GPU (every chunk and byte, the ordering counts, every SM
# held while the sender runs) and configs/put-signal-ce.json with both ranks on the GPU under MPS
# (functional: copies within one GPU, not P2P figures); (2) a before/after of the methods' own row
# fields: BEFORE_TAR (a source tree, stamped with its commit) and this tree built side by side,
# the same runs made alternately with each, rows compared by compare-rows.py.
# What ran so far is in OUT_DIR after every step (summary.txt, session.tar.gz of the logs and runs):
# a call killed at its limit still returns it. PART: kernels (the test and the MPS run) or rows
# (the before/after); both by default.
# Env: P2PBENCH_DEVICES (default 0,0: both ranks on one GPU under MPS; 0,1 on a two-GPU node).
# Usage: session.sh OUT_DIR BEFORE_TAR [PART]
set -uo pipefail
out=${1:?usage: session.sh OUT_DIR BEFORE_TAR}
before_tar=${2:?usage: session.sh OUT_DIR BEFORE_TAR}
part=${3:-all}
devices=${P2PBENCH_DEVICES:-0,0}
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../../.."
work=$(mktemp -d)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1
finish() { tar -C "$work" -czf "$out/session.tar.gz" . ; cp "$work/summary.txt" "$out/" 2>/dev/null; }
trap finish EXIT
say() { echo "$*" | tee -a "$work/summary.txt"; finish; }
{ date -u; nvidia-smi -L; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } >"$work/system.txt" 2>&1

# Both trees at once (16 cores): this one with the kernels' test, the one before with p2pbench.
before=$(mktemp -d)
tar -C "$before" -xzf "$before_tar"
configure() { cmake -S "$1" -B "$2" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90; }
{ configure . build-gpu && cmake --build build-gpu -j8 --target p2pbench test_put_signal_kernels; } >"$work/build.log" 2>&1 &
after_build=$!
before_build=
if [ "$part" != kernels ]; then
  { configure "$before" "$before/build-gpu" && cmake --build "$before/build-gpu" -j8 --target p2pbench; } \
    >"$work/build-before.log" 2>&1 &
  before_build=$!
fi
say "building from $(date -u +%T)"
wait $after_build || { say "build failed (build.log)"; exit 1; }
build-gpu/src/p2pbench --version >"$work/version.txt" 2>&1
say "built this tree: $(head -1 "$work/version.txt") at $(date -u +%T)"
export CUDA_MPS_PIPE_DIRECTORY=/tmp/p2pbench-mps CUDA_MPS_LOG_DIRECTORY=/tmp/p2pbench-mps-log
two=(mpirun -np 2 --bind-to none --allow-run-as-root)
if [ "$part" != rows ]; then

start=$(date +%s)
P2PBENCH_ORDERING_TRIES=10 timeout -s KILL 150 build-gpu/tests/put_signal/test_put_signal_kernels >"$work/put-signal-kernels.log" 2>&1
say "test_put_signal_kernels (one GPU): exit $? after $(( $(date +%s) - start )) s"
grep -E "^\[  (PASSED|FAILED|  OK|  SKIPPED) |^ORDERING" "$work/put-signal-kernels.log" >>"$work/summary.txt"

mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
nvidia-cuda-mps-control -d || say "MPS did not start"
trap 'echo quit | nvidia-cuda-mps-control; finish' EXIT
start=$(date +%s)
timeout -s KILL 150 "${two[@]}" build-gpu/src/p2pbench --config configs/put-signal-ce.json --allow-same-device \
  --devices "$devices" --output "$work/put-signal-ce-mps.json" >"$work/put-signal-ce-mps.log" 2>&1
say "put-signal-ce.json, two ranks on one GPU under MPS: exit $? after $(( $(date +%s) - start )) s"
python3 "$here/compare-rows.py" --summary "$work/put-signal-ce-mps.json" >>"$work/summary.txt" 2>&1
echo quit | nvidia-cuda-mps-control
trap finish EXIT
fi
[ "$part" = kernels ] && exit 0
mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
nvidia-cuda-mps-control -d || say "MPS did not start"
trap 'echo quit | nvidia-cuda-mps-control; finish' EXIT

wait $before_build || { say "the build before failed (build-before.log)"; exit 1; }
"$before/build-gpu/src/p2pbench" --version >"$work/version-before.txt" 2>&1
say "built the tree before: $(head -1 "$work/version-before.txt")"
run_one() {  # TAG BIN RANKS CONFIG [FLAGS...]
  local tag=$1 bin=$2 ranks=$3 config=$4; shift 4
  local cmd=("$bin" --config "$config" "$@")
  [ "$ranks" = 2 ] && cmd=("${two[@]}" "$bin" --config "$config" --allow-same-device --devices "$devices" "$@")
  local start=$(date +%s)
  timeout -s KILL 60 "${cmd[@]}" --output "$work/$tag.json" >"$work/$tag.log" 2>&1
  say "$tag: exit $? after $(( $(date +%s) - start )) s"
}
for round in 1 2; do
  for side in before after; do
    bin=build-gpu/src/p2pbench
    [ $side = before ] && bin=$before/build-gpu/src/p2pbench
    run_one "one-gpu-$side$round" "$bin" 1 configs/one-gpu.json --sizes 64MiB,256MiB
  done
done
for config in host-link:configs/host-link.json:1:--samples:5:--sizes:64MiB put-signal:tests/gpu_driver/put-signal-small.json:2 \
              gemm-rs:tests/gpu_driver/gemm-rs-small.json:2 tokens:tests/gpu_driver/tokens-small.json:2 \
              collectives:tests/gpu_driver/collectives-small.json:2:--methods:reduce_scatter_add,reduce_scatter_add_bf16,reduce_scatter_two_shot,all_gather_put,all_reduce_two_shot,all_reduce_one_shot,reduce_scatter_two_shot_tma,all_gather_tma,all_reduce_two_shot_tma \
              interference:tests/gpu_driver/interference.json:2; do
  IFS=: read -r tag path ranks flags <<<"$config"
  for side in before after; do
    bin=build-gpu/src/p2pbench
    [ $side = before ] && bin=$before/build-gpu/src/p2pbench
    run_one "$tag-${side}1" "$bin" "$ranks" "$path" ${flags//:/ }
  done
done
python3 "$here/compare-rows.py" "$work" >"$work/compare-rows.txt" 2>&1
say "compare-rows.py: exit $?"
tail -40 "$work/compare-rows.txt" >>"$work/summary.txt"
