"""The p2pbench executable's front door: --help, --dry-run and bad input, with no GPU and no MPI."""
import json
import os
import pathlib
import subprocess

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
BIN = os.environ.get("P2PBENCH_BIN", str(REPO / "build" / "src" / "p2pbench"))
DEFAULT = str(REPO / "configs" / "default.json")


def run(*args, timeout=60):
    return subprocess.run([BIN, *args], capture_output=True, text=True, timeout=timeout, cwd=REPO)


def test_help_teaches():
    r = run("--help")
    assert r.returncode == 0
    for needle in ["--config", "--dry-run", "Examples:", "mpirun -np 2", "Config file keys", "1e9", "push", "Exit status"]:
        assert needle in r.stdout, needle


@pytest.mark.parametrize("config", sorted(p.name for p in (REPO / "configs").glob("*.json")))
def test_dry_run_lists_cases_without_mpi_or_gpu(config):
    r = run("--config", str(REPO / "configs" / config), "--dry-run")
    assert r.returncode == 0, r.stderr
    assert "cases" in r.stdout and "estimated" in r.stdout
    assert "bytes:" in r.stdout
    assert "MPI" not in r.stderr and r.stderr == ""


def test_dry_run_applies_flag_overrides():
    r = run("--config", DEFAULT, "--dry-run", "--methods", "ldst", "--modes", "uni", "--directions", "push",
            "-b", "1M", "-e", "4M", "--blocks", "1..4", "--threads", "256")
    assert r.returncode == 0, r.stderr
    lines = [l for l in r.stdout.splitlines() if "ldst/push/uni" in l]
    # 3 sizes x 3 block counts x 2 orientations
    assert len(lines) == 18, r.stdout
    assert all("threads:256" in l for l in lines)
    assert not any("/ce/" in l or l.split()[1].startswith("ce/") for l in lines)


def write(tmp_path, text):
    path = tmp_path / "config.json"
    path.write_text(text)
    return str(path)


BAD_CONFIGS = [
    ("invalid JSON", '{"sizes": [1,}', ["invalid JSON"]),
    ("unknown key", '{"sizes": [4096], "smaples": 3}', ["smaples", "unknown key"]),
    ("wrong type", '{"sizes": [4096], "samples": "ten"}', ["samples", "ten"]),
    ("zero size", '{"sizes": [0]}', ["sizes[0]", "0"]),
    ("negative size", '{"sizes": [-1]}', ["sizes[0]", "-1"]),
    ("non-integer size", '{"sizes": [2.5]}', ["sizes[0]", "2.5"]),
    ("zero samples", '{"sizes": [4096], "samples": 0}', ["samples", "0"]),
    ("empty sweep", '{"sizes": [4096], "methods": []}', ["methods", "[]"]),
    ("unknown method", '{"sizes": [4096], "methods": ["dma"]}', ["methods[0]", "dma"]),
    ("unknown direction", '{"sizes": [4096], "directions": ["up"]}', ["directions[0]", "up"]),
    ("unknown mode", '{"sizes": [4096], "modes": ["both"]}', ["modes[0]", "both"]),
]


@pytest.mark.parametrize("name,text,needles", BAD_CONFIGS, ids=[b[0] for b in BAD_CONFIGS])
def test_bad_config_exits_2_naming_key_and_leaves_output_alone(tmp_path, name, text, needles):
    out = tmp_path / "results.json"
    out.write_text("previous results")
    r = run("--config", write(tmp_path, text), "--output", str(out))
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert r.stderr.startswith("p2pbench: error:"), r.stderr
    for needle in needles:
        assert needle in r.stderr, (needle, r.stderr)
    assert len(r.stderr.strip().splitlines()) == 1, "one clear message"
    assert out.read_text() == "previous results"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["config.json", "results.json"]


@pytest.mark.parametrize(
    "flags,needles",
    [
        (["--samples", "0"], ["--samples", "0"]),
        (["--samples", "x"], ["--samples", "x"]),
        (["-b", "0"], ["-b/-e/-f", "0"]),
        (["--methods", "ce,dma"], ["--methods", "dma"]),
        (["--threads", "1025", "--methods", "ldst"], ["ldst.threads[0]", "1025"]),
        (["--min-sample-time", "-1"], ["--min-sample-time", "-1"]),
    ],
)
def test_bad_flags_exit_2(tmp_path, flags, needles):
    out = tmp_path / "results.json"
    r = run("--config", DEFAULT, "--output", str(out), *flags)
    assert r.returncode == 2, (r.stdout, r.stderr)
    for needle in needles:
        assert needle in r.stderr, (needle, r.stderr)
    assert not out.exists()


def test_missing_config_file(tmp_path):
    r = run("--config", str(tmp_path / "nope.json"))
    assert r.returncode == 2
    assert "nope.json" in r.stderr


def test_no_config_given():
    r = run()
    assert r.returncode == 2
    assert "--config" in r.stderr


def test_unwritable_output_directory(tmp_path):
    r = run("--config", DEFAULT, "--output", str(tmp_path / "missing-dir" / "r.json"))
    assert r.returncode == 2
    assert "--output" in r.stderr


def test_single_process_run_refuses_clearly(tmp_path):
    """Started without mpirun: MPI runs as a singleton, and the driver asks for two ranks."""
    out = tmp_path / "r.json"
    r = run("--config", DEFAULT, "--output", str(out), timeout=120)
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert "exactly 2 ranks" in r.stderr
    assert not out.exists()


# --expect FILE (issue 12): the file is checked before anything runs.
EXPECT_OK = {"format": "p2pbench-expectations", "version": 1, "system": "h200-nv18", "tolerance_pct": 5.0,
             "made_with": {"verify": True, "samples": 10, "min_sample_time_ms": 1.0},
             "expectations": [{"match": {"method": "ce", "direction": "push", "mode": "uni", "bytes": 1073741824},
                               "pair_class": "NV18", "metric": "bandwidth_gbps", "reference": 396.0, "floor": 376.2}]}


@pytest.mark.parametrize("change, needles", [
    ({"format": "nvbandwidth"}, ["--expect", "format: not an expectations file"]),
    ({"version": 2}, ["--expect", "version: 2 is not supported"]),
    ({"expectations": [{"match": {}, "pair_class": "NV18", "metric": "bandwidth_gbps", "reference": 1}]},
     ["--expect", "expectations[0]", "floor"]),
    ({"made_with": {"samples": 50}}, ["--expect", "made_with.samples", "50"]),
])
def test_bad_expectations_exit_2_before_the_run(tmp_path, change, needles):
    path = tmp_path / "expect.json"
    path.write_text(json.dumps({**EXPECT_OK, **change}))
    out = tmp_path / "r.json"
    r = run("--config", DEFAULT, "--expect", str(path), "--output", str(out))
    assert r.returncode == 2, (r.stdout, r.stderr)
    for needle in needles:
        assert needle in r.stderr, r.stderr
    assert "exactly 2 ranks" not in r.stderr  # refused before MPI starts
    assert not out.exists()


def test_good_expectations_pass_the_dry_run(tmp_path):
    path = tmp_path / "expect.json"
    path.write_text(json.dumps(EXPECT_OK))
    r = run("--config", DEFAULT, "--expect", str(path), "--dry-run")
    assert r.returncode == 0, r.stderr
    assert "--expect" in run("--help").stdout
