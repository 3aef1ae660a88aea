"""p2pbench-report on a node without the jsonschema package (a GPU node with no package index):
there `import jsonschema` fails, as it does here with tests/shims/no_jsonschema first on
PYTHONPATH. Every subcommand still validates its inputs, with the built-in validator
(p2pbench_report/draft7_subset.py): a valid run is plotted, compared and checked, and a broken
one is refused (exit 2) naming the file, the JSON path and what is wrong."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from make_fixtures import REAL_RESULTS, REPO

NO_JSONSCHEMA = REPO / "tests" / "shims" / "no_jsonschema"
RUN = REAL_RESULTS / "default.json"
OTHER_RUN = REAL_RESULTS / "default-same-device.json"
EXPECTATIONS = REPO / "expectations" / "h200-nv18.json"


def offline(*args, timeout=300) -> subprocess.CompletedProcess:
    """A command with `import jsonschema` failing as on the node; args[0] "-c" runs Python code."""
    path = os.pathsep.join(p for p in (str(NO_JSONSCHEMA), str(REPO / "scripts"), os.environ.get("PYTHONPATH")) if p)
    command = [sys.executable, *args] if args[0] == "-c" else [sys.executable, str(REPO / "scripts" / "p2pbench-report"), *args]
    return subprocess.run(command, env=dict(os.environ, PYTHONPATH=path), capture_output=True, text=True,
                          timeout=timeout, cwd=REPO)


def test_the_node_has_no_jsonschema_and_the_report_says_which_validator_it_uses():
    probe = offline("-c", "import jsonschema")
    assert probe.returncode != 0 and "ModuleNotFoundError" in probe.stderr, probe.stderr
    chosen = offline("-c", "from p2pbench_report.schema import engine; print(engine())")
    assert chosen.stdout.strip() == "built-in", chosen.stdout + chosen.stderr


def test_plot_validates_and_draws(tmp_path):
    r = offline("plot", str(RUN), "-o", str(tmp_path), "--format", "png")
    assert r.returncode == 0, r.stderr
    assert list(tmp_path.glob("*.png")) and "the Python package jsonschema" not in r.stderr, r.stderr


def test_compare_runs(tmp_path):
    r = offline("compare", str(RUN), str(OTHER_RUN))
    assert r.returncode == 0, r.stderr
    assert "|" in r.stdout and "GB/s" in r.stdout, r.stdout[:2000]


def test_check_runs():
    r = offline("check", str(RUN), "--expect", str(EXPECTATIONS))
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr
    assert "PASS" in r.stdout and "FAIL |" not in r.stdout, r.stdout[-2000:]


@pytest.mark.parametrize("subcommand", [["plot", "-o", "{out}"], ["compare", str(RUN)], ["check", "--expect", str(EXPECTATIONS)]],
                         ids=["plot", "compare", "check"])
def test_a_broken_file_is_refused_naming_file_path_and_problem(tmp_path, subcommand):
    document = json.loads(RUN.read_text(encoding="utf-8"))
    document["results"][3]["bandwidth_gbps"]["median"] = "390.1"  # a number written as text
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps(document), encoding="utf-8")
    name, *options = [part.replace("{out}", str(tmp_path / "figures")) for part in subcommand]
    r = offline(name, str(broken), *options)
    assert r.returncode == 2, r.stdout[-1000:] + r.stderr
    assert f"{broken}: $.results[3].bandwidth_gbps.median: not a valid p2pbench results file: " \
           f"\"390.1\" is not of type 'number'" in r.stderr, r.stderr
    assert not (tmp_path / "figures").exists()
