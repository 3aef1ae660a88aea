#!/usr/bin/env bash
# Checks what p2pbench needs to build, run and test by looking for the tools, headers and CMake
# packages themselves (not for package names: a CMake installed with pip, or a container's own
# libraries, count), installs only what is missing, and says what is still missing and how to
# get it. Offline machines (a GPU node without network) just get the report.
#
# Usage: scripts/install-deps.sh [--check]
#        scripts/install-deps.sh --available PKG...
#   --check      report only; install nothing
#   --available  print "PKG yes" or "PKG no" for each apt package: whether apt can install it
#                here (the check made before installing; the tests call it on its own)
# Installs only what is missing: with apt-get (as root, or through sudo) where `apt-get update`
# works, waiting up to 300 s for another apt or dpkg to let go of its lock (unattended-upgrades
# on a fresh machine); Python packages with pip (into .venv, which scripts/test.sh picks up,
# where the interpreter is externally managed). Then prints the apt and pip packages it newly
# installed, and apt-get's errors where it failed. Idempotent.
# Exit status: 0 when everything REQUIRED is there (test-only and optional items may be missing:
# they are listed), 1 when something required is missing, 2 on bad usage.
set -euo pipefail
# No pipes below: under pipefail, a reader that stops early (grep -q, head) kills its writer
# with SIGPIPE and fails the pipe, at random. Outputs are captured into variables, then matched.
cd "$(dirname "$0")/.."

cmake_min=$(sed -n 's/^cmake_minimum_required(VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)
python_required=(pandas matplotlib)                            # the report tool
python_for_tests=(pytest scipy prometheus_client)              # scripts/test.sh
# Without jsonschema the report validates with its built-in validator, and the test that
# compares the two (results_schema_jsonschema) is skipped.
python_optional=(jsonschema)
python_all=("${python_required[@]}" "${python_for_tests[@]}" "${python_optional[@]}")
browsers=(chromium chromium-browser chromium-headless-shell google-chrome google-chrome-stable)
venv_debs=(python3-venv python3-pip)   # what the .venv fallback needs on Debian/Ubuntu
apt_lock_wait=300   # s; bounded, so that a machine whose apt is stuck still gets its report
pip_flags=(-q --disable-pip-version-check --retries 1 --timeout 15)

# One line per missing item: class|what|apt package (may be empty)|how to get it by hand.
# class: required (build and run), tests (scripts/test.sh), optional (a feature is skipped).
missing=()
pip_missing=()
cmake_usable=0
library_probe=""   # find_libraries' answer, kept until apt installs something
sudo=""
lack() { missing+=("$1|$2|$3|$4"); }
ok() { printf '  ok       %s\n' "$1"; }
indent() { local line; while IFS= read -r line; do printf '    %s\n' "$line"; done <<<"$1"; }

version_at_least() {  # version_at_least HAVE NEED
  sort -V -C <<<"$2"$'\n'"$1"
}

python_cmd() {  # the interpreter scripts/test.sh uses
  if [ -x .venv/bin/python3 ]; then echo .venv/bin/python3; else command -v python3 || true; fi
}

nvcc_path() {
  command -v nvcc 2>/dev/null || { [ -x /usr/local/cuda/bin/nvcc ] && echo /usr/local/cuda/bin/nvcc; } || true
}

cmake_version() {  # of the cmake on PATH; empty when there is none or it says no version
  local out
  out=$(cmake --version 2>/dev/null || true)
  if [[ $out =~ ^cmake\ version\ ([0-9][0-9.]*) ]]; then echo "${BASH_REMATCH[1]}"; fi
}

check_cmake() {
  local version=""
  command -v cmake >/dev/null && version=$(cmake_version)
  cmake_usable=0
  if [ -n "$version" ] && version_at_least "$version" "$cmake_min"; then
    cmake_usable=1
    ok "CMake $version ($(command -v cmake); need >= $cmake_min)"
  else
    lack required "CMake >= $cmake_min (found: ${version:-none})" cmake \
      "python3 -m pip install 'cmake>=$cmake_min' (or Kitware's apt repository, apt.kitware.com)"
  fi
}

check_tools() {
  check_cmake
  local ninja out
  ninja=$(command -v ninja || command -v ninja-build || true)
  if [ -n "$ninja" ]; then ok "Ninja $("$ninja" --version) ($ninja)"
  else lack required "Ninja" ninja-build "python3 -m pip install ninja"; fi
  if command -v c++ >/dev/null || command -v g++ >/dev/null; then ok "C++ compiler ($(command -v c++ || command -v g++))"
  else lack required "a C++17 compiler (c++/g++)" g++ "install g++ 11 or newer"; fi
  if command -v mpicxx >/dev/null; then ok "MPI C++ compiler ($(command -v mpicxx))"
  else lack required "mpicxx (MPI C++ compiler wrapper)" libopenmpi-dev "install Open MPI's development files"; fi
  if command -v mpirun >/dev/null; then
    out=$(mpirun --version 2>/dev/null || true)
    ok "mpirun (${out%%$'\n'*})"
  else lack required "mpirun" openmpi-bin "install Open MPI"; fi
  if command -v ccache >/dev/null; then ok "ccache ($(command -v ccache))"
  else lack optional "ccache (every build compiles every file; the test adding_a_method builds a copy of the tree from scratch)" \
      ccache "install ccache (Debian: ccache)"; fi
  check_nvcc
}

check_nvcc() {
  local nvcc out
  nvcc=$(nvcc_path)
  if [ -n "$nvcc" ]; then
    out=$("$nvcc" --version 2>/dev/null || true)
    [[ $out =~ release\ ([0-9.]*) ]] || true
    ok "nvcc ${BASH_REMATCH[1]:-(version unknown)} ($nvcc)"
  else lack required "nvcc (CUDA Toolkit 12.x or 13.x)" "" \
      "install the CUDA Toolkit (https://developer.nvidia.com/cuda-downloads); nvcc is looked for on PATH and in /usr/local/cuda/bin"; fi
}

# Asks CMake itself, as the build does (find_package), where CMake is usable; else looks for
# the headers with the C++ compiler. Prints one "name=1|0" line per library.
find_libraries() {
  local dir
  dir=$(mktemp -d)
  cat >"$dir/CMakeLists.txt" <<PROBE
cmake_minimum_required(VERSION $cmake_min)
project(p2pbench_deps_probe LANGUAGES CXX)
list(APPEND CMAKE_MODULE_PATH "$PWD/cmake")
find_package(CUDAToolkit QUIET)
find_package(nlohmann_json 3.10 QUIET)
find_package(CLI11 QUIET)
find_package(GTest QUIET)
find_package(benchmark QUIET)
find_package(NCCL QUIET)
find_package(MPI COMPONENTS CXX QUIET)
foreach(p nlohmann_json CLI11 GTest benchmark NCCL MPI)
  if(\${p}_FOUND)
    message(STATUS "probe:\${p}=1")
  else()
    message(STATUS "probe:\${p}=0")
  endif()
endforeach()
PROBE
  local generator=()
  command -v ninja >/dev/null && generator=(-G Ninja)
  if ((cmake_usable)) && cmake -S "$dir" -B "$dir/build" "${generator[@]}" >"$dir/log" 2>&1; then
    sed -n 's/^-- probe:\(.*\)/\1/p' "$dir/log"
  else
    find_headers
  fi
  rm -rf "$dir"
}

find_headers() {  # find_libraries without CMake: "name=1|0" by whether the header is found
  local cxx pair name header
  cxx=$(command -v c++ || command -v g++ || true)
  for pair in nlohmann_json:nlohmann/json.hpp CLI11:CLI/CLI.hpp GTest:gtest/gtest.h \
              benchmark:benchmark/benchmark.h NCCL:nccl.h MPI:mpi.h; do
    name=${pair%%:*} header=${pair#*:}
    if { [ -n "$cxx" ] && "$cxx" -std=c++17 -I/usr/local/cuda/include -E -x c++ - -o /dev/null \
           2>/dev/null <<<"#include <$header>"; } \
       || { [ "$name" = MPI ] && command -v mpicxx >/dev/null \
            && mpicxx -E -x c++ - -o /dev/null 2>/dev/null <<<"#include <mpi.h>"; } \
       || [ -f "/usr/include/$header" ] || [ -f "/usr/local/include/$header" ] \
       || [ -f "/usr/local/cuda/include/$header" ]; then
      echo "$name=1"
    else
      echo "$name=0"
    fi
  done
}

check_libraries() {
  local found
  # CMake's probe takes seconds; its answer changes only when apt installs something.
  [ -n "$library_probe" ] || library_probe=$(find_libraries)
  found=$library_probe
  has() { grep -qx "$1=1" <<<"$found"; }
  if has nlohmann_json; then ok "nlohmann-json >= 3.10"
  else lack required "nlohmann-json >= 3.10 (nlohmann/json.hpp and its CMake package)" nlohmann-json3-dev \
      "https://github.com/nlohmann/json (header-only; install with its CMake package)"; fi
  if has CLI11; then ok "CLI11"
  else lack required "CLI11 (CLI/CLI.hpp and its CMake package)" libcli11-dev "https://github.com/CLIUtils/CLI11"; fi
  # The mpicxx wrapper can outlive the headers it points to (an alternatives link left by a
  # removed libopenmpi-dev), so the headers are looked for as the build looks for them.
  if has MPI; then ok "MPI development files (mpi.h, found as the build finds them)"
  else lack required "MPI development files (mpi.h; CMake's find_package(MPI) finds none)" libopenmpi-dev \
      "install Open MPI's development files"; fi
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
  local want=${1//_/-} line name
  while read -r line; do
    if [[ -z $line || $line == \#* ]]; then continue; fi
    name=${line%%[=<>!~ ]*}
    name=${name//_/-}
    if [ "${name,,}" = "${want,,}" ]; then echo "$line"; return; fi
  done <scripts/requirements.txt
  echo "$want"
}

check_python() {
  local py
  py=$(python_cmd)
  if [ -z "$py" ]; then
    lack required "python3 (the report tool and the tests)" python3 "install Python 3.11 or newer"
    pip_missing=("${python_all[@]}")
    return
  fi
  local absent
  absent=$("$py" - "${python_all[@]}" <<'PY'
import importlib, sys
for name in sys.argv[1:]:
    try:
        importlib.import_module(name)
    except Exception:
        print(name)
PY
)
  pip_missing=()
  local m
  for m in "${python_all[@]}"; do
    if grep -qx "$m" <<<"$absent"; then
      pip_missing+=("$m")
      local class=tests what="Python package $m ($py)"
      [[ " ${python_required[*]} " == *" $m "* ]] && class=required
      if [[ " ${python_optional[*]} " == *" $m "* ]]; then
        class=optional what="$what: the report validates with its built-in validator"
      fi
      lack "$class" "$what" "" "$py -m pip install '$(pip_spec "$m")'"
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

# Slurm on localhost, for tests/slurm (a job's time limit and scancel against the MPI probe);
# without it that test skips with the reason. slurm-wlm is only a metapackage of these.
check_slurm() {
  local tool pkg
  for pair in slurmctld:slurmctld slurmd:slurmd srun:slurm-client munged:munge; do
    tool=${pair%%:*} pkg=${pair#*:}
    if command -v "$tool" >/dev/null || [ -x "/usr/sbin/$tool" ]; then ok "Slurm: $tool"
    else lack tests "Slurm's $tool (the Slurm test is skipped)" "$pkg" "install Slurm (Debian: $pkg)"; fi
  done
}

check_all() {
  missing=()
  check_tools
  check_libraries
  check_python
  check_browser
  check_slurm
}

say_added() {  # say_added WHAT BEFORE AFTER: names the lines of AFTER that BEFORE lacks
  local -A had=()
  local line new=()
  while IFS= read -r line; do [ -z "$line" ] || had[$line]=1; done <<<"$2"
  while IFS= read -r line; do
    if [ -n "$line" ] && [ -z "${had[$line]:-}" ]; then new+=("$line"); fi
  done <<<"$3"
  echo "install-deps: $1: ${new[*]:-nothing new}"
}

# Prints those of PKG... that apt has a version of to install (not "Candidate: (none)", not
# unknown names), one a line. One apt-cache call for all: without its binary cache (Docker
# images) each call reads every list.
apt_available() {
  local policy line pkg=""
  policy=$(LC_ALL=C apt-cache policy "$@" 2>/dev/null || true)
  while IFS= read -r line; do
    if [[ $line =~ ^([^[:space:]]+):$ ]]; then pkg=${BASH_REMATCH[1]}
    elif [[ -n $pkg && $line =~ ^\ +Candidate:\ [0-9] ]]; then echo "$pkg"; pkg=""; fi
  done <<<"$policy"
}

apt_wanted() {  # the apt packages of the missing items, one a line
  local entry pkg
  for entry in "${missing[@]}"; do
    IFS='|' read -r _ _ pkg _ <<<"$entry"
    if [ -n "$pkg" ]; then echo "$pkg"; fi
  done
  if ((${#pip_missing[@]})) && ! python3 -c 'import ensurepip' 2>/dev/null; then
    printf '%s\n' "${venv_debs[@]}"
  fi
}

apt_can_run() {  # sets sudo; says why not where apt-get cannot be run
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "install-deps: not root and no sudo: cannot run apt-get"; return 1; }
    sudo=sudo
  fi
  command -v apt-get >/dev/null || { echo "install-deps: no apt-get here"; return 1; }
}

apt_get() {  # apt-get as root, in English (its messages are matched), its waits bounded
  $sudo env DEBIAN_FRONTEND=noninteractive LC_ALL=C apt-get -o DPkg::Lock::Timeout="$apt_lock_wait" \
    -o Acquire::Retries=0 -o Acquire::http::Timeout=20 -o Acquire::https::Timeout=20 "$@"
}

# apt 2.6 (Debian 12) waits for the dpkg lock (DPkg::Lock::Timeout) in install but not for the
# lists lock in update, which fails at once: update is retried here, within the same bound.
apt_update() {
  local deadline=$((SECONDS + apt_lock_wait)) out told=""
  until out=$(apt_get update -qq 2>&1); do
    if [[ $out != *"Could not get lock"* ]]; then indent "$out"; return 1; fi
    if ((SECONDS >= deadline)); then
      echo "install-deps: apt's lock is still held after $apt_lock_wait s:"
      indent "$out"
      return 1
    fi
    [ -n "$told" ] || echo "install-deps: another apt or dpkg holds apt's lock (unattended-upgrades on a fresh machine?): waiting, $apt_lock_wait s at most"
    told=1
    sleep 5
  done
}

installed_debs() {  # name=version of each package dpkg has installed, one a line
  local all status pkg
  all=$(dpkg-query -W -f='${Status} ${Package}=${Version}\n' 2>/dev/null || true)
  while read -r _ _ status pkg; do  # ${Status} is "WANT FLAG STATUS"
    if [ "$status" = installed ]; then echo "$pkg"; fi
  done <<<"$all"
}

apt_get_install() {  # installs PKG...; says what dpkg has new afterwards, and apt-get's errors
  local before err status=0
  before=$(installed_debs)
  echo "install-deps: apt-get install $* (waiting up to $apt_lock_wait s for the dpkg lock where another apt or dpkg holds it)"
  # stderr is captured, to be repeated after the verdict; the progress on stdout goes through.
  { err=$(apt_get install -y -qq --no-install-recommends "$@" 2>&1 >&3) || status=$?; } 3>&1
  if ((status)); then
    echo "install-deps: apt-get install failed (exit $status):"
    indent "$err"
  elif [ -n "$err" ]; then
    printf '%s\n' "$err" >&2
  fi
  say_added "installed with apt" "$before" "$(installed_debs)"
  library_probe=""
}

apt_install() {  # installs the apt packages of the missing items, where apt-get works
  local pkgs=() available=() pkg have
  mapfile -t pkgs < <(apt_wanted)
  ((${#pkgs[@]})) || return 0
  apt_can_run || return 0
  if ! apt_update; then
    echo "install-deps: apt-get update failed (no network or no repository?): installing nothing with apt"
    return 0
  fi
  have=$(apt_available "${pkgs[@]}")
  for pkg in "${pkgs[@]}"; do  # skip names this distribution does not have (e.g. Debian's chromium-headless-shell on Ubuntu)
    if grep -qxF -- "$pkg" <<<"$have"; then available+=("$pkg")
    else echo "install-deps: apt has no package $pkg here"; fi
  done
  ((${#available[@]})) || return 0
  apt_get_install "${available[@]}"
}

pip_list() {  # name==version of each package in the environment of interpreter $1
  "$1" -m pip list --format=freeze --disable-pip-version-check 2>/dev/null || true
}

pip_install() {  # installs the missing Python packages, pinned as in scripts/requirements.txt
  ((${#pip_missing[@]})) || return 0
  local specs=() m py before status=0
  for m in "${pip_missing[@]}"; do specs+=("$(pip_spec "$m")"); done
  py=$(python_cmd)
  [ -n "$py" ] || return 0
  before=$(pip_list "$py")
  echo "install-deps: pip install ${specs[*]}"
  local err
  # stderr is captured to be matched (and repeated); the progress on stdout goes through.
  { err=$("$py" -m pip install "${pip_flags[@]}" "${specs[@]}" 2>&1 >&3) || status=$?; } 3>&1
  [ -z "$err" ] || printf '%s\n' "$err" >&2
  say_added "installed with pip ($py)" "$before" "$(pip_list "$py")"
  if ((status == 0)) || [ -d .venv ]; then return 0; fi  # a venv's own pip failed: nothing more to try
  # Only an interpreter that refuses pip (PEP 668) is helped by a venv; without an index (an
  # offline node) the venv's pip fails the same way, after seconds of making it.
  if [[ $err == *externally-managed-environment* ]]; then venv_install; fi
}

# An externally managed interpreter (PEP 668): a virtual environment in .venv, which
# scripts/test.sh picks up, with every requirement (so its packages fit together).
venv_install() {
  echo "install-deps: pip failed; trying a virtual environment in .venv"
  local unlisted=() m before  # missing packages that scripts/requirements.txt does not pin
  for m in "${pip_missing[@]}"; do
    if [ "$(pip_spec "$m")" = "${m//_/-}" ]; then unlisted+=("${m//_/-}"); fi
  done
  if python3 -m venv .venv; then
    before=$(pip_list .venv/bin/python3)
    if .venv/bin/python3 -m pip install "${pip_flags[@]}" -r scripts/requirements.txt ${unlisted[@]+"${unlisted[@]}"}; then
      say_added "installed with pip (.venv)" "$before" "$(pip_list .venv/bin/python3)"
      return 0
    fi
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

print_available() {  # --available: "PKG yes|no" for each package, as apt_install decides
  local have pkg
  have=$(apt_available "$@")
  for pkg; do
    if grep -qxF -- "$pkg" <<<"$have"; then echo "$pkg yes"; else echo "$pkg no"; fi
  done
}

usage_error() {
  echo "install-deps: $1 (usage: --check, --available PKG..., -h)" >&2
  exit 2
}

check_only=0
case "${1:-}" in
  "") ;;
  --check) check_only=1 ;;
  --available) shift; (($#)) || usage_error "--available needs package names"; print_available "$@"; exit 0 ;;
  -h|--help) sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"; exit 0 ;;
  *) usage_error "unknown argument '$1'" ;;
esac
(($# <= 1)) || usage_error "unexpected argument '$2'"

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
