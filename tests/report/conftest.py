"""Fixtures of the p2pbench-report tests.

Data-driven tests (baseline_path) run on each real p2pbench run committed in REAL_RESULTS
(results/h200-nv18/*.json), behaviour tests (one_baseline_path) on one of them; both fall back to
the synthetic run of make_fixtures.py while there is none. Candidates are derived
from the baseline (scaled, perturbed, failed, dropped rows), so the same tests run on either.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import make_fixtures  # noqa: E402  (puts scripts/ on sys.path)
from make_fixtures import REAL_RESULTS  # noqa: E402
from p2pbench_report.cli import main  # noqa: E402


def real_results() -> list[Path]:
    return sorted(REAL_RESULTS.glob("*.json")) if REAL_RESULTS.is_dir() else []


@pytest.fixture(scope="session")
def synthetic_path(tmp_path_factory) -> Path:
    return make_fixtures.write_fixtures(tmp_path_factory.mktemp("synthetic"))


@pytest.fixture(scope="session")
def group_path(tmp_path_factory) -> Path:
    """The schema version 2 run of 4 ranks on 3 GPUs (make_fixtures.synthetic_group_results), with
    the findings p2pbench's writer adds (tests/unit/matrix_findings)."""
    try:
        return make_fixtures.write_group_fixture(tmp_path_factory.mktemp("group"))
    except make_fixtures.FindingsUnavailable as e:
        pytest.skip(str(e))


@pytest.fixture(scope="session")
def group_document(group_path) -> dict:
    return json.loads(group_path.read_text(encoding="utf-8"))


@pytest.fixture(scope="session")
def synthetic_document(synthetic_path) -> dict:
    return json.loads(synthetic_path.read_text(encoding="utf-8"))


@pytest.fixture(scope="session", params=[p.name for p in real_results()] or ["synthetic"])
def baseline_path(request, synthetic_path) -> Path:
    """Each real run in results/h200-nv18/ (the baseline-driven tests run once per file), or the
    synthetic run while none is committed."""
    return synthetic_path if request.param == "synthetic" else REAL_RESULTS / request.param


@pytest.fixture(scope="session")
def baseline_document(baseline_path) -> dict:
    return json.loads(baseline_path.read_text(encoding="utf-8"))


@pytest.fixture(scope="session")
def one_baseline_path(synthetic_path) -> Path:
    """One real run (default.json where present, the sweep with every method), else the synthetic
    one: for tests of the tool's behaviour, which need not repeat on every file."""
    real = real_results()
    preferred = [p for p in real if p.name == "default.json"]
    return (preferred or real or [synthetic_path])[0]


@pytest.fixture(scope="session")
def one_baseline_document(one_baseline_path) -> dict:
    return json.loads(one_baseline_path.read_text(encoding="utf-8"))


@pytest.fixture
def write_analysed_json(write_json):
    """write_json, then the writer's findings added: for a changed group document whose suspect
    pairs or rounds agreement a test reads."""
    def write(name: str, document: dict) -> Path:
        return make_fixtures.add_findings(write_json(name, document))
    return write


@pytest.fixture
def write_json(tmp_path):
    def write(name: str, document: dict) -> Path:
        path = tmp_path / name
        path.write_text(json.dumps(document), encoding="utf-8")
        return path

    return write


@pytest.fixture
def cli(capsys):
    """Runs the CLI in-process: returns (exit code, stdout, stderr)."""
    def run(*argv: str | Path) -> tuple[int, str, str]:
        code = main([str(a) for a in argv])
        captured = capsys.readouterr()
        return code, captured.out, captured.err

    return run
