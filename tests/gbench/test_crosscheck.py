"""scripts/gbench-crosscheck.py: matches p2pbench-gbench runs to driver rows and flags differences."""
import json
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "gbench-crosscheck.py"


def driver_row(method, gbps, src=0, dst=1, **shape):
    row = {"method": method, "direction": "push", "mode": "uni", "bytes": 1 << 30, "src_rank": src, "dst_rank": dst,
           "status": "ok", "bandwidth_gbps": {"median": gbps}}
    for key in ("blocks", "threads", "unroll", "smem_bytes", "stages"):
        row[key] = shape.get(key)
    return row


def gbench_runs(name, values):
    """Google Benchmark's records of one benchmark (UseManualTime: the name ends in /manual_time)."""
    run = name + "/manual_time"
    return [{"name": run, "run_name": run, "run_type": "iteration", "GB/s": v} for v in values] + \
           [{"name": run + "_median", "run_name": run, "run_type": "aggregate", "GB/s": 1.0}]


def run(tmp_path, rows, benchmarks, *extra):
    driver, gbench = tmp_path / "driver.json", tmp_path / "gbench.json"
    driver.write_text(json.dumps({"results": rows}))
    gbench.write_text(json.dumps({"benchmarks": benchmarks}))
    return subprocess.run([sys.executable, str(SCRIPT), str(driver), str(gbench), *extra], capture_output=True, text=True)


ROWS = [driver_row("ce", 396.0), driver_row("ce", 300.0, src=1, dst=0),
        driver_row("ldst", 354.0, blocks=8, threads=512, unroll=4),
        driver_row("tma", 364.0, blocks=8, smem_bytes=131072, stages=4)]


def test_agreeing_cases_pass_and_use_the_median_of_repetitions(tmp_path):
    benchmarks = gbench_runs("ce/push/bytes:1073741824", [395.0, 394.0, 100.0]) + \
                 gbench_runs("ldst/push/bytes:1073741824/blocks:8/threads:512/unroll:4", [352.0]) + \
                 gbench_runs("tma/push/bytes:1073741824/blocks:8/smem:131072/stages:4", [366.0])
    r = run(tmp_path, ROWS, benchmarks)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "| ce/push/bytes:1073741824 | 394.0 | 396.0 | -0.51% | yes |" in r.stdout  # 0->1 row, not 1->0
    assert "3 of 3 cases agree within 2%" in r.stdout


def test_a_difference_beyond_the_tolerance_or_a_missing_row_fails(tmp_path):
    benchmarks = gbench_runs("ce/push/bytes:1073741824", [380.0]) + gbench_runs("ce/pull/bytes:1073741824", [390.0])
    r = run(tmp_path, ROWS, benchmarks)
    assert r.returncode == 1
    assert "-4.04% | NO |" in r.stdout and "| ce/pull/bytes:1073741824 | 390.0 | no row | | no |" in r.stdout
    assert run(tmp_path, ROWS, benchmarks[:1], "--tolerance", "5").returncode == 0


def test_unusable_input_exits_2(tmp_path):
    assert run(tmp_path, ROWS, []).returncode == 2
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    r = subprocess.run([sys.executable, str(SCRIPT), str(bad), str(bad)], capture_output=True, text=True)
    assert r.returncode == 2 and "cannot read" in r.stderr
