"""configs/nvbandwidth-equivalent.json and configs/nccl-tests-equivalent.json: a p2pbench run of
each config matches every row of the matching tool's import (tests/report/data/, copies of the
real reference output), and the import matches every row of the run.

The run is synthetic: one row per case the driver would run for the config. equivalent_cases()
follows src/sweep/sweep.cpp for the keys these configs use (uni cases in both orientations, bidir
without ranks, one shape per kernel axis product, latency_read's three load protocols on its 2 MiB
chain, NCCL as a two-sided baseline: push only); `p2pbench --config FILE --dry-run` lists the same
24 and 14 cases.
"""

from __future__ import annotations

import itertools
import json

import pytest
from make_fixtures import DATA, REPO
from p2pbench_report.cases import BANDWIDTH, LATENCY, describe_case
from p2pbench_report.compare import compare, render_markdown
from p2pbench_report.documents import bandwidth_row, direction_figures, latency_row, new_document, new_meta
from p2pbench_report.importers import import_nccl_tests, import_nvbandwidth
from p2pbench_report.loader import load_many
from p2pbench_report.units import parse_size

CONFIGS = REPO / "configs"
LATENCY_READ_PROTOCOLS = ("plain", "relaxed_sys", "absolute")  # sweep.cpp: every latency_read run has all three
READ_CHAIN_BYTES = 2 * 2**20
TWO_SIDED_BASELINES = ("nccl", "staged")
# Methods of a rank's own GPU (its host link): one case per rank r -> r, push uni (sweep.cpp).
HOST_LINK_METHODS = ("h2d", "d2h", "h2d_bidir", "d2h_bidir", "h2d_sm", "d2h_sm")
HOST_SM_DEFAULT_SHAPE = {"blocks": 132, "threads": 512, "unroll": 4}  # the registry's defaults (nvbandwidth's launch)
# nvbandwidth's host tests the reference file did not run, in its layout (one row, a column per
# GPU) with made-up figures, so that every host row of the config has an imported counterpart.
NVBANDWIDTH_HOST_TESTCASES = ("host_to_device_memcpy_sm", "device_to_host_memcpy_sm",
                              "host_to_device_bidirectional_memcpy_ce", "device_to_host_bidirectional_memcpy_ce",
                              "host_device_latency_sm")
# The driver's top-level keys of a sweep, and a section per method with kernel-shape axes (the
# registry's, schema/methods.json).
SWEEP_KEYS = {"label", "description", "methods", "directions", "modes", "sizes", "samples", "min_sample_time_ms",
              "warmup_time_ms", "verify", "buffer_pool_bytes", "gate_timeout_s", "latency", "atomic"}
METHOD_SECTIONS = {m["name"] for m in json.loads((REPO / "schema" / "methods.json").read_text())["methods"] if m["axes"]}
CONFIG_KEYS_OF_DRIVER = SWEEP_KEYS | METHOD_SECTIONS


def _sizes(spec) -> list[int]:
    if isinstance(spec, dict):
        low, high, factor = parse_size(spec["min"]), parse_size(spec["max"]), int(spec["factor"])
        return [low * factor**i for i in range(64) if low * factor**i <= high]
    return [parse_size(s) for s in spec]


def _shapes(method: str, config: dict) -> list[dict]:
    if method in ("h2d_sm", "d2h_sm"):
        axes = {**{k: [v] for k, v in HOST_SM_DEFAULT_SHAPE.items()}, **config.get(method, {})}
        return [{"blocks": b, "threads": t, "unroll": u}
                for b, t, u in itertools.product(axes["blocks"], axes["threads"], axes["unroll"])]
    if method == "ldst":
        axes = config["ldst"]
        return [{"blocks": b, "threads": t, "unroll": u}
                for b, t, u in itertools.product(axes["blocks"], axes["threads"], axes["unroll"])]
    if method == "tma":
        axes = config["tma"]
        return [{"blocks": b, "smem_bytes": parse_size(s), "stages": st}
                for b, s, st in itertools.product(axes["blocks"], axes["smem_bytes"], axes["stages"])]
    return [{}]


def equivalent_cases(config: dict) -> list[dict]:
    """The cases the driver runs for `config` (keys of bandwidth_row/latency_row)."""
    cases = []
    for method in config["methods"]:
        if method in HOST_LINK_METHODS:  # r -> r on each rank, at push uni only
            cases += [{"method": method, "direction": "push", "mode": "uni", "bytes": size, **shape,
                       "src_rank": r, "dst_rank": r}
                      for shape in _shapes(method, config) for size in _sizes(config["sizes"]) for r in (0, 1)]
            continue
        if method in ("latency_read", "latency_host"):  # as the driver names the chase variants (sweep.cpp)
            latency = config.get("latency", {})
            variants = itertools.product(latency.get("read_protocols", LATENCY_READ_PROTOCOLS),
                                         latency.get("read_launch", ["single"]), latency.get("read_loads", [20000]))
            protocols = [load if (launch, loads) == ("single", 20000) else f"{load},launch={launch},loads={loads}"
                         for load, launch, loads in variants]
            cases += [{"method": method, "direction": "pull", "mode": "uni", "bytes": READ_CHAIN_BYTES,
                       "protocol": protocol, "src_rank": src, "dst_rank": src if method == "latency_host" else 1 - src}
                      for protocol in protocols for src in (0, 1)]
            continue
        directions = config["directions"][:1] if method in TWO_SIDED_BASELINES else config["directions"]
        for direction, mode, shape, size in itertools.product(directions, config["modes"], _shapes(method, config),
                                                              _sizes(config["sizes"])):
            case = {"method": method, "direction": "push" if method in TWO_SIDED_BASELINES else direction,
                    "mode": mode, "bytes": size, **shape}
            cases += [case] if mode == "bidir" else [{**case, "src_rank": s, "dst_rank": 1 - s} for s in (0, 1)]
    return cases


def synthetic_run(config: dict) -> dict:
    """A results document with one 10-sample row per case of `config` (made-up figures)."""
    rows = []
    for case in equivalent_cases(config):
        case = dict(case)
        method, direction, mode, size = (case.pop(k) for k in ("method", "direction", "mode", "bytes"))
        if method.startswith("latency_"):
            rows.append(latency_row(method, size, [0.85 + 0.001 * i for i in range(10)], direction=direction, **case))
            continue
        samples = [380.0 + 0.1 * i for i in range(10)]
        directions = ([direction_figures(0, 1, size, samples), direction_figures(1, 0, size, samples)]
                      if mode == "bidir" else None)
        total = [2 * s for s in samples] if mode == "bidir" else samples
        rows.append(bandwidth_row(method, direction, mode, size, total, directions=directions, overlap=0.99
                                  if mode == "bidir" else None, **case))
    return new_document(new_meta("p2pbench", config=config), rows)


def _load_config(name: str) -> dict:
    return json.loads((CONFIGS / name).read_text(encoding="utf-8"))


@pytest.mark.parametrize("name", ["nvbandwidth-equivalent.json", "nccl-tests-equivalent.json"])
def test_config_uses_only_keys_the_driver_accepts(name):
    config = _load_config(name)
    assert set(config) <= CONFIG_KEYS_OF_DRIVER, set(config) - CONFIG_KEYS_OF_DRIVER
    source = "".join(p.read_text(encoding="utf-8") for p in (REPO / "src" / "config").glob("*.cpp"))
    for key in set(config) & SWEEP_KEYS:  # the list above is still the driver's
        assert f'{{"{key}"' in source or f'"{key}",' in source or f'("{key}")' in source, key


def nvbandwidth_with_host_tests(tmp_path) -> dict:
    """The reference nvbandwidth import plus NVBANDWIDTH_HOST_TESTCASES (made-up figures)."""
    data = json.loads((DATA / "nvbandwidth-h200-nv18.json").read_text(encoding="utf-8"))
    data["nvbandwidth"]["testcases"] += [{"name": name, "status": "Passed", "bandwidth_matrix": [["50.5", "50.7"]]}
                                         for name in NVBANDWIDTH_HOST_TESTCASES]
    path = tmp_path / "nvbandwidth-with-host-tests.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return import_nvbandwidth(path)


def _matched(write_json, config_name: str, imported: dict):
    run = write_json("p2pbench.json", synthetic_run(_load_config(config_name)))
    other = write_json("imported.json", imported)
    return compare(load_many([run, other]))


def _assert_every_row_matched(comparison, imported: dict) -> None:
    once = [describe_case(c.key) for c in comparison.cases if sum(r is not None for r in c.rows) < 2]
    assert once == [], f"measured only once: {once}"
    assert comparison.unlisted_count == 0
    assert "fewer than two files" not in render_markdown(comparison)
    used = {id(c.rows[1]) for c in comparison.cases}
    assert len(used) == len(comparison.result_sets[1].rows)  # every imported row is in some case
    assert len(comparison.listed(BANDWIDTH)) + len(comparison.listed(LATENCY)) == len(comparison.cases)


def test_nvbandwidth_equivalent_config_matches_every_imported_row(write_json, tmp_path):
    imported = nvbandwidth_with_host_tests(tmp_path)
    comparison = _matched(write_json, "nvbandwidth-equivalent.json", imported)
    _assert_every_row_matched(comparison, imported)
    assert len(comparison.cases) == 34  # the dry run's case count (two ranks)
    notes = {c.key[0]: describe_case(c.key)["config"] for c in comparison.cases}
    assert notes["ce"] == ""
    assert notes["ldst"].endswith("(matched ignoring shape)")
    assert notes["tma"].endswith("(matched ignoring kernel and shape)")
    assert notes["latency_read"].endswith("(matched ignoring load protocol)")
    assert notes["h2d"] == "" and notes["h2d_bidir"] == ""
    assert notes["h2d_sm"].endswith("(matched ignoring shape)") and notes["d2h_sm"].endswith("(matched ignoring shape)")
    assert notes["latency_host"].endswith("(matched ignoring load protocol)")
    host = [c for c in comparison.cases if c.key[0] in HOST_LINK_METHODS + ("latency_host",)]
    assert len(host) == 14 and all(c.key[4] == c.key[5] for c in host)  # r -> r, both files
    assert "(matched ignoring shape)" in render_markdown(comparison)


def test_bidir_rows_are_compared_as_nvbandwidth_adds_them(write_json):
    """nvbandwidth's bidir figure adds each direction's own figure; against it, p2pbench's bidir
    rows give their directions' sum (not all bytes over the union of the windows), and say so."""
    imported = import_nvbandwidth(DATA / "nvbandwidth-h200-nv18.json")
    run = synthetic_run(_load_config("nvbandwidth-equivalent.json"))
    for i, row in enumerate(run["results"]):  # windows that overlap less: the union is below the sum
        if row["mode"] == "bidir":
            samples = [0.95 * s for s in row["samples_gbps"]]
            run["results"][i] = bandwidth_row(row["method"], row["direction"], "bidir", row["bytes"], samples,
                                              directions=row["directions"], overlap=0.9,
                                              **{k: row[k] for k in ("blocks", "threads", "unroll", "smem_bytes", "stages")})
    comparison = compare(load_many([write_json("p2pbench.json", run), write_json("imported.json", imported)]))
    bidir = [c for c in comparison.cases if c.key[0] == "ce" and c.key[2] == "bidir"]
    assert bidir and all(c.sums_directions() for c in bidir)
    for case in bidir:
        union = case.rows[0]["bandwidth_gbps_median"]
        summed = case.figure(0, BANDWIDTH)
        assert summed == pytest.approx(case.rows[0]["directions_0_bandwidth_gbps_median"]
                                       + case.rows[0]["directions_1_bandwidth_gbps_median"])
        assert summed == pytest.approx(union / 0.95)
        assert case.figure(1, BANDWIDTH) == case.rows[1]["bandwidth_gbps_median"]  # nvbandwidth's own
    assert "(bidir: sum of both directions' own figures)" in render_markdown(comparison)
    uni = [c for c in comparison.cases if c.key[2] == "uni" and c.key[0] == "ce"]
    assert not any(c.sums_directions() for c in uni)


def test_nccl_tests_equivalent_config_matches_every_imported_row(write_json):
    imported = import_nccl_tests(DATA / "nccl-tests-sendrecv-h200-nv18.txt")
    comparison = _matched(write_json, "nccl-tests-equivalent.json", imported)
    _assert_every_row_matched(comparison, imported)
    assert len(comparison.cases) == 14


def test_exact_matches_are_not_loosened(write_json):
    """p2pbench rows (shapes and protocols recorded) still match only rows of the same shape."""
    config = _load_config("nvbandwidth-equivalent.json")
    config["ldst"]["blocks"] = [64]
    first = write_json("a.json", synthetic_run(_load_config("nvbandwidth-equivalent.json")))
    second = write_json("b.json", synthetic_run(config))
    comparison = compare(load_many([first, second]))
    ldst = [c for c in comparison.cases if c.key[0] == "ldst"]
    assert len(ldst) == 12 and all(sum(r is not None for r in c.rows) == 1 for c in ldst)
    assert all("matched ignoring" not in describe_case(c.key)["config"] for c in comparison.cases)


def test_an_unmatched_import_row_stays_a_case_of_its_own(write_json, tmp_path):
    """nvbandwidth's SM rows against a run without SM kernels: listed once, not lost."""
    config = dict(_load_config("nvbandwidth-equivalent.json"), methods=["ce"])
    comparison = _matched(write_json, "nvbandwidth-equivalent.json", nvbandwidth_with_host_tests(tmp_path))
    assert comparison.unlisted_count == 0
    run = write_json("ce-only.json", synthetic_run(config))
    other = write_json("nvb.json", import_nvbandwidth(DATA / "nvbandwidth-h200-nv18.json"))
    partial = compare(load_many([run, other]))
    lone = [c for c in partial.cases if c.rows[0] is None]
    assert {c.key[0] for c in lone} == {"ldst", "latency_read", "h2d", "d2h"} and len(lone) == 12
