# shellcheck shell=bash
# The harness of a session script run on a GPU node (sourced, not run; scripts/lib/steps.sh
# keeps the verdict). Everything a step writes goes to a scratch directory that is packed into
# OUT_DIR/session.tar.gz, with summary.txt beside it, after every step: a call cut short still
# returns what ran.
#
#   source scripts/lib/node-session.sh        (from anywhere: it finds steps.sh beside it)
#   session_open SCRIPT OUT_DIR               the usage check, then from the repository root
#                                             session_start OUT_DIR (a session script's preamble)
#   session_start OUT_DIR                     sets $work and $summary, records system.txt
#   session_step NAME LIMIT_S CMD [ARG...]    runs CMD under a deadline, its output in NAME.log
#   session_build SCRIPT                      configures and builds build-gpu/ (Release, sm_90),
#                                             records version.txt; ends the session when it fails
#   session_tests NAME LIMIT_S REGEX [VAR=VALUE...]
#                                             the tests of build-gpu/ matching REGEX
#                                             (scripts/run-ctest.sh) in the step NAME, their verdict
#                                             lines added to the summary
#   session_mps_tests NAME LIMIT_S REGEX [VAR=VALUE...]
#                                             the same under an MPS daemon of the session's own
#                                             (ranks sharing a GPU: a functional check), quit after
source "$(dirname "${BASH_SOURCE[0]}")/steps.sh"

session_pack() { tar -C "$work" -czf "$out/session.tar.gz" . ; cp "$summary" "$out/" 2>/dev/null; }

session_open() {  # SCRIPT OUT_DIR
  local script=$1 out_dir=${2:-}
  [ -n "$out_dir" ] || { echo "usage: $script OUT_DIR" >&2; exit 2; }
  mkdir -p "$out_dir" && out_dir=$(cd "$out_dir" && pwd) || exit 2  # absolute: the session moves to the root
  cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 2
  session_start "$out_dir"
}

session_start() {  # OUT_DIR
  out=$1
  work=$(mktemp -d)
  summary=$work/summary.txt
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1
  trap session_pack EXIT
  { date -u; nvidia-smi -L; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nvidia-smi topo -m; } \
    >"$work/system.txt" 2>&1
}

session_step() {  # NAME LIMIT_S CMD [ARG...]
  local name=$1 limit=$2 start=$SECONDS status=0
  shift 2
  timeout -s KILL "$limit" "$@" >"$work/$name.log" 2>&1 || status=$?
  record_step "$name" "$status" "$((SECONDS - start)) s"
  session_pack
  return "$status"
}

session_build() {  # SCRIPT
  session_step build 150 bash -c "cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_CUDA_ARCHITECTURES=90 -DCMAKE_CXX_FLAGS_RELEASE='-O1 -DNDEBUG' && cmake --build build-gpu -j32" ||
    finish_steps "$1"
  build-gpu/src/p2pbench --version >"$work/version.txt" 2>&1
  note "built: $(head -1 "$work/version.txt")"
}

session_tests() {  # NAME LIMIT_S REGEX [VAR=VALUE...]
  local name=$1 limit=$2 regex=$3 status=0
  shift 3
  session_step "$name" "$limit" env "$@" scripts/run-ctest.sh build-gpu -R "$regex" || status=$?
  grep -E "tests passed|tests failed|\*\*\*|^  " "$work/$name.log" | tail -20 >>"$summary"
  return "$status"
}

session_mps_tests() {  # NAME LIMIT_S REGEX [VAR=VALUE...]
  local pipe=/tmp/p2pbench-mps status=0
  mkdir -p "$pipe" "$pipe-log"
  export CUDA_MPS_PIPE_DIRECTORY=$pipe CUDA_MPS_LOG_DIRECTORY=$pipe-log
  if session_step "$1-mps-start" 30 nvidia-cuda-mps-control -d; then
    session_tests "$@" || status=$?
    echo quit | nvidia-cuda-mps-control
    sleep 2  # the daemon quits after its clients: the next step must find none
  else
    status=1
  fi
  unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
  return "$status"
}
