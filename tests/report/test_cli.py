"""The entry point: help that teaches, usage errors, and one run as a real subprocess."""

from __future__ import annotations

import json
import subprocess
import sys

import make_fixtures
import pytest
from make_fixtures import REPO

ENTRY_POINT = REPO / "scripts" / "p2pbench-report"


@pytest.mark.parametrize("command", ["plot", "compare", "regress", "export", "import-nvbandwidth",
                                     "import-nccl-tests"])
def test_every_subcommand_has_help_with_examples(cli, command):
    code, out, _ = cli(command, "--help")
    assert code == 0 and "examples:" in out and f"p2pbench-report {command}" in out


def test_overview_help_lists_subcommands_and_exit_status(cli):
    code, out, _ = cli("--help")
    assert code == 0
    for command in ("plot", "compare", "regress", "export", "import-nvbandwidth", "import-nccl-tests"):
        assert command in out
    assert "exit status" in out and "1 GB = 1e9" in out


def test_usage_errors_exit_2(cli):
    assert cli()[0] == 2
    assert cli("frobnicate")[0] == 2
    assert cli("regress", "only-one.json")[0] == 2


def test_entry_point_runs_as_a_subprocess(tmp_path):
    real = make_fixtures.REAL_RESULTS / "default.json"  # once, on one file: a process start is slow
    baseline_path = real if real.is_file() else make_fixtures.write_fixtures(tmp_path)
    baseline_document = json.loads(baseline_path.read_text(encoding="utf-8"))
    dropped = make_fixtures.stable_bandwidth_rows(baseline_document)[:2]
    candidate = tmp_path / "candidate.json"
    candidate.write_text(json.dumps(make_fixtures.scaled(baseline_document, dropped, 0.9)), encoding="utf-8")
    result = subprocess.run([sys.executable, str(ENTRY_POINT), "regress", str(baseline_path), str(candidate)],
                            capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    assert "FAIL" in result.stdout and result.stdout.count("| SLOWER") == len(dropped)
    assert ENTRY_POINT.stat().st_mode & 0o111, "scripts/p2pbench-report must be executable"
