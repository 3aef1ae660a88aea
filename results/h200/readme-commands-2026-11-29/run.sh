#!/usr/bin/env bash
# The README's test command on an offline one-GPU node, as a newcomer runs it from a copy of the
# tree (no .git: the provenance comes from PROVENANCE.json, written by scripts/stamp-provenance.sh
# before the copy), then the report tool on the run's own files without network.
# Usage: run.sh OUT_DIR
set -uo pipefail
out=${1:?usage: run.sh OUT_DIR}
cd "$(dirname "$0")/../../.."
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 NCCL_NVLS_ENABLE=0 P2PBENCH_TEST_JOBS=8
{ date -u; nvidia-smi -L; python3 -c 'import jsonschema' 2>&1 | tail -1; } >"$out/system.txt" 2>&1
start=$(date +%s)
scripts/install-deps.sh >"$out/install-deps.log" 2>&1
deps=$?
scripts/test.sh >"$out/test.log" 2>&1
tests=$?
took=$(( $(date +%s) - start ))
{
  echo "install-deps.sh: exit $deps; test.sh: exit $tests; $took s from the start of install-deps"
  grep -E "tests passed|tests failed|^  [a-z_]+: |\(Failed\)|\(Timeout\)" "$out/test.log"
  build/src/p2pbench --version
} | tee "$out/summary.txt"
report=0
for cmd in "compare results/h200-nv18/default.json results/h200-nv18/default.json" \
           "check results/h200-nv18/default.json --expect expectations/h200-nv18.json"; do
  scripts/p2pbench-report $cmd >"$out/report-$(echo "$cmd" | cut -d' ' -f1).txt" 2>&1
  rc=$?
  echo "p2pbench-report $cmd: exit $rc ($(tail -1 "$out/report-$(echo "$cmd" | cut -d' ' -f1).txt"))" | tee -a "$out/summary.txt"
  [ $rc -eq 0 ] || report=1
done
[ $deps -eq 0 ] && [ $tests -eq 0 ] && [ $report -eq 0 ]
