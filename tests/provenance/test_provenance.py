"""cmake/provenance.cmake, the build's stamp, on scratch trees (no build, no GPU): with git (clean,
dirty, a copy inside another repository), without git from the PROVENANCE.json that
scripts/stamp-provenance.sh wrote (as written, and stale), and with neither. The hashes are
recomputed here from their documented definitions, not with the script's code."""
import hashlib
import json
import os
import pathlib
import shutil
import subprocess

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
SCRIPT = REPO / "cmake" / "provenance.cmake"
STAMP = REPO / "scripts" / "stamp-provenance.sh"
CMAKE = os.environ.get("CMAKE_COMMAND") or shutil.which("cmake")
SOURCE_ROOTS = ("src", "kernels", "tools", "schema", "cmake", "CMakeLists.txt", "configs/default.json")
# git without the user's or the system's settings
GIT_ENV = dict(os.environ, GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull, GIT_AUTHOR_NAME="t",
               GIT_AUTHOR_EMAIL="t@example.invalid", GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@example.invalid")

pytestmark = [pytest.mark.skipif(CMAKE is None, reason="no cmake"),
              pytest.mark.skipif(shutil.which("git") is None, reason="no git")]


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def hash_lines(tree: pathlib.Path, paths) -> str:
    """SHA-256 of "HASH  PATH" lines, sorted by path; "deleted" for a path that is gone."""
    lines = ""
    for path in sorted(paths):
        file = tree / path
        lines += f"{sha256(file.read_bytes()) if file.exists() else 'deleted'}  {path}\n"
    return sha256(lines.encode())


def source_hash(tree: pathlib.Path) -> str:
    files = []
    for root in SOURCE_ROOTS:
        top = tree / root
        found = [top] if top.is_file() else [p for p in top.rglob("*") if p.is_file()] if top.is_dir() else []
        files += [p.relative_to(tree).as_posix() for p in found
                  if "__pycache__" not in p.parts and p.suffix != ".pyc"]
    return hash_lines(tree, files)


def make_tree(root: pathlib.Path) -> pathlib.Path:
    files = {"src/main.cpp": "int main() {}\n", "src/common/version.cpp": "// v\n", "kernels/copy.cu": "// k\n",
             "tools/check.cpp": "// t\n", "schema/results.schema.json": "{}\n", "cmake/FindX.cmake": "# x\n",
             "CMakeLists.txt": "project(x)\n", "configs/default.json": "{}\n", "configs/other.json": "{}\n",
             "docs/notes.md": "notes\n", ".gitignore": "/build/\n/PROVENANCE.json\n*.log\n",
             "src/__pycache__/x.cpython-311.pyc": "bytecode"}
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def git(tree, *args) -> str:
    return subprocess.run(["git", *args], cwd=tree, env=GIT_ENV, check=True, capture_output=True, text=True).stdout


def committed_tree(tmp_path) -> pathlib.Path:
    tree = make_tree(tmp_path / "tree")
    git(tree, "init", "-q")
    git(tree, "add", "-A")
    git(tree, "commit", "-q", "-m", "first")
    return tree


def stamp(tree, out_dir=None, **settings) -> tuple[dict, pathlib.Path]:
    """Runs the build's step; returns the record and the generated .cpp."""
    out_dir = out_dir or tree.parent / "out"
    out_dir.mkdir(exist_ok=True)
    cpp = out_dir / "provenance.cpp"
    defines = [f"-D{k.upper()}={v}" for k, v in settings.items()]
    r = subprocess.run([CMAKE, f"-DSOURCE_DIR={tree}", f"-DOUTPUT_CPP={cpp}", f"-DOUTPUT_JSON={out_dir / 'p.json'}",
                        *defines, "-P", str(SCRIPT)], env=GIT_ENV, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    return json.loads((out_dir / "p.json").read_text()), cpp


def copy_without_git(tree, destination) -> pathlib.Path:
    shutil.copytree(tree, destination, ignore=shutil.ignore_patterns(".git"))
    return destination


def test_clean_tree_says_its_commit_and_not_dirty(tmp_path):
    tree = committed_tree(tmp_path)
    record, cpp = stamp(tree, build_type="Release", cuda_architectures="80-real,90")
    assert record["origin"] == "git"
    assert record["commit"] == git(tree, "rev-parse", "HEAD").strip()
    assert record["dirty"] is False and record["diff_sha256"] is None
    assert record["source_sha256"] == source_hash(tree)
    assert record["build_type"] == "Release" and record["cuda_architectures"] == "80-real,90"
    assert record["built_utc"].endswith("Z")
    assert f"R\"provenance({json.dumps(record)})provenance\"" in cpp.read_text()  # the binary's copy


def test_dirty_tree_hashes_its_changes_untracked_files_included_ignored_ones_not(tmp_path):
    tree = committed_tree(tmp_path)
    (tree / "src/main.cpp").write_text("int main() { return 1; }\n")  # changed
    (tree / "kernels/copy.cu").unlink()  # removed
    (tree / "src/new.cpp").write_text("// new\n")  # untracked
    (tree / "docs/notes.md").write_text("edited\n")  # outside the sources: the tree is still not the commit
    (tree / "run.log").write_text("ignored\n")
    record, _ = stamp(tree)
    assert record["dirty"] is True
    changed = ["src/main.cpp", "kernels/copy.cu", "src/new.cpp", "docs/notes.md"]
    assert record["diff_sha256"] == hash_lines(tree, changed)
    assert record["source_sha256"] == source_hash(tree)
    (tree / "src/new.cpp").write_text("// new, edited\n")  # another change: another hash
    assert stamp(tree)[0]["diff_sha256"] != record["diff_sha256"]


def test_without_git_the_stamp_written_before_the_copy_is_read(tmp_path):
    tree = committed_tree(tmp_path)
    (tree / "src/main.cpp").write_text("int main() { return 2; }\n")
    done = subprocess.run(["bash", str(STAMP), str(tree)], env=GIT_ENV, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    with_git, _ = stamp(tree)
    copy = copy_without_git(tree, tmp_path / "copy")
    record, _ = stamp(copy, out_dir=tmp_path / "out-copy")
    assert record["origin"] == "PROVENANCE.json" and record["stale_stamp"] is False
    for key in ("commit", "dirty", "diff_sha256", "source_sha256"):
        assert record[key] == with_git[key], key
    assert record["stamped_utc"].endswith("Z")


def test_sources_edited_after_the_stamp_make_it_stale_and_the_tree_dirty(tmp_path):
    tree = committed_tree(tmp_path)
    subprocess.run(["bash", str(STAMP), str(tree)], env=GIT_ENV, check=True, capture_output=True, timeout=60)
    copy = copy_without_git(tree, tmp_path / "copy")
    (copy / "src/main.cpp").write_text("int main() { return 3; }\n")
    record, _ = stamp(copy)
    assert record["origin"] == "PROVENANCE.json" and record["stale_stamp"] is True
    assert record["dirty"] is True and record["diff_sha256"] is None
    assert record["commit"] == git(tree, "rev-parse", "HEAD").strip()
    assert record["source_sha256"] == source_hash(copy)


def test_neither_git_nor_stamp_says_unknown_and_still_names_the_sources(tmp_path):
    tree = copy_without_git(committed_tree(tmp_path), tmp_path / "copy")
    record, _ = stamp(tree)
    assert record["origin"] == "unknown" and record["commit"] == "unknown"
    assert record["dirty"] is None and record["diff_sha256"] is None
    assert record["source_sha256"] == source_hash(tree)


def test_a_copy_inside_another_repository_is_not_taken_for_it(tmp_path):
    outer = committed_tree(tmp_path)
    copy = copy_without_git(outer, outer / "build" / "copy")  # ignored by the outer repository
    record, _ = stamp(copy, out_dir=tmp_path / "out-inner")
    assert record["origin"] == "unknown"


def test_the_generated_file_changes_only_with_the_record(tmp_path):
    tree = committed_tree(tmp_path)
    _, cpp = stamp(tree)
    before = (cpp.read_bytes(), cpp.stat().st_mtime_ns)
    stamp(tree)
    assert (cpp.read_bytes(), cpp.stat().st_mtime_ns) == before  # nothing to recompile
    (tree / "tools/check.cpp").write_text("// edited\n")
    record, _ = stamp(tree)
    assert cpp.read_bytes() != before[0] and record["dirty"] is True
    stamp(tree, build_type="Debug")
    assert '"build_type": "Debug"' in cpp.read_text()


def test_a_file_that_is_not_a_stamp_is_refused_by_name(tmp_path):
    tree = copy_without_git(committed_tree(tmp_path), tmp_path / "copy")
    (tree / "PROVENANCE.json").write_text('{"something": "else"}\n')
    r = subprocess.run([CMAKE, f"-DSOURCE_DIR={tree}", f"-DOUTPUT_CPP={tmp_path / 'p.cpp'}", "-P", str(SCRIPT)],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode != 0
    assert "PROVENANCE.json: not a provenance stamp" in r.stderr
    assert not (tmp_path / "p.cpp").exists()


def test_stamping_a_tree_without_git_fails_and_says_so(tmp_path):
    tree = make_tree(tmp_path / "plain")
    r = subprocess.run(["bash", str(STAMP), str(tree)], env=GIT_ENV, capture_output=True, text=True, timeout=60)
    assert r.returncode == 1
    assert "not the top of a git work tree" in r.stderr and "no stamp written" in r.stderr
    assert not (tree / "PROVENANCE.json").exists()
