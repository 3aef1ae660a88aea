"""validate.py and trace.py on scratch trees made here (CTest: committed_results_checks): each way
a committed file can fail is caught, and a tree whose commits cannot be looked up (no .git, a
shallow clone) is skipped with the reason (exit 77), never passed."""
from __future__ import annotations

import copy
import gzip
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
VALIDATE = HERE / "validate.py"
TRACE = HERE / "trace.py"
SAMPLE = REPO / "results/h200-nv18/ce-bidir/ce-bidir.json"  # version 1, six ce rows, 12-digit git_sha
GIT_ENV = dict(os.environ, GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull, GIT_AUTHOR_NAME="t",
               GIT_AUTHOR_EMAIL="t@example.invalid", GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@example.invalid")

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


def run(script: Path, root: Path, *args: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(script), "--root", str(root), *args], capture_output=True, text=True,
                          env=dict(GIT_ENV, **env))


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, text=True,
                          env=GIT_ENV).stdout.strip()


def sample(method: str = "ce", **meta) -> dict:
    document = copy.deepcopy(json.loads(SAMPLE.read_text(encoding="utf-8")))
    for row in document["results"]:
        row["method"] = method
    document["meta"].update(meta)
    return document


def write(root: Path, name: str, document) -> None:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    data = document if isinstance(document, bytes) else json.dumps(document, indent=2).encode()
    path.write_bytes(gzip.compress(data, mtime=0) if name.endswith(".gz") and not isinstance(document, bytes) else data)


def commit_all(root: Path, message: str) -> str:
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", message)
    return git(root, "rev-parse", "HEAD")


@pytest.fixture
def repo(tmp_path) -> dict:
    """A repository of three commits: before (no method registered), with `"ce"` registered, and
    one that adds a results file; `commits` names them."""
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / "src").mkdir()
    (root / "src/registry.cpp").write_text("// no method yet\n")
    before = commit_all(root, "before")
    (root / "src/registry.cpp").write_text('REGISTER("ce", copy_engine);\n')
    with_ce = commit_all(root, "ce")
    return {"root": root, "before": before, "ce": with_ce}


def tool(sha: str) -> dict:
    return {"tool": {"name": "p2pbench", "version": "0.1.0", "git_sha": sha}}


def test_a_file_naming_the_commit_of_its_methods_is_traced(repo):
    root = repo["root"]
    write(root, "results/a/run.json", sample(**tool(repo["ce"][:12])))
    write(root, "results/a/run2.json.gz", sample(**tool(repo["ce"][:12])))
    commit_all(root, "results")
    done = run(TRACE, root)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 results files: 2 traced to 1 commits" in done.stdout


@pytest.mark.parametrize("claim,expected", [
    ("before", 'has no method ce (no "ce" in its src/)'),
    ("0123456789ab", "0123456789ab: no such commit in this repository"),
    ("unknown", 'no commit (meta.tool.git_sha \'unknown\'): mark it meta.provenance "unknown"'),
    ("not-a-sha", "'not-a-sha' is not a commit hash"),
])
def test_a_file_whose_commit_is_missing_or_lacks_its_methods_fails(repo, claim, expected):
    root = repo["root"]
    write(root, "results/run.json.gz", sample(**tool(repo.get(claim, claim)[:12])))
    commit_all(root, "results")
    done = run(TRACE, root)
    assert done.returncode == 1
    assert f"FAIL results/run.json.gz: " in done.stdout and expected in done.stdout, done.stdout


def test_the_build_time_record_wins_over_tool_git_sha(repo):
    root = repo["root"]
    built = {"commit": repo["ce"], "dirty": True, "diff_sha256": "a" * 64, "source_sha256": "b" * 64, "origin": "git"}
    write(root, "results/run.json", sample(**tool(repo["before"][:12]), provenance=built))
    commit_all(root, "results")
    done = run(TRACE, root)
    assert done.returncode == 0, done.stdout
    assert "1 traced to 1 commits (1 of them built from a changed tree)" in done.stdout


def test_a_commit_outside_the_history_of_head_fails(repo):
    root = repo["root"]
    git(root, "checkout", "-q", "-b", "side")
    (root / "src/other.cpp").write_text('"ce"\n')
    side = commit_all(root, "side")
    git(root, "checkout", "-q", "main")
    write(root, "results/run.json", sample(**tool(side[:12])))
    commit_all(root, "results")
    done = run(TRACE, root)
    assert done.returncode == 1 and "not in the history of HEAD" in done.stdout, done.stdout


def test_files_marked_unknown_or_built_without_git_or_imported_are_accepted_and_listed(repo):
    root = repo["root"]
    write(root, "results/marked.json", sample(**tool(repo["before"][:12]), provenance="unknown"))
    no_git = {"commit": "unknown", "dirty": None, "diff_sha256": None, "source_sha256": "b" * 64, "origin": "unknown"}
    write(root, "results/nogit.json", sample(**tool("unknown"), provenance=no_git))
    imported = sample(**tool("unknown"))
    imported["meta"]["config"] = {"imported_from": "nvbandwidth", "source_file": "nvbandwidth.json"}
    write(root, "results/tools/nvbandwidth.p2pbench.json", imported)
    write(root, "results/tools/nvbandwidth.json", {"nvbandwidth": {}})
    commit_all(root, "results")
    done = run(TRACE, root)
    assert done.returncode == 0, done.stdout
    assert 'not traced results/marked.json: marked meta.provenance "unknown"' in done.stdout
    assert "not traced results/nogit.json: built without git or PROVENANCE.json" in done.stdout
    assert "imported from nvbandwidth (results/tools/nvbandwidth.json)" in done.stdout
    (root / "results/tools/nvbandwidth.json").unlink()
    done = run(TRACE, root)
    assert done.returncode == 1 and "its source_file 'nvbandwidth.json' is not beside it" in done.stdout


def test_a_commit_from_commands_md_needs_its_quote_there(repo):
    root = repo["root"]
    (root / "results/run").mkdir(parents=True)
    (root / "results/run/COMMANDS.md").write_text(f"Built from the tree\nof {repo['ce'][:7]} on the node.\n")
    record = {"commit": repo["ce"], "origin": "COMMANDS.md", "recorded_in": "results/run/COMMANDS.md",
              "quote": f"the tree of {repo['ce'][:7]}"}
    write(root, "results/run/run.json", sample(**tool(repo["before"][:12]), provenance=record))
    commit_all(root, "results")
    done = run(TRACE, root)
    assert done.returncode == 0, done.stdout  # the quote across a line break, and the recorded git_sha ignored
    write(root, "results/run/run.json", sample(**tool(repo["ce"][:12]), provenance=dict(record, quote="the tree of abc")))
    done = run(TRACE, root)
    assert done.returncode == 1 and "meta.provenance.quote 'the tree of abc' is not in results/run/COMMANDS.md" \
        in done.stdout, done.stdout


def test_no_results_files_fails(repo):
    done = run(TRACE, repo["root"])
    assert done.returncode == 1 and "FAIL: no results files found" in done.stdout


def test_a_copy_without_git_is_skipped_with_the_reason(repo, tmp_path):
    root = repo["root"]
    write(root, "results/run.json", sample(**tool(repo["ce"][:12])))
    copy_ = tmp_path / "copy"
    shutil.copytree(root, copy_, ignore=shutil.ignore_patterns(".git"))
    log = tmp_path / "skipped.txt"
    done = run(TRACE, copy_, P2PBENCH_SKIP_LOG=str(log), GIT_CEILING_DIRECTORIES=str(tmp_path))
    assert done.returncode == 77, done.stdout
    assert done.stdout.startswith("SKIPPED: the commits of the committed results files cannot be looked up: ")
    assert "is not a git checkout (a copy without .git?)" in done.stdout
    assert log.read_text().startswith("committed_results_traceable: ")


def test_a_shallow_clone_is_skipped_with_the_reason(repo, tmp_path):
    root = repo["root"]
    write(root, "results/run.json", sample(**tool(repo["ce"][:12])))
    commit_all(root, "results")
    shallow = tmp_path / "shallow"
    subprocess.run(["git", "clone", "-q", "--depth", "1", f"file://{root}", str(shallow)], check=True, env=GIT_ENV)
    done = run(TRACE, shallow)
    assert done.returncode == 77 and "is a shallow clone" in done.stdout, done.stdout


def test_validate_counts_json_and_gz_and_fails_an_invalid_or_unreadable_file(tmp_path):
    root = tmp_path
    write(root, "results/a/run.json", sample())
    write(root, "results/a/b/run.json.gz", sample())
    write(root, "results/a/config.json", {"label": "x", "methods": ["ce"]})  # a config: not a results file
    done = run(VALIDATE, root, "--at-least-json", "1", "--at-least-gz", "1")
    assert done.returncode == 0, done.stdout
    assert "2 results files" in done.stdout and "(1 .json, 1 .json.gz): 2 valid, 0 invalid" in done.stdout
    broken = sample()
    broken["results"][2]["bandwidth_gbps"]["median"] = "390.1"
    write(root, "results/a/b/run.json.gz", broken)
    write(root, "results/c/cut.json.gz", gzip.compress(b'{"schema_version": 1}')[:-6])  # a truncated stream
    done = run(VALIDATE, root, "--at-least-json", "1", "--at-least-gz", "1")
    assert done.returncode == 1
    assert "INVALID results/a/b/run.json.gz: $.results[2].bandwidth_gbps.median: " in done.stdout, done.stdout
    assert "INVALID results/c/cut.json.gz: cannot be read as gzip-compressed JSON" in done.stdout, done.stdout


def test_validate_fails_when_it_finds_too_few_files(tmp_path):
    write(tmp_path, "results/run.json", sample())
    done = run(VALIDATE, tmp_path)
    assert done.returncode == 1
    assert "TOO FEW: 1 .json results files, expected at least 50" in done.stdout
    assert "TOO FEW: 0 .json.gz results files, expected at least 40" in done.stdout
