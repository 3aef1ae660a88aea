#!/usr/bin/env bash
# Writes the dry-run plan (case list: method, axes, flows, order; counts, memory, estimate) of the
# shipped configs for 2, 3, 4 and 8 ranks (one-gpu also for 1), one file each, so two builds' plans can be diffed.
# Needs no GPU.
#
# Usage: scripts/plan-snapshot.sh P2PBENCH_BIN OUT_DIR
#        scripts/plan-snapshot.sh --diff BIN_BEFORE BIN_AFTER   (exit 1 and the diff when they differ)
set -euo pipefail
cd "$(dirname "$0")/.."
configs=(default matrix patterns latency atomics baselines interference host-link one-gpu)
ranks=(2 3 4 8)

snapshot() {
  local bin=$1 dir=$2 c n
  mkdir -p "$dir"
  for c in "${configs[@]}"; do
    local counts=("${ranks[@]}")
    [ "$c" = one-gpu ] && counts=(1 "${ranks[@]}")  # one rank needs no peer
    for n in "${counts[@]}"; do
      "$bin" --dry-run --config "configs/$c.json" --ranks "$n" >"$dir/$c-$n.txt" 2>&1 ||
        { echo "plan-snapshot: $bin --dry-run --config configs/$c.json --ranks $n failed:" >&2; cat "$dir/$c-$n.txt" >&2; exit 1; }
    done
  done
}

if [ "${1:-}" = "--diff" ]; then
  before=${2:?usage: scripts/plan-snapshot.sh --diff BIN_BEFORE BIN_AFTER}
  after=${3:?usage: scripts/plan-snapshot.sh --diff BIN_BEFORE BIN_AFTER}
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  snapshot "$before" "$tmp/before"
  snapshot "$after" "$tmp/after"
  if diff -ru "$tmp/before" "$tmp/after"; then
    echo "plans identical: ${#configs[@]} configs x ${#ranks[@]} rank counts"
  else
    exit 1
  fi
else
  snapshot "${1:?usage: scripts/plan-snapshot.sh P2PBENCH_BIN OUT_DIR}" "${2:?usage: scripts/plan-snapshot.sh P2PBENCH_BIN OUT_DIR}"
fi
