"""The GEMM -> reduce-scatter pipeline's overlap efficiency (rows with a `gemm_rs` object).

One pipeline shape is the rows of one file sharing the GEMM (m, k), the tiles, the reduce-scatter's
blocks and threads and the rank count; its five methods time the same work five ways. Overlap
efficiency = (T_sequential - T_fused) / min(T_gemm_only, T_rs_only), from the rows' median time per
operation: 1 where fusing hides the shorter part entirely, 0 where it saves nothing, below 0 where
it costs. The fused pipeline with green-context SM groups (gemm_rs_fused_green) gets its own
efficiency from the same terms.
"""

from __future__ import annotations

from p2pbench_report.methods import METHOD_ORDER, METHODS

# The pipeline's methods: those whose rows carry the `gemm_rs` field they declare, named
# gemm_rs_<variant> (fused, sequential, beside, gemm_only, rs_only, fused_green), in report order.
FIELD = "gemm_rs"
_PIPELINE_METHODS = {m["name"] for m in METHODS if FIELD in m.get("row_fields", [])}
VARIANTS = {name: name.removeprefix(FIELD + "_") for name in METHOD_ORDER if name in _PIPELINE_METHODS}
# Each fused variant's overlap efficiency, by the key it takes in a shape.
EFFICIENCIES = {"fused": "overlap_efficiency", "fused_green": "overlap_efficiency_green"}


def pipeline_rows(document: dict) -> list[dict]:
    return [r for r in document.get("results") or []
            if r.get("status") == "ok" and isinstance(r.get(FIELD), dict) and isinstance(r.get("time_us"), dict)
            and r.get("method") in VARIANTS]


def _ranks(row: dict) -> int:
    return len({end for f in row.get("flows") or [] for end in (f["src_rank"], f["dst_rank"])})


def pipeline_shapes(document: dict) -> list[dict]:
    """Per shape: m, k, tiles, blocks, threads, ranks, each variant's median time (µs) and, where
    all four terms were measured, each fused variant's overlap efficiency; in the order first seen."""
    shapes: dict[tuple, dict] = {}
    for row in pipeline_rows(document):
        g = row[FIELD]
        key = (g["m"], g["k"], g["tiles"], row.get("blocks"), row.get("threads"), _ranks(row))
        shape = shapes.setdefault(key, dict(zip(("m", "k", "tiles", "blocks", "threads", "ranks"), key), times_us={}))
        shape["times_us"][VARIANTS[row["method"]]] = row["time_us"]["median"]
    for shape in shapes.values():
        t = shape["times_us"]
        for fused, key in EFFICIENCIES.items():
            if {fused, "sequential", "gemm_only", "rs_only"} <= set(t) and min(t["gemm_only"], t["rs_only"]) > 0:
                shape[key] = (t["sequential"] - t[fused]) / min(t["gemm_only"], t["rs_only"])
    return list(shapes.values())
