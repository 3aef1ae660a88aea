#!/usr/bin/env bash
# Installs what a fresh Debian/Ubuntu machine with a CUDA toolkit lacks to build and test
# p2pbench. Idempotent: installs only what is missing. Needs root (or sudo) for packages.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(cmake ninja-build g++ make git libopenmpi-dev openmpi-bin nlohmann-json3-dev libcli11-dev
          libgtest-dev libbenchmark-dev python3 python3-pip python3-venv)
missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if ((${#missing[@]})); then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  if ! command -v apt-get >/dev/null; then
    echo "install-deps: missing ${missing[*]} and no apt-get here; install them by hand" >&2
    exit 1
  fi
  echo "install-deps: installing ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "install-deps: system packages present"
fi

if ! command -v nvcc >/dev/null && [ ! -x /usr/local/cuda/bin/nvcc ]; then
  echo "install-deps: no CUDA toolkit (nvcc) found: install the CUDA Toolkit (12.x or 13.x) first" >&2
  exit 1
fi

# Python packages for scripts/p2pbench-report and the Python tests, pinned.
if python3 -c "import pandas, matplotlib, scipy, jsonschema, pytest" 2>/dev/null; then
  echo "install-deps: Python packages present"
elif python3 -m pip install -q -r scripts/requirements.txt 2>/dev/null; then
  echo "install-deps: Python packages installed"
else
  # An externally managed interpreter (PEP 668): use a virtual environment in .venv, which
  # scripts/test.sh picks up.
  echo "install-deps: installing Python packages into .venv"
  python3 -m venv .venv
  .venv/bin/python3 -m pip install -q -r scripts/requirements.txt
fi
