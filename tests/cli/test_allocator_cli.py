"""--allocator and the config key "allocator" at the front door (docs/allocators.md): the value is
checked before MPI or a GPU is touched, and a bad one exits 2 naming the flag or key and the value."""
import json
import os
import pathlib
import subprocess

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
BIN = os.environ.get("P2PBENCH_BIN", str(REPO / "build" / "src" / "p2pbench"))
DEFAULT = str(REPO / "configs" / "default.json")


def run(*args):
    return subprocess.run([BIN, *args], capture_output=True, text=True, timeout=60, cwd=REPO)


def test_help_names_the_flag_and_the_key():
    out = " ".join(run("--help").stdout.split())
    assert "--allocator" in out and "pidfd_getfd" in out and "IMEX" in out
    assert "allocator how the transfer buffers are allocated" in out  # the config keys' list


@pytest.mark.parametrize("name", ["legacy", "vmm", "fabric"])
def test_every_allocator_passes_the_dry_run(name, tmp_path):
    r = run("--config", DEFAULT, "--dry-run", "--allocator", name, "--output", str(tmp_path / "r.json"))
    assert r.returncode == 0, r.stderr
    config = tmp_path / "c.json"
    config.write_text(json.dumps({"sizes": [4096], "allocator": name}))
    assert run("--config", str(config), "--dry-run").returncode == 0


@pytest.mark.parametrize("value", ["ipc", "VMM", "cudaMalloc"])
def test_a_bad_flag_value_exits_2_naming_the_flag_and_the_value(value, tmp_path):
    out = tmp_path / "r.json"
    r = run("--config", DEFAULT, "--allocator", value, "--output", str(out))
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert r.stderr.startswith("p2pbench: error:"), r.stderr
    assert f'allocator (from --allocator) = "{value}"' in r.stderr, r.stderr
    assert '"legacy", "vmm", "fabric"' in r.stderr
    assert not out.exists()


@pytest.mark.parametrize("value", ['"imex"', "1", "null", '["vmm"]'])
def test_a_bad_config_value_exits_2_naming_the_key_and_the_value(value, tmp_path):
    config = tmp_path / "config.json"
    config.write_text('{"sizes": [4096], "allocator": %s}' % value)
    r = run("--config", str(config), "--output", str(tmp_path / "r.json"))
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert f"allocator = {json.dumps(json.loads(value))}" in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1, "one clear message"


def test_the_flag_overrides_the_config(tmp_path):
    config = tmp_path / "config.json"
    config.write_text('{"sizes": [4096], "allocator": "nonsense"}')
    assert run("--config", str(config), "--allocator", "vmm", "--dry-run").returncode == 0
