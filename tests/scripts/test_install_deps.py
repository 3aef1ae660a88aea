"""scripts/install-deps.sh: its apt check against this machine's real apt, and the script on
simulated nodes.

The real-apt test asks the script's own availability check (--available) about every apt
package the script may install, over and over, and compares with what apt-cache says when read
to the end: a pipe into `grep -q` under pipefail answered "no" at random for packages apt has.

The simulated nodes have every tool (this machine's), but a CMake installed with pip (on PATH,
unknown to dpkg). On the offline node, apt-get, apt-cache, dpkg, dpkg-query and sudo are stubs
that log their calls and fail, and pip has no index (PIP_NO_INDEX): the script must look for the
tools and headers themselves, install nothing when all is there, and exit non-zero only when
something required is missing. On the online node, apt works: stubs for apt-get, apt-cache,
dpkg-query and sudo keep a package database in a directory, so the test knows exactly what "was
installed" and checks that the script says so. python3 is a wrapper that logs its calls. Python
packages are made present or absent with a directory on PYTHONPATH, so the outcome does not
depend on what this machine has installed.
"""
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PYTHON_MODULES = ["pandas", "matplotlib", "pytest", "scipy", "jsonschema", "prometheus_client"]


def write_exe(path, text):
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)


# The script's library probe is a CMake configure (compiler checks, FindMPI's try_compile): seconds
# of CPU that every simulated node would repeat with the same answer. The first probe of a session
# runs for real and is recorded; a later probe of the same text (the node's path aside) is
# answered from the record. Any other use of CMake runs the real one.
RECORDING_CMAKE = r'''#!/bin/sh
real="{cmake}" record="{record}"
if [ "$1" = "-S" ] && grep -q '^project(p2pbench_deps_probe' "$2/CMakeLists.txt" 2>/dev/null; then
  probe=$(sed "s#{repo}#REPO#g" "$2/CMakeLists.txt")
  if [ -f "$record/log" ] && [ "$probe" = "$(cat "$record/probe")" ]; then
    cat "$record/log"; exit 0
  fi
  "$real" "$@" >"$record/log.new" 2>&1; rc=$?
  cat "$record/log.new"
  [ $rc -eq 0 ] && printf '%s\n' "$probe" >"$record/probe" && mv "$record/log.new" "$record/log"
  exit $rc
fi
exec "$real" "$@"
'''


class OfflineNode:
    def __init__(self, root, probe_record):
        self.repo = root / "repo"
        (self.repo / "scripts").mkdir(parents=True)
        shutil.copy2(REPO / "scripts" / "install-deps.sh", self.repo / "scripts")
        shutil.copy2(REPO / "scripts" / "requirements.txt", self.repo / "scripts")
        shutil.copy2(REPO / "CMakeLists.txt", self.repo)
        shutil.copytree(REPO / "cmake", self.repo / "cmake")
        self.env = {}
        self.log = root / "calls.log"
        self.log.touch()
        self.stubs = root / "stubs"
        self.pip_bin = root / "pip-bin"   # where `pip install cmake` puts CMake
        self.shadow = root / "pythonpath"
        for d in (self.stubs, self.pip_bin, self.shadow):
            d.mkdir()
        for tool in ("apt-get", "apt-cache", "dpkg", "dpkg-query", "sudo"):
            write_exe(self.stubs / tool,
                      f'#!/bin/sh\necho "{tool} $*" >>"{self.log}"\n'
                      f'echo "{tool}: simulated offline node" >&2\nexit 100\n')
        # With P2PBENCH_TEST_PEP668 set, pip refuses as an externally managed interpreter (PEP 668) does.
        write_exe(self.stubs / "python3",
                  f'#!/bin/sh\necho "python3 $*" >>"{self.log}"\n'
                  'if [ -n "$P2PBENCH_TEST_PEP668" ] && [ "$1 $2 $3" = "-m pip install" ]; then\n'
                  '  echo "error: externally-managed-environment" >&2; exit 1\nfi\n'
                  f'exec "{sys.executable}" "$@"\n')
        # A headless browser and ccache, so that their absence on this machine does not decide the outcome.
        write_exe(self.stubs / "chromium", "#!/bin/sh\necho Chromium 0\n")
        write_exe(self.stubs / "ccache", "#!/bin/sh\necho ccache 0\n")
        write_exe(self.pip_bin / "cmake",
                  RECORDING_CMAKE.format(cmake=shutil.which("cmake"), record=probe_record, repo=self.repo))
        # Every Python package the script asks about is stood in for (the test hides some): the
        # outcome does not depend on this machine's packages, and no node imports pandas,
        # matplotlib and scipy for real (seconds each time the script checks).
        for name in PYTHON_MODULES:
            self.stand_in(name, "")

    def stand_in(self, name, body):
        package = self.shadow / name
        package.mkdir(exist_ok=True)
        (package / "__init__.py").write_text(body)

    def hide_python(self, name):
        self.stand_in(name, f'raise ImportError("{name} hidden by the test")\n')

    def old_cmake(self, version):
        write_exe(self.stubs / "cmake", f'#!/bin/sh\necho "cmake version {version}"\n')

    def run(self, *args):
        env = dict(os.environ, **self.env)
        nvcc_dir = "/usr/local/cuda/bin"
        env["PATH"] = os.pathsep.join([str(self.stubs), str(self.pip_bin), env["PATH"], nvcc_dir])
        env["PYTHONPATH"] = str(self.shadow)
        env["PIP_NO_INDEX"] = "1"
        env.pop("VIRTUAL_ENV", None)
        result = subprocess.run(["bash", str(self.repo / "scripts" / "install-deps.sh"), *args],
                                env=env, capture_output=True, text=True, timeout=240)
        return result, result.stdout + result.stderr, self.log.read_text()


def gaps_in_tests(out):
    """The [tests] lines of the report but Slurm's: the simulated node finds Slurm on this
    machine's own PATH (a GPU node has none), which the test does not stage."""
    return [line for line in out.splitlines() if "[tests]" in line and "Slurm's" not in line]


@pytest.fixture(scope="session")
def probe_record(tmp_path_factory):
    return tmp_path_factory.mktemp("cmake-probe")


@pytest.fixture
def node(tmp_path, probe_record):
    if shutil.which("cmake") is None:
        pytest.skip("no cmake on PATH")
    return OfflineNode(tmp_path, probe_record)


def test_everything_there_installs_nothing_and_exits_0(node):
    result, out, calls = node.run()
    assert result.returncode == 0, out
    assert f"({node.pip_bin}/cmake; need >=" in out, out        # CMake found on PATH, not by dpkg
    assert "[required]" not in out and not gaps_in_tests(out), out
    assert "dpkg" not in calls and "sudo" not in calls, calls
    assert "-m pip" not in calls, calls
    if "MISSING" in out:   # an optional library or Slurm this machine lacks: apt is tried, fails, run goes on
        assert ("[optional]" in out or "Slurm's" in out) and "installing nothing with apt" in out, out
    else:
        assert "everything is there" in out, out
        assert "apt-get" not in calls, calls


def test_missing_test_package_offline_is_reported_and_not_fatal(node):
    node.hide_python("scipy")
    result, out, calls = node.run()
    assert result.returncode == 0, out
    assert "MISSING  [tests] Python package scipy" in out, out
    assert "pip install 'scipy==" in out, out                     # pinned as in requirements.txt
    assert "-m pip install" in calls, calls                       # it tried, and pip failed
    assert "trying a virtual environment" not in out, out         # no index: a venv would fail alike
    assert not (node.repo / ".venv").exists(), out


def test_an_externally_managed_interpreter_gets_a_venv_tried(node):
    node.hide_python("scipy")
    node.env["P2PBENCH_TEST_PEP668"] = "1"
    result, out, calls = node.run()
    assert result.returncode == 0, out
    assert "externally-managed-environment" in out and "trying a virtual environment in .venv" in out, out
    assert "-m venv .venv" in calls, calls
    assert not (node.repo / ".venv").exists(), "a venv that could not be filled (no index) must be removed"


def test_missing_jsonschema_is_optional(node):
    """The report validates with its built-in validator where jsonschema is missing."""
    node.hide_python("jsonschema")
    result, out, _ = node.run("--check")
    assert result.returncode == 0, out
    assert "MISSING  [optional] Python package jsonschema" in out and "built-in validator" in out, out
    assert "pip install 'jsonschema==" in out and not gaps_in_tests(out), out


def test_missing_required_package_exits_1(node):
    node.hide_python("pandas")
    result, out, _ = node.run()
    assert result.returncode == 1, out
    assert "MISSING  [required] Python package pandas" in out, out


def test_old_cmake_exits_1_and_headers_are_still_checked(node):
    node.old_cmake("3.20.0")
    result, out, calls = node.run()
    assert result.returncode == 1, out
    assert "MISSING  [required] CMake >= 3.24 (found: 3.20.0)" in out, out
    assert "pip install 'cmake>=3.24'" in out, out
    assert "update" in calls and "apt-get" in calls and "installing nothing with apt" in out, out
    assert "ok       nlohmann-json" in out and "ok       CLI11" in out, out   # from the headers


def test_check_only_reports(node):
    node.hide_python("scipy")
    result, out, calls = node.run("--check")
    assert result.returncode == 0, out
    assert "MISSING  [tests] Python package scipy" in out, out
    assert "apt-get" not in calls and "-m pip" not in calls, calls


def test_bad_argument_exits_2(node):
    result, out, _ = node.run("--install-everything")
    assert result.returncode == 2, out
    assert "--install-everything" in out, out


def test_offline_update_failure_shows_apt_errors(node):
    node.old_cmake("3.20.0")
    _, out, calls = node.run()
    assert "installing nothing with apt" in out, out
    assert "apt-get: simulated offline node" in out, out       # apt's own words, not swallowed
    assert " install " not in calls and "dpkg-query" not in calls, calls


# --- the availability check against this machine's apt ---------------------------------------

def apt_packages_of_the_script():
    """Every apt package install-deps.sh may ask apt for, read from the script."""
    text = (REPO / "scripts" / "install-deps.sh").read_text()
    joined = re.sub(r"\\\n\s*", " ", text)                      # continued lines
    named = re.findall(r'\black\s+(?:required|tests|optional)\s+"[^"]*"\s+("?)([^"\s]*)\1', joined)
    packages = [pkg for _, pkg in named if pkg]
    venv = re.search(r"^venv_debs=\(([^)]*)\)", text, re.M)
    assert venv, "venv_debs=(...) not found in install-deps.sh"
    packages += venv.group(1).split()
    return packages


def apt_candidates(packages):
    """{package: apt-cache policy's candidate version, None for none or unknown}, read to the end
    of one apt-cache call for all of them (each call reads every apt list where apt keeps no
    binary cache: a second a call)."""
    out = subprocess.run(["apt-cache", "policy", *packages], capture_output=True, text=True,
                         env=dict(os.environ, LC_ALL="C")).stdout
    candidates = dict.fromkeys(packages)
    for block in re.split(r"^(?=\S+:$)", out, flags=re.M):   # a block per package apt knows
        name = re.match(r"(\S+):$", block, re.M)
        found = re.search(r"^\s*Candidate:\s*(\S+)", block, re.M)
        if name and found and found.group(1) != "(none)":
            candidates[name.group(1)] = found.group(1)
    return candidates


def test_the_script_names_the_packages_it_installs():
    packages = apt_packages_of_the_script()
    expected = {"cmake", "ninja-build", "g++", "libopenmpi-dev", "openmpi-bin", "nlohmann-json3-dev",
                "libcli11-dev", "libgtest-dev", "libbenchmark-dev", "chromium-headless-shell", "ccache",
                "python3", "python3-venv", "python3-pip"}
    assert expected <= set(packages), f"extraction from install-deps.sh found only {packages}"


def test_available_agrees_with_real_apt_every_time():
    if shutil.which("apt-cache") is None:
        pytest.skip("no apt-cache on this machine")
    packages = apt_packages_of_the_script() + ["p2pbench-no-such-package"]
    truth = {pkg: "yes" if candidate else "no" for pkg, candidate in apt_candidates(packages).items()}
    if all(v == "no" for v in truth.values()):
        pytest.skip("apt-cache knows none of the script's packages (empty lists: no apt-get update yet?)")
    assert truth["p2pbench-no-such-package"] == "no"
    wrong = []
    for round_ in range(4):   # the old check (a race with SIGPIPE) got 249 of 260 answers wrong in 20 rounds
        result = subprocess.run(["bash", str(REPO / "scripts" / "install-deps.sh"), "--available",
                                 *packages], capture_output=True, text=True, timeout=120)
        assert result.returncode == 0, result.stdout + result.stderr
        said = dict(line.split() for line in result.stdout.splitlines())
        assert set(said) == set(packages), result.stdout
        wrong += [f"round {round_}: {pkg} {said[pkg]}, apt-cache: {truth[pkg]}"
                  for pkg in packages if said[pkg] != truth[pkg]]
    assert not wrong, "\n".join(wrong)


# --- a node where apt works ----------------------------------------------------------------------

APT_GET = r'''#!{python}
"""apt-get: update and install against the package database in {state}."""
import json, pathlib, sys
state = pathlib.Path("{state}")
with open("{log}", "a") as log:
    log.write("apt-get " + " ".join(sys.argv[1:]) + "\n")
cfg = json.loads((state / "config.json").read_text())
args, i = [], 1
while i < len(sys.argv):                      # drop -o NAME=VALUE and flags
    a = sys.argv[i]
    i += 2 if a == "-o" else 1
    if not a.startswith("-"):
        args.append(a)
cmd, pkgs = args[0], args[1:]
if cmd == "update":
    if cfg["update_locked"] > 0:
        cfg["update_locked"] -= 1
        (state / "config.json").write_text(json.dumps(cfg))
        sys.exit("E: Could not get lock /var/lib/apt/lists/lock. It is held by process 4242 (unattended-upgr)")
    sys.exit(0)
if cmd == "install":
    if cfg["install_error"]:
        sys.exit(cfg["install_error"])
    db = json.loads((state / "db.json").read_text())
    for pkg in pkgs:
        for p in [pkg] + cfg["deps"].get(pkg, []):
            db[p] = "1.0-1"
            print(f"Setting up {{p}} (1.0-1) ...")
        for tool, target in cfg["tools"].get(pkg, {{}}).items():
            path = pathlib.Path("{stubs}") / tool
            path.write_text(f'#!/bin/sh\nexec "{{target}}" "$@"\n')
            path.chmod(0o755)
    (state / "db.json").write_text(json.dumps(db))
    sys.exit(0)
sys.exit(f"apt-get stub: unexpected {{sys.argv}}")
'''

APT_CACHE = r'''#!{python}
import json, pathlib, sys
with open("{log}", "a") as log:
    log.write("apt-cache " + " ".join(sys.argv[1:]) + "\n")
cfg = json.loads(pathlib.Path("{state}/config.json").read_text())
assert sys.argv[1] == "policy", sys.argv
for pkg in sys.argv[2:]:
    if pkg not in cfg["unknown"]:
        print(f"{{pkg}}:\n  Installed: (none)\n  Candidate: 1.0-1\n  Version table:\n     1.0-1 500")
'''

DPKG_QUERY = r'''#!{python}
"""dpkg-query -W -f=...: the database as the script's format asks ("STATUS NAME=VERSION")."""
import json, pathlib, sys
with open("{log}", "a") as log:
    log.write("dpkg-query " + " ".join(sys.argv[1:]) + "\n")
assert sys.argv[1:] == ["-W", "-f=${{Status}} ${{Package}}=${{Version}}\\n"], sys.argv
print("unknown ok not-installed libfoo-doc=")
print("deinstall ok config-files oldpkg=0.9-1")
for name, version in json.loads(pathlib.Path("{state}/db.json").read_text()).items():
    print(f"install ok installed {{name}}={{version}}")
'''


class OnlineNode(OfflineNode):
    def __init__(self, root, probe_record):
        super().__init__(root, probe_record)
        self.state = root / "apt-state"
        self.state.mkdir()
        self.config = {"update_locked": 0, "install_error": "", "unknown": [],
                       "deps": {"cmake": ["libjsoncpp25"]},
                       "tools": {"cmake": {"cmake": str(self.pip_bin / "cmake")}}}
        (self.state / "db.json").write_text(json.dumps({"libc6": "2.36-9"}))
        fill = dict(python=sys.executable, state=self.state, log=self.log, stubs=self.stubs)
        write_exe(self.stubs / "apt-get", APT_GET.format(**fill))
        write_exe(self.stubs / "apt-cache", APT_CACHE.format(**fill))
        write_exe(self.stubs / "dpkg-query", DPKG_QUERY.format(**fill))
        write_exe(self.stubs / "sudo", '#!/bin/sh\nexec "$@"\n')

    def run(self, *args):
        (self.state / "config.json").write_text(json.dumps(self.config))
        return super().run(*args)

    def installed(self):
        return json.loads((self.state / "db.json").read_text())


@pytest.fixture
def online(tmp_path, probe_record):
    if shutil.which("cmake") is None:
        pytest.skip("no cmake on PATH")
    return OnlineNode(tmp_path, probe_record)


def installed_line(out, how):
    lines = [line for line in out.splitlines() if line.startswith(f"install-deps: installed with {how}")]
    assert len(lines) == 1, out
    return lines[0].split(": ", 2)[2].split()


def cmake_version():
    out = subprocess.run([shutil.which("cmake"), "--version"], capture_output=True, text=True).stdout
    return re.match(r"cmake version (\S+)", out).group(1)


def test_apt_install_waits_for_the_lock_and_says_what_it_installed(online):
    online.old_cmake("3.20.0")
    result, out, calls = online.run()
    assert result.returncode == 0, out
    installs = [c for c in calls.splitlines() if c.startswith("apt-get ") and " install " in c]
    assert len(installs) == 1 and " cmake" in installs[0], calls
    wait = re.search(r"-o DPkg::Lock::Timeout=(-?\d+)", installs[0])
    assert wait and int(wait.group(1)) > 0, installs[0]                # a bounded wait
    assert f"up to {wait.group(1)} s for the dpkg lock" in out, out
    new = {f"{name}={version}" for name, version in online.installed().items() if name != "libc6"}
    assert {"cmake=1.0-1", "libjsoncpp25=1.0-1"} <= new
    assert sorted(installed_line(out, "apt")) == sorted(new), out  # exactly that, not libc6
    assert f"ok       CMake {cmake_version()} ({online.stubs}/cmake" in out, out
    assert "MISSING  [required] CMake" not in out, out


def test_apt_update_waits_while_another_apt_holds_the_lock(online):
    online.old_cmake("3.20.0")
    online.config["update_locked"] = 1
    result, out, calls = online.run()
    assert result.returncode == 0, out
    updates = [c for c in calls.splitlines() if c.startswith("apt-get ") and c.endswith(" update -qq")]
    assert len(updates) == 2, calls
    assert "holds apt's lock" in out and "waiting, 300 s at most" in out, out
    assert "cmake=1.0-1" in installed_line(out, "apt"), out


def test_apt_install_failure_prints_apt_errors(online):
    online.old_cmake("3.20.0")
    online.config["install_error"] = "E: Unable to fetch some archives, maybe run apt-get update"
    result, out, _ = online.run()
    assert result.returncode == 1, out
    assert "install-deps: apt-get install failed (exit 1):" in out, out
    assert "    E: Unable to fetch some archives" in out, out
    assert installed_line(out, "apt") == ["nothing", "new"], out
    assert "MISSING  [required] CMake >= 3.24 (found: 3.20.0)" in out, out


def test_apt_skips_packages_it_does_not_have(online):
    online.old_cmake("3.20.0")
    online.config["unknown"] = ["cmake"]
    _, out, calls = online.run()
    assert "install-deps: apt has no package cmake here" in out, out
    # Only cmake is staged: Slurm, read from this machine, may be missing and installed (a GPU node).
    assert not any(" install " in c and " cmake" in c for c in calls.splitlines() if c.startswith("apt-get ")), calls


# --- pip ------------------------------------------------------------------------------------------

def fake_wheel(directory, name, version):
    """A pure-Python wheel whose module imports (pip installs it with no index, no build)."""
    dist = f"{name}-{version}.dist-info"
    path = directory / f"{name}-{version}-py3-none-any.whl"
    files = {f"{name}/__init__.py": "",
             f"{dist}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n",
             f"{dist}/WHEEL": "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"}
    files[f"{dist}/RECORD"] = "".join(f"{f},,\n" for f in [*files, f"{dist}/RECORD"])
    with zipfile.ZipFile(path, "w") as whl:
        for f, text in files.items():
            whl.writestr(f, text)


def test_pip_says_what_it_installed(node, tmp_path):
    venv = subprocess.run([sys.executable, "-m", "venv", str(node.repo / ".venv")], capture_output=True)
    if venv.returncode != 0:
        pytest.skip(f"{sys.executable} -m venv does not work here")
    shutil.rmtree(node.shadow / "scipy")   # all there but scipy, which the venv lacks
    pin = next(line for line in (REPO / "scripts" / "requirements.txt").read_text().splitlines()
               if line.startswith("scipy=="))
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    fake_wheel(wheels, "scipy", pin.split("==")[1])
    node.env["PIP_FIND_LINKS"] = str(wheels)
    result, out, _ = node.run()
    assert result.returncode == 0, out
    assert f"install-deps: pip install {pin}" in out, out
    assert installed_line(out, "pip") == [pin], out
    assert "ok       Python package scipy" in out.split("checking again")[1], out
