#!/usr/bin/env bash
# Checks what p2pbench needs to build, run and test by looking for the tools, headers and CMake
# packages themselves (not for package names: a CMake installed with pip, or a container's own
# libraries, count), installs only what is missing, and says what is still missing and how to
# get it. Offline machines (a GPU node without network) just get the report.
#
# Usage: scripts/install-deps.sh [--check]
#   --check   report only; install nothing
# Installs with apt-get (as root, or through sudo) only when something is missing and an
# `apt-get update` works, and Python packages with pip (into .venv, which scripts/test.sh picks
# up, where the interpreter is externally managed). Idempotent.
# Exit status: 0 when everything REQUIRED is there (test-only and optional items may be missing:
# they are listed), 1 when something required is missing, 2 on bad usage.
set -euo pipefail
cd "$(dirname "$0")/.."

check_only=0
case "${1:-}" in
  "") ;;
  --check) check_only=1 ;;
  -h|--help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  *) echo "install-deps: unknown argument '$1' (only --check)" >&2; exit 2 ;;
esac

cmake_min=$(sed -n 's/^cmake_minimum_required(VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)
python_required=(pandas matplotlib)                            # the report tool
python_for_tests=(pytest scipy jsonschema prometheus_client)   # scripts/test.sh
browsers=(chromium chromium-browser chromium-headless-shell google-chrome google-chrome-stable)

# One line per missing item: class|what|apt package (may be empty)|how to get it by hand.
# class: required (build and run), tests (scripts/test.sh), optional (a feature is skipped).
missing=()
pip_missing=()
cmake_usable=0
lack() { missing+=("$1|$2|$3|$4"); }
ok() { printf '  ok       %s\n' "$1"; }

version_at_least() {  # version_at_least HAVE NEED
  [ "$(printf '%s\n%s\n' "$2" "$1" | sort -V | head -n1)" = "$2" ]
}

python_cmd() {  # the interpreter scripts/test.sh uses
  if [ -x .venv/bin/python3 ]; then echo .venv/bin/python3; else command -v python3 || true; fi
}

nvcc_path() {
  command -v nvcc 2>/dev/null || { [ -x /usr/local/cuda/bin/nvcc ] && echo /usr/local/cuda/bin/nvcc; } || true
}

check_tools() {
  local cmake_version=""
  if command -v cmake >/dev/null; then
    cmake_version=$(cmake --version | sed -n '1s/^cmake version \([0-9][0-9.]*\).*/\1/p')
  fi
  cmake_usable=0
  if [ -n "$cmake_version" ] && version_at_least "$cmake_version" "$cmake_min"; then
    cmake_usable=1
    ok "CMake $cmake_version ($(command -v cmake); need >= $cmake_min)"
  else
    lack required "CMake >= $cmake_min (found: ${cmake_version:-none})" cmake \
      "python3 -m pip install 'cmake>=$cmake_min' (or Kitware's apt repository, apt.kitware.com)"
  fi
  local ninja
  ninja=$(command -v ninja || command -v ninja-build || true)
  if [ -n "$ninja" ]; then ok "Ninja $("$ninja" --version) ($ninja)"
  else lack required "Ninja" ninja-build "python3 -m pip install ninja"; fi
  if command -v c++ >/dev/null || command -v g++ >/dev/null; then ok "C++ compiler ($(command -v c++ || command -v g++))"
  else lack required "a C++17 compiler (c++/g++)" g++ "install g++ 11 or newer"; fi
  if command -v mpicxx >/dev/null; then ok "MPI C++ compiler ($(command -v mpicxx))"
  else lack required "mpicxx (MPI C++ compiler wrapper)" libopenmpi-dev "install Open MPI's development files"; fi
  if command -v mpirun >/dev/null; then ok "mpirun ($(mpirun --version 2>/dev/null | head -n1))"
  else lack required "mpirun" openmpi-bin "install Open MPI"; fi
  local nvcc
  nvcc=$(nvcc_path)
  if [ -n "$nvcc" ]; then ok "nvcc $("$nvcc" --version | sed -n 's/.*release \([0-9.]*\).*/\1/p') ($nvcc)"
  else lack required "nvcc (CUDA Toolkit 12.x or 13.x)" "" \
      "install the CUDA Toolkit (https://developer.nvidia.com/cuda-downloads); nvcc is looked for on PATH and in /usr/local/cuda/bin"; fi
}

# Asks CMake itself, as the build does (find_package), where CMake is usable; else looks for
# the headers with the C++ compiler. Prints one "name=1|0" line per library.
find_libraries() {
  local dir
  dir=$(mktemp -d)
  cat >"$dir/CMakeLists.txt" <<EOF
cmake_minimum_required(VERSION $cmake_min)
project(p2pbench_deps_probe LANGUAGES CXX)
list(APPEND CMAKE_MODULE_PATH "$PWD/cmake")
find_package(CUDAToolkit QUIET)
find_package(nlohmann_json 3.10 QUIET)
find_package(CLI11 QUIET)
find_package(GTest QUIET)
find_package(benchmark QUIET)
find_package(NCCL QUIET)
foreach(p nlohmann_json CLI11 GTest benchmark NCCL)
  if(\${p}_FOUND)
    message(STATUS "probe:\${p}=1")
  else()
    message(STATUS "probe:\${p}=0")
  endif()
endforeach()
EOF
  local generator=()
  command -v ninja >/dev/null && generator=(-G Ninja)
  if ((cmake_usable)) && cmake -S "$dir" -B "$dir/build" "${generator[@]}" >"$dir/log" 2>&1; then
    sed -n 's/^-- probe:\(.*\)/\1/p' "$dir/log"
  else
    local cxx
    cxx=$(command -v c++ || command -v g++ || true)
    local name header
    for pair in nlohmann_json:nlohmann/json.hpp CLI11:CLI/CLI.hpp GTest:gtest/gtest.h \
                benchmark:benchmark/benchmark.h NCCL:nccl.h; do
      name=${pair%%:*} header=${pair#*:}
      if { [ -n "$cxx" ] && printf '#include <%s>\n' "$header" \
             | "$cxx" -std=c++17 -I/usr/local/cuda/include -E -x c++ - -o /dev/null 2>/dev/null; } \
         || [ -f "/usr/include/$header" ] || [ -f "/usr/local/include/$header" ] \
         || [ -f "/usr/local/cuda/include/$header" ]; then
        echo "$name=1"
      else
        echo "$name=0"
      fi
    done
  fi
  rm -rf "$dir"
}

check_libraries() {
  local found
  found=$(find_libraries)
  has() { grep -qx "$1=1" <<<"$found"; }
  if has nlohmann_json; then ok "nlohmann-json >= 3.10"
  else lack required "nlohmann-json >= 3.10 (nlohmann/json.hpp and its CMake package)" nlohmann-json3-dev \
      "https://github.com/nlohmann/json (header-only; install with its CMake package)"; fi
  if has CLI11; then ok "CLI11"
  else lack required "CLI11 (CLI/CLI.hpp and its CMake package)" libcli11-dev "https://github.com/CLIUtils/CLI11"; fi
  if has GTest; then ok "GoogleTest"
  else lack tests "GoogleTest (the C++ tests are not built)" libgtest-dev "https://github.com/google/googletest"; fi
  if has benchmark; then ok "Google Benchmark"
  else lack optional "Google Benchmark (the p2pbench-gbench front-end is skipped)" libbenchmark-dev \
      "https://github.com/google/benchmark"; fi
  if has NCCL; then ok "NCCL"
  else lack optional "NCCL (the nccl baseline's rows are skipped)" "" \
      "libnccl-dev from NVIDIA's CUDA repository, or set NCCL_ROOT"; fi
}

pip_spec() {  # the pinned requirement for a module when scripts/requirements.txt has one
  local want=${1//_/-} line
  while read -r line; do
    local name=${line%%[=<>!~ ]*}
    name=${name//_/-}
    if [ "${name,,}" = "${want,,}" ]; then echo "$line"; return; fi
  done < <(grep -v '^\s*#' scripts/requirements.txt | sed '/^\s*$/d')
  echo "$want"
}

check_python() {
  local py
  py=$(python_cmd)
  if [ -z "$py" ]; then
    lack required "python3 (the report tool and the tests)" python3 "install Python 3.11 or newer"
    pip_missing=("${python_required[@]}" "${python_for_tests[@]}")
    return
  fi
  local absent
  absent=$("$py" - "${python_required[@]}" "${python_for_tests[@]}" <<'EOF'
import importlib, sys
for name in sys.argv[1:]:
    try:
        importlib.import_module(name)
    except Exception:
        print(name)
EOF
)
  pip_missing=()
  local m
  for m in "${python_required[@]}" "${python_for_tests[@]}"; do
    if grep -qx "$m" <<<"$absent"; then
      pip_missing+=("$m")
      local class=tests
      [[ " ${python_required[*]} " == *" $m "* ]] && class=required
      lack "$class" "Python package $m ($py)" "" "$py -m pip install '$(pip_spec "$m")'"
    else
      ok "Python package $m"
    fi
  done
}

check_browser() {
  local b
  for b in "${browsers[@]}"; do
    if command -v "$b" >/dev/null; then ok "headless browser ($(command -v "$b"))"; return; fi
  done
  lack optional "headless Chromium (the report page's browser test is skipped)" chromium-headless-shell \
    "Chromium or Google Chrome on PATH (Debian: chromium-headless-shell or chromium)"
}

check_all() {
  missing=()
  check_tools
  check_libraries
  check_python
  check_browser
}

apt_install() {  # installs the apt packages of the missing items, where apt-get works
  local pkgs=() entry pkg
  for entry in "${missing[@]}"; do
    pkg=$(cut -d'|' -f3 <<<"$entry")
    [ -n "$pkg" ] && pkgs+=("$pkg")
  done
  # pip needs python3-venv/python3-pip for the .venv fallback on Debian/Ubuntu.
  if ((${#pip_missing[@]})) && ! python3 -c 'import ensurepip' 2>/dev/null; then pkgs+=(python3-venv python3-pip); fi
  ((${#pkgs[@]})) || return 0
  local sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "install-deps: not root and no sudo: cannot run apt-get"; return 0; }
    sudo=sudo
  fi
  command -v apt-get >/dev/null || { echo "install-deps: no apt-get here"; return 0; }
  # Bounded, so that an offline machine says so within a minute instead of retrying.
  local apt_net=(-o Acquire::Retries=0 -o Acquire::http::Timeout=20 -o Acquire::https::Timeout=20)
  if ! $sudo apt-get "${apt_net[@]}" update -qq >/dev/null 2>&1; then
    echo "install-deps: apt-get update failed (no network or no repository?): installing nothing with apt"
    return 0
  fi
  local available=()
  for pkg in "${pkgs[@]}"; do  # skip names this distribution does not have (e.g. Debian's chromium-headless-shell on Ubuntu)
    if apt-cache policy "$pkg" 2>/dev/null | grep -q 'Candidate: [0-9]'; then available+=("$pkg")
    else echo "install-deps: apt has no package $pkg here"; fi
  done
  ((${#available[@]})) || return 0
  echo "install-deps: apt-get install ${available[*]}"
  DEBIAN_FRONTEND=noninteractive $sudo apt-get "${apt_net[@]}" install -y -qq --no-install-recommends "${available[@]}" \
    || echo "install-deps: apt-get install failed"
}

pip_install() {  # installs the missing Python packages, pinned as in scripts/requirements.txt
  ((${#pip_missing[@]})) || return 0
  local specs=() m py
  for m in "${pip_missing[@]}"; do specs+=("$(pip_spec "$m")"); done
  py=$(python_cmd)
  [ -n "$py" ] || return 0
  local pip_flags=(-q --disable-pip-version-check --retries 1 --timeout 15)
  echo "install-deps: pip install ${specs[*]}"
  if "$py" -m pip install "${pip_flags[@]}" "${specs[@]}"; then return 0; fi
  [ -d .venv ] && return 0  # the venv's own pip failed: nothing more to try
  # An externally managed interpreter (PEP 668): a virtual environment in .venv, which
  # scripts/test.sh picks up, with every requirement (so its packages fit together).
  echo "install-deps: pip failed; trying a virtual environment in .venv"
  local unlisted=()  # missing packages that scripts/requirements.txt does not pin
  for m in "${pip_missing[@]}"; do [ "$(pip_spec "$m")" = "${m//_/-}" ] && unlisted+=("${m//_/-}"); done
  if python3 -m venv .venv \
     && .venv/bin/python3 -m pip install "${pip_flags[@]}" -r scripts/requirements.txt ${unlisted[@]+"${unlisted[@]}"}; then
    return 0
  fi
  echo "install-deps: could not install Python packages; .venv removed"
  rm -rf .venv
}

report() {
  local class entry c what pkg how any=0
  for class in required tests optional; do
    for entry in "${missing[@]+"${missing[@]}"}"; do
      IFS='|' read -r c what pkg how <<<"$entry"
      [ "$c" = "$class" ] || continue
      any=1
      printf '  MISSING  [%s] %s\n           get it: %s%s\n' "$c" "$what" \
        "${pkg:+apt-get install $pkg, or }" "$how"
    done
  done
  ((any)) || echo "install-deps: everything is there"
}

echo "install-deps: checking what p2pbench needs (CMake minimum $cmake_min, from CMakeLists.txt)"
check_all
if ((${#missing[@]})) && ((check_only == 0)); then
  apt_install
  pip_install
  echo "install-deps: checking again"
  check_all
fi
report
for entry in "${missing[@]+"${missing[@]}"}"; do
  if [ "${entry%%|*}" = required ]; then
    echo "install-deps: something required is missing (above): p2pbench cannot be built or run" >&2
    exit 1
  fi
done
if ((${#missing[@]})); then
  echo "install-deps: what is required is there; the items above only limit tests or optional features"
fi
exit 0
