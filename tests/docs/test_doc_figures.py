"""Every figure README.md and docs/*.md take from a committed results file is in that file: the
committed pages pass `docs-figures`, and the checker fails a page for each way a figure can go
wrong (tested on pages and a results tree made here from two committed files)."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "scripts"))

from docs_figures.check import check_page  # noqa: E402
from docs_figures.cli import main, pages_of  # noqa: E402
from docs_figures.sources import Repository  # noqa: E402

COMPLETE = "results/h200-nv18/ce-bidir/ce-bidir.json"  # ce push/pull uni 0→1 and 1→0, bidir; 512 MiB
INCOMPLETE = "results/h200-nv18/faults/inject-exit-rank1.json"  # 5 of 144 cases


@pytest.mark.parametrize("page", pages_of(REPO), ids=lambda p: str(p.relative_to(REPO)))
def test_committed_page_figures_are_in_their_files(page):
    report = check_page(Repository(REPO), str(page.relative_to(REPO)), page.read_text(encoding="utf-8"))
    assert report.problems == [], "\n" + "\n".join(report.problems)


def test_the_readme_figures_are_marked():
    report = check_page(Repository(REPO), "README.md", (REPO / "README.md").read_text(encoding="utf-8"))
    assert report.figures >= 50, "the README's figures lost their markers"


@pytest.fixture(scope="module")
def repo(tmp_path_factory) -> Repository:
    root = tmp_path_factory.mktemp("repo")
    for name in (COMPLETE, INCOMPLETE):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(REPO / name, root / name)
    (root / "results/notes.txt").write_text("## run 1\nceiling: 395 GB/s one way\n## run 2\nceiling: 391 GB/s one way\n",
                                            encoding="utf-8")
    return Repository(root)


def problems(repo: Repository, text: str) -> list[str]:
    return check_page(repo, "page.md", text).problems


CITE = f"(`{COMPLETE}`)"
FIG = f"file={COMPLETE} method=ce mode=uni bytes=512M"


@pytest.mark.parametrize("text", [
    f"CE push 394<!--fig {FIG} direction=push--> GB/s {CITE}.",
    f"CE push 394.0<!--fig {FIG} direction=push--> GB/s {CITE}.",  # 394.03 and 394.01
    f"CE pull 394.5–395.0<!--fig {FIG} direction=pull--> GB/s {CITE}.",  # a range: min–max
    f"Both ways 772<!--fig file={COMPLETE} direction=push mode=bidir--> GB/s {CITE}.",
    f"Slowest 393.3<!--fig {FIG} direction=push stat=min agg=min--> GB/s {CITE}.",
    f"Ratio 2.0<!--calc bidir/uni-->{CITE}<!--fig id=bidir file={COMPLETE} direction=push mode=bidir--><!--fig id=uni {FIG} direction=push src_rank=0-->.",
    f"Per direction 394.0–395.0<!--fig {FIG} agg=max per=direction--> GB/s {CITE}.",
    f"On 512 MiB, 16 SMs, 2 ranks and 4 ranks {CITE}.",  # parameters only
    "Ceiling 391–395<!--fig file=results/notes.txt match=\"ceiling: ([0-9]+) GB/s\"--> GB/s (`results/notes.txt`).",
    "The first: 395<!--fig file=results/notes.txt before=\"^## run 2\" match=\"ceiling: ([0-9]+)\"--> GB/s (`results/notes.txt`).",
    "The second: 391<!--fig file=results/notes.txt after=\"^## run 2\" match=\"ceiling: ([0-9]+)\"--> GB/s (`results/notes.txt`).",
    f"Peak 478<!--fig file={COMPLETE} json=meta.topology.peak_gbps_per_direction--> GB/s {CITE}.",
    f"Every GPU 1980<!--fig file={COMPLETE} json=meta.gpus.*.max_sm_clock_mhz--> MHz {CITE}.",
    f"In a folder 394<!--fig dir=results/h200-nv18/ce-bidir file=ce-bidir.json method=ce mode=uni bytes=512M direction=push--> GB/s {CITE}.",
    f"Ends 393.3–394.0<!--calc lo, hi-->{CITE}<!--fig id=lo {FIG} direction=push stat=min agg=min--><!--fig id=hi {FIG} direction=push agg=max-->.",
    f"Four pushes 394.0<!--fig file={COMPLETE}+{COMPLETE} method=ce mode=uni direction=push--> GB/s {CITE}.",
    f"A parameter 7<!--param--> of them {CITE}.",
    f"Shown as code, `396<!--fig bad-->` is no marker {CITE}.",
    "Not a cited block: 1234 GB/s.",
])
def test_a_page_whose_figures_match_passes(repo, text):
    assert problems(repo, text) == []


@pytest.mark.parametrize("text,expected", [
    (f"CE push 396<!--fig {FIG} direction=push--> GB/s {CITE}.", "gives 394"),  # the wrong figure
    (f"CE pull 394.5<!--fig {FIG} direction=pull--> GB/s {CITE}.", "gives 394.5..395 (2 values)"),  # rows disagree
    (f"CE push 394 GB/s {CITE}.", "without a marker"),  # a figure without a marker
    (f"CE push 394<!--fig {FIG} direction=push--> GB/s and 2.5 more {CITE}.", "without a marker"),
    (f"CE push 394<!--fig {FIG} direction=push--> GB/s.", "not cited by its block"),
    (f"CE 85.7<!--fig file={INCOMPLETE} bytes=256K src_rank=0--> GB/s (`{INCOMPLETE}`).", "incomplete (5 of 144 cases)"),
    (f"CE push 394<!--fig {FIG} direction=sideways--> GB/s {CITE}.", "no row with"),
    (f"CE push 394<!--fig {FIG} direction=push colour=red--> GB/s {CITE}.", "colour= is no column"),
    (f"Ratio 3.0<!--calc bidir/uni-->{CITE}<!--fig id=bidir file={COMPLETE} direction=push mode=bidir--><!--fig id=uni {FIG} direction=push src_rank=0-->.", "gives 1.959"),
    (f"Ratio 2.0<!--calc bidir/nothing-->{CITE}<!--fig id=bidir file={COMPLETE} direction=push mode=bidir-->.", "no figure with id=nothing"),
    (f"Loose <!--fig {FIG} direction=push--> marker {CITE}.", "not right after a number"),
    ("Ceiling 396<!--fig file=results/notes.txt match=\"ceiling: ([0-9]+) GB/s\"--> GB/s (`results/notes.txt`).", "gives 391..395"),
    ("Ceiling 395<!--fig file=results/notes.txt match=\"floor: ([0-9]+)\"--> GB/s (`results/notes.txt`).", "finds nothing"),
    (f"Two figs 394<!--fig direction=push-->{CITE}<!--figs {FIG}--><!--figs file={INCOMPLETE}-->.", "another figs in the same block"),
    (f"Peak 480<!--fig file={COMPLETE} json=meta.topology.peak_gbps_per_direction--> GB/s {CITE}.", "gives 478.1"),
    (f"No such 1<!--fig file={COMPLETE} json=meta.nothing--> {CITE}.", "no 'nothing' there"),
    (f"Per 394<!--fig {FIG} per=direction--> GB/s {CITE}.", "per= needs agg="),
    (f"A range 394–396<!--calc lo-->{CITE}<!--fig id=lo {FIG} direction=push-->.", "gives 394"),
])
def test_a_page_with_a_wrong_or_unmarked_figure_fails(repo, text, expected):
    found = problems(repo, text)
    assert any(expected in p for p in found), found


def test_table_columns_and_caption_give_defaults(repo):
    page = (f"Two H200 {CITE}<!--figs {FIG}-->:\n\n"
            "| direction | 0→1 | 1→0 |\n| --- | --- | --- |\n"
            "| push<!--figs direction=push--> | 394.0<!--fig src_rank=0--> | 394.0<!--fig src_rank=1--> |\n"
            "| pull<!--figs direction=pull--> | 395.0<!--fig src_rank=0--> | 394.5<!--fig src_rank=1--> |\n")
    assert problems(repo, page) == []
    wrong = page.replace("395.0<!--fig src_rank=0-->", "394.5<!--fig src_rank=0-->")
    assert any("gives 395" in p for p in problems(repo, wrong))
    unmarked = page.replace("394.5<!--fig src_rank=1-->", "394.5")
    assert any("without a marker" in p for p in problems(repo, unmarked))


def test_write_puts_the_files_figures_into_the_page(repo, tmp_path):
    page = tmp_path / "page.md"
    page.write_text(f"CE push 396.9<!--fig {FIG} direction=push--> and 390–399<!--fig {FIG}--> GB/s {CITE}.\n")
    assert main([str(page), "--root", str(repo.root)]) == 1
    assert main([str(page), "--root", str(repo.root), "--write"]) == 1  # reports what it rewrote
    assert "394.0<!--" in page.read_text() and "394–395<!--" in page.read_text()
    assert main([str(page), "--root", str(repo.root)]) == 0


def test_unusable_arguments_exit_2(tmp_path, capsys):
    assert main(["--root", str(tmp_path)]) == 2
    assert "no results/ folder" in capsys.readouterr().err
    assert main([str(tmp_path / "missing.md"), "--root", str(REPO)]) == 2


def test_an_incomplete_file_is_refused_even_when_its_figure_matches(repo):
    document = json.loads((repo.root / INCOMPLETE).read_text())
    assert document["incomplete"] is True
    text = f"CE 85.7<!--fig file={INCOMPLETE} bytes=256K src_rank=0--> GB/s (`{INCOMPLETE}`)."
    assert any("incomplete" in p for p in problems(repo, text))


@pytest.fixture(scope="module")
def traced_repo(tmp_path_factory) -> Repository:
    """The complete file as committed, and copies of it: marked meta.provenance "unknown", with the
    commit a COMMANDS.md records, built without git, and an older file without a commit."""
    root = tmp_path_factory.mktemp("traced")
    document = json.loads((REPO / COMPLETE).read_text())
    recorded = {"commit": "a" * 40, "origin": "COMMANDS.md", "recorded_in": "results/recorded/COMMANDS.md",
                "quote": "Tree of aaaaaaa"}
    no_git = {"commit": "unknown", "dirty": None, "diff_sha256": None, "source_sha256": "b" * 64, "origin": "unknown"}
    copies = {"traced": {}, "marked": {"provenance": "unknown"}, "recorded": {"provenance": recorded},
              "nogit": {"provenance": no_git}, "nosha": {"tool": dict(document["meta"]["tool"], git_sha="unknown")}}
    for name, meta in copies.items():
        (root / "results" / name).mkdir(parents=True)
        (root / "results" / name / "run.json").write_text(json.dumps(dict(document, meta={**document["meta"], **meta})))
    return Repository(root)


@pytest.mark.parametrize("name", ["traced", "recorded"])
def test_a_traceable_file_gives_figures(traced_repo, name):
    path = f"results/{name}/run.json"
    assert problems(traced_repo, f"CE push 394<!--fig file={path} method=ce mode=uni direction=push--> GB/s (`{path}`).") == []


@pytest.mark.parametrize("name,why", [("marked", 'marked meta.provenance "unknown"'),
                                      ("nogit", 'built without git (meta.provenance.commit "unknown")'),
                                      ("nosha", 'no commit recorded (meta.tool.git_sha "unknown")')])
def test_a_file_that_cannot_be_traced_is_refused_and_not_cited(traced_repo, name, why):
    path = f"results/{name}/run.json"
    figure = problems(traced_repo, f"CE push 394<!--fig file={path} method=ce mode=uni direction=push--> GB/s (`{path}`).")
    assert any("cannot be traced to the code that made it" in p and why in p for p in figure), figure
    as_text = problems(traced_repo, f"Peak 478<!--fig file={path} match=\"peak_gbps_per_direction\\\": ([0-9.]+)\"--> GB/s (`{path}`).")
    assert any("cannot be traced" in p for p in as_text), as_text
    cited = problems(traced_repo, f"Measured on two H200 (`{path}`).")
    assert any(f"{path}: cited, but cannot be traced" in p for p in cited), cited


def test_a_name_that_also_stands_for_traceable_files_is_no_citation_of_the_untraceable_one(traced_repo):
    assert problems(traced_repo, "Measured on two H200 (`run.json`).") == []
