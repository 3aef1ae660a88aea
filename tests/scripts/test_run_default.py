"""scripts/run-default.sh on machines that cannot run it: it must say so before building, and say
what can be done there instead. nvidia-smi is replaced by a stub on PATH."""
import os
import pathlib
import shutil
import subprocess

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "run-default.sh"


def run_with(tmp_path, smi_body):
    """Runs the script with PATH = a stub folder, then the system's folders, no CUDA."""
    stubs = tmp_path / "bin"
    stubs.mkdir()
    if smi_body is not None:
        smi = stubs / "nvidia-smi"
        smi.write_text("#!/bin/sh\n" + smi_body)
        smi.chmod(0o755)
    # cmake is poisoned: reaching the build means the early check failed.
    cmake = stubs / "cmake"
    cmake.write_text("#!/bin/sh\necho 'cmake was called' >&2\nexit 99\n")
    cmake.chmod(0o755)
    env = dict(os.environ, PATH=f"{stubs}:/usr/bin:/bin")
    return subprocess.run(["bash", str(SCRIPT), str(tmp_path / "r.json")], capture_output=True, text=True,
                          env=env, timeout=60)


@pytest.mark.skipif(shutil.which("nvidia-smi", path="/usr/bin:/bin") is not None,
                    reason="nvidia-smi is installed in /usr/bin here: the no-driver case cannot be staged")
def test_no_driver_says_so_and_what_to_do(tmp_path):
    r = run_with(tmp_path, None)
    assert r.returncode == 1, (r.stdout, r.stderr)
    assert "no GPU found" in r.stdout
    assert "nvidia-smi: not found" in r.stdout
    assert "--dry-run" in r.stdout and "scripts/test.sh" in r.stdout
    assert "cmake was called" not in r.stderr


def test_driver_without_gpus_shows_nvidia_smi(tmp_path):
    r = run_with(tmp_path, "echo 'NVIDIA-SMI has failed because it could not communicate with the NVIDIA driver.'\nexit 9\n")
    assert r.returncode == 1, (r.stdout, r.stderr)
    assert "no GPU found" in r.stdout
    assert "nvidia-smi -L (exit 9): NVIDIA-SMI has failed" in r.stdout
    assert "cmake was called" not in r.stderr


def test_one_gpu_says_p2p_needs_two_and_builds_the_one_gpu_run(tmp_path):
    r = run_with(tmp_path, "echo 'GPU 0: NVIDIA H200 (UUID: GPU-d241208c-0000)'\n")
    assert r.returncode == 99, (r.stdout, r.stderr)  # the poisoned cmake: it went on to build
    assert "one GPU found; P2P figures need two" in r.stdout
    assert "GPU 0: NVIDIA H200" in r.stdout
    assert "configs/one-gpu.json" in r.stdout
    assert "cmake was called" in r.stderr


def test_two_gpus_go_on_to_the_build(tmp_path):
    r = run_with(tmp_path, "echo 'GPU 0: NVIDIA H200 (UUID: GPU-a)'\necho 'GPU 1: NVIDIA H200 (UUID: GPU-b)'\n")
    assert r.returncode == 99, (r.stdout, r.stderr)
    assert "cmake was called" in r.stderr


def test_a_hanging_nvidia_smi_is_cut_off(tmp_path):
    r = run_with(tmp_path, "exec sleep 600\n")
    assert r.returncode == 1, (r.stdout, r.stderr)
    assert "nvidia-smi -L (exit 124)" in r.stdout
