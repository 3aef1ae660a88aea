#!/usr/bin/env python3
"""Faults against `mpirun -np 2 p2pbench` on a GPU node (label `gpu`): the job always ends,
says why, and keeps what it measured.

Injected (P2PBENCH_FAULT): a rank stopped (SIGSTOP), exiting, throwing outside the lock-step,
a sticky CUDA error, a hung kernel. From outside, as an operator or a scheduler would: SIGSTOP
and SIGKILL of a rank at a random point, SIGUSR1, SIGTERM and SIGINT to mpirun. Every check reads the
results file: incomplete, with the finished cases and the reason. And the job suspended as a whole
(SIGSTOP to mpirun and every rank, then SIGCONT), which must finish as if nothing happened.

Two GPUs (one rank each) unless --one-gpu (both ranks on GPU 0: the figures are not P2P, the
faults and their ends are the same; NCCL runs between two emulated nodes over sockets, and the
ping-pong, which needs two GPUs, is left out; the output says so). The scenarios run P2PBENCH_FAULT_JOBS at a time (default 3): each is a job of
its own that mostly waits for a deadline.
Exits 77 (CTest: skipped) when the GPUs are not visible. Prints 'N passed, N failed'.
Usage: fault_checks.py P2PBENCH_BIN MPIEXEC [MPIEXEC_FLAGS...] [--config FILE] [--keep DIR]
       [--seed N] [--only copies|methods] [--method M] [--one-gpu]   (--method: the methods group's
       faults of method M only)   (--keep: copy every results file and log there,
       with the commands)
"""
import json
import os
import pathlib
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from driver_checks import gpu_count  # noqa: E402  (one way to count the GPUs)

END_WITHIN_S = 30  # the bound the issue sets for default timeouts
SUSPEND_S = 25  # longer than a sample's deadline here (the gate's timeout, 10 s, + 10 s)
BASELINES = str(HERE / "baselines.json")
INTERFERENCE = str(HERE / "interference.json")


def read_doc(path):
    """The file as a reader sees it at any moment: it must always parse (atomic replacement)."""
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        return None


class FaultChecks:
    def __init__(self, binary, mpiexec, config, keep, seed, same_gpu=False):
        self.binary, self.mpiexec, self.config, self.keep = binary, mpiexec, config, keep
        # One GPU: both ranks on it (the figures are not P2P; the faults and their ends are the same).
        self.gpu_flags = ["--allow-same-device", "--devices", "0,0"] if same_gpu else []
        self.seed = seed
        self.passed = self.failed = 0
        self.lock = threading.Lock()  # scenarios run side by side
        self.tmp = pathlib.Path(tempfile.mkdtemp(prefix="p2pbench-faults-"))
        self.log = []

    def check(self, ok, what, detail=""):
        with self.lock:
            print(("PASS " if ok else "FAIL ") + what + ("" if ok else "\n    " + detail[-3000:]), flush=True)
            self.passed += bool(ok)
            self.failed += not ok

    def start(self, name, fault=None, extra=(), out=None, config=None):
        out = out or self.tmp / f"{name}.json"
        cmd = [*self.mpiexec, "-np", "2", self.binary, "--config", config or self.config, "--output", str(out),
               *self.gpu_flags, *extra]
        env = dict(os.environ)
        env.pop("P2PBENCH_FAULT", None)
        if fault:
            env["P2PBENCH_FAULT"] = fault
        log = open(self.tmp / f"{name}.log", "w")
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
        return proc, out, log, cmd, time.monotonic()

    def wait(self, name, proc, log, cmd, t0, fault=None, note=""):
        try:
            proc.wait(timeout=180)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        took = time.monotonic() - t0
        log.close()
        text = (self.tmp / f"{name}.log").read_text()
        self.log.append(f"## {name}\n$ {'P2PBENCH_FAULT=' + fault + ' ' if fault else ''}{' '.join(cmd)}\n"
                        f"{note}exit {proc.returncode} after {took:.1f} s\n")
        return proc.returncode, took, text

    def expect_incomplete(self, name, out, rows_at_least, reason_has, text):
        doc = read_doc(out)
        self.check(doc is not None, f"{name}: results file written", text)
        if doc is None:
            return None
        n = len(doc["results"])
        self.log.append(f"results: {n} rows, incomplete={doc['incomplete']}, reason: {doc.get('incomplete_reason')}\n")
        self.check(doc["incomplete"] is True, f"{name}: marked incomplete", json.dumps(doc.get("incomplete_reason")))
        self.check(n >= rows_at_least, f"{name}: keeps the {rows_at_least} cases finished before the fault ({n} rows)")
        reason = doc.get("incomplete_reason", "")
        self.check(any(h in reason for h in reason_has), f"{name}: the reason says why ({reason[:160]})", text)
        self.check(all(r["status"] in ("ok", "skipped") for r in doc["results"][:rows_at_least]),
                   f"{name}: the rows before the fault are whole", json.dumps(doc["results"][:1])[:500])
        return doc

    def first_case_of(self, config, method):
        """The 0-based index of the plan's first case of `method` (the dry run lists the plan)."""
        r = subprocess.run([self.binary, "--dry-run", "--config", config, "--ranks", "2", *self.gpu_flags],
                           capture_output=True, text=True, timeout=60)
        for line in r.stdout.splitlines():
            parts = line.split()
            if len(parts) >= 2 and parts[0].isdigit() and parts[1].startswith(method + "/"):
                return int(parts[0]) - 1
        raise RuntimeError(f"no {method} case in the plan of {config}:\n{r.stdout}{r.stderr}")

    def injected(self, kind, rank, at_case, reason_has, rows_at_least=None, config=None, tag="", step=0, extra=()):
        name = f"inject-{kind}-rank{rank}{tag}"
        fault = f"rank={rank},case={at_case},fault={kind}" + (f",step={step}" if step else "")
        proc, out, log, cmd, t0 = self.start(name, fault, extra=extra, config=config)
        rc, took, text = self.wait(name, proc, log, cmd, t0, fault)
        self.check(rc != 0, f"{name}: nonzero exit ({rc})", text)
        self.check(took < END_WITHIN_S, f"{name}: ended within {END_WITHIN_S} s ({took:.1f} s)", text)
        self.expect_incomplete(name, out, at_case if rows_at_least is None else rows_at_least, reason_has, text)
        return text

    def rows_now(self, out):
        doc = read_doc(out)
        return doc, len((doc or {}).get("results", []))

    def wait_for_rows(self, out, proc, k, limit=60):
        t0 = time.monotonic()
        while time.monotonic() - t0 < limit and proc.poll() is None:
            doc, n = self.rows_now(out)
            if n >= k:
                return doc, n
            time.sleep(0.05)
        return self.rows_now(out)

    def from_outside(self, name, action, extra=()):
        """Lets the run reach a random case, then acts on it as an operator would."""
        proc, out, log, cmd, t0 = self.start(name, extra=extra)
        rng = random.Random(f"{self.seed}-{name}")  # the same point for a seed, whatever runs beside it
        doc, n = self.wait_for_rows(out, proc, rng.randint(2, 12))
        if doc is None or "meta" not in doc or proc.poll() is not None:
            self.check(False, f"{name}: the run got going", (self.tmp / f"{name}.log").read_text())
            return None
        acted_at = time.monotonic()
        note = action(proc, doc)
        rc, _, text = self.wait(name, proc, log, cmd, t0, note=f"{note} after {n} rows\n")
        return rc, time.monotonic() - acted_at, n, out, text

    def signal_rank(self, rank, sig):
        """Sends `sig` to one rank at a random case; returns what from_outside() returns."""
        name = f"{signal.Signals(sig).name.lower()}-rank{rank}"

        def act(proc, doc):
            os.kill(doc["meta"]["ranks"][rank]["pid"], sig)
            return f"kill -{signal.Signals(sig).name[3:]} rank {rank}"
        return name, self.from_outside(name, act)

    def stop_rank(self, rank):
        name, got = self.signal_rank(rank, signal.SIGSTOP)
        if got:
            rc, took, n, out, text = got
            self.check(rc != 0 and took < END_WITHIN_S, f"sigstop rank {rank}: ended within {END_WITHIN_S} s ({took:.1f} s, exit {rc})", text)
            self.check(f"rank {rank} " in text and "is stopped" in text, f"sigstop rank {rank}: the stopped rank is named", text)
            self.expect_incomplete(name, out, n, [f"rank {rank} was lost"], text)

    def kill_rank(self, rank):
        name, got = self.signal_rank(rank, signal.SIGKILL)
        if got:
            rc, took, n, out, text = got
            self.check(rc != 0 and took < END_WITHIN_S, f"sigkill rank {rank}: ended ({took:.1f} s, exit {rc})", text)
            self.expect_incomplete(name, out, n, ["lost", "ended before all cases"], text)

    def suspend_job(self, pause_s):
        """The whole job stopped as a scheduler suspends it (SIGSTOP to mpirun and every rank; Slurm's
        suspend) for longer than a sample's deadline, then resumed: no wait may count the pause, so
        the run finishes with every case whole and exits 0."""
        name = "suspend-job"

        def act(proc, doc):
            pids = [proc.pid] + [r["pid"] for r in doc["meta"]["ranks"]]
            for pid in pids:
                os.kill(pid, signal.SIGSTOP)
            time.sleep(pause_s)
            for pid in pids:
                os.kill(pid, signal.SIGCONT)
            return f"kill -STOP mpirun and every rank, {pause_s} s later kill -CONT"
        got = self.from_outside(name, act, extra=("--samples", "40"))
        if got:
            rc, took, n, out, text = got
            doc = read_doc(out) or {}
            rows = doc.get("results", [])
            self.check(rc == 0, f"{name}: exit 0 after a pause of {pause_s} s ({rc}, {took:.1f} s)", text)
            self.check(doc.get("incomplete") is False and rows, f"{name}: the file is complete ({len(rows)} rows)",
                       json.dumps(doc.get("incomplete_reason")))
            bad = [r.get("status") for r in rows if r.get("status") not in ("ok", "skipped")]
            self.check(not bad, f"{name}: every case whole ({len(rows)} rows)", json.dumps(bad[:5]))

    def signal_mpirun(self, sig, to_ranks=False):
        """to_ranks: the signal goes to every rank, as a scheduler signals a job's tasks (Slurm's
        time limit, scancel --signal): the ranks stop at their next step, write the file and exit
        128+signal. Otherwise to mpirun: Open MPI 4.1's mpirun ends the job itself on SIGTERM and
        SIGINT (SIGTERM to the ranks, SIGKILL after its kill timeout; it exits 1 whatever they
        return) and does not pass SIGUSR1 on (measured): the ranks must still write the file."""
        name = f"{signal.Signals(sig).name.lower()}-{'ranks' if to_ranks else 'mpirun'}"
        out = self.tmp / f"{name}.json"
        out.write_text('{"schema_version": 2, "incomplete": true, "meta": {}, "results": []}\n')  # replaced only whole
        seen_bad = []

        def act(proc, doc):
            if to_ranks:
                for r in doc["meta"]["ranks"]:
                    os.kill(r["pid"], sig)
            else:
                proc.send_signal(sig)
            t_end = time.monotonic() + 10
            while proc.poll() is None and time.monotonic() < t_end:  # every read parses while it ends
                try:
                    read_doc(out)
                except json.JSONDecodeError as e:
                    seen_bad.append(str(e))
            return f"kill -{signal.Signals(sig).name[3:]} {'every rank' if to_ranks else 'mpirun'}"
        # mpirun passes the signal on only after a while: the sweep must outlast that (a sweep of
        # small cases can end within a second), so it takes more samples.
        got = self.from_outside(name, act, extra=() if to_ranks else ("--samples", "40"))
        if got:
            rc, took, n, out, text = got
            forwarded = to_ranks
            self.check(rc == 128 + sig if forwarded else rc != 0,
                       f"{name}: exit {128 + sig if forwarded else 'nonzero (mpirun ends the job)'} ({rc}, {took:.1f} s)", text)
            self.check(not seen_bad, f"{name}: the file parsed at every read", "; ".join(seen_bad[:3]))
            reason = f"interrupted by {signal.Signals(sig).name}" if forwarded else "interrupted by SIG"
            self.expect_incomplete(name, out, n, [reason], text)

    def finish(self):
        if self.keep:
            keep = pathlib.Path(self.keep)
            keep.mkdir(parents=True, exist_ok=True)
            for f in self.tmp.iterdir():
                shutil.copy(f, keep / f.name)
            (keep / "commands.txt").write_text("".join(self.log))
        print(f"{self.passed} passed, {self.failed} failed")
        return 0 if self.failed == 0 and self.passed > 0 else 1  # a check that ran nothing fails


def scenarios(c, groups, only_method=None):
    """The fault scenarios, each a call that runs one job and checks how it ended (the methods
    group's limited to `only_method` where given)."""
    todo = []
    if "copies" in groups:
        # The suspended job first: its pause then overlaps the other scenarios.
        todo += [lambda: c.suspend_job(SUSPEND_S),
                 lambda: c.injected("stop", 1, 5, ["rank 1 was lost"]),
                 lambda: c.injected("stop", 0, 5, ["rank 0 was lost"]),
                 lambda: c.injected("exit", 1, 5, ["lost", "ended before all cases"]),
                 lambda: throw_is_reported(c),
                 lambda: c.injected("cuda", 1, 5, ["fatal error"], rows_at_least=5),
                 lambda: c.injected("hang", 0, 5, ["fatal error"], rows_at_least=5),
                 lambda: c.stop_rank(0), lambda: c.stop_rank(1), lambda: c.kill_rank(1),
                 lambda: c.signal_mpirun(signal.SIGUSR1, to_ranks=True),
                 lambda: c.signal_mpirun(signal.SIGTERM, to_ranks=True),
                 lambda: c.signal_mpirun(signal.SIGTERM), lambda: c.signal_mpirun(signal.SIGINT)]
    if "methods" in groups:
        # Faults inside the loops of the other methods (step=S: as the case's S-th lock-step begins):
        # the baselines (staged, NCCL), latency, atomics and interference, on either rank.
        both = ("staged", "latency_read", "latency_ce", "atomic")
        baselines = both + (("nccl",) if c.gpu_flags else ("nccl", "latency_signal"))
        if c.gpu_flags:
            print("one GPU: NCCL runs between the ranks as two emulated nodes (--ranks-per-node 1: NCCL refuses "
                  "two ranks on one GPU of one node), over sockets, not NVLink; the ping-pong needs both sides "
                  "at once and is checked on two GPUs (gpu_driver_faults_methods)", flush=True)
        for config, method in [(BASELINES, m) for m in baselines] + [(INTERFERENCE, "interference")]:
            if only_method and method != only_method:
                continue
            k = c.first_case_of(config, method)
            extra = ("--ranks-per-node", "1") if c.gpu_flags and method == "nccl" else ()
            todo.append(lambda config=config, method=method, k=k, extra=extra: c.injected(
                "stop", 1, k, ["rank 1 was lost"], config=config, tag="-" + method, step=3, extra=extra))
            # mpirun ends the job at the first non-zero exit: where it kills the survivor before
            # it has named the lost rank, the checkpoint of the cases before is the account.
            todo.append(lambda config=config, method=method, k=k, extra=extra: c.injected(
                "exit", 0, k, ["rank 0 was lost", "ended before all cases"], config=config, tag="-" + method, step=2,
                extra=extra))
    return todo


def throw_is_reported(c):
    # The throwing rank says why on stderr and ends the job; the writer finds it gone.
    text = c.injected("throw", 1, 5, ["stopped by an error on rank 1", "rank 1 was lost"])
    c.check("injected fault: an exception outside the lock-step" in text, "inject-throw: the error is reported", text)


def main(argv):
    args, config, keep, seed, groups = [], str(HERE / "tiny.json"), None, int(time.time()), {"copies", "methods"}
    one_gpu, only_method = False, None
    it = iter(argv[1:])
    for a in it:
        if a == "--config":
            config = next(it)
        elif a == "--keep":
            keep = next(it)
        elif a == "--seed":
            seed = int(next(it))
        elif a == "--only":
            groups = {next(it)}
        elif a == "--one-gpu":
            one_gpu = True
        elif a == "--method":
            only_method = next(it)
        else:
            args.append(a)
    gpus = gpu_count()
    if gpus < (1 if one_gpu else 2):
        print(f"SKIPPED: the fault checks need {'a GPU' if one_gpu else 'two GPUs'}; {gpus} visible")
        return 77
    binary, mpiexec = args[0], args[1:]
    c = FaultChecks(binary, mpiexec, config, keep, seed, same_gpu=one_gpu)
    jobs = int(os.environ.get("P2PBENCH_FAULT_JOBS", "3"))
    print(f"fault checks on {config}, seed {seed}, {'both ranks on one GPU' if one_gpu else 'two GPUs'}, "
          f"{jobs} at a time", flush=True)
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        for done in [pool.submit(s) for s in scenarios(c, groups, only_method)]:
            done.result()  # a scenario that raised fails the run
    return c.finish()


if __name__ == "__main__":
    sys.exit(main(sys.argv))
