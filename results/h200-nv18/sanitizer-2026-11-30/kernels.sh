#!/usr/bin/env bash
# On a GPU node: the kernel tests that run under compute-sanitizer (put with signal, both ends
# at once and serialized; the tokens kernels; the collectives and the GEMM -> reduce-scatter's
# tile reduction with every rank in one grid; the atomics; the bounded copies; the pointer-chase
# variants), each under memcheck, racecheck and synccheck, up to six runs at once (a run keeps
# about five cores busy), each under a deadline. Cases the sanitizer cannot run skip and say why
# in the log (the binary then exits 77): a run passes with exit 0 or 77 and no error.
# Usage: kernels.sh OUT_DIR [LIMIT_S_PER_RUN] [BINARY ...]   (default: the seven below;
#        BINARY as DIR/NAME under build-gpu/tests)  Env: SANITIZE_AT_ONCE (runs at once)
set -uo pipefail
source "$(dirname "$0")/../../../scripts/lib/node-session.sh"
session_open kernels.sh "${1:-}"
session_build kernels.sh
export per_run=${2:-180} work
at_once=${SANITIZE_AT_ONCE:-$(( $(nproc) / 5 < 6 ? $(nproc) / 5 : 6 ))}
((at_once > 0)) || at_once=1
binaries="put_signal/test_put_signal_kernels tokens/test_token_kernels collectives/test_collective_kernels
gemm_rs/test_gemm_rs_kernels latency/test_latency_atomic_kernels kernels/test_bounded_copier
latency/test_chase_variants"
(($# > 2)) && binaries="${*:3}"
one_run() {  # TOOL BINARY: a line "TOOL NAME: rc=R, gtest's verdict, the tool's summary"
  local tool=$1 binary=$2 name log
  name=$(basename "$binary")
  log=$work/$tool-$name.log
  timeout -s KILL "$per_run" compute-sanitizer --tool "$tool" --error-exitcode 9 "build-gpu/tests/$binary" >"$log" 2>&1
  echo "$tool $name: rc=$? $(grep -h -E '^\[  (PASSED|SKIPPED|FAILED)  \] [0-9]+ test|(ERROR|RACECHECK) SUMMARY' "$log" | tr -s ' ' | paste -sd';')"
}
export -f one_run
start=$SECONDS
for tool in memcheck racecheck synccheck; do for b in $binaries; do echo "$tool $b"; done; done |
  xargs -P "$at_once" -L 1 bash -c 'one_run "$0" "$1"' | sort >"$work/kernels.summary"
cat "$work/kernels.summary" >>"$summary"
[ "$(grep -c . "$work/kernels.summary")" = "$((3 * $(wc -w <<<"$binaries")))" ] && ! grep -v -E -q "rc=(0|77) .*(SUMMARY: 0 errors|SUMMARY: 0 hazards)" "$work/kernels.summary"
record_step sanitized-kernels $? "$((SECONDS - start)) s, a line per tool and test binary above"
finish_steps kernels.sh
