#!/usr/bin/env bash
# Both of the README's set-up commands on an offline one-GPU node, from a copy of the tree without
# .git (PROVENANCE.json stamped beside it): install-deps + test.sh and the report tool, as
# ../readme-commands-2026-11-29/run.sh does, then run-default.sh, which on one GPU says so and
# measures what one GPU can.
# Usage: run.sh OUT_DIR
set -uo pipefail
out=${1:?usage: run.sh OUT_DIR}
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
bash "$here/../readme-commands-2026-11-29/run.sh" "$out"
tests=$?
cd "$here/../../.."
start=$(date +%s)
scripts/run-default.sh "$out/results-default.json" >"$out/run-default.log" 2>&1
default=$?
echo "run-default.sh: exit $default; $(( $(date +%s) - start )) s" | tee -a "$out/summary.txt"
[ $tests -eq 0 ] && [ $default -eq 0 ]
