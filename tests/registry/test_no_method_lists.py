"""No list of method names outside the registry: code in src/, kernels/, tools/ and scripts/ names a
method only where it defines the method (the registry, a method's own folder src/methods/NAME/)
or in the few places ALLOWED lists, each with why. Everything else asks the registry (a kind, a
flag, a cost, a row field): a method added in its folder reaches it without an edit there.

A method is a folder's own when its name is registered there (a file of the folder holds
P2PBENCH_REGISTER_METHOD and the name), and by no other folder.
"""
from __future__ import annotations

import pathlib
import re
import sys
from collections import defaultdict

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import method_names  # noqa: E402

REPO = method_names.REPO
BUILT_IN = set(method_names.enumerator_names().values())

# path -> (names it may use, why). Kept short: each entry is a name that is something else as
# well, or other tools' tests as the registry's methods. A built-in method's own rules are declared
# with it in the registry (MethodInfo: axes_limits, shape_skip, flows_skip, gpu_need, host_need,
# needs_staging_area), never named in the core.
ALLOWED = {
    "src/vocab/methods.hpp": (BUILT_IN, "the registry: the built-in methods' enum and the default method"),
    "src/vocab/methods.cpp": (BUILT_IN, "the registry: the built-in methods' entries"),
    "src/engines/engine_registry.cpp": (BUILT_IN, "the built-in methods' engine makers, as a folder's registration"),
    # Names that are something else as well.
    "src/config/config.cpp": ({"atomic", "interference"}, "the config sections of those names"),
    "src/config/probe_config.cpp": ({"atomic"}, "the config section of that name"),
    "src/config/interference_config.cpp": ({"interference", "gemm"},
                                           "the config section; the workload named gemm (not the method)"),
    "src/config/interference_config.hpp": ({"gemm"}, "the workload named gemm (not the method)"),
    "src/workloads/workload.cpp": ({"gemm"}, "the workload named gemm (not the method)"),
    "scripts/hbm-shape-check.sh": ({"interference"}, "the config section of that name"),
    # Other tools' tests as the registry's methods, and the checks of one method's runs.
    "scripts/p2pbench_report/importers.py": (None, "nvbandwidth's and nccl-tests' tests as p2pbench's methods"),
    "scripts/p2pbench_report/cases.py": ({"ldst", "tma", "latency_read", "h2d_sm", "d2h_sm", "latency_host"},
                                         "what the imported rows of those methods do not record (importers.py)"),
    "scripts/interference-check.sh": ({"interference"}, "the GPU check of the interference method's runs"),
    "scripts/latency-investigation.sh": ({"latency_read"}, "the investigation of latency_read's figures"),
}


def folder_of(path: str) -> str | None:
    match = re.match(r"src/methods/([^/]+)/", path)
    return match.group(1) if match else None


def methods_of_folders() -> dict[str, set[str]]:
    """{folder: the methods registered there}: names in a file of src/methods/F/ that registers."""
    names = method_names.method_names()
    by_folder: dict[str, set[str]] = defaultdict(set)
    for path in (REPO / "src" / "methods").glob("*/*"):
        text = path.read_text(errors="replace") if path.is_file() else ""
        if "P2PBENCH_REGISTER_METHOD(" in text:
            by_folder[path.parent.name] |= {n for n in names if f'"{n}"' in text} - BUILT_IN
    owners: dict[str, list[str]] = defaultdict(list)
    for folder, found in by_folder.items():
        for name in found:
            owners[name].append(folder)
    return {folder: {n for n in found if owners[n] == [folder]} for folder, found in by_folder.items()}


def test_every_registered_method_has_a_folder():
    owned = set().union(*methods_of_folders().values())
    assert method_names.method_names() - BUILT_IN - owned == set(), \
        "methods registered outside src/methods/NAME/ (or by two folders)"


def test_no_method_is_named_outside_its_definition():
    folders = methods_of_folders()
    stray = []
    for path, line, name in method_names.occurrences():
        folder = folder_of(path)
        if folder is not None and name in folders.get(folder, set()):
            continue
        allowed, _ = ALLOWED.get(path, (set(), ""))
        if allowed is None or name in allowed:
            continue
        stray.append(f"{path}:{line}: {name}")
    assert not stray, ("method names outside the registry and the methods' own folders; ask the registry (a kind, "
                       "a flag, a cost, a row field) or, for a method's own code, move it to its folder:\n  "
                       + "\n  ".join(stray))


def test_every_allowance_is_still_needed():
    used = defaultdict(set)
    for path, _, name in method_names.occurrences():
        used[path].add(name)
    for path, (allowed, why) in ALLOWED.items():
        assert (REPO / path).is_file(), f"{path} ({why}) is gone: drop it from ALLOWED"
        assert used[path], f"{path} names no method any longer: drop it from ALLOWED ({why})"
        if allowed is not None and allowed is not BUILT_IN:
            assert allowed <= used[path], f"{path} no longer names {sorted(allowed - used[path])}: narrow ALLOWED"


def test_the_scan_finds_what_it_should():
    """The scanner sees strings and enumerators in code, not in comments or docstrings."""
    code = 'int a = 1;  // "ce" in a comment\nconst char* b = "ldst"; /* "tma" */ auto m = Method::kTma;\n'
    found = list(method_names._cpp_occurrences(code, {"ce", "ldst", "tma"}, {"kTma": "tma"}))
    assert found == [(2, "ldst"), (2, "tma")]
    python = '"""a docstring naming "ce"."""\nx = names_of_kinds("atomic")\ny = "ldst"\n'
    assert list(method_names._python_occurrences(python, {"ce", "atomic", "ldst"})) == [(3, "ldst")]
