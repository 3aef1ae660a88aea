#!/usr/bin/env python3
"""The end of a run and the output path, against `mpirun -np 2 p2pbench` on a GPU node (label `gpu`;
on a node with one GPU both ranks share it).

- A rank stopped once the results file is complete (injected with case=end, and by SIGSTOP from
  outside the moment the file is complete): the job ends within 30 s, the file stays complete and
  says in a note what happened.
- A GPU hung under the teardown (injected with case=end,fault=hang): the watchdog ends the rank
  within 30 s and the file stays complete.
- A malformed expectations file: exit 2 before the first case, no file.
- A second job on the same output path: refused at start naming the holder; the first finishes.
- A rerun on a complete file: refused, the file unchanged.
- Ranks in PID namespaces of their own (per-rank containers on one host): the run completes.

Exits 77 (CTest: skipped) when no GPU is visible. Prints 'N passed, N failed'.
Usage: end_checks.py P2PBENCH_BIN MPIEXEC [MPIEXEC_FLAGS...] [--keep DIR]
"""
import json
import os
import pathlib
import signal
import subprocess
import sys
import time

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from driver_checks import gpu_count  # noqa: E402
from fault_checks import END_WITHIN_S, FaultChecks, read_doc  # noqa: E402


class EndChecks(FaultChecks):
    def expect_complete_with_note(self, name, out, note_has, text):
        doc = read_doc(out)
        self.check(doc is not None and doc.get("incomplete") is False, f"{name}: the file stays complete",
                   json.dumps((doc or {}).get("incomplete_reason")) + text)
        notes = (doc or {}).get("notes", [])
        self.check(any(note_has in n for n in notes), f"{name}: a note says what happened ({notes[:1]})", text)

    def stop_at_end(self, rank):
        name = f"end-stop-rank{rank}"
        fault = f"rank={rank},case=end,fault=stop"
        proc, out, log, cmd, t0 = self.start(name, fault)
        rc, took, text = self.wait(name, proc, log, cmd, t0, fault)
        self.check(rc != 0 and took < END_WITHIN_S, f"{name}: ended within {END_WITHIN_S} s ({took:.1f} s, exit {rc})", text)
        self.expect_complete_with_note(name, out, f"rank {rank} was lost after the results were complete", text)

    def hang_at_end(self, rank):
        """A GPU hung under the teardown (a wait with no deadline of its own): only the watchdog
        ends the rank. Without it the job would wait for the 600 s kernel."""
        name = f"end-hang-rank{rank}"
        fault = f"rank={rank},case=end,fault=hang"
        # --timeout-scale 0.25: the teardown's 60 s deadline becomes 15 s, inside the 30 s bound.
        proc, out, log, cmd, t0 = self.start(name, fault, extra=["--timeout-scale", "0.25"])
        rc, took, text = self.wait(name, proc, log, cmd, t0, fault)
        self.check(rc != 0 and took < END_WITHIN_S, f"{name}: ended within {END_WITHIN_S} s ({took:.1f} s, exit {rc})", text)
        self.check("freeing the buffers did not finish in time: ending the process (watchdog)" in text,
                   f"{name}: the watchdog over the teardown ended the hung rank", text)
        doc = read_doc(out)
        self.check(doc is not None and doc.get("incomplete") is False, f"{name}: the file stays complete", text)

    def sigstop_when_complete(self, rank):
        """As the issue tried it: SIGSTOP a rank the moment the complete file appears."""
        name = f"end-sigstop-rank{rank}"
        proc, out, log, cmd, t0 = self.start(name)
        pid, stopped_at = None, None
        while proc.poll() is None and time.monotonic() - t0 < 120:
            doc = read_doc(out)
            if doc and doc.get("meta", {}).get("ranks"):
                pid = doc["meta"]["ranks"][rank]["pid"]
            if doc and doc.get("incomplete") is False:
                try:
                    os.kill(pid, signal.SIGSTOP)
                    stopped_at = time.monotonic()
                except ProcessLookupError:
                    pass  # already gone: nothing left to hang
                break
            time.sleep(0.01)
        rc, _, text = self.wait(name, proc, log, cmd, t0, note=f"SIGSTOP rank {rank} when the file was complete\n")
        took = time.monotonic() - (stopped_at or time.monotonic())
        self.check(took < END_WITHIN_S, f"{name}: ended within {END_WITHIN_S} s of the stop ({took:.1f} s, exit {rc})", text)
        doc = read_doc(out)
        self.check(doc is not None and doc.get("incomplete") is False, f"{name}: the file stays complete", text)

    def bad_expectations(self):
        name = "bad-expectations"
        bad = self.tmp / "bad-expect.json"
        doc = json.loads((HERE.parents[1] / "expectations" / "h200-nv18.json").read_text())
        doc["system"] = 42
        bad.write_text(json.dumps(doc))
        proc, out, log, cmd, t0 = self.start(name, extra=("--expect", str(bad)))
        rc, took, text = self.wait(name, proc, log, cmd, t0)
        self.check(rc == 2 and "--expect" in text and "system" in text, f"{name}: exit 2 naming the key ({rc})", text)
        self.check(not out.exists() and "ce/" not in text, f"{name}: refused before the first case, no file", text)

    def shared_path(self):
        first, out, log, cmd, t0 = self.start("path-first", extra=("--samples", "40"))
        self.wait_for_rows(out, first, 1)
        second, _, log2, cmd2, t2 = self.start("path-second", out=out)
        rc2, _, text2 = self.wait("path-second", second, log2, cmd2, t2)
        self.check(rc2 == 2 and "in use by another p2pbench run (pid" in text2,
                   f"second job on the same path: refused naming the holder ({rc2})", text2)
        rc, _, text = self.wait("path-first", first, log, cmd, t0)
        doc = read_doc(out)
        self.check(rc == 0 and doc and doc["incomplete"] is False, "the first job finishes its file", text)
        before = out.read_text()
        rerun, _, log3, cmd3, t3 = self.start("path-rerun", out=out)
        rc3, _, text3 = self.wait("path-rerun", rerun, log3, cmd3, t3)
        self.check(rc3 == 2 and "holds the complete results of an earlier run" in text3 and out.read_text() == before,
                   f"a rerun on the complete file: refused, file unchanged ({rc3})", text3)

    def pid_namespaces(self):
        name = "pid-namespaces"
        out = self.tmp / f"{name}.json"
        # No process_vm_readv across user namespaces (unless the launcher's flags say so already).
        vader = [] if "btl_vader_single_copy_mechanism" in self.mpiexec else \
            ["--mca", "btl_vader_single_copy_mechanism", "none"]
        cmd = [*self.mpiexec, "-np", "2", *vader, "unshare", "-Urpf", "--mount-proc", self.binary,
               "--config", self.config, "--output", str(out), "--methods", "ce,h2d", *self.gpu_flags]
        log = open(self.tmp / f"{name}.log", "w")
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        rc, took, text = self.wait(name, proc, log, cmd, time.monotonic())
        doc = read_doc(out)
        self.check(rc == 0 and doc and doc["incomplete"] is False,
                   f"{name}: ranks in PID namespaces of their own complete the run ({rc}, {took:.1f} s)", text)
        rows = (doc or {}).get("results", [])
        ipc = [r for r in rows if r["method"] == "ce"]
        host = [r for r in rows if r["method"] == "h2d"]
        self.check(ipc and all(r["status"] == "skipped" and "PID namespaces" in r.get("error", "") for r in ipc),
                   f"{name}: CUDA IPC rows skipped, naming the PID namespaces", json.dumps(ipc[:1])[:400])
        self.check(host and all(r["status"] == "ok" and r["verified"] for r in host),
                   f"{name}: host-link rows measured and verified", json.dumps(host[:1])[:400])


def main(argv):
    if gpu_count() < 1:
        print("SKIPPED: no CUDA GPU is visible: the end-of-run checks run p2pbench on a GPU node")
        return 77
    args, keep = [], None
    it = iter(argv[1:])
    for a in it:
        if a == "--keep":
            keep = next(it)
        else:
            args.append(a)
    c = EndChecks(args[0], args[1:], str(HERE / "tiny.json"), keep, 0, same_gpu=gpu_count() < 2)
    for rank in (1, 0):
        c.stop_at_end(rank)
    for rank in (1, 0):
        c.hang_at_end(rank)
    c.sigstop_when_complete(1)
    c.bad_expectations()
    c.shared_path()
    c.pid_namespaces()
    return c.finish()


if __name__ == "__main__":
    sys.exit(main(sys.argv))
