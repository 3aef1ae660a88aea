#!/usr/bin/env bash
# Writes PROVENANCE.json at the top of a git work tree (git-ignored): the commit, whether the tree
# differs from it and a hash of the difference, and a hash of the sources. Run it before copying
# the tree without its .git folder to the machine that builds it (a GPU node): the build there
# reads it (cmake/provenance.cmake) and checks it against the sources it finds.
#
# Usage: scripts/stamp-provenance.sh [SOURCE_DIR]     (default: this script's tree)
# Exit: 0 written; 1 SOURCE_DIR is not the top of a git work tree, or cmake is missing.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
source_dir=$(cd "${1:-$here}" && pwd)
if ! command -v cmake >/dev/null; then
  echo "stamp-provenance: cmake not found (it runs cmake/provenance.cmake, the build's own stamping)" >&2
  exit 1
fi
if ! cmake -DSOURCE_DIR="$source_dir" -DWRITE_STAMP="$source_dir/PROVENANCE.json" -P "$here/cmake/provenance.cmake"; then
  echo "stamp-provenance: no stamp written for $source_dir (cmake/provenance.cmake failed, above)" >&2
  exit 1
fi
