"""The p2pbench executable's front door: --help, --dry-run and bad input, with no GPU and no MPI."""
import json
import os
import pathlib
import re
import subprocess
import sys

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
BIN = os.environ.get("P2PBENCH_BIN", str(REPO / "build" / "src" / "p2pbench"))
DEFAULT = str(REPO / "configs" / "default.json")


def run(*args, timeout=60, env=None):
    return subprocess.run([BIN, *args], capture_output=True, text=True, timeout=timeout, cwd=REPO,
                          env=dict(os.environ, **(env or {})))


def test_help_teaches():
    r = run("--help")
    assert r.returncode == 0
    for needle in ["--config", "--dry-run", "Examples:", "mpirun -np 2", "Config file keys", "1e9", "push", "Exit status"]:
        assert needle in r.stdout, needle


def test_help_says_what_the_file_is_today():
    schema = json.loads((REPO / "schema" / "results.schema.json").read_text())
    version = schema["properties"]["schema_version"]["const"]
    text = " ".join(run("--help").stdout.split())
    assert f"schema_version {version}" in text, text[:400]
    assert "after every case" in text
    assert "written atomically at the end" not in text


# Errors CLI11 finds itself read like the program's own: the prefix, the flag, exit 2.
CLI11_ERRORS = [
    (["--smaples", "3"], "--smaples"),
    (["--dry-run", "--ranks", "100000"], "--ranks"),
    (["--dry-run", "--ranks-per-node", "x"], "--ranks-per-node"),
    (["--config", "/nonexistent/p2pbench.json"], "--config"),
    (["--topology", "--dry-run"], "--topology"),
    (["--expect"], "--expect"),
]


@pytest.mark.parametrize("flags,flag", CLI11_ERRORS, ids=[" ".join(f) for f, _ in CLI11_ERRORS])
def test_parser_errors_start_with_the_prefix_and_name_the_flag(tmp_path, flags, flag):
    r = run(*flags, "--output", str(tmp_path / "r.json"))
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert r.stderr.startswith("p2pbench: error: "), r.stderr
    assert flag in r.stderr.splitlines()[0], r.stderr
    assert not (tmp_path / "r.json").exists()


def nvml_loads():
    import ctypes
    try:
        ctypes.CDLL("libnvidia-ml.so.1")
        return True
    except OSError:
        return False


@pytest.mark.skipif(nvml_loads(), reason="NVML is installed here: --topology reads the real GPUs")
def test_topology_without_a_driver_says_what_to_do():
    r = run("--topology")
    assert r.returncode == 1, (r.stdout, r.stderr)
    assert r.stdout.startswith("NVML unavailable: "), r.stdout
    assert "nvidia-smi" in r.stdout and "--dry-run" in r.stdout, r.stdout


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
    ("unknown key", '{"sizes": [4096], "smaples": 3}', ["smaples", "unknown key", 'did you mean "samples"?']),
    ("wrong type", '{"sizes": [4096], "samples": "ten"}', ["samples", "ten"]),
    ("zero size", '{"sizes": [0]}', ["sizes[0]", "0"]),
    ("negative size", '{"sizes": [-1]}', ["sizes[0]", "-1"]),
    ("non-integer size", '{"sizes": [2.5]}', ["sizes[0]", "2.5"]),
    ("zero samples", '{"sizes": [4096], "samples": 0}', ["samples", "0"]),
    ("empty sweep", '{"sizes": [4096], "methods": []}', ["methods", "[]"]),
    ("unknown method", '{"sizes": [4096], "methods": ["dma"]}', ["methods[0]", "dma"]),
    ("unknown direction", '{"sizes": [4096], "directions": ["up"]}', ["directions[0]", "up"]),
    ("unknown mode", '{"sizes": [4096], "modes": ["both"]}', ["modes[0]", "both"]),
    ("gate timeout too short", '{"sizes": [4096], "gate_timeout_s": 1e-9}', ["gate_timeout_s", ">= 1 and <= 3600"]),
    ("gate timeout too long", '{"sizes": [4096], "gate_timeout_s": 1e6}', ["gate_timeout_s", "<= 3600"]),
    ("sample time too long", '{"sizes": [4096], "min_sample_time_ms": 1e12}', ["min_sample_time_ms", "<= 60000"]),
    ("warm-up negative", '{"sizes": [4096], "warmup_time_ms": -1}', ["warmup_time_ms", ">= 0"]),
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
        (["-b", "0"], ["(from -b)", "0"]),
        (["--methods", "ce,dma"], ["--methods", "dma"]),
        (["--threads", "1025", "--methods", "ldst"], ["ldst.threads[0] (from --threads)", "1025"]),
        (["--min-sample-time", "-1"], ["--min-sample-time", "-1"]),
        (["--methods", "ldts"], ['methods[0] (from --methods) = "ldts": did you mean "ldst"?']),
        (["--sampels", "3"], ["--sampels: did you mean --samples?"]),
        (["--method=ce"], ["--method: did you mean --methods?"]),
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


def test_no_config_runs_the_built_in_default():
    """Flags alone define a sweep: without --config, configs/default.json as built in."""
    with_file = run("--config", DEFAULT, "--dry-run")
    without = run("--dry-run")
    assert without.returncode == 0, without.stderr
    assert without.stdout == with_file.stdout


def test_flags_alone_override_the_built_in_default():
    r = run("--dry-run", "--methods", "ce", "--sizes", "64k,1g", "--modes", "uni", "--directions", "push")
    assert r.returncode == 0, r.stderr
    lines = [l for l in r.stdout.splitlines() if "/push/uni/" in l]
    assert len(lines) == 4, r.stdout  # 2 sizes x 2 orientations
    assert all(l.split()[1].startswith("ce/") for l in lines)
    assert re.search(r"bytes:65536\b", r.stdout) and re.search(r"bytes:1073741824\b", r.stdout)


def test_config_wins_over_the_default(tmp_path):
    r = run("--config", write(tmp_path, '{"label": "mine", "sizes": [4096], "methods": ["ce"]}'), "--dry-run")
    assert r.returncode == 0, r.stderr
    assert "config 'mine'" in r.stdout
    assert "ldst" not in r.stdout


def test_version_prints_name_version_sha_and_the_build_provenance():
    r = run("--version")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert re.fullmatch(r"p2pbench \d+\.\d+\.\d+ \(git ([0-9a-f]{12}(, dirty)?|unknown)\)", lines[0]), r.stdout
    facts = dict(line.split(":", 1) for line in lines[1:])
    assert list(facts) == ["commit", "dirty", "sources", "build type", "CUDA archs", "compilers", "built"], r.stdout
    assert re.match(r"\s+([0-9a-f]{40} \(from (git|PROVENANCE.json)|unknown \(no git)", facts["commit"]), r.stdout
    assert re.match(r"\s+(no|yes \(|unknown \()", facts["dirty"]), r.stdout
    assert re.match(r"\s+sha256 [0-9a-f]{64} ", facts["sources"]), r.stdout
    assert re.match(r"\s+\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ \(UTC\)", facts["built"]), r.stdout


@pytest.mark.parametrize("text,bytes_", [("64k", 65536), ("1g", 1 << 30), ("4KiB", 4096), ("4kib", 4096),
                                         ("1M", 1 << 20), ("2GiB", 2 << 30), ("4095", 4095)])
def test_size_suffixes_in_any_case(text, bytes_):
    r = run("--dry-run", "--methods", "ce", "--modes", "uni", "--directions", "push", "--sizes", text)
    assert r.returncode == 0, r.stderr
    assert f"bytes:{bytes_}" in r.stdout, r.stdout


def test_ranges_include_their_end():
    r = run("--dry-run", "--methods", "ldst", "--modes", "uni", "--directions", "push", "--sizes", "1M",
            "--blocks", "1..132")
    assert r.returncode == 0, r.stderr
    blocks = sorted({int(m) for m in re.findall(r"blocks:(\d+)", r.stdout)})
    assert blocks == [1, 2, 4, 8, 16, 32, 64, 128, 132]
    r = run("--dry-run", "--methods", "ce", "--modes", "uni", "--directions", "push", "-b", "4K", "-e", "100K", "-f", "4")
    assert r.returncode == 0, r.stderr
    sizes = sorted({int(m) for m in re.findall(r"bytes:(\d+)", r.stdout)})
    assert sizes == [4096, 16384, 65536, 102400]


def test_sizes_printed_exactly():
    r = run("--dry-run", "--methods", "ce", "--modes", "uni", "--directions", "push", "--sizes", "4095,4096,4097,1536K")
    assert r.returncode == 0, r.stderr
    for text in ["4095 B", "4 KiB", "4097 B", "1536 KiB"]:
        assert re.search(rf"\s{text}\s*$", r.stdout, re.M), (text, r.stdout)
    assert "4.00 KiB" not in r.stdout


def test_dry_run_says_what_it_did_not_check():
    r = run("--dry-run", "--methods", "ldst,tma", "--blocks", "500", "--sizes", "1G")
    assert r.returncode == 0, r.stderr
    assert "NOT checked without a GPU" in r.stdout
    assert "device memory: needs 2304 MiB per GPU" in r.stdout  # 2 x 1 GiB + 256 MiB
    assert "blocks up to 500" in r.stdout
    assert "compute capability 9.0" in r.stdout


@pytest.mark.parametrize("make,why", [
    (lambda d: d / "missing-dir" / "r.json", "No such file"),
    (lambda d: str(d) + "/", "names a directory"),
    (lambda d: d, "is a directory"),
    (lambda d: (d / "sub").mkdir() or str(d / "sub") + "/r.json/", "names a directory"),
    (lambda d: (d / "t").write_text("keep") and (d / "l.json").symlink_to(d / "t") or d / "l.json", "symbolic link"),
    (lambda d: (d / "f").write_text("keep") and d / "f" / "r.json", "is not a directory"),
], ids=["missing-dir", "trailing-slash", "directory", "sub-trailing-slash", "symlink", "file-as-dir"])
@pytest.mark.parametrize("dry_run", [[], ["--dry-run"]], ids=["run", "dry-run"])
def test_unusable_output_refused_up_front(tmp_path, make, why, dry_run):
    """A dry run refuses the same paths as the run, so it can vet a job script."""
    out = str(make(tmp_path))
    before = sorted(p.name for p in tmp_path.iterdir())
    r = run("--config", DEFAULT, "--output", out, *dry_run)
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert r.stderr.startswith("p2pbench: error: --output = \"" + out + "\""), r.stderr
    assert why in r.stderr, r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # no probe or temporary left
    for name in ("t", "f"):
        if (tmp_path / name).exists():
            assert (tmp_path / name).read_text() == "keep"


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only directories (tests/unit covers it as nobody)")
def test_read_only_output_directory(tmp_path):
    d = tmp_path / "ro"
    d.mkdir()
    d.chmod(0o555)
    try:
        r = run("--config", DEFAULT, "--output", str(d / "r.json"))
    finally:
        d.chmod(0o755)
    assert r.returncode == 2
    assert "cannot create files" in r.stderr and "Permission denied" in r.stderr


LIMITS = [
    (["--sizes", "17179869185G"], ["sizes", "(from --sizes)", "17179869185G", "64 bits"]),
    (["--sizes", "18446744073709551615"], ["sizes", "(from --sizes)", "64 bits"]),
    (["-b", "1k", "-e", "99999999999999999999"], ["(from -b/-e)", "64 bits"]),
    (["--buffer-pool", "17179869185G"], ["buffer_pool_bytes (from --buffer-pool)", "64 bits"]),
    (["--timeout-scale", "0"], ["--timeout-scale", "finite number from 0.1"]),
    (["--timeout-scale", "-3"], ["--timeout-scale", "finite number from 0.1"]),
    (["--timeout-scale", "1e-9"], ["--timeout-scale = 1e-09", "from 0.1 to 1000000"]),
    (["--min-sample-time", "1e12"], ["min_sample_time_ms (from --min-sample-time) = 1000000000000.0", "<= 60000"]),
    (["--warmup-time", "1e9"], ["warmup_time_ms (from --warmup-time)", "<= 600000"]),
    (["--timeout-scale", "inf"], ["--timeout-scale"]),
    (["--timeout-scale", "nan"], ["--timeout-scale"]),
    (["--threads", "1025", "--methods", "ldst"], ["ldst.threads[0] (from --threads) = 1025", "multiple of 32"]),
    (["--threads", "100", "--methods", "ldst"], ["(from --threads)", "multiple of 32"]),
    (["--smem", "300K", "--methods", "tma"], ["tma.smem_bytes[0] (from --smem) = 307200", "227 KiB"]),
    (["--blocks", "0"], ["(from --blocks)", "0"]),
    (["--blocks", "70000"], ["ldst.blocks[0] (from --blocks) = 70000", "1..65535"]),
    (["--stages", "33", "--methods", "tma"], ["tma.stages[0] (from --stages) = 33"]),
    (["--unroll", "3"], ["ldst.unroll[0] (from --unroll) = 3"]),
    (["--methods", "ldst", "--sizes", "1..1T:2", "--blocks", "1..65535:2", "--threads", "32..1024:2",
      "--unroll", "1,2,4,8"], ["sweep", "more than the limit of 100000 cases"]),
    (["--samples", "2.5"], ["--samples", "2.5"]),
    (["-f", "1"], ["factor", "(from -f)"]),
]


@pytest.mark.parametrize("flags,needles", LIMITS, ids=[" ".join(f) for f, _ in LIMITS])
def test_limits_refused_naming_the_flag_even_in_a_dry_run(tmp_path, flags, needles):
    for extra in (["--dry-run"], ["--output", str(tmp_path / "r.json")]):
        r = run(*flags, *extra)
        assert r.returncode == 2, (flags, r.stdout, r.stderr)
        for needle in needles:
            assert needle in r.stderr, (needle, r.stderr)
        assert not (tmp_path / "r.json").exists()


def test_deeply_nested_config_refused(tmp_path):
    text = '{"label": ' + "[" * 100 + "]" * 100 + "}"
    r = run("--config", write(tmp_path, text), "--dry-run")
    assert r.returncode == 2
    assert "nested deeper than 64 levels" in r.stderr
    r = run("--config", write(tmp_path, "[" * 1000000), "--dry-run")
    assert r.returncode == 2, r.stderr[-300:]
    assert "nested deeper than 64 levels" in r.stderr


def test_single_process_run_refuses_clearly(tmp_path):
    """Started without mpirun: MPI runs as a singleton, and the driver asks for two ranks for the
    P2P methods of the default config (one rank runs only its own GPU's methods)."""
    out = tmp_path / "r.json"
    r = run("--config", DEFAULT, "--output", str(out), timeout=120)
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert "at least 2 ranks" in r.stderr
    assert not out.exists()


# --expect FILE: the file is checked before anything runs.
EXPECT_OK = {"format": "p2pbench-expectations", "version": 1, "system": "h200-nv18", "tolerance_pct": 5.0,
             "made_with": {"verify": True, "samples": 10, "min_sample_time_ms": 1.0},
             "sources": [{"path": "a.json", "commit": "unknown", "dirty": None, "verdicts": "ok"}],
             "expectations": [{"match": {"method": "ce", "direction": "push", "mode": "uni", "bytes": 1073741824},
                               "pair_class": "NV18", "metric": "bandwidth_gbps", "reference": 396.0, "floor": 376.2,
                               "runs": 3, "worst_run_pct": 1.5}]}


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


def expectation_variants():
    """Malformed files (each one change to a good one) with the key the refusal must name."""
    entry = EXPECT_OK["expectations"][0]
    return [
        ("system 42", {"system": 42}, "system"),
        ("verify as text", {"made_with": {"verify": "yes"}}, "made_with.verify"),
        ("samples 2.5", {"made_with": {"samples": 2.5}}, "made_with.samples"),
        ("negative sample time", {"made_with": {"min_sample_time_ms": -1}}, "made_with.min_sample_time_ms"),
        ("unknown made_with key", {"made_with": {"warmup": 3}}, "made_with.warmup"),
        ("tolerance as text", {"tolerance_pct": "5"}, "tolerance_pct"),
        ("made_from not a list", {"made_from": "default.json"}, "made_from"),
        ("unknown top-level key", {"systm": "x"}, "systm"),
        ("sources not a list", {"sources": "default.json"}, "sources"),
        ("a source without its path", {"sources": [{"commit": "abc"}]}, "sources"),
        ("allow_warnings as text", {"allow_warnings": "yes"}, "allow_warnings"),
        ("runs 0", {"expectations": [dict(entry, runs=0)]}, "expectations[0]"),
        ("negative worst_run_pct", {"expectations": [dict(entry, worst_run_pct=-1)]}, "expectations[0]"),
        ("reference as text", {"expectations": [dict(entry, reference="396")]}, "expectations[0]"),
        ("match value a list", {"expectations": [dict(entry, match={"method": ["ce"]})]}, "expectations[0]"),
        ("unknown entry key", {"expectations": [dict(entry, flor=1.0)]}, "expectations[0]"),
        ("latency without ceiling", {"expectations": [dict(entry, metric="latency_us")]}, "expectations[0]"),
    ]


def expectations_validator():
    """The report's draft 7 validator of schema/expectations.schema.json: jsonschema's where it is
    installed, else the built-in one (scripts/p2pbench_report/draft7_subset.py)."""
    sys.path.insert(0, str(REPO / "scripts"))
    from p2pbench_report.schema import schema_validator
    return schema_validator(json.loads((REPO / "schema" / "expectations.schema.json").read_text()))


@pytest.mark.parametrize("name,change,key", expectation_variants(), ids=[v[0] for v in expectation_variants()])
def test_expectations_checked_against_their_schema_before_the_run(tmp_path, name, change, key):
    """p2pbench refuses exactly what schema/expectations.schema.json refuses, naming the key, before any case."""
    doc = json.loads(json.dumps(EXPECT_OK))
    doc.update(change)
    assert list(expectations_validator().iter_errors(doc)), f"the schema accepts {name}"
    path = tmp_path / "expect.json"
    path.write_text(json.dumps(doc))
    for extra in (["--dry-run"], ["--output", str(tmp_path / "r.json")]):
        r = run("--config", DEFAULT, "--expect", str(path), *extra)
        assert r.returncode == 2, (name, r.stdout, r.stderr)
        assert r.stderr.startswith("p2pbench: error: --expect"), r.stderr
        assert key in r.stderr, (key, r.stderr)
        assert not (tmp_path / "r.json").exists()


def test_committed_expectations_meet_their_schema():
    for path in (REPO / "expectations").glob("*.json"):
        assert list(expectations_validator().iter_errors(json.loads(path.read_text()))) == [], path
        assert run("--config", DEFAULT, "--expect", str(path), "--dry-run").returncode == 0, path


# Groups: the plan for any number of ranks, without MPI or a GPU.
MATRIX = str(REPO / "configs" / "matrix.json")
PATTERNS = str(REPO / "configs" / "patterns.json")


def case_lines(stdout):
    return [l for l in stdout.splitlines() if re.match(r"^\s+\d+  \S", l)]


def test_dry_run_plans_eight_ranks_in_rounds():
    r = run("--dry-run", "--ranks", "8", "--config", MATRIX)
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert "group: 8 ranks on 8 GPUs, 1 node (--ranks 8" in out
    for method in ("ce", "ldst", "tma"):
        for direction in ("push", "pull"):
            assert f"  {method} {direction} uni: 18 cases: matrix:rounds 14, matrix:alone_check 4\n" in out, out[:2000]
    assert "  uni matrix:rounds round 0 (4 flows): 0->7 1->6 2->5 3->4\n" in out
    assert len(re.findall(r"^  uni matrix:alone_check \(1 flow\): \d->\d$", out, re.M)) == 4
    assert "memory: F x (1 + D) x ranks on a GPU + 256 MiB = 1 GiB x (1 + 1) x 1 + 256 MiB = 2304 MiB" in out
    seconds = float(re.search(r"^estimated: about ([\d.]+) s: set-up", out, re.M).group(1))
    assert 0 < seconds <= 60, seconds  # the eight-GPU estimate
    lines = case_lines(out)
    assert len(lines) == 108
    assert "ce/push/uni/matrix:rounds/round:0/0->7,1->6,2->5,3->4/bytes:1073741824" in lines[0]
    four = run("--dry-run", "--ranks", "4", "--config", MATRIX)
    assert four.returncode == 0, four.stderr
    assert len(case_lines(four.stdout)) == 3 * 2 * (6 + 4)


def test_dry_run_lists_every_pattern_and_its_flows():
    r = run("--dry-run", "--ranks", "8", "--config", PATTERNS)
    assert r.returncode == 0, r.stderr
    out = r.stdout
    for label in ("matrix:rounds", "matrix:alone_check", "sampled", "one_to_all", "all_to_one", "all_to_all", "ring",
                  "bisection", "flows"):
        assert re.search(rf"^  ce push uni: \d+ cases: .*\b{label} \d+", out, re.M), label
    assert "  uni one_to_all (7 flows): 0->1 0->2 0->3 0->4 0->5 0->6 0->7\n" in out
    assert "  uni ring (8 flows): 0->1 1->2 2->3 3->4 4->5 5->6 6->7 7->0\n" in out
    assert "  uni bisection (4 flows): 0->4 1->5 2->6 3->7\n" in out
    assert "  bidir bisection (8 flows): 0->4 4->0 1->5 5->1 2->6 6->2 3->7 7->3\n" in out
    assert "x (1 + 7) x 1 + 256 MiB" in out  # all_to_one, all_to_all: 7 flows into one rank
    assert "ce/push/uni/all_to_all/" in out and "ce/push/bidir/all_to_all/" not in out


def test_dry_run_node_override_skips_ipc_across_nodes():
    r = run("--dry-run", "--ranks", "8", "--ranks-per-node", "4", "--config", MATRIX, "--methods", "ce,nccl",
            "--directions", "push")
    assert r.returncode == 0, r.stderr
    assert "8 ranks on 8 GPUs, 2 nodes" in r.stdout
    skipped = [l for l in case_lines(r.stdout) if "skipped:" in l]
    assert skipped and all(l.split()[1].startswith("ce/") for l in skipped)
    assert all("are on different nodes (hosts, or PID namespaces of one host, which CUDA IPC cannot cross): no CUDA IPC path (nccl, nccl_reduce_scatter, nccl_all_gather, nccl_all_reduce, nccl_all_to_all runs it)" in l for l in skipped)
    assert "  ce push uni: 18 cases (8 skipped)" in r.stdout


def test_pattern_flags_override_the_config():
    r = run("--dry-run", "--ranks", "4", "--config", MATRIX, "--patterns", "ring,bisection", "--schedule", "sequential",
            "--methods", "ce", "--directions", "push")
    assert r.returncode == 0, r.stderr
    assert "  ce push uni: 3 cases: ring 1, bisection 2\n" in r.stdout
    r = run("--dry-run", "--ranks", "4", "--config", MATRIX, "--schedule", "sequential", "--methods", "ce",
            "--directions", "push")
    assert "  ce push uni: 12 cases: matrix 12\n" in r.stdout


@pytest.mark.parametrize("flags,needles", [
    (["--ranks", "4"], ["--ranks = 4", "only with --dry-run"]),
    (["--dry-run", "--ranks", "1"], ["methods", "at least 2 ranks", "configs/one-gpu.json"]),
    (["--dry-run", "--ranks-per-node", "0"], ["--ranks-per-node"]),
    (["--dry-run", "--patterns", "matrix,star"], ["patterns[1] (from --patterns)", "star"]),
    (["--dry-run", "--schedule", "parallel"], ["matrix.schedule (from --schedule)", "parallel"]),
    (["--dry-run", "--ranks", "4", "--patterns", "ring", "--config", MATRIX], []),
])
def test_group_flags_refused_naming_the_flag(tmp_path, flags, needles):
    r = run(*flags, "--output", str(tmp_path / "r.json"))
    if not needles:
        assert r.returncode == 0, r.stderr
        return
    assert r.returncode == 2, (r.stdout, r.stderr)
    for needle in needles:
        assert needle in r.stderr, (needle, r.stderr)
    assert not (tmp_path / "r.json").exists()


def test_ranks_the_group_lacks_are_refused_when_the_plan_is_made(tmp_path):
    config = write(tmp_path, '{"sizes": [4096], "patterns": ["flows"], "flows": [[[0, 1]], [[2, 3], [0, 5]]]}')
    r = run("--config", config, "--dry-run", "--ranks", "4")
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert "flows[1][1] = [0, 5]: rank 5 does not exist: the group has 4 ranks (0..3)" in r.stderr
    assert run("--config", config, "--dry-run", "--ranks", "6").returncode == 0


def test_dry_run_with_ranks_sharing_gpus():
    """--devices in a dry run places rank r on entry r mod their number: 4 ranks on 2 GPUs."""
    r = run("--dry-run", "--ranks", "4", "--devices", "0,1", "--config", MATRIX)
    assert r.returncode == 0, r.stderr
    assert "group: 4 ranks on 2 GPUs, 1 node" in r.stdout
    # Each GPU is in 5 of the 6 pairs (ranks 0 and 2 share GPU 0): 5 pair rounds, 10 one way.
    assert "  ce push uni: 14 cases: matrix:rounds 10, matrix:alone_check 4\n" in r.stdout
    assert "  uni matrix:rounds round 2 (2 flows): 0->2 1->3\n" in r.stdout  # the two same-GPU pairs at once
    assert "1 GiB x (1 + 1) x 2 + 256 MiB = 4352 MiB" in r.stdout
    for line in re.findall(r"^  uni matrix:alone_check \(1 flow\): (\d)->(\d)$", r.stdout, re.M):
        assert int(line[0]) % 2 != int(line[1]) % 2, "alone checks are pairs on two GPUs"


@pytest.mark.parametrize("fault,needles", [
    ("rank=7,case=0,fault=exit", ["P2PBENCH_FAULT", "rank 7 does not exist: the run has 2 ranks"]),
    ("rank=1,case=100000,fault=exit", ["P2PBENCH_FAULT", "case 100000 does not exist"]),
    ("rank=1,case=0,fault=melt", ["P2PBENCH_FAULT", "fault must be stop, exit, throw, cuda or hang"]),
    ("rank=99999999999,case=0,fault=exit", ["P2PBENCH_FAULT", "is not a number"]),
    ("rank=1", ["P2PBENCH_FAULT", "needs rank=R,case=K,fault=F"]),
    ("rank=1,case=end,fault=cuda", ["P2PBENCH_FAULT", "case=end takes stop, exit, throw or hang"]),
    ("rank=1,case=0,fault=hang,step=2", ["P2PBENCH_FAULT", "step=S takes a host fault"]),
    ("rank=1,case=0,fault=stop,step=0", ["P2PBENCH_FAULT", "step must be 1..1000000"]),
])
def test_a_fault_that_could_never_fire_is_refused_before_mpi(tmp_path, fault, needles):
    for extra in (["--dry-run"], ["--output", str(tmp_path / "r.json")]):
        r = run("--config", DEFAULT, *extra, env={"P2PBENCH_FAULT": fault})
        assert r.returncode == 2, (r.stdout, r.stderr)
        assert r.stderr.startswith("p2pbench: error: P2PBENCH_FAULT"), r.stderr
        for needle in needles:
            assert needle in r.stderr, (needle, r.stderr)
        assert "MPI" not in r.stderr and not (tmp_path / "r.json").exists()


def test_too_few_hardware_queues_are_named(tmp_path):
    """A training image's CUDA_DEVICE_MAX_CONNECTIONS=1 is kept, and the console says what it risks."""
    r = run("--config", DEFAULT, "--output", str(tmp_path / "r.json"), timeout=120,
            env={"CUDA_DEVICE_MAX_CONNECTIONS": "1"})
    assert "p2pbench: warning: CUDA_DEVICE_MAX_CONNECTIONS=1 is set" in r.stderr, r.stderr
    assert "set 32" in r.stderr
    quiet = run("--config", DEFAULT, "--output", str(tmp_path / "r.json"), timeout=120,
                env={"CUDA_DEVICE_MAX_CONNECTIONS": "32"})
    assert "CUDA_DEVICE_MAX_CONNECTIONS" not in quiet.stderr, quiet.stderr


# The output path: never clobbered, never shared. The dry run refuses what the run refuses.
RUN_OR_DRY = [[], ["--dry-run"]]


def complete_results(path):
    doc = json.loads((REPO / "results" / "h200-nv18" / "default.json").read_text())
    assert doc.get("incomplete") is False
    path.write_text(json.dumps(doc))
    return len(doc["results"]), doc["meta"]["timestamp_utc"]


@pytest.mark.parametrize("dry_run", RUN_OR_DRY, ids=["run", "dry-run"])
def test_complete_results_are_not_replaced_without_force(tmp_path, dry_run):
    out = tmp_path / "r.json"
    cases, made = complete_results(out)
    before = out.read_text()
    r = run("--config", DEFAULT, "--output", str(out), *dry_run, timeout=120)
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert f"holds the complete results of an earlier run ({cases} cases, made {made})" in r.stderr, r.stderr
    assert "--force" in r.stderr
    assert out.read_text() == before
    forced = run("--config", DEFAULT, "--output", str(out), "--force", *dry_run, timeout=120)
    assert "complete results" not in forced.stderr, forced.stderr
    if dry_run:
        assert forced.returncode == 0, forced.stderr


@pytest.mark.parametrize("content,allowed", [
    ("", True),
    ('{"schema_version": 2, "incomplete": true, "meta": {}, "results": []}', True),
    ("previous results", False),
], ids=["empty", "checkpoint", "other-file"])
def test_only_a_checkpoint_or_an_empty_file_is_replaced(tmp_path, content, allowed):
    out = tmp_path / "r.json"
    out.write_text(content)
    r = run("--config", DEFAULT, "--output", str(out), "--dry-run")
    assert (r.returncode == 0) == allowed, r.stderr
    if not allowed:
        assert "is not a p2pbench results file" in r.stderr and "--force" in r.stderr


def test_a_path_in_use_is_refused_naming_the_holder(tmp_path):
    """Another job holds the lock beside the file: both a dry run and a run say who."""
    import fcntl
    out = tmp_path / "r.json"
    with open(str(out) + ".lock", "w") as lock:
        lock.write("pid 4242 on host node-a since 2026-11-25T01:00:00Z")
        lock.flush()
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        for extra in RUN_OR_DRY:
            r = run("--config", DEFAULT, "--output", str(out), *extra, timeout=120)
            assert r.returncode == 2, (r.stdout, r.stderr)
            assert "in use by another p2pbench run (pid 4242 on host node-a since 2026-11-25T01:00:00Z)" in r.stderr
    r = run("--config", DEFAULT, "--output", str(out), "--dry-run")
    assert r.returncode == 0, "a lock file nobody holds is stale: " + r.stderr


def test_methods_file_is_the_registry():
    """schema/methods.json (read by the schema's enums and the Python report) is exactly what the
    registry prints: a method added in C++ cannot be missing from the report."""
    r = run("--list-methods", "--json")
    assert r.returncode == 0, r.stderr
    assert r.stdout == (REPO / "schema" / "methods.json").read_text(), \
        "regenerate: p2pbench --list-methods --json > schema/methods.json"
    text = run("--list-methods")
    assert text.returncode == 0 and "latency_signal" in text.stdout and "blocks,smem_bytes,stages" in text.stdout
    rows = [line for line in text.stdout.splitlines()[1:] if line.strip()]
    assert len({line.index(" axes: ") for line in rows}) == 1, "columns line up however long a method's name"
    assert run("--json").returncode == 2  # only with --list-methods


def test_methods_help_lists_the_registry():
    r = run("--help")
    doc = json.loads((REPO / "schema" / "methods.json").read_text())
    for m in doc["methods"]:
        if m["kind"] != "interference":
            assert m["name"] in r.stdout, m["name"]
