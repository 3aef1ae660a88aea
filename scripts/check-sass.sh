#!/usr/bin/env bash
# Checks the machine code of the copy kernels in a build directory:
#   - tma_copy_kernel (sm_90) issues bulk copies both ways (UBLKCP.S.G: global -> shared,
#     UBLKCP.G.S: shared -> global) and uses transaction mbarriers (SYNCS.EXCH.64 init,
#     SYNCS.ARRIVE.TRANS64 arrive.expect_tx, SYNCS.PHASECHK.TRANS64 try_wait);
#   - ldst_copy_kernel (sm_90) loads 16-byte vectors without L1 allocation (LDG.E.NA.128).
# Prints what it found; exits 1 if something is missing, 2 on a usage or tool problem.
# Usage: scripts/check-sass.sh BUILD_DIR     (CUOBJDUMP=/path/to/cuobjdump to override)
set -euo pipefail

build_dir=${1:?usage: $0 BUILD_DIR}
cuobjdump=${CUOBJDUMP:-$(command -v cuobjdump || true)}
if [[ -z "$cuobjdump" && -x /usr/local/cuda/bin/cuobjdump ]]; then cuobjdump=/usr/local/cuda/bin/cuobjdump; fi
if [[ -z "$cuobjdump" ]]; then
  echo "check-sass: cuobjdump not found (install the CUDA toolkit's cuobjdump or set CUOBJDUMP)" >&2
  exit 2
fi

lib=$(find "$build_dir" -name 'libp2pbench_kernels.a' -print -quit)
if [[ -z "$lib" ]]; then
  echo "check-sass: no libp2pbench_kernels.a under $build_dir (build the p2pbench_kernels target first)" >&2
  exit 2
fi

sass=$(mktemp)
trap 'rm -f "$sass"' EXIT
"$cuobjdump" --dump-sass "$lib" >"$sass" || { echo "check-sass: $cuobjdump --dump-sass $lib failed (exit $?)" >&2; exit 2; }

# Count an opcode pattern in the SASS of the functions whose name matches `func`, compiled for
# `arch` (cuobjdump prints "arch = sm_XX" before each ELF and "Function : NAME" before each
# kernel).
count() {
  local arch=$1 func=$2 pattern=$3
  awk -v arch="$arch" -v fname="$func" -v pat="$pattern" '
    /^arch = /     { cur_arch = $3; in_func = 0; next }
    /Function : /  { in_func = (cur_arch == arch && index($0, fname) > 0); next }
    in_func && $0 ~ pat { n++ }
    END { print n + 0 }' "$sass"
}

arch=sm_90
if ! grep -q "^arch = $arch" "$sass"; then
  built=$(grep '^arch = ' "$sass" | awk '{print $3}' | sort -u | xargs)
  echo "check-sass: $lib has no $arch machine code (built for: $built)" >&2
  exit 1
fi

failed=0
check() {
  local what=$1 func=$2 pattern=$3
  local n
  n=$(count "$arch" "$func" "$pattern")
  if ((n > 0)); then
    printf '  ok       %-28s %-40s %3d\n' "$func" "$what" "$n"
  else
    printf '  MISSING  %-28s %-40s %3d\n' "$func" "$what" "$n"
    failed=1
  fi
}

echo "check-sass: $lib ($arch)"
check "UBLKCP.S.G (bulk global->shared)" tma_copy_kernel 'UBLKCP[.]S[.]G'
check "UBLKCP.G.S (bulk shared->global)" tma_copy_kernel 'UBLKCP[.]G[.]S'
check "SYNCS.EXCH.64 (mbarrier.init)" tma_copy_kernel 'SYNCS[.]EXCH[.]64'
check "SYNCS.ARRIVE.TRANS64 (expect_tx)" tma_copy_kernel 'SYNCS[.]ARRIVE[.]TRANS64'
check "SYNCS.PHASECHK.TRANS64 (try_wait)" tma_copy_kernel 'SYNCS[.]PHASECHK[.]TRANS64'
check "DEPBAR (bulk wait_group)" tma_copy_kernel 'DEPBAR'
check "LDG.E.NA.128 (16-byte, no L1 alloc)" ldst_copy_kernel 'LDG[.]E[.]NA[.]128'
check "STG.E.128 (16-byte stores)" ldst_copy_kernel 'STG[.]E[.]128'

echo "  all SYNCS/UBLKCP/UTMA opcodes in tma_copy_kernel ($arch):"
awk -v arch="$arch" '
  /^arch = /    { cur_arch = $3; in_func = 0; next }
  /Function : / { in_func = (cur_arch == arch && index($0, "tma_copy_kernel") > 0); next }
  in_func { for (i = 1; i <= NF; i++) if ($i ~ /^(SYNCS|UBLKCP|UTMA|DEPBAR)/) print "    " $i }' "$sass" |
  sort | uniq -c

if ((failed)); then
  echo "check-sass: FAILED: expected instructions are missing" >&2
  exit 1
fi
echo "check-sass: OK"
