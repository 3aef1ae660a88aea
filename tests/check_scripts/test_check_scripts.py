"""The check scripts fail when a step they run fails, and say which (scripts/lib/steps.sh). Run on
a scratch copy of the scripts with stubs on PATH for every tool a GPU node has (cmake, ctest,
nvidia-smi, mpirun, compute-sanitizer) and for the binaries the stub build makes; STUB_FAIL names
the stubs that fail: "NAME" or "NAME:WORD" (only when WORD is one of its arguments)."""
import os
import pathlib
import shutil
import subprocess
import tarfile

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]

STUB = r"""#!/usr/bin/env bash
name=$(basename "$0")
echo "$name $*" >>"$STUB_LOG"
for rule in ${STUB_FAIL:-}; do
  [ "${rule%%:*}" = "$name" ] || continue
  word=${rule#*:}
  if [ "$word" = "$rule" ] || [[ " $* " == *" $word "* ]]; then echo "$name: failing as told" >&2; exit 3; fi
done
case $name in
  cmake)  # configure: a cache; --build: the binaries, each a link to this stub
    if [ "$1" = --build ]; then
      mkdir -p "$2/src/gbench"
      ln -sf "$0" "$2/src/p2pbench"
      [ -n "${STUB_NO_GBENCH:-}" ] || ln -sf "$0" "$2/src/gbench/p2pbench-gbench"
    else
      while [ $# -gt 0 ]; do [ "$1" = -B ] && mkdir -p "$2" && echo "CMAKE_CUDA_ARCHITECTURES:STRING=90" >"$2/CMakeCache.txt"; shift; done
    fi ;;
  ctest)  # STUB_CTEST_SKIP: a GPU test's skip, as tests/run_on_gpus.py records it
    [ -z "${STUB_CTEST_SKIP:-}" ] || echo "$STUB_CTEST_SKIP" >>"$P2PBENCH_SKIP_LOG"
    echo "${STUB_CTEST_OUTPUT:-100% tests passed, 0 tests failed out of 3}" ;;
  nvidia-smi) echo "GPU 0: NVIDIA H200 (UUID: GPU-stub)" ;;
esac
exit 0
"""
TOOLS = ("cmake", "ctest", "nvidia-smi", "mpirun", "compute-sanitizer")


def scratch_tree(tmp_path: pathlib.Path) -> pathlib.Path:
    """The scripts under test and what they call from the tree, the rest stubbed."""
    tree = tmp_path / "tree"
    for script in ("gpu-check.sh", "end-of-run-check.sh", "lib/steps.sh", "run-ctest.sh"):
        (tree / "scripts" / script).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(REPO / "scripts" / script, tree / "scripts" / script)
    stub_bin = tmp_path / "bin"
    stub_bin.mkdir()
    (stub_bin / "stub").write_text(STUB)
    (stub_bin / "stub").chmod(0o755)
    for tool in TOOLS:
        (stub_bin / tool).symlink_to(stub_bin / "stub")
    (tree / "scripts" / "check-sass.sh").symlink_to(stub_bin / "stub")
    (tree / "scripts" / "gbench-crosscheck.py").write_text("import sys\nprint('all cases within 2%')\n")
    (tree / "tests" / "gpu_driver").mkdir(parents=True)
    shutil.copy(REPO / "tests" / "run_on_gpus.py", tree / "tests" / "run_on_gpus.py")
    for checks in ("end_checks.py", "fault_checks.py"):
        (tree / "tests" / "gpu_driver" / checks).write_text(
            "import os, sys\nprint('9 passed, 0 failed')\nsys.exit(int(os.environ.get('STUB_CHECKS_EXIT', 0)))\n")
    return tree


def run(tmp_path, script, *args, **env):
    tree = scratch_tree(tmp_path)
    environment = dict(os.environ, PATH=f"{tmp_path / 'bin'}:/usr/bin:/bin", STUB_LOG=str(tmp_path / "calls.log"), **env)
    done = subprocess.run(["bash", str(tree / "scripts" / script), *args], cwd=tree, env=environment,
                          capture_output=True, text=True, timeout=120)
    calls = (tmp_path / "calls.log").read_text() if (tmp_path / "calls.log").exists() else ""
    return done, calls


def gpu_check(tmp_path, fail="", **env):
    env.setdefault("P2PBENCH_SAME_DEVICE_RUN", "1")
    env.setdefault("P2PBENCH_GBENCH_CONFIG", "configs/gbench-check.json")
    return run(tmp_path, "gpu-check.sh", str(tmp_path / "out"), "configs/default.json", STUB_FAIL=fail, **env)


def test_gpu_check_passes_when_every_step_passes(tmp_path):
    done, calls = gpu_check(tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.rstrip().endswith("gpu-check: PASSED")
    assert "compute-sanitizer --tool synccheck" in calls and "p2pbench --topology" in calls  # the steps ran


@pytest.mark.parametrize("fail, step", [
    ("compute-sanitizer:racecheck", "compute-sanitizer racecheck (copy kernels)"),
    ("p2pbench:--topology", "topology"),
    ("mpirun:--allow-same-device", "sweep default-same-device"),
    ("mpirun:configs/default.json", "sweep default"),
    ("p2pbench-gbench", "gbench gbench-check"),
    ("ctest", "gpu+mpi tests"),
    ("check-sass.sh", "sass (bulk-copy instructions)"),
])
def test_gpu_check_fails_naming_the_step_and_runs_the_others(tmp_path, fail, step):
    done, calls = gpu_check(tmp_path, fail)
    assert done.returncode == 1, done.stdout + done.stderr
    verdict = done.stdout.rstrip().splitlines()[-1]
    assert verdict.startswith("gpu-check: FAILED: ") and f"{step} (exit 3)" in verdict, verdict
    assert f"{step}: FAILED (exit 3)" in (tmp_path / "out" / "summary.txt").read_text()
    assert "p2pbench --topology" in calls and "p2pbench-gbench --config" in calls  # it went on after the failure


def test_a_gpu_test_skipped_on_a_gpu_node_is_a_failure(tmp_path):
    done, _ = gpu_check(tmp_path, STUB_CTEST_SKIP="gpu_driver_end_to_end: needs 2 GPUs, 1 visible")
    assert done.returncode == 1
    assert "gpu+mpi tests (exit 77)" in done.stdout.splitlines()[-1]


def test_a_skip_for_a_missing_service_is_no_failure(tmp_path):
    done, _ = gpu_check(tmp_path, STUB_CTEST_SKIP="test_peer_memory_gpu_fabric: missing service: an IMEX channel")
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_gbench_that_was_not_built_is_a_failure(tmp_path):
    done, _ = gpu_check(tmp_path, STUB_NO_GBENCH="1")
    assert done.returncode == 1 and "gbench (exit 1)" in done.stdout.splitlines()[-1]


def test_a_failed_build_stops_the_check(tmp_path):
    done, calls = gpu_check(tmp_path, "cmake:--build")
    assert done.returncode == 1
    assert done.stdout.rstrip().splitlines()[-1] == "gpu-check: FAILED: build (exit 1)"
    assert "ctest" not in calls and "mpirun -np" not in calls


def test_end_of_run_check_fails_naming_the_step(tmp_path):
    done, _ = run(tmp_path, "end-of-run-check.sh", str(tmp_path / "out"), "build", "end", "faults",
                  STUB_CHECKS_EXIT="1")
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stdout.rstrip().splitlines()[-1] == \
        "end-of-run-check: FAILED: end checks (exit 1), fault checks (exit 1)"


def test_end_of_run_check_refuses_an_unknown_step_before_running_any(tmp_path):
    done, calls = run(tmp_path, "end-of-run-check.sh", str(tmp_path / "out"), "build", "end", "nonsense")
    assert done.returncode == 2 and "unknown step 'nonsense'" in done.stderr
    assert "cmake" not in calls


def test_end_of_run_check_passes_when_its_steps_pass(tmp_path):
    done, _ = run(tmp_path, "end-of-run-check.sh", str(tmp_path / "out"), "build", "end")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.rstrip().endswith("end-of-run-check: PASSED")


def test_node_session_packs_every_step_and_fails_naming_the_failed_ones(tmp_path):
    """scripts/lib/node-session.sh: each step's output in its log, the archive and summary.txt in
    OUT_DIR after every step, a step past its deadline killed, the verdict naming both failures."""
    tree = tmp_path / "tree"
    (tree / "scripts" / "lib").mkdir(parents=True)
    for lib in ("steps.sh", "node-session.sh"):
        shutil.copy(REPO / "scripts" / "lib" / lib, tree / "scripts" / "lib" / lib)
    out = tmp_path / "out"
    out.mkdir()
    script = ('set -uo pipefail; source scripts/lib/node-session.sh; session_start "$1"; '
              'session_step passes 5 echo fine; session_step fails 5 false; session_step overruns 1 sleep 5; '
              'finish_steps demo.sh')
    r = subprocess.run(["bash", "-c", script, "demo", str(out)], cwd=tree, capture_output=True, text=True, timeout=60)
    assert r.returncode == 1, r.stdout + r.stderr
    summary = (out / "summary.txt").read_text()
    assert "passes: ok" in summary and "fails: FAILED (exit 1)" in summary, summary
    assert "overruns: FAILED (exit 137)" in summary, summary
    assert "demo.sh: FAILED: fails (exit 1), overruns (exit 137)" in summary, summary
    listing = subprocess.run(["tar", "-tzf", str(out / "session.tar.gz")], capture_output=True, text=True,
                             check=True).stdout.split()
    for name in ("./passes.log", "./fails.log", "./overruns.log", "./system.txt", "./summary.txt"):
        assert name in listing, listing
    # session_open, sourced from elsewhere: the usage without OUT_DIR (exit 2), else the session
    # at the repository root with OUT_DIR made absolute before it moved there.
    opener = (f'source {tree}/scripts/lib/node-session.sh; session_open demo.sh "${{1:-}}"; pwd; '
              'session_step listed 5 ls; finish_steps demo.sh')
    r = subprocess.run(["bash", "-c", opener, "demo"], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "usage: demo.sh OUT_DIR" in r.stderr, r.stdout + r.stderr
    r = subprocess.run(["bash", "-c", opener, "demo", "relative-out"], cwd=tmp_path, capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0 and r.stdout.splitlines()[0] == str(tree), r.stdout + r.stderr
    assert (tmp_path / "relative-out" / "session.tar.gz").exists()
    # session_tests: the tests' verdict lines in the summary, the variables given to the runner;
    # session_mps_tests whose MPS daemon does not start fails its start step and runs no test.
    runner = tree / "scripts" / "run-ctest.sh"
    runner.write_text('#!/bin/sh\necho "runner $* FOO=$FOO"\necho "100% tests passed, 0 tests failed out of 1"\n')
    no_daemon = tmp_path / "bin" / "nvidia-cuda-mps-control"
    no_daemon.parent.mkdir()
    no_daemon.write_text("#!/bin/sh\necho no daemon here >&2\nexit 1\n")
    for tool in (runner, no_daemon):
        tool.chmod(0o755)
    tests = (f'PATH={no_daemon.parent}:$PATH; source scripts/lib/node-session.sh; session_start "$1"; '
             'session_tests t 5 "a|b" FOO=bar; session_mps_tests m 5 "c" || echo "mps exit $?"; finish_steps demo.sh')
    r = subprocess.run(["bash", "-c", tests, "demo", str(out)], cwd=tree, capture_output=True, text=True, timeout=60)
    assert r.returncode == 1 and "mps exit 1" in r.stdout, r.stdout + r.stderr
    summary = (out / "summary.txt").read_text()
    assert "t: ok" in summary and "100% tests passed" in summary and "m-mps-start: FAILED" in summary, summary
    with tarfile.open(out / "session.tar.gz") as packed:
        log = packed.extractfile("./t.log").read().decode()
    assert "runner build-gpu -R a|b FOO=bar" in log, log
    assert "\nm: " not in summary, summary
    # A session that ran no step did not pass.
    r = subprocess.run(["bash", "-c", f'source {tree}/scripts/lib/node-session.sh; session_open demo.sh out; '
                        'finish_steps demo.sh', "demo"], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert r.returncode == 1 and "demo.sh: FAILED: no step ran" in r.stdout, r.stdout + r.stderr
