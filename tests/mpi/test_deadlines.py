"""Deadlines between ranks, without a GPU: deadline_probe runs a lock-step loop under mpirun
and a fault is injected on one rank. Every job must end within its bound, name the rank and
the step, and raise no false alarm for a slow-but-alive rank or for a job paused as a whole."""
import os
import re
import signal
import subprocess
import time

import pytest

PROBE = os.environ.get("PROBE_BIN", "build/tests/mpi/deadline_probe")
MPIEXEC = os.environ.get("MPIEXEC", "mpirun")
FLAGS = os.environ.get("MPIEXEC_FLAGS", "--oversubscribe --allow-run-as-root").split()


def start(mode, rank=1, step=5, seconds=0.0, ranks=2, env=None):
    cmd = [MPIEXEC, "-np", str(ranks), *FLAGS, PROBE, mode, str(rank), str(step), str(seconds)]
    e = dict(os.environ, PROBE_SCALE="1", **(env or {}))
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=e,
                            start_new_session=True)


def finish(proc, limit):
    t0 = time.monotonic()
    try:
        out, _ = proc.communicate(timeout=limit)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        pytest.fail(f"the job did not end within {limit} s:\n{out}")
    return proc.returncode, out, time.monotonic() - t0


def run(mode, limit, **kw):
    t0 = time.monotonic()
    rc, out, _ = finish(start(mode, **kw), limit)
    return rc, out, time.monotonic() - t0


def test_normal_run_completes():
    rc, out, _ = run("normal", 60)
    assert rc == 0, out
    assert out.count("all 40 steps done") == 2, out


@pytest.mark.parametrize("rank", [0, 1])
def test_a_stopped_rank_is_named_within_seconds(rank):
    rc, out, took = run("stop", 60, rank=rank, step=7)
    assert rc != 0, out
    other = 1 - rank
    assert re.search(rf"rank {other}: PEER LOST: .*rank {rank} .*is stopped", out), out
    assert "step 7" in out, out
    assert took < 20, f"took {took:.1f} s:\n{out}"


def test_a_rank_stopped_after_sending_is_named_within_seconds():
    """Rank 1's message reached rank 0, rank 0's large one cannot reach rank 1: rank 1 is still
    the one rank 0 waits for, and the liveness check names it stopped long before the 30 s deadline."""
    rc, out, took = run("stop_after_send", 60, rank=1, step=5)
    assert rc != 0, out
    assert re.search(r"rank 0: PEER LOST: .*rank 1 .*is stopped", out), out
    assert took < 20, f"took {took:.1f} s:\n{out}"


def test_a_rank_that_exits_is_named():
    rc, out, took = run("exit", 60, rank=1, step=4)
    assert rc != 0, out
    # mpirun may end the job itself first; either way it ends promptly and names rank 1 and its
    # exit. (The probe's own "rank 1: pid N" line must not count as naming it.)
    named_by_peer = re.search(r"rank 0: PEER LOST: .*rank 1 .*has exited", out)
    named_by_mpirun = re.search(r"Process name: \[\[\d+,\d+\],1\]\s+Exit code:\s+3", out)
    assert named_by_peer or named_by_mpirun, out
    assert took < 20, f"took {took:.1f} s:\n{out}"


def test_an_exception_outside_the_step_ends_the_job():
    rc, out, took = run("throw", 60, rank=1, step=3)
    assert rc != 0, out
    assert "rank 1: ERROR: an error outside the lock-step at step 3" in out, out
    assert took < 20, f"took {took:.1f} s:\n{out}"


def test_a_slow_but_alive_rank_raises_no_alarm():
    # 6 s inside its local part: the step's budget is 2 s + 10 s of slack.
    rc, out, _ = run("slow", 60, rank=1, step=3, seconds=6)
    assert rc == 0, out
    assert "PEER LOST" not in out, out


def test_an_alive_rank_that_never_arrives_hits_the_deadline():
    # Outside any step, so only the deadline (2 s + 10 s of slack) can catch it.
    rc, out, took = run("busy", 90, rank=1, step=3, seconds=40)
    assert rc != 0, out
    assert re.search(r"rank 0: PEER LOST: .*rank 1 did not arrive within the deadline of 12 s", out), out
    assert took < 30, f"took {took:.1f} s:\n{out}"


def test_the_watchdog_ends_a_blocked_region():
    rc, out, took = run("watchdog", 60, rank=1, step=3, seconds=30)
    assert rc != 0, out
    assert "rank 1: WATCHDOG: a region guarded for 0.5 s did not finish in time" in out, out
    assert took < 20, f"took {took:.1f} s:\n{out}"


def test_a_signal_stops_every_rank_at_the_next_step():
    rc, out, took = run("signal", 60, rank=1, step=5)
    assert rc == 128 + signal.SIGTERM, out
    assert out.count("STOPPED: interrupted by SIGTERM (received by rank 1)") == 2, out


def test_a_job_paused_as_a_whole_is_not_a_lost_peer():
    proc = start("normal", env={"PROBE_STEPS": "300", "PROBE_STEP_MS": "20"})
    pids = []
    deadline = time.monotonic() + 30
    while len(pids) < 2 and time.monotonic() < deadline:
        line = proc.stdout.readline()
        m = re.match(r"rank \d: pid (\d+)", line)
        if m:
            pids.append(int(m.group(1)))
    assert len(pids) == 2
    time.sleep(1.0)
    for p in pids:
        os.kill(p, signal.SIGSTOP)
    time.sleep(5.0)  # longer than the 2 s a lone stopped peer is given
    for p in pids:
        os.kill(p, signal.SIGCONT)
    rc, out, _ = finish(proc, 60)
    assert rc == 0, out
    assert "PEER LOST" not in out, out


def unshare_works():
    try:
        return subprocess.run(["unshare", "-Urpf", "--mount-proc", "true"], capture_output=True,
                              timeout=10).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


# No process_vm_readv across user namespaces (unless the launcher's flags say so already).
CONTAINER_FLAGS = [] if "btl_vader_single_copy_mechanism" in FLAGS else ["--mca", "btl_vader_single_copy_mechanism", "none"]


def start_in_namespaces(mode, rank, step, seconds=0.0):
    """Each rank in a PID namespace of its own on this host, as in per-rank containers on the host network."""
    cmd = [MPIEXEC, "-np", "2", *FLAGS, *CONTAINER_FLAGS, "unshare", "-Urpf", "--mount-proc",
           PROBE, mode, str(rank), str(step), str(seconds)]
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env=dict(os.environ, PROBE_SCALE="1"), start_new_session=True)


@pytest.mark.skipif(not unshare_works(), reason="unshare -Urpf is not permitted here")
def test_ranks_in_separate_pid_namespaces_run():
    rc, out, _ = finish(start_in_namespaces("normal", 1, 5), 60)
    assert rc == 0, out
    assert out.count("all 40 steps done") == 2, out
    assert "PEER LOST" not in out, out


@pytest.mark.skipif(not unshare_works(), reason="unshare -Urpf is not permitted here")
def test_a_stopped_rank_in_another_namespace_is_caught_by_the_deadline():
    """Its pid means nothing in the other namespace: no liveness verdict, only the deadline."""
    rc, out, took = finish(start_in_namespaces("busy", 1, 3, 40), 90)
    assert rc != 0, out
    assert re.search(r"rank 0: PEER LOST: .*rank 1 did not arrive within the deadline", out), out
    assert "has exited" not in out and "is stopped" not in out, out
    assert took < 30, f"took {took:.1f} s:\n{out}"
