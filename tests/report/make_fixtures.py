"""Synthetic p2pbench results resembling a 2 × H200 NVLink (NV18) run, and derived copies.

    python tests/report/make_fixtures.py -o /tmp/fixtures     # synthetic-h200-nv18.json, synthetic-group-4ranks.json

The synthetic run follows the driver's sweep (src/sweep/sweep.cpp): every uni case in both
orientations (0->1, 1->0), bidir cases without ranks but with `overlap` and `directions`.
  * a size sweep 4 KiB .. 1 GiB (factor 2) for ce, ldst (132 blocks x 1024 threads, unroll 4)
    and tma (132 blocks, 96 KiB smem, 6 stages);
  * at 1 GiB, an ldst grid blocks x threads and a tma grid blocks x smem_bytes x stages (the
    smem/stage splits that are not 16-byte multiples are `skipped`, as the driver does);
  * SM-scaling rows (blocks 1..132) for ldst and tma at 1 GiB;
  * a few latency rows (latency_signal, latency_ce).
Ten samples per case with ~0.5% noise; ce reaches ~390 GB/s per direction at large sizes,
figures modelled on shared/reference/h200-nv18-baseline.md.

The derived-copy helpers (scaled, perturbed, with_status, without) work on any results document,
so the tests can apply them to a real file from results/h200-nv18/ as well.

synthetic_group_results() is a schema version 2 run of 4 ranks on 3 GPUs of one node
(docs/groups.md), written as synthetic-group-4ranks.json:
  * ranks 0 and 1 share GPU A (their pairs are same_device, measured deliberately low: a report
    that showed them as P2P figures would flag them); rank 2 is on GPU B, joined to A by NV18;
    rank 3 on GPU C, joined to A and B through PCIe (PHB);
  * ce push uni and ldst push uni matrices (sequential) over every ordered pair, 1 GiB; ldst
    skips the PCIe pairs (no peer mapping);
  * the pair 2 -> 0 (B -> A) is deliberately slow: SLOW_PAIR_FACTOR of its class's figure;
  * a ce push bidir matrix (each unordered pair both ways);
  * ce push uni in rounds (6 rounds of 2 disjoint flows) and 3 pairs re-measured alone
    (alone_check), the rounds' figure of 0 -> 2 ROUNDS_DISAGREEMENT below its alone figure;
  * patterns: one_to_all from rank 2, ring shift 1; one latency_signal row.
as_version_2() writes a two-rank version 1 document as the version 2 writer writes the same
run (every row the matrix, one pair at a time), relabel_ranks() renumbers the ranks of such a document (the same GPUs and figures under other
rank numbers), scaled_flow() slows one physical GPU pair.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import random
import subprocess
import sys
from pathlib import Path
from typing import Callable, Iterable

REPO = Path(__file__).resolve().parents[2]
DATA = Path(__file__).resolve().parent / "data"         # copies of real nvbandwidth / nccl-tests output
REAL_RESULTS = REPO / "results" / "h200-nv18"           # real p2pbench runs, once committed
sys.path.insert(0, str(REPO / "scripts"))

from p2pbench_report.documents import (GROUP_SCHEMA_VERSION, add_group, bandwidth_row,  # noqa: E402
                                       direction_figures, flow, gpu_entry, gpu_traffic, group_row, latency_row,
                                       new_document,
                                       new_meta, pair_entry, pct_of, summarize, summarize_latency,
                                       transfer_time_us)

KiB, MiB, GiB = 2**10, 2**20, 2**30
SIZES = [4 * KiB * 2**i for i in range(19)]  # 4 KiB .. 1 GiB
PEAK_GBPS = 478.1  # 18 links x 26.562 GB/s
SAMPLES = 10
NOISE = 0.005

# Per method: asymptotic GB/s per direction (push, pull), per-transfer latency (us), bidir
# efficiency (total / 2 x uni), GB/s one SM moves.
MODEL = {
    "ce": {"peak": {"push": 391.0, "pull": 389.0}, "latency_us": 1.7, "bidir": 0.99, "per_sm": None},
    "ldst": {"peak": {"push": 370.0, "pull": 375.0}, "latency_us": 0.8, "bidir": 0.96, "per_sm": 46.0},
    "tma": {"peak": {"push": 371.0, "pull": 376.0}, "latency_us": 1.0, "bidir": 0.97, "per_sm": 47.0},
}
LDST_DEFAULT = {"blocks": 132, "threads": 1024, "unroll": 4}
TMA_DEFAULT = {"blocks": 132, "smem_bytes": 96 * KiB, "stages": 6}
LDST_GRID = {"blocks": [8, 16, 32, 132], "threads": [256, 512, 1024], "unroll": [4]}
TMA_GRID = {"blocks": [4, 8, 16, 132], "smem_bytes": [32 * KiB, 64 * KiB, 96 * KiB], "stages": [4, 6, 8]}
SM_COUNTS = [1, 2, 4, 8, 16, 32, 64, 132]


def _noisy(rng: random.Random, value: float, n: int = SAMPLES, noise: float = NOISE) -> list[float]:
    return [round(value * (1.0 + rng.gauss(0.0, noise)), 4) for _ in range(n)]


def _model_gbps(method: str, direction: str, size: int, shape: dict) -> float:
    """Per-direction GB/s: a latency + size/bandwidth model, capped by what the SMs can move."""
    model = MODEL[method]
    peak = model["peak"][direction]
    if model["per_sm"] is not None:
        threads_factor = {256: 0.62, 512: 0.85}.get(shape.get("threads"), 1.0)
        stage_factor = {4: 0.93, 6: 1.0, 8: 1.0}.get(shape.get("stages"), 1.0)
        smem_factor = {32 * KiB: 0.9}.get(shape.get("smem_bytes"), 1.0)
        peak = min(peak, model["per_sm"] * shape["blocks"] * threads_factor * stage_factor * smem_factor)
    time_us = model["latency_us"] + size / (peak * 1e3)
    return size / (time_us * 1e3)


def _tma_skip_reason(shape: dict) -> str | None:
    if "stages" not in shape:
        return None
    chunk, rest = divmod(shape["smem_bytes"], shape["stages"])
    if rest or chunk % 16:
        return (f"smem_bytes {shape['smem_bytes']} / stages {shape['stages']} is not a whole multiple of "
                f"16 bytes per stage (bulk copies move 16-byte multiples)")
    return None


def _rows_for(rng: random.Random, method: str, shape: dict, size: int) -> list[dict]:
    rows = []
    sms = shape.get("blocks") if MODEL[method]["per_sm"] is not None else None
    sms = min(sms, 132) if sms else None
    for direction in ("push", "pull"):
        gbps = _model_gbps(method, direction, size, shape)
        iterations = max(1, int(2e-3 / max(size / (gbps * 1e9), 1e-9)))
        skip = _tma_skip_reason(shape) if method == "tma" else None
        common = dict(sms_used=sms, iterations=iterations, verified=True, **shape)
        if skip:
            for src, dst in ((0, 1), (1, 0)):
                rows.append(bandwidth_row(method, direction, "uni", size, [], src_rank=src, dst_rank=dst,
                                          status="skipped", error=skip, **common))
            rows.append(bandwidth_row(method, direction, "bidir", size, [], status="skipped", error=skip, **common))
            continue
        for src, dst in ((0, 1), (1, 0)):
            rows.append(bandwidth_row(method, direction, "uni", size, _noisy(rng, gbps), src_rank=src,
                                      dst_rank=dst, **common))
        per_direction = gbps * MODEL[method]["bidir"]
        directions = [direction_figures(0, 1, size, _noisy(rng, per_direction)),
                      direction_figures(1, 0, size, _noisy(rng, per_direction))]
        totals = [a + b for a, b in zip(directions[0]["samples_gbps"], directions[1]["samples_gbps"])]
        overlap = min(0.999, 0.5 + size / (size + 64 * KiB) / 2)
        rows.append(bandwidth_row(method, direction, "bidir", size, [round(t, 4) for t in totals],
                                  directions=directions, overlap=round(overlap, 4), **common))
    return rows


def _shapes(grid: dict) -> list[dict]:
    shapes = [{}]
    for axis, values in grid.items():
        shapes = [dict(s, **{axis: v}) for s in shapes for v in values]
    return shapes


def synthetic_results(seed: int = 20261122, label: str = "h200-nv18") -> dict:
    """A schema-valid results document of a synthetic 2 × H200 NV18 run."""
    rng = random.Random(seed)
    plan: list[tuple[str, dict, int]] = []
    for size in SIZES:
        plan += [("ce", {}, size), ("ldst", dict(LDST_DEFAULT), size), ("tma", dict(TMA_DEFAULT), size)]
    plan += [("ldst", shape, GiB) for shape in _shapes(LDST_GRID)]
    plan += [("tma", shape, GiB) for shape in _shapes(TMA_GRID)]
    plan += [("ldst", dict(LDST_DEFAULT, blocks=b), GiB) for b in SM_COUNTS]
    plan += [("tma", dict(TMA_DEFAULT, blocks=b), GiB) for b in SM_COUNTS]
    rows, seen = [], set()
    for method, shape, size in plan:
        key = (method, tuple(sorted(shape.items())), size)
        if key not in seen:
            seen.add(key)
            rows += _rows_for(rng, method, shape, size)
    rows.append(latency_row("latency_signal", 8, _noisy(rng, 1.24, noise=0.01), iterations=20000))
    rows.append(latency_row("latency_ce", 4, _noisy(rng, 1.70, noise=0.01), iterations=1000))
    rows.append(latency_row("latency_ce", 4096, _noisy(rng, 1.72, noise=0.01), iterations=1000))

    gpus = [gpu_entry(rank, "NVIDIA H200", pci_bus_id=f"0000:00:0{6 + rank}.0", uuid=f"GPU-synthetic-{rank}",
                      sm_count=132, compute_capability="9.0", driver_version="580.159.04",
                      device_index=rank, memory_bytes=143771 * MiB, l2_bytes=60 * MiB)
            for rank in (0, 1)]
    meta = new_meta(label, config={"label": label, "samples": SAMPLES, "synthetic": True}, gpus=gpus,
                    hosts=["h200-node"], command_line=["p2pbench", "--config", "configs/h200.json"],
                    cuda_driver_version=13000, cuda_runtime_version=13000, verify=True,
                    topology={"available": True, "link_type": "nvlink", "topo_label": "NV18",
                              "nvlink": {"active_links": 18, "per_link_gbps": 26.562, "version": "4.0",
                                         "via_nvswitch": True},
                              "peak_gbps_per_direction": PEAK_GBPS, "peak_source": "nvlink_version_table"},
                    p2p={"known": True, "access_supported": True, "native_atomics_supported": True,
                         "performance_rank": 0, "source": "cudaDeviceGetP2PAttribute"},
                    timestamp_utc="2026-11-22T12:00:00Z")
    meta["tool"] = {"name": "p2pbench", "version": "0.1.0", "git_sha": "synthetic"}
    return new_document(meta, rows)


# ---- derived copies -------------------------------------------------------------------------

RowPredicate = Callable[[int, dict], bool]


def refresh_statistics(row: dict) -> None:
    """Recomputes a row's statistics from its (changed) raw samples."""
    if row.get("samples_gbps") and row.get("status") == "ok":
        row["bandwidth_gbps"] = summarize(row["samples_gbps"])
        moved = row["bytes"] * (1 if row["mode"] == "uni" else 2)
        row["time_us"] = summarize(transfer_time_us(moved, g) for g in row["samples_gbps"])
        if row.get("sms_used"):
            row["gbps_per_sm"] = row["bandwidth_gbps"]["median"] / (row["sms_used"] * (1 if row["mode"] == "uni" else 2))
    for figures in row.get("directions") or []:
        figures["bandwidth_gbps"] = summarize(figures["samples_gbps"])
        figures["time_us"] = summarize(transfer_time_us(row["bytes"], g) for g in figures["samples_gbps"])
    for figures in row.get("flows") or []:
        if figures["samples_gbps"]:
            figures["bandwidth_gbps"] = summarize(figures["samples_gbps"])
            figures["time_us"] = summarize(transfer_time_us(figures["bytes"], g) for g in figures["samples_gbps"])
            figures["pct_of_peak"] = pct_of(figures["bandwidth_gbps"]["median"], figures["peak_gbps"])
    if row.get("flows") and row.get("samples_gbps") and row.get("status") == "ok":
        moved = sum(f["bytes"] for f in row["flows"])
        row["time_us"] = summarize(transfer_time_us(moved, g) for g in row["samples_gbps"])
        row["aggregate"].update(bandwidth_gbps=row["bandwidth_gbps"], samples_gbps=list(row["samples_gbps"]),
                                pct_of_peak=pct_of(row["bandwidth_gbps"]["median"], row["aggregate"]["peak_gbps"]))
        row["pct_of_peak"] = row["aggregate"]["pct_of_peak"]
    if row.get("samples_us") and row.get("status") == "ok":
        row["latency_us"] = summarize_latency(row["samples_us"])


def _map_rows(document: dict, predicate: RowPredicate, change: Callable[[dict], None]) -> dict:
    out = copy.deepcopy(document)
    for index, row in enumerate(out["results"]):
        if predicate(index, row):
            change(row)
            refresh_statistics(row)
    return out


def scaled(document: dict, indices: Iterable[int], factor: float) -> dict:
    """Bandwidth samples x factor (latency samples / factor): factor 0.9 is a 10% drop, 1 / 1.1
    a 10% rise in latency. An atomic row's ops/s follow its bandwidth."""
    chosen = set(indices)

    def change(row: dict) -> None:
        row["samples_gbps"] = [v * factor for v in row.get("samples_gbps", [])]
        for figures in (row.get("directions") or []) + (row.get("flows") or []):
            figures["samples_gbps"] = [v * factor for v in figures["samples_gbps"]]
        if row.get("samples_us"):
            row["samples_us"] = [v / factor for v in row["samples_us"]]
        if isinstance(row.get("atomic_ops_per_s"), dict):  # no raw samples: each statistic scales
            row["atomic_ops_per_s"] = {stat: v * factor for stat, v in row["atomic_ops_per_s"].items()}

    return _map_rows(document, lambda i, r: i in chosen, change)


def perturbed(document: dict, relative: float = 0.01, seed: int = 7) -> dict:
    """Every raw sample x U(1 - relative, 1 + relative), independently."""
    rng = random.Random(seed)

    def jitter(values: list[float]) -> list[float]:
        return [v * (1.0 + rng.uniform(-relative, relative)) for v in values]

    def change(row: dict) -> None:
        row["samples_gbps"] = jitter(row.get("samples_gbps", []))
        for figures in (row.get("directions") or []) + (row.get("flows") or []):
            figures["samples_gbps"] = jitter(figures["samples_gbps"])
        if row.get("samples_us"):
            row["samples_us"] = jitter(row["samples_us"])

    return _map_rows(document, lambda i, r: r.get("status") == "ok", change)


def with_status(document: dict, indices: Iterable[int], status: str = "failed",
                error: str = "synthetic failure: verification mismatch") -> dict:
    """Rows turned `failed`/`skipped`, without figures, as the driver writes them."""
    chosen = set(indices)

    def change(row: dict) -> None:
        row.update(status=status, error=error, bandwidth_gbps=None, time_us=None, samples_gbps=[], samples=0,
                   gbps_per_sm=None, verified=False)
        for key in ("overlap", "directions", "latency_us", "samples_us", "gate_skew_us"):
            row.pop(key, None)

    return _map_rows(document, lambda i, r: i in chosen, change)


def without(document: dict, indices: Iterable[int]) -> dict:
    chosen = set(indices)
    out = copy.deepcopy(document)
    out["results"] = [row for i, row in enumerate(out["results"]) if i not in chosen]
    return out


def _stable_rows(document: dict, stats_field: str, samples_field: str, max_spread: float,
                 min_samples: int) -> list[int]:
    chosen = []
    for index, row in enumerate(document["results"]):
        samples = row.get(samples_field) or []
        stats = row.get(stats_field)
        if row.get("status") != "ok" or not isinstance(stats, dict) or len(samples) < min_samples:
            continue
        if stats["median"] > 0 and (max(samples) - min(samples)) / stats["median"] <= max_spread:
            chosen.append(index)
    return chosen


def stable_bandwidth_rows(document: dict, max_spread: float = 0.04, min_samples: int = 5) -> list[int]:
    """Indices of ok bandwidth rows whose samples lie within `max_spread` of their median and
    that have enough samples for a one-sided Mann-Whitney U test to reach p < 0.05: a 10% drop
    of such a case is unmistakable."""
    return _stable_rows(document, "bandwidth_gbps", "samples_gbps", max_spread, min_samples)


def stable_latency_rows(document: dict, max_spread: float = 0.04, min_samples: int = 5) -> list[int]:
    """The same for latency rows (latency_us, samples_us): a 10% rise of such a case is unmistakable."""
    return _stable_rows(document, "latency_us", "samples_us", max_spread, min_samples)


def write_fixtures(directory: Path) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "synthetic-h200-nv18.json"
    path.write_text(json.dumps(synthetic_results(), indent=1) + "\n", encoding="utf-8")
    return path


def write_group_fixture(directory: Path) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "synthetic-group-4ranks.json"
    path.write_text(json.dumps(synthetic_group_results(), indent=1) + "\n", encoding="utf-8")
    return add_findings(path)


class FindingsUnavailable(RuntimeError):
    """The writer's findings tool (tests/unit/matrix_findings) was not built."""


def findings_tool() -> Path:
    """tests/unit/matrix_findings: P2PBENCH_MATRIX_FINDINGS (ctest sets it), else a build folder's."""
    named = os.environ.get("P2PBENCH_MATRIX_FINDINGS")
    candidates = [Path(named)] if named else sorted(REPO.glob("build*/tests/unit/matrix_findings"))
    for candidate in candidates:
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate
    raise FindingsUnavailable("the group fixture's suspect pairs and rounds agreement come from the writer's code: "
                              "build the project (tests/unit/matrix_findings) or set P2PBENCH_MATRIX_FINDINGS")


def add_findings(path: Path) -> Path:
    """Adds the run's own findings (matrices, rounds_agreement, suspect_pairs) to the file at
    `path`, computed by the code p2pbench writes them with: what a real run's file carries."""
    subprocess.run([str(findings_tool()), str(path), str(path)], check=True, timeout=60)
    return path


# ---- a version 2 run: 4 ranks on 3 GPUs -----------------------------------------------------

GPU_A, GPU_B, GPU_C = ("GPU-3f1e9a0c-7379-46f3-4747-90700159fb33", "GPU-7b2d4410-a2a6-36ac-1237-537664fc77ff",
                       "GPU-c0ffee12-5d1e-4b7a-9c3e-0a1b2c3d4e5f")
GPU_OF_RANK = {0: GPU_A, 1: GPU_A, 2: GPU_B, 3: GPU_C}
NVLINK_PEAK, PCIE_PEAK = 478.116, 63.0
SLOW_PAIR = (2, 0)
SLOW_PAIR_FACTOR = 0.7
ROUNDS_DISAGREEMENT = 0.03          # the rounds' figure of 0 -> 2 is this much below its alone figure
ROUNDS_PAIR = (0, 2)
ALONE_CHECKED = ((0, 2), (2, 1), (3, 0))
# GB/s of one flow alone, per method and link class; ldst cannot map a peer over PCIe (skipped).
GROUP_MODEL = {"ce": {"nvlink": 391.0, "pcie": 52.5, "same_device": 160.0},
               "ldst": {"nvlink": 370.0, "pcie": None, "same_device": 150.0}}
LDST_SKIP = "no peer access between these GPUs (PHB): ldst needs the peer's memory mapped"


def group_link(src: int, dst: int) -> str:
    gpus = {GPU_OF_RANK[src], GPU_OF_RANK[dst]}
    return "same_device" if len(gpus) == 1 else "nvlink" if gpus == {GPU_A, GPU_B} else "pcie"


def group_pairs() -> list[dict]:
    pairs = []
    for src in GPU_OF_RANK:
        for dst in GPU_OF_RANK:
            if src == dst:
                continue
            kind = group_link(src, dst)
            pairs.append(pair_entry(src, dst, same_device=kind == "same_device", link_type=kind,
                                    topo_label={"nvlink": "NV18", "pcie": "PHB", "same_device": "X"}[kind],
                                    nvlink_links=18 if kind == "nvlink" else None,
                                    peak_gbps_per_direction={"nvlink": NVLINK_PEAK, "pcie": PCIE_PEAK}.get(kind)))
    return pairs


def _flow_gbps(method: str, src: int, dst: int) -> float | None:
    gbps = GROUP_MODEL[method][group_link(src, dst)]
    return gbps * SLOW_PAIR_FACTOR if gbps is not None and (src, dst) == SLOW_PAIR else gbps


def _flow(rng: random.Random, src: int, dst: int, gbps: float | None) -> dict:
    kind = group_link(src, dst)
    return flow(src, dst, GPU_OF_RANK[src], GPU_OF_RANK[dst], GiB, _noisy(rng, gbps) if gbps else [],
                same_device=kind == "same_device", peak_gbps={"nvlink": NVLINK_PEAK, "pcie": PCIE_PEAK}.get(kind))


def _ranks_of_gpu() -> dict[str, list[int]]:
    return {uuid: [r for r, u in GPU_OF_RANK.items() if u == uuid] for uuid in dict.fromkeys(GPU_OF_RANK.values())}


def _case(method: str, mode: str, flows: list[dict], efficiency: float = 0.99, **fields) -> dict:
    """A row of concurrent flows; the aggregate's samples: the flows' per-sample sums x efficiency
    (the union of the windows is a little longer than each); one flow's own samples when alone."""
    if any(not f["samples_gbps"] for f in flows):
        return group_row(method, "push", mode, GiB, flows, status="skipped", error=LDST_SKIP, verified=False,
                         ranks_of_gpu=_ranks_of_gpu(), **fields)
    efficiency = efficiency if len(flows) > 1 else 1.0
    totals = [round(sum(values) * efficiency, 4) for values in zip(*(f["samples_gbps"] for f in flows))]
    return group_row(method, "push", mode, GiB, flows, samples_gbps=totals, ranks_of_gpu=_ranks_of_gpu(),
                     overlap=0.995 if len(flows) > 1 else None, iterations=100, **fields)


def _ordered_pairs() -> list[tuple[int, int]]:
    return [(s, d) for s in GPU_OF_RANK for d in GPU_OF_RANK if s != d]


def _rounds() -> list[list[tuple[int, int]]]:
    """A round-robin of 4 ranks: 3 rounds of 2 disjoint pairs, each one way, then the other."""
    halves = [[(0, 1), (2, 3)], [(0, 2), (1, 3)], [(0, 3), (1, 2)]]
    return halves + [[(b, a) for a, b in pairs] for pairs in halves]


def _group_rows(rng: random.Random) -> list[dict]:
    rows = []
    for method in ("ce", "ldst"):
        rows += [_case(method, "uni", [_flow(rng, s, d, _flow_gbps(method, s, d))]) for s, d in _ordered_pairs()]
    for src, dst in [(s, d) for s, d in _ordered_pairs() if s < d]:
        flows = [_flow(rng, a, b, _flow_gbps("ce", a, b) * 0.99) for a, b in ((src, dst), (dst, src))]
        rows.append(_case("ce", "bidir", flows))
    for index, pairs in enumerate(_rounds()):
        flows = [_flow(rng, s, d, _flow_gbps("ce", s, d) * (1 - ROUNDS_DISAGREEMENT if (s, d) == ROUNDS_PAIR else 0.998))
                 for s, d in pairs]
        rows.append(_case("ce", "uni", flows, schedule="rounds", round_index=index))
    rows += [_case("ce", "uni", [_flow(rng, s, d, _flow_gbps("ce", s, d))], schedule="alone_check")
             for s, d in ALONE_CHECKED]
    one_to_all = [_flow(rng, 2, d, gbps) for d, gbps in ((0, 136.0), (1, 195.0), (3, 52.0))]
    rows.append(_case("ce", "uni", one_to_all, pattern="one_to_all", schedule=None))
    ring = [_flow(rng, s, (s + 1) % 4, _flow_gbps("ce", s, (s + 1) % 4)) for s in GPU_OF_RANK]
    rows.append(_case("ce", "uni", ring, pattern="ring", schedule=None, efficiency=0.97))
    latency = latency_row("latency_signal", 8, _noisy(rng, 1.24, noise=0.01), src_rank=0, dst_rank=2,
                          iterations=20000, protocol="flag_in_data")
    latency.update(pattern="matrix", schedule="sequential", round=None, flows=[_flow(rng, 0, 2, None)],
                   aggregate=None, gpus=[], overlap=None)
    latency["flows"][0]["bytes"] = 8
    return rows + [latency]


def synthetic_group_results(seed: int = 20261201, label: str = "group-4ranks") -> dict:
    """A schema version 2 document of 4 ranks on 3 GPUs (see the module docstring)."""
    rng = random.Random(seed)
    gpus = [gpu_entry(rank, "NVIDIA H200", pci_bus_id=f"0000:00:0{6 + 'ABC'.index(_gpu_letter(rank))}.0",
                      uuid=GPU_OF_RANK[rank], sm_count=132, compute_capability="9.0", driver_version="580.159.04",
                      device_index="ABC".index(_gpu_letter(rank)))
            for rank in GPU_OF_RANK]
    meta = new_meta(label, config={"label": label, "samples": SAMPLES, "synthetic": True}, gpus=gpus,
                    hosts=["h200-node"], command_line=["p2pbench", "--config", "configs/matrix.json"],
                    cuda_driver_version=13000, cuda_runtime_version=13000, verify=True,
                    topology={"available": True, "link_type": "same_device", "topo_label": "X",
                              "peak_gbps_per_direction": None},
                    p2p={"known": True, "access_supported": True, "native_atomics_supported": True,
                         "performance_rank": 0, "source": "cudaDeviceGetP2PAttribute"},
                    timestamp_utc="2026-12-01T12:00:00Z")
    meta.update(same_device=True, tool={"name": "p2pbench", "version": "0.2.0", "git_sha": "synthetic"})
    add_group(meta, nodes=[sorted(GPU_OF_RANK)], pairs=group_pairs())
    return new_document(meta, _group_rows(rng), schema_version=GROUP_SCHEMA_VERSION)


def _gpu_letter(rank: int) -> str:
    return "ABC"[[GPU_A, GPU_B, GPU_C].index(GPU_OF_RANK[rank])]


def relabel_ranks(document: dict, new_rank: dict[int, int]) -> dict:
    """The same run with rank r renumbered new_rank[r] everywhere (meta and rows): the same GPUs,
    pairs and figures under other rank numbers, as a rerun with another rank order would number them."""
    out = copy.deepcopy(document)
    meta = out["meta"]

    def renumber(entry: dict, *keys: str) -> None:
        for key in keys:
            if isinstance(entry.get(key), int):
                entry[key] = new_rank[entry[key]]

    for entry in meta["gpus"] + meta["ranks"]:
        renumber(entry, "rank")
    meta["gpus"].sort(key=lambda g: g["rank"])
    meta["ranks"].sort(key=lambda r: r["rank"])
    meta["group"]["nodes"] = [sorted(new_rank[r] for r in node) for node in meta["group"]["nodes"]]
    for pair in meta["pairs"]:
        renumber(pair, "src_rank", "dst_rank")
    meta["pairs"].sort(key=lambda p: (p["src_rank"], p["dst_rank"]))
    for row in out["results"]:
        renumber(row, "src_rank", "dst_rank")
        for item in row.get("flows") or []:
            renumber(item, "src_rank", "dst_rank")
        for gpu in row.get("gpus") or []:
            gpu["ranks"] = sorted(new_rank[r] for r in gpu["ranks"])
    return out


def scaled_flow(document: dict, src_gpu: str, dst_gpu: str, factor: float) -> dict:
    """Every single-flow row from src_gpu to dst_gpu, and that flow inside rounds, with its samples
    x factor (the round's aggregate drops by the flow's share): one physical pair slowed."""
    out = copy.deepcopy(document)
    for row in out["results"]:
        flows = row.get("flows") or []
        hit = [f for f in flows if (f["src_gpu"], f["dst_gpu"]) == (src_gpu, dst_gpu) and f["samples_gbps"]]
        if row.get("status") != "ok" or not hit or not (len(flows) == 1 or row.get("schedule") == "rounds"):
            continue
        for item in hit:
            lost = [v * (1 - factor) for v in item["samples_gbps"]]
            item["samples_gbps"] = [v * factor for v in item["samples_gbps"]]
            row["samples_gbps"] = [max(t - x, 1e-3) for t, x in zip(row["samples_gbps"], lost)]
        refresh_statistics(row)
    return out


# ---- a version 1 run written as version 2 --------------------------------------------------

def _v2_flows(row: dict, uuids: dict[int, str], peak: float | None) -> list[dict]:
    """A version 1 row's flows: its pair (a host-link row: its rank on both ends), a bidir row's
    two directions with their figures."""
    ok = row.get("status") == "ok" and isinstance(row.get("bandwidth_gbps"), dict)
    if row["mode"] == "bidir":
        directions = row.get("directions") or [{"src_rank": 0, "dst_rank": 1}, {"src_rank": 1, "dst_rank": 0}]
        ends = [(d["src_rank"], d["dst_rank"], d.get("samples_gbps") if ok else []) for d in directions]
    else:
        ends = [(row["src_rank"], row["dst_rank"], row.get("samples_gbps") if ok else [])]
    return [flow(src, dst, uuids[src], uuids[dst], row["bytes"], samples or [],
                 peak_gbps=peak if src != dst else None) for src, dst, samples in ends]


def as_version_2(document: dict) -> dict:
    """A two-rank version 1 document as schema version 2 (docs/groups.md): rows gain pattern
    matrix, schedule sequential, their flows, aggregate and per-GPU traffic; meta gains the group
    and its two pairs, from meta.topology."""
    out = copy.deepcopy(document)
    meta = out["meta"]
    uuids = {g["rank"]: g["uuid"] for g in meta["gpus"]}
    topology = meta.get("topology") or {}
    peak = topology.get("peak_gbps_per_direction")
    pairs = [pair_entry(s, 1 - s, link_type=topology.get("link_type", "unknown"), topo_label=topology.get("topo_label"),
                        nvlink_links=(topology.get("nvlink") or {}).get("active_links"), peak_gbps_per_direction=peak)
             for s in (0, 1)]
    add_group(meta, nodes=[[0, 1]], pairs=pairs)
    ranks_of_gpu = {u: [r for r, v in uuids.items() if v == u] for u in uuids.values()}
    for row in out["results"]:
        flows = _v2_flows(row, uuids, peak)
        ok = row.get("status") == "ok" and isinstance(row.get("bandwidth_gbps"), dict)
        peaks = [f["peak_gbps"] for f in flows]
        total_peak = sum(peaks) if all(peaks) else None
        row.pop("directions", None)
        row.update(pattern="matrix", schedule="sequential", round=None, flows=flows,
                   gpus=gpu_traffic(flows, ranks_of_gpu) if ok else [],
                   overlap=row.get("overlap") if len(flows) > 1 else None,
                   aggregate={"bandwidth_gbps": row["bandwidth_gbps"], "samples_gbps": list(row["samples_gbps"]),
                              "peak_gbps": total_peak, "pct_of_peak": pct_of(row["bandwidth_gbps"]["median"], total_peak)}
                   if ok else None)
    out["schema_version"] = GROUP_SCHEMA_VERSION
    return out


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-o", "--output-dir", type=Path, default=Path("."), help="folder to write into")
    output = parser.parse_args().output_dir
    print(write_fixtures(output))
    print(write_group_fixture(output))
