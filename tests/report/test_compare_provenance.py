"""compare shows the source tree each file was built from (meta.provenance) and warns when the
files' trees differ or one is not known; files written before meta.provenance show their git_sha
and say the tree is unknown."""

from __future__ import annotations

import copy
import hashlib

import pytest

COMMIT_A = "4bd42987e1ed1e8bd1154ef2b3f609956d11435b"
COMMIT_B = "182cb17aa0e0b4e5a2d7a53c8f6e1d1b2a3c4d5e"
TREE_WARNING = "WARNING: the files may not come from one source tree"


def digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def provenance(commit=COMMIT_A, dirty=False, diff=None, sources="sources-1", **more) -> dict:
    record = {"commit": commit, "dirty": dirty, "diff_sha256": digest(diff) if diff else None,
              "source_sha256": digest(sources), "origin": "git" if commit != "unknown" else "unknown",
              "build_type": "Release", "cuda_architectures": "90", "cxx_compiler": "GNU 12.2.0",
              "cuda_compiler": "NVIDIA 12.8.93", "built_utc": "2026-11-28T10:00:00Z"}
    record.update(more)
    return record


def cells(line: str) -> list[str] | None:
    if not line.startswith("| ") or set(line) <= set("|-: "):
        return None
    return [c.strip() for c in line.strip().strip("|").split("|")]


@pytest.fixture
def compare_with(cli, write_json, synthetic_document):
    """compare of the baseline run as two files, each with the given meta.provenance (None: as
    written before it existed); returns (stdout, table rows by field)."""
    def run(first: dict | None, second: dict | None, *flags: str) -> tuple[str, dict]:
        paths = []
        for index, record in enumerate((first, second)):
            document = copy.deepcopy(synthetic_document)
            document["meta"].pop("provenance", None)
            document["meta"]["label"] = f"run-{index + 1}"
            if record is not None:
                document["meta"]["provenance"] = record
                document["meta"]["tool"]["git_sha"] = record["commit"][:12]
            paths.append(write_json(f"run-{index + 1}.json", document))
        code, out, err = cli("compare", *paths, *flags)
        assert code == 0, err
        return out, {c[0]: c for c in map(cells, out.splitlines()) if c}
    return run


def test_one_clean_commit_shows_it_and_does_not_warn(compare_with):
    out, rows = compare_with(provenance(), provenance())
    assert rows["commit"][1:] == ["4bd42987e1ed (from git)", "4bd42987e1ed (from git)", ""]
    assert rows["tree"][1:] == ["clean", "clean", ""]
    assert rows["sources (sha256)"][1] == digest("sources-1")[:12]
    assert rows["build"][1] == "Release, CUDA 90, GNU 12.2.0 / NVIDIA 12.8.93, 2026-11-28T10:00:00Z"
    assert TREE_WARNING not in out


def test_different_commits_warn_naming_each_file(compare_with):
    out, rows = compare_with(provenance(), provenance(commit=COMMIT_B, sources="sources-2"))
    assert rows["commit"][-1] == "≠"
    warning = next(line for line in out.splitlines() if TREE_WARNING in line)
    assert "different commits: run-1 4bd42987e1ed, run-2 182cb17aa0e0" in warning
    assert "may come from different source trees" in out  # the summary's caveat


def test_one_commit_with_other_changes_warns(compare_with):
    out, rows = compare_with(provenance(dirty=True, diff="change-1", sources="s1"),
                             provenance(dirty=True, diff="change-2", sources="s2"))
    assert rows["tree"][1:] == [f"dirty, changes {digest('change-1')[:12]}", f"dirty, changes {digest('change-2')[:12]}", "≠"]
    warning = next(line for line in out.splitlines() if TREE_WARNING in line)
    assert "commit 4bd42987e1ed with different changes: run-1 dirty" in warning


def test_the_same_changes_to_one_commit_are_one_tree(compare_with):
    out, _ = compare_with(provenance(dirty=True, diff="change-1", sources="s1"),
                          provenance(dirty=True, diff="change-1", sources="s1"))
    assert TREE_WARNING not in out


def test_files_written_before_provenance_show_git_sha_and_say_unknown(compare_with):
    out, rows = compare_with(None, None)
    assert rows["commit"][1].endswith("(git_sha only)")
    assert rows["tree"][1] == "unknown (written before provenance was recorded)"
    assert rows["sources (sha256)"][1] == "not recorded"
    warning = next(line for line in out.splitlines() if TREE_WARNING in line)
    assert "tree not known for run-1 (written before provenance was recorded" in warning


def test_builds_without_git_are_one_tree_only_when_their_sources_hash_alike(compare_with):
    unknown = dict(commit="unknown", dirty=None)
    out, rows = compare_with(provenance(**unknown), provenance(**unknown))
    assert rows["commit"][1] == "unknown (unknown)" and rows["tree"][1] == "unknown"
    assert TREE_WARNING not in out
    out, _ = compare_with(provenance(**unknown), provenance(**unknown, sources="other"))
    assert "tree not known for run-1 (no commit: built without git or PROVENANCE.json)" in out


def test_a_stale_stamp_is_a_tree_not_known(compare_with):
    stale = provenance(dirty=True, origin="PROVENANCE.json", stale_stamp=True, stamped_utc="2026-11-27T09:00:00Z",
                       sources="edited")
    out, rows = compare_with(provenance(), stale)
    assert rows["commit"][2] == "4bd42987e1ed (from PROVENANCE.json)"
    assert rows["tree"][2] == "dirty, changes not recorded"
    assert "run-2 (4bd42987e1ed with changes made after PROVENANCE.json was written)" in out


def test_the_html_page_warns_too(compare_with, tmp_path, monkeypatch):
    from p2pbench_report import compare_view
    from p2pbench_report.plots import figures
    monkeypatch.setattr(figures, "build_figures", lambda result_sets: [])  # the page's text, not its figures
    monkeypatch.setattr(compare_view, "ratio_figures", lambda comparison, threshold: [])
    page = tmp_path / "compare.html"
    compare_with(provenance(), provenance(commit=COMMIT_B, sources="sources-2"), "--html", str(page))
    text = page.read_text(encoding="utf-8")
    assert TREE_WARNING in text and "different commits: run-1 4bd42987e1ed" in text
    assert "may come from different source trees" in text


def test_an_imported_file_is_not_a_tree_to_compare(cli, write_json, synthetic_document):
    imported = copy.deepcopy(synthetic_document)
    imported["meta"]["config"]["imported_from"] = "nvbandwidth"
    imported["meta"]["label"] = "nvbandwidth"
    code, out, err = cli("compare", write_json("a.json", synthetic_document), write_json("b.json", imported))
    assert code == 0, err
    rows = {c[0]: c for c in map(cells, out.splitlines()) if c}
    assert rows["commit"][2] == "imported from nvbandwidth (not a p2pbench build)"
    assert TREE_WARNING not in out
