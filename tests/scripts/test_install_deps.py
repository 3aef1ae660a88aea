"""scripts/install-deps.sh on a simulated offline GPU node.

The node this imitates has every tool, but no network (apt-get update and pip fail) and a CMake
installed with pip (on PATH, unknown to dpkg). The script must look for the tools and headers
themselves, install nothing when all is there, and exit non-zero only when something required
is missing. apt-get, apt-cache, dpkg and sudo are replaced by stubs that log their calls and fail;
python3 by a wrapper that logs its calls; pip has no index (PIP_NO_INDEX). Python packages are
made present or absent with a directory on PYTHONPATH, so the outcome does not depend on what
this machine has installed.
"""
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PYTHON_MODULES = ["pandas", "matplotlib", "pytest", "scipy", "jsonschema", "prometheus_client"]


def write_exe(path, text):
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)


def importable(name):
    probe = subprocess.run([sys.executable, "-c", f"import {name}"], capture_output=True)
    return probe.returncode == 0


class OfflineNode:
    def __init__(self, root):
        self.repo = root / "repo"
        (self.repo / "scripts").mkdir(parents=True)
        shutil.copy2(REPO / "scripts" / "install-deps.sh", self.repo / "scripts")
        shutil.copy2(REPO / "scripts" / "requirements.txt", self.repo / "scripts")
        shutil.copy2(REPO / "CMakeLists.txt", self.repo)
        shutil.copytree(REPO / "cmake", self.repo / "cmake")
        self.log = root / "calls.log"
        self.log.touch()
        self.stubs = root / "stubs"
        self.pip_bin = root / "pip-bin"   # where `pip install cmake` puts CMake
        self.shadow = root / "pythonpath"
        for d in (self.stubs, self.pip_bin, self.shadow):
            d.mkdir()
        for tool in ("apt-get", "apt-cache", "dpkg", "sudo"):
            write_exe(self.stubs / tool,
                      f'#!/bin/sh\necho "{tool} $*" >>"{self.log}"\n'
                      f'echo "{tool}: simulated offline node" >&2\nexit 100\n')
        write_exe(self.stubs / "python3",
                  f'#!/bin/sh\necho "python3 $*" >>"{self.log}"\nexec "{sys.executable}" "$@"\n')
        # A headless browser, so that its absence on this machine does not decide the outcome.
        write_exe(self.stubs / "chromium", "#!/bin/sh\necho Chromium 0\n")
        write_exe(self.pip_bin / "cmake", f'#!/bin/sh\nexec "{shutil.which("cmake")}" "$@"\n')
        # Python packages this interpreter lacks are stood in for; the test hides others.
        for name in PYTHON_MODULES:
            if not importable(name):
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
        env = dict(os.environ)
        nvcc_dir = "/usr/local/cuda/bin"
        env["PATH"] = os.pathsep.join([str(self.stubs), str(self.pip_bin), env["PATH"], nvcc_dir])
        env["PYTHONPATH"] = str(self.shadow)
        env["PIP_NO_INDEX"] = "1"
        env.pop("VIRTUAL_ENV", None)
        result = subprocess.run(["bash", str(self.repo / "scripts" / "install-deps.sh"), *args],
                                env=env, capture_output=True, text=True, timeout=240)
        return result, result.stdout + result.stderr, self.log.read_text()


@pytest.fixture
def node(tmp_path):
    if shutil.which("cmake") is None:
        pytest.skip("no cmake on PATH")
    return OfflineNode(tmp_path)


def test_everything_there_installs_nothing_and_exits_0(node):
    result, out, calls = node.run()
    assert result.returncode == 0, out
    assert f"({node.pip_bin}/cmake; need >=" in out, out        # CMake found on PATH, not by dpkg
    assert "[required]" not in out and "[tests]" not in out, out
    assert "dpkg" not in calls and "sudo" not in calls, calls
    assert "-m pip" not in calls, calls
    if "MISSING" in out:   # an optional library this machine lacks: apt is tried, fails, run goes on
        assert "[optional]" in out and "installing nothing with apt" in out, out
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
    assert not (node.repo / ".venv").exists(), "a venv that could not be filled must be removed"


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
