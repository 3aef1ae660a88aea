#!/usr/bin/env bash
# The README's two set-up commands on a machine made fresh again: removes what install-deps.sh
# installs (apt packages, pip packages, ccache and its cache), clones REPO into WORK/fresh and
# times `scripts/install-deps.sh` and `scripts/test.sh` there. Run as root, alone on the machine
# (its timings are the point). Logs: WORK/fresh-*.log.
# Usage: fresh-clone.sh REPO WORK
set -u
repo=${1:?usage: fresh-clone.sh REPO WORK}
work=${2:?usage: fresh-clone.sh REPO WORK}
mkdir -p "$work" || exit 2
export DEBIAN_FRONTEND=noninteractive
echo "== $(date -u +%T) removing"
apt-get purge -y -q ninja-build libopenmpi-dev openmpi-bin nlohmann-json3-dev libcli11-dev libgtest-dev libgmock-dev \
  libbenchmark-dev slurmctld slurmd slurm-client munge chromium-headless-shell ccache >"$work/fresh-remove.log" 2>&1
echo "apt purge: exit $?"
apt-get autoremove -y -q >>"$work/fresh-remove.log" 2>&1; echo "autoremove: exit $?"
python3 -m pip uninstall -y -q pandas matplotlib scipy prometheus_client pytest >>"$work/fresh-remove.log" 2>&1
echo "pip uninstall: exit $?"
left=0
for t in ninja mpirun slurmctld munged ccache; do
  if command -v "$t"; then left=1; else echo "$t: gone"; fi
done
python3 -c "import pandas" 2>/dev/null && { echo "pandas: still importable"; left=1; }
# Not a fresh machine if any of them is left: its timings would say nothing.
[ "$left" = 0 ] || { echo "fresh-clone.sh: the removal left tools behind ($work/fresh-remove.log)"; exit 1; }
rm -rf "$work/fresh" && git clone -q "$repo" "$work/fresh" && cd "$work/fresh" && git log --oneline -1
# An empty compiler cache and none of this machine's ccache settings.
rm -rf "$work/fresh-ccache"; mkdir -p "$work/fresh-ccache"; : >"$work/fresh-ccache.conf"
export CCACHE_DIR=$work/fresh-ccache CCACHE_CONFIGPATH=$work/fresh-ccache.conf
echo "== $(date -u +%T) install-deps"
start=$(date +%s); bash scripts/install-deps.sh >"$work/fresh-install.log" 2>&1; rc=$?
echo "install-deps.sh: exit $rc after $(( $(date +%s) - start )) s"
tail -15 "$work/fresh-install.log"
echo "== $(date -u +%T) test.sh"
start=$(date +%s); bash scripts/test.sh >"$work/fresh-test.log" 2>&1; rc=$?
echo "test.sh: exit $rc after $(( $(date +%s) - start )) s"
grep -E "tests passed|Failed|\*\*\*|Total Test time" "$work/fresh-test.log" | tail -15
echo "== $(date -u +%T) done"
