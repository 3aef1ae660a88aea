#!/usr/bin/env bash
# Builds build-gpu/ with PATCH applied to the tree (none: as committed), runs config-variants.json
# on GPUs 0 and 1 into WORK/NAME.json, counts the collective kernel's fences and strong accesses,
# and takes the patch back out. A diagnostic of session-variants.sh, not a product build.
# Usage: variant.sh NAME PATCH|none WORK   (from the repository root)
set -uo pipefail
name=$1 patch=$2 work=$3
here=$(cd "$(dirname "$0")" && pwd)
status=0
if [ "$patch" != none ]; then git apply "$here/$patch" || exit 1; fi
cmake --build build-gpu -j32 >"$work/$name-build.log" 2>&1 || status=1
if [ "$status" = 0 ]; then
  cuobjdump -sass build-gpu/src/p2pbench | awk '/Function : .*collective/{on=1} /Function : /{if (!/collective/) on=0} on' |
    grep -oE 'MEMBAR[.A-Z]*|CCTL[.A-Z]*|FENCE[.A-Z]*|ERRBAR|LDG[.A-Z0-9]*STRONG[.A-Z]*|STG[.A-Z0-9]*STRONG[.A-Z]*' |
    sort | uniq -c >"$work/$name-sass.txt"
  mpirun -np 2 --bind-to none --allow-run-as-root build-gpu/src/p2pbench --devices 0,1 \
    --config "$here/config-variants.json" --output "$work/$name.json" || status=1
fi
if [ "$patch" != none ]; then git apply -R "$here/$patch" || status=1; fi
exit "$status"
