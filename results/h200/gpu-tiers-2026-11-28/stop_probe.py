#!/usr/bin/env python3
"""SIGSTOP of one rank a few cases into a run: how long until the file names it lost, and until
mpirun ends. Usage: stop_probe.py OUT_DIR RANKS CONFIG RANK [p2pbench flags...]"""
import json
import os
import pathlib
import signal
import subprocess
import sys
import time

out_dir, ranks, config, victim = pathlib.Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
flags = sys.argv[5:]
name = f"stop-rank{victim}-of-{ranks}-{pathlib.Path(config).stem}"
out = out_dir / f"{name}.json"
log = open(out_dir / f"{name}.log", "w")
cmd = ["mpirun", "-np", str(ranks), "--bind-to", "none", "--oversubscribe", "build-gpu/src/p2pbench", "--config", config,
       "--output", str(out), *flags]
proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
t0 = time.monotonic()


def doc():
    try:
        return json.loads(out.read_text())
    except (FileNotFoundError, json.JSONDecodeError):
        return None


while time.monotonic() - t0 < 120 and proc.poll() is None:
    d = doc()
    if d and len(d.get("results", [])) >= 3:
        break
    time.sleep(0.05)
d = doc()
if proc.poll() is not None or not d:
    print(f"{name}: the run ended or wrote nothing before the stop (exit {proc.poll()})")
    sys.exit(1)
pid = d["meta"]["ranks"][victim]["pid"]
os.kill(pid, signal.SIGSTOP)
stopped = time.monotonic()
named = None
while time.monotonic() - stopped < 90 and proc.poll() is None:
    d = doc()
    if named is None and d and f"rank {victim} was lost" in (d.get("incomplete_reason") or ""):
        named = time.monotonic() - stopped
    time.sleep(0.1)
ended = proc.poll()
took = time.monotonic() - stopped
if ended is None:
    os.kill(pid, signal.SIGCONT)
    try:
        proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
    print(f"{name}: after {len(d['results'])} rows; file named the rank lost after "
          f"{'%.1f s' % named if named is not None else 'never'}; mpirun NOT ended 90 s after the stop "
          f"(continued; then exit {proc.returncode} after {time.monotonic() - stopped:.1f} s)")
    sys.exit(1)
print(f"{name}: file named the rank lost after {'%.1f s' % named if named is not None else 'never'}; "
      f"mpirun ended {took:.1f} s after the stop, exit {ended}")
sys.exit(0 if took < 30 else 1)
