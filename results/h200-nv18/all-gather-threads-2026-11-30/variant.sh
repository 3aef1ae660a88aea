#!/usr/bin/env bash
# Builds build-gpu/ with PATCH applied to the tree (none: as committed), counts the put
# collectives' and GEMM -> RS kernels' fences, strong accesses and store widths in their machine
# code (WORK/NAME-sass.txt), runs each CONFIG on GPUs 0 and 1 into WORK/NAME-<config>.json, and
# takes the patch back out. A diagnostic of this folder's sessions, not a product build.
# Usage: variant.sh NAME PATCH|none WORK CONFIG...   (from the repository root)
set -uo pipefail
name=$1 patch=$2 work=$3
shift 3
here=$(cd "$(dirname "$0")" && pwd)
status=0
if [ "$patch" != none ]; then git apply "$here/$patch" || exit 1; fi
cmake --build build-gpu -j32 >"$work/$name-build.log" 2>&1 || status=1
if [ "$status" = 0 ]; then
  cuobjdump -sass build-gpu/src/p2pbench |
    awk '/Function : /{on = /collective|gemm_rs|reduce_tiles/} on' |
    grep -oE 'MEMBAR[.A-Z]*|CCTL[.A-Z]*|FENCE[.A-Z]*|ERRBAR|[LS]TG\.E[.A-Z0-9]*' |
    sort | uniq -c >"$work/$name-sass.txt"
  for config in "$@"; do
    mpirun -np 2 --bind-to none --allow-run-as-root build-gpu/src/p2pbench --devices 0,1 \
      --config "$config" --output "$work/$name-$(basename "$config" .json).json" || status=1
  done
fi
if [ "$patch" != none ]; then git apply -R "$here/$patch" || status=1; fi
exit "$status"
