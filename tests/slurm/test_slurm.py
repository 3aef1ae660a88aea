"""Under a real Slurm: deadline_probe (no GPU) launched as a job step, stopped by what a
scheduler sends. The session fixture starts munged, slurmctld and slurmd on localhost in a
temporary folder and stops them at the end; it skips, with the daemons' log tails, where Slurm
or munge is missing or slurmd cannot start (a container without the rights).
P2PBENCH_REQUIRE_SLURM=1 turns that skip into a failure.

Everything a cluster uses is its own, so that two of them run at once on one machine
(tests/slurm/two_at_once.py runs this file twice concurrently; both clusters number their jobs
from 1, so job N of one runs beside job N of the other): its munged (key file, socket, seed),
free ports (picked again if a daemon finds one taken), state, spool and log folders, and a
temporary folder for everything keyed by the job number: the PMIx client directory
(spmix_appdir_<uid>_<job>.<step>, under slurm.conf's TmpFS), Open MPI's session directory
(TMPDIR) and its shared-memory segments (vader_segment.<host>.<job>.<rank>, which Open MPI would
put in /dev/shm).

Launching: Debian's Slurm 22.05 has the PMIx plugin (`srun --mpi=list`: pmix, pmix_v4) and
Debian's Open MPI 4.1 is built against the same external PMIx, so `srun --mpi=pmix` starts the
ranks directly, as one job step. That matters for signals: Slurm signals job steps, so every
rank receives the time limit's SIGTERM, `--signal=USR1@T` and `scancel --signal=USR1 JOB`
itself. (mpirun inside a batch script runs in the batch step, which `scancel --signal` skips
and `--signal=B:` or `scancel -b` reaches only as far as the shell: the script must trap and
forward; see scripts/slurm/README.md.)

At the time limit Slurm 22.05 sends each task of a step SIGTERM, SIGCONT, SIGTERM within
milliseconds, then SIGKILL after KillWait: the time-limit test fails if a repeated SIGTERM ends
a rank before it reaches its next step (stop_signal.cpp treats only a second SIGINT as final)."""
import json
import os
import pwd
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

PROBE = os.path.abspath(os.environ.get("PROBE_BIN", "build/tests/mpi/deadline_probe"))
SCRIPTS = Path(__file__).resolve().parents[2] / "scripts" / "slurm"
DAEMONS = ("munged", "slurmctld", "slurmd")
CLIENTS = ("sinfo", "sbatch", "srun", "squeue", "scancel", "scontrol")
KILL_WAIT_S = 5  # slurm.conf KillWait: SIGTERM at the time limit, SIGKILL this much later
RECORD_VARIABLE = "P2PBENCH_SLURM_RECORD"  # a file: where this run says what its cluster used
ENDED = ("COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY", "PREEMPTED", "BOOT_FAIL", "DEADLINE")


def tail(path, lines=40):
    try:
        return "".join(Path(path).read_text(errors="replace").splitlines(True)[-lines:])
    except OSError as e:
        return f"({e})"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Slurm:
    """A one-node cluster in `root`; every client call goes through `env` (SLURM_CONF)."""

    def __init__(self, root):
        self.root = Path(root)
        self.logs = self.root / "log"
        self.conf = self.root / "slurm.conf"
        self.tmp = self.root / "tmp"  # slurm.conf's TmpFS, and the jobs' TMPDIR
        self.env = dict(os.environ, SLURM_CONF=str(self.conf), TMPDIR=str(self.tmp),
                        # Containers often forbid the cross-memory attach Open MPI's shared memory uses.
                        OMPI_MCA_btl_vader_single_copy_mechanism="none",
                        OMPI_MCA_btl_vader_backing_directory=str(self.tmp))
        self.procs = {}
        self.ports = ()

    def run(self, *cmd, timeout=30, check=True):
        r = subprocess.run(cmd, env=self.env, capture_output=True, text=True, timeout=timeout)
        if check and r.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)}: exit {r.returncode}: {r.stdout}{r.stderr}")
        return r

    def start(self, name, *cmd):
        log = open(self.logs / f"{name}.out", "w")
        self.procs[name] = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=self.env,
                                            start_new_session=True)

    def logs_tail(self, lines=25):
        # NAME.log: the daemon's log file; NAME.out: its stderr (the same lines, and what it
        # said before it could open the log file: only the end is shown).
        return "\n".join(f"--- {p.name} ---\n{tail(p, lines if p.suffix == '.log' else 8)}"
                         for p in sorted(self.logs.iterdir()))

    def node_state(self):
        r = self.run("sinfo", "-h", "-N", "-o", "%T", timeout=10, check=False)
        return r.stdout.strip() if r.returncode == 0 else f"(sinfo: {r.stderr.strip()})"

    def job(self, job_id):
        """JobState and ExitCode from scontrol (no accounting needed: kept MinJobAge after the end)."""
        out = self.run("scontrol", "show", "job", "-o", str(job_id), timeout=10, check=False).stdout
        fields = dict(f.split("=", 1) for f in out.split() if "=" in f)
        return fields.get("JobState", "?"), fields.get("ExitCode", "?")

    def sbatch(self, script, *options, env=None):
        path = self.root / f"job-{time.monotonic_ns()}.sh"
        path.write_text(script)
        out = self.root / f"{path.stem}.out"
        r = subprocess.run(["sbatch", "--parsable", "-N1", "-n2", "-o", str(out), *options, str(path)],
                           env=dict(self.env, **(env or {})), capture_output=True, text=True, timeout=30)
        assert r.returncode == 0, f"sbatch: {r.stdout}{r.stderr}\n{self.logs_tail()}"
        return int(r.stdout.strip().split(";")[0]), out

    def wait_job(self, job_id, limit):
        deadline = time.monotonic() + limit
        while time.monotonic() < deadline:
            state, code = self.job(job_id)
            if state in ENDED:
                return state, code
            time.sleep(1)
        return self.job(job_id)

    def explain(self, job_out=None):
        text = f"\n=== job output ({job_out}) ===\n{tail(job_out, 60)}" if job_out else ""
        return text + f"\n=== daemons ===\n{self.logs_tail()}"

    def stop(self, daemons=("slurmd", "slurmctld", "munged")):
        # Jobs first (their slurmstepd outlives slurmd), then the daemons, each wait bounded.
        if "slurmctld" in daemons and self.procs.get("slurmctld") and self.procs["slurmctld"].poll() is None:
            try:
                self.run("scancel", "--user", pwd.getpwuid(os.getuid()).pw_name, timeout=10, check=False)
                deadline = time.monotonic() + 15
                while time.monotonic() < deadline and self.run("squeue", "-h", timeout=10, check=False).stdout.strip():
                    time.sleep(0.5)
            except (OSError, subprocess.SubprocessError):
                pass
        for name in daemons:
            proc = self.procs.get(name)
            if proc is None or proc.poll() is not None:
                continue
            proc.terminate()
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=5)


def write_conf(slurm, user):
    """slurm.conf and gres.conf, with two ports free now (a daemon that then finds its port taken
    is started again on new ones: start_slurm)."""
    host = socket.gethostname().split(".")[0]
    ctld_port = free_port()
    slurmd_port = free_port()
    while slurmd_port == ctld_port:
        slurmd_port = free_port()
    slurm.ports = (ctld_port, slurmd_port)
    for d in ("state", "spool", "log", "tmp"):
        (slurm.root / d).mkdir(mode=0o700, exist_ok=True)
    r = slurm.root
    slurm.conf.write_text(f"""\
ClusterName=p2pbench{os.getpid()}
SlurmctldHost={host}(127.0.0.1)
SlurmctldPort={ctld_port}
SlurmdPort={slurmd_port}
SlurmUser={user}
SlurmdUser={user}
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={r}/munge.socket
StateSaveLocation={r}/state
SlurmdSpoolDir={r}/spool
# The PMIx plugin puts its client directory (spmix_appdir_<uid>_<job>.<step>) under TmpFS.
TmpFS={r}/tmp
SlurmctldPidFile={r}/slurmctld.pid
SlurmdPidFile={r}/slurmd.pid
SlurmctldLogFile={r}/log/slurmctld.log
SlurmdLogFile={r}/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
# cons_tres: under select/linear a step of a job that holds --gres=gpu (the sbatch scripts)
# is refused ("Invalid generic resource (gres) specification").
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
ReturnToService=2
# At the time limit: SIGTERM to every task, SIGKILL KillWait seconds later; no grace minutes.
KillWait={KILL_WAIT_S}
OverTimeLimit=0
InactiveLimit=0
MinJobAge=600
MailProg=/bin/true
# Two ranks on any machine, whatever its core count: the node says it has four CPUs, and two
# GPUs (stand-ins, see gres.conf) so that scripts/slurm/*.sbatch's --gres=gpu:N can be granted.
SlurmdParameters=config_overrides
GresTypes=gpu
NodeName={host} NodeAddr=127.0.0.1 CPUs=4 Gres=gpu:2 State=UNKNOWN
PartitionName=probe Nodes={host} Default=YES MaxTime=INFINITE State=UP
""")
    # gres/gpu drops GPUs without a device file; two character devices stand in (task/none
    # constrains no device, so nothing is opened or hidden).
    (slurm.root / "gres.conf").write_text(f"NodeName={host} Name=gpu File=/dev/null\nNodeName={host} Name=gpu File=/dev/zero\n")


PORT_TAKEN = "Address already in use"
PORT_ATTEMPTS = 3


class GiveUp(Exception):
    """The cluster cannot start here (why, with the daemons' log tails)."""


def start_munge(cluster):
    """This cluster's own munged: its key file, socket, seed and pid file under the root."""
    root = cluster.root
    key = root / "munge.key"
    key.write_bytes(os.urandom(1024))
    key.chmod(0o400)
    cluster.start("munged", "munged", "--foreground", "--force", f"--socket={root}/munge.socket",
                  f"--key-file={key}", f"--log-file={root}/log/munged.log", f"--pid-file={root}/munged.pid",
                  f"--seed-file={root}/munged.seed")
    deadline = time.monotonic() + 10
    while not (root / "munge.socket").exists() and time.monotonic() < deadline:
        if cluster.procs["munged"].poll() is not None:
            break
        time.sleep(0.2)
    if not (root / "munge.socket").exists():
        raise GiveUp(f"munged did not start:\n{cluster.logs_tail()}")


def start_slurm(cluster, user):
    """slurmctld and slurmd, until the node is idle. A port picked free may be taken before the
    daemon binds it (another cluster starting at the same time, any outgoing connection): then
    both daemons start again on new ports, at most PORT_ATTEMPTS times."""
    for attempt in range(1, PORT_ATTEMPTS + 1):
        write_conf(cluster, user)
        cluster.start("slurmctld", "slurmctld", "-D", "-c", "-f", str(cluster.conf))
        cluster.start("slurmd", "slurmd", "-D", "-f", str(cluster.conf))
        deadline = time.monotonic() + 60
        state = ""
        while time.monotonic() < deadline:
            state = cluster.node_state()
            if state == "idle":
                return
            dead = [n for n, p in cluster.procs.items() if p.poll() is not None]
            if dead:
                break
            time.sleep(0.5)
        else:
            raise GiveUp(f"the node did not become idle within 60 s (node: {state}):\n{cluster.logs_tail()}")
        # NAME.out is written afresh by each start; the log files keep earlier attempts' lines.
        taken = any(PORT_TAKEN in tail(cluster.logs / f"{name}.out", 200) for name in dead)
        if not taken or attempt == PORT_ATTEMPTS:
            raise GiveUp(f"{', '.join(dead)} exited (node: {state}, ports {cluster.ports}, "
                         f"attempt {attempt}):\n{cluster.logs_tail()}")
        cluster.stop(daemons=("slurmd", "slurmctld"))


def record(cluster, path, started):
    """What this cluster used, for tests/slurm/two_at_once.py: its folders, ports, munge socket
    and key, the jobs it ran and when it ran."""
    out = cluster.run("scontrol", "show", "jobs", "-o", timeout=10, check=False).stdout
    jobs = sorted(int(m) for m in re.findall(r"^JobId=(\d+)", out, re.MULTILINE))
    Path(path).write_text(json.dumps({
        "root": str(cluster.root), "tmp": str(cluster.tmp), "ports": list(cluster.ports),
        "munge_socket": str(cluster.root / "munge.socket"), "munge_key": str(cluster.root / "munge.key"),
        "jobs": jobs, "started": started, "ended": time.time()}))


@pytest.fixture(scope="session")
def slurm():
    required = os.environ.get("P2PBENCH_REQUIRE_SLURM") == "1"

    def give_up(why):
        if required:
            pytest.fail(why)
        pytest.skip(why)

    missing = [t for t in DAEMONS + CLIENTS if shutil.which(t) is None]
    if missing:
        give_up(f"Slurm/munge not installed (no {', '.join(missing)}): apt-get install slurm-wlm munge")
    if not os.access(PROBE, os.X_OK):
        pytest.fail(f"no probe at {PROBE} (set PROBE_BIN; build the deadline_probe target)")
    # A short path: the munge socket's must fit in sockaddr_un.
    root = tempfile.mkdtemp(prefix="p2pbench-slurm-", dir="/tmp")
    cluster = Slurm(root)
    started = time.time()
    try:
        try:
            cluster.root.joinpath("log").mkdir(mode=0o700)
            start_munge(cluster)
            start_slurm(cluster, pwd.getpwuid(os.getuid()).pw_name)
        except GiveUp as why:
            give_up(str(why))
        yield cluster
        if os.environ.get(RECORD_VARIABLE):
            record(cluster, os.environ[RECORD_VARIABLE], started)
    finally:
        cluster.stop()
        shutil.rmtree(root, ignore_errors=True)


def batch_script():
    # The ranks run as a step of their own (srun --mpi=pmix), in the background so that the
    # shell, which gets the time limit's SIGTERM too, can report the step's exit status.
    return f"""#!/bin/bash
trap 'echo "batch shell: got SIGTERM"' TERM
srun --mpi=pmix -n 2 {PROBE} normal 0 0 &
step=$!
while :; do wait $step; rc=$?; kill -0 $step 2>/dev/null || break; done
echo "probe exit $rc"
exit $rc
"""


def load(path, context):
    assert path.exists(), f"no results file at {path}{context}"
    try:
        return json.loads(path.read_text())
    except ValueError as e:
        pytest.fail(f"the results file is not valid JSON ({e}):\n{path.read_text()[:2000]}{context}")


def check_stopped(doc, sig, total, context):
    """An orderly stop: incomplete, the reason names the signal and the steps, rows 0..K-1 kept."""
    assert doc["incomplete"] is True, f"{json.dumps(doc)[:1000]}{context}"
    reason = doc.get("incomplete_reason", "")
    m = re.fullmatch(rf"stopped by {sig} after (\d+) of {total} steps \(received by rank \d\)", reason)
    assert m, f"reason: {reason!r}{context}"
    done = int(m.group(1))
    assert done > 0, f"no step finished before the stop{context}"
    assert [row["step"] for row in doc["results"]] == list(range(done)), f"rows: {doc['results'][:5]}...{context}"
    assert doc["progress"] == {"cases_done": done, "cases_total": total}, context
    return done


def wait_for_rows(path, rows, limit, job_out, slurm):
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        try:
            if len(json.loads(path.read_text())["results"]) >= rows:
                return
        except (OSError, ValueError, KeyError):
            pass  # not written yet
        time.sleep(0.5)
    pytest.fail(f"the probe did not write {rows} rows within {limit} s{slurm.explain(job_out)}")


def test_srun_runs_the_probe_to_completion(slurm, tmp_path):
    out_file = tmp_path / "results.json"
    env = dict(slurm.env, PROBE_OUTPUT=str(out_file), PROBE_STEPS="30", PROBE_STEP_MS="20")
    try:
        r = subprocess.run(["srun", "--mpi=pmix", "-N1", "-n2", PROBE, "normal", "0", "0"], env=env,
                           capture_output=True, text=True, timeout=90)
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"srun did not end within 90 s: {e.stdout}{slurm.explain()}")
    context = f"\n{r.stdout}{r.stderr}{slurm.explain()}"
    assert r.returncode == 0, context
    assert r.stdout.count("all 30 steps done") == 2, context
    doc = load(out_file, context)
    assert doc["incomplete"] is False and "incomplete_reason" not in doc, context
    assert [row["step"] for row in doc["results"]] == list(range(30)), context
    assert doc["meta"]["ranks"] == 2 and doc["progress"] == {"cases_done": 30, "cases_total": 30}, context


def test_the_time_limit_stops_the_probe_with_its_rows_on_disk(slurm, tmp_path):
    # 200 x 1.5 s = 300 s against a 1-minute limit (slurmctld checks limits about every 30 s).
    # Steps of 1.5 s: a rank takes up to that long to reach its next step after the SIGTERM,
    # so a second SIGTERM or an early SIGKILL (before KillWait) would end it unwritten.
    total = 200
    out_file = tmp_path / "results.json"
    job, job_out = slurm.sbatch(batch_script(), "--time=1", env={
        "PROBE_OUTPUT": str(out_file), "PROBE_STEPS": str(total), "PROBE_STEP_MS": "1500"})
    t0 = time.monotonic()
    state, code = slurm.wait_job(job, 150)
    took = time.monotonic() - t0
    context = f"\njob {job}: {state} {code} after {took:.0f} s{slurm.explain(job_out)}"
    assert state == "TIMEOUT", context
    text = job_out.read_text()
    assert "DUE TO TIME LIMIT" in text, context
    # Every rank got SIGTERM and stopped at its next step, well inside KillWait: no SIGKILL.
    assert text.count("STOPPED: interrupted by SIGTERM") == 2, context
    assert f"probe exit {128 + signal.SIGTERM}" in text, context
    done = check_stopped(load(out_file, context), "SIGTERM", total, context)
    assert done >= 30, f"only {done} steps in a minute{context}"  # ran until the limit, not before


def test_scancel_usr1_stops_the_step_cleanly(slurm, tmp_path):
    total = 1500
    out_file = tmp_path / "results.json"
    job, job_out = slurm.sbatch(batch_script(), "--time=5", env={
        "PROBE_OUTPUT": str(out_file), "PROBE_STEPS": str(total), "PROBE_STEP_MS": "100"})
    wait_for_rows(out_file, 5, 60, job_out, slurm)
    # Plain --signal reaches the job's steps (the srun-launched ranks), not the batch shell;
    # `-b` would reach only the shell, and `--full` both.
    slurm.run("scancel", "--signal=USR1", str(job))
    state, code = slurm.wait_job(job, 30)
    context = f"\njob {job}: {state} {code}{slurm.explain(job_out)}"
    text = job_out.read_text()
    assert state in ENDED, context
    assert text.count("STOPPED: interrupted by SIGUSR1") == 2, context
    assert f"probe exit {128 + signal.SIGUSR1}" in text, context
    assert (state, code) == ("FAILED", f"{128 + signal.SIGUSR1}:0"), context
    done = check_stopped(load(out_file, context), "SIGUSR1", total, context)
    assert done < total, context


def test_signal_before_the_time_limit_gives_a_clean_end(slurm, tmp_path):
    # The recipe of scripts/slurm/*.sbatch: --signal=USR1@T (no B:, so the steps' ranks get
    # it). T=50 of a 60 s limit: sent 10 to ~40 s in (slurmctld's checks are ~30 s apart), so
    # the job ends by the probe's own stop, before the limit, never TIMEOUT.
    total = 1500
    out_file = tmp_path / "results.json"
    job, job_out = slurm.sbatch(batch_script(), "--time=1", "--signal=USR1@50", env={
        "PROBE_OUTPUT": str(out_file), "PROBE_STEPS": str(total), "PROBE_STEP_MS": "200"})
    state, code = slurm.wait_job(job, 120)
    context = f"\njob {job}: {state} {code}{slurm.explain(job_out)}"
    text = job_out.read_text()
    assert (state, code) == ("FAILED", f"{128 + signal.SIGUSR1}:0"), context
    assert "DUE TO TIME LIMIT" not in text, context
    assert text.count("STOPPED: interrupted by SIGUSR1") == 2, context
    check_stopped(load(out_file, context), "SIGUSR1", total, context)


def stand_in(tmp_path):
    """A p2pbench for scripts/slurm/*.sbatch: says its arguments, runs the probe, which writes
    where --output says."""
    path = tmp_path / "p2pbench"
    path.write_text(f"""#!/bin/bash
echo "p2pbench args: $*"
echo "rank $SLURM_PROCID sees GPUs ${{CUDA_VISIBLE_DEVICES-(unset)}}"
while [ $# -gt 0 ]; do [ "$1" = --output ] && export PROBE_OUTPUT=$2; shift; done
exec {PROBE} normal 0 0
""")
    path.chmod(0o755)
    return path


def submit_script(slurm, tmp_path, name, *options, env=None):
    """sbatch scripts/slurm/NAME as a user would, from `tmp_path` (its --output lands there),
    with the stand-in p2pbench, on this cluster's one node with two GPUs."""
    results = tmp_path / "results"
    e = dict(slurm.env, P2PBENCH=str(stand_in(tmp_path)), P2PBENCH_RESULTS_DIR=str(results), **(env or {}))
    r = subprocess.run(["sbatch", "--parsable", "--nodes=1", "--ntasks-per-node=2", "--gres=gpu:2", *options,
                        str(SCRIPTS / name)], env=e, cwd=tmp_path, capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, f"sbatch {name}: {r.stdout}{r.stderr}{slurm.explain()}"
    job = int(r.stdout.strip().split(";")[0])
    stem = name.split(".")[0]
    return job, tmp_path / f"p2pbench-{stem}-{job}.out", results / f"{job}.json"


def test_node_sbatch_runs_the_ranks_and_writes_results_jobid_json(slurm, tmp_path):
    job, job_out, out_file = submit_script(slurm, tmp_path, "node.sbatch", "--time=5",
                                           env={"PROBE_STEPS": "30", "PROBE_STEP_MS": "20"})
    state, code = slurm.wait_job(job, 60)
    context = f"\njob {job}: {state} {code}{slurm.explain(job_out)}"
    assert (state, code) == ("COMPLETED", "0:0"), context
    text = job_out.read_text()
    assert text.count(f"p2pbench args: --config configs/default.json --output {out_file} --progress") == 2, context
    assert text.count("all 30 steps done") == 2, context
    # Every rank sees both GPUs of the node (CUDA IPC needs the peer's GPU visible).
    assert "rank 0 sees GPUs 0,1" in text and "rank 1 sees GPUs 0,1" in text, context
    assert f"p2pbench exit 0; results: {out_file}" in text, context
    doc = load(out_file, context)
    assert doc["incomplete"] is False and len(doc["results"]) == 30, context


def test_matrix_sbatch_stops_on_scancel_usr1(slurm, tmp_path):
    total = 1500
    job, job_out, out_file = submit_script(slurm, tmp_path, "matrix.sbatch", "--time=5",
                                           env={"PROBE_STEPS": str(total), "PROBE_STEP_MS": "100"})
    wait_for_rows(out_file, 5, 60, job_out, slurm)
    slurm.run("scancel", "--signal=USR1", str(job))
    state, code = slurm.wait_job(job, 30)
    context = f"\njob {job}: {state} {code}{slurm.explain(job_out)}"
    text = job_out.read_text()
    assert "p2pbench args: --config configs/matrix.json --output" in text, context
    assert (state, code) == ("FAILED", f"{128 + signal.SIGUSR1}:0"), context
    assert f"p2pbench exit {128 + signal.SIGUSR1}; results: {out_file}" in text, context
    check_stopped(load(out_file, context), "SIGUSR1", total, context)
