"""The figures a results file's rows call for, worked out from the rows themselves (not from the
plotting code): per direction and mode, a size figure where a method's bandwidth was measured at
several sizes, else bars of the cases; latency the same way (per method, protocol and rank pair);
atomics by type and pattern, never by size. Collective, pipeline and interference rows, and rows of
patterns of several pairs at once, have figures of their own, not counted here. Used by test_committed_files.py on every committed file."""

from __future__ import annotations

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
PREFIXES = ("size_", "bars_", "latency", "atomics")  # the figures expected_figure_names covers


def _ok(row: dict, measure: str) -> bool:
    return row["status"] == "ok" and isinstance(row.get(measure), dict)


# Patterns whose rows measure several pairs at once (all_to_all, ring, ...): their own figure
# (patterns_*), never a size or bar figure of pairs alone.
PAIR_PATTERNS = (None, "matrix", "sampled", "flows")


def expected_bandwidth_figures(document: dict) -> set[str]:
    """size_<d>_<m> where some method's bandwidth spans several sizes, else bars_<d>_<m>."""
    sizes: dict[tuple, set] = {}
    for row in document["results"]:
        if row.get("pattern") not in PAIR_PATTERNS:
            continue
        if _ok(row, "bandwidth_gbps") and row["method"] not in ("atomic", "interference") and "collective" not in row:
            sizes.setdefault((row["method"], row["direction"], row["mode"]), set()).add(row["bytes"])
    swept = {f"size_{d}_{m}" for (_, d, m), s in sizes.items() if len(s) > 1}
    single = {f"bars_{d}_{m}" for (_, d, m) in sizes} - {f"bars_{n[len('size_'):]}" for n in swept}
    return swept | single


def expected_latency_figures(document: dict) -> set[str]:
    """latency_<d>_<m> where a method x protocol x rank pair spans several sizes, else latency_bars_<d>_<m>."""
    sizes: dict[tuple, dict[tuple, set]] = {}
    for row in document["results"]:
        if _ok(row, "latency_us"):
            series = (row["method"], row.get("protocol"), row["src_rank"], row["dst_rank"])
            sizes.setdefault((row["direction"], row["mode"]), {}).setdefault(series, set()).add(row["bytes"])
    return {f"latency_{d}_{m}" if any(len(s) > 1 for s in series.values()) else f"latency_bars_{d}_{m}"
            for (d, m), series in sizes.items()}


def expected_atomics_figures(document: dict) -> set[str]:
    return {f"atomics_{r['direction']}" for r in document["results"] if r["method"] == "atomic" and r["status"] == "ok"}


def expected_figure_names(document: dict) -> set[str]:
    return expected_bandwidth_figures(document) | expected_latency_figures(document) | expected_atomics_figures(document)
