"""What the figures' series are made of, shared by plots/figures.py (curves) and plots/bars.py (bars): the
measures (bandwidth, latency, time per transfer), the rows each plots with their series name,
kernel shape and rank pair, the shape measured at the most sizes, series order and colours, and the
log-2 size axis."""

from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd
from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

import p2pbench_report.plots.backend  # noqa: F401  (selects Agg)
from p2pbench_report.cases import (BANDWIDTH, LATENCY, METHOD_ORDER, KERNEL_VARIABLES, PAYLOAD_VARIABLES,
                                   Metric, describe_config, describe_ranks, plain_value)
from p2pbench_report.loader import ResultSet
from p2pbench_report.methods import METHOD_COLORS, names_of_kinds
from p2pbench_report.plots.style import MODE_WORDS
from p2pbench_report.units import BANDWIDTH_AXIS_LABEL, LATENCY_AXIS_LABEL, format_size


SHAPE_AXES = KERNEL_VARIABLES + ("buffer_pool_bytes",) + PAYLOAD_VARIABLES
PALETTE = ("tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple", "tab:brown", "tab:pink", "tab:olive",
           "tab:cyan", "tab:gray")


@dataclass(frozen=True)
class Measure:
    """What a family of figures shows: which rows, the y axis, which end is better."""

    metric: Metric
    title: str
    axis_label: str
    band: str                  # what the shaded band (curves) or whisker (bars) spans
    low_column: str
    high_column: str
    split_by: tuple[str, ...]  # payload variables that make separate series (not shapes of one series)
    curve_name: str            # figure names: <curve_name>_<direction>_<mode>, <bars_name>_<direction>_<mode>
    bars_name: str
    fixed_colors: bool         # each method's own color (METHOD_COLORS), else the palette in order
    mode_words: dict
    log_y: bool = False        # log-log: small messages keep their own decade

    @property
    def higher_is_better(self) -> bool:
        return self.metric.higher_is_better


BANDWIDTH_MEASURE = Measure(BANDWIDTH, "Bandwidth", BANDWIDTH_AXIS_LABEL, "min–max", "bandwidth_gbps_min",
                            "bandwidth_gbps_max", (), "size", "bars", True, MODE_WORDS)
# Latency bands stop at p95: the max of a few thousand round trips is one preempted sample.


LATENCY_MEASURE = Measure(LATENCY, "Latency", LATENCY_AXIS_LABEL, "min–p95", "latency_us_min", "latency_us_p95",
                          ("protocol",), "latency", "latency_bars", False,
                          {"uni": "one direction", "bidir": "both directions at once"})
# Time per transfer of the bandwidth rows, log-log: below ~64 KiB the bandwidth axis squeezes every
# method against 0, while the time shows the fixed cost of a transfer.
TIME_MEASURE = Measure(Metric("time", "time_us_median", "", "µs", False), "Time per transfer",
                       "time per transfer (µs, microseconds; log scale)", "min–max", "time_us_min", "time_us_max",
                       (), "time", "", True, MODE_WORDS, log_y=True)


def _one_pair_only(frame: pd.DataFrame) -> pd.Series:
    """Rows whose flows all join one pair of ranks (one flow, or a bidir pair's two directions)."""
    if "flows_src_rank" not in frame.columns:
        return pd.Series(False, index=frame.index)
    return pd.Series([isinstance(src, list) and isinstance(dst, list) and len({frozenset(e) for e in zip(src, dst)}) == 1
                      for src, dst in zip(frame["flows_src_rank"], frame["flows_dst_rank"])], index=frame.index)


def _single_flow(frame: pd.DataFrame) -> pd.Series:
    """Rows of one flow (a `flows` case of one flow: a pair on its own, as the matrix measures it)."""
    if "flows_src_rank" not in frame.columns:
        return pd.Series(False, index=frame.index)
    return pd.Series([isinstance(src, list) and len(src) == 1 for src in frame["flows_src_rank"]], index=frame.index)


def pair_cases(frame: pd.DataFrame) -> pd.Series:
    """Which rows measure one pair on its own (a mask): every version 1 row; of version 2 rows
    those of the matrix one pair at a time (sequential, alone_check, and rounds that held that one
    pair only: nothing else ran beside it), `sampled`, and `flows` cases of a single flow; not
    rounds of several pairs (pairs under load) nor the other patterns (plots/patterns.py,
    plots/matrix.py draw those), and never a pair of
    ranks on one GPU (same_device: no P2P figure) unless every row is one: a one-GPU run is drawn
    as it is, its series marked "same GPU" (measured_rows)."""
    if "pattern" not in frame.columns:
        return pd.Series(True, index=frame.index)
    pattern, schedule = frame["pattern"], frame["schedule"] if "schedule" in frame.columns else None
    alone = pattern.isna() | pattern.isin(("matrix", "sampled")) | ((pattern == "flows") & _single_flow(frame))
    if schedule is not None:
        alone &= ~schedule.isin(("rounds",)) | _one_pair_only(frame)
    if "same_device" in frame.columns:
        same = frame["same_device"].fillna(False).astype(bool)
        if not same.all():
            alone &= ~same
    return alone


HOW_MEASURED = {"alone_check": "re-measured alone", "sampled": "sampled"}


def _how_measured(frame: pd.DataFrame) -> list[str]:
    """'' for the matrix's own figure of a pair, else how the row was measured (bar labels say it)."""
    schedule = frame["schedule"] if "schedule" in frame.columns else pd.Series(None, index=frame.index)
    pattern = frame["pattern"] if "pattern" in frame.columns else pd.Series(None, index=frame.index)
    return [HOW_MEASURED.get(s if isinstance(s, str) else None) or HOW_MEASURED.get(p if isinstance(p, str) else None)
            or "" for s, p in zip(schedule, pattern)]


def _without_repeated_checks(frame: pd.DataFrame) -> pd.DataFrame:
    """Drops the alone_check rows of pairs the matrix itself measured alone: the same figure
    twice would read as two pairs (the agreement_* figure compares the two)."""
    key = ["series", "direction", "mode", "bytes", "shape", "pair"]
    own = set(map(tuple, frame.loc[frame["how"] == "", key].itertuples(index=False, name=None)))
    repeated = [how == HOW_MEASURED["alone_check"] and k in own
                for how, k in zip(frame["how"], frame[key].itertuples(index=False, name=None))]
    return frame[~pd.Series(repeated, index=frame.index)]


def _pair_text(row: dict) -> str:
    """describe_ranks, except that a version 2 bidir row of ranks 0 and 1 says '0→1,1→0', not
    'both' (version 1's name for its only pair): with more ranks, 'both' names no pair."""
    text = describe_ranks(row)
    src, dst = row.get("flows_src_rank"), row.get("flows_dst_rank")
    if text == "both" and isinstance(src, list) and isinstance(dst, list) and src:
        return ",".join(f"{s}→{d}" for s, d in zip(src, dst))
    return text


def measured_rows(result_set: ResultSet, measure: Measure) -> pd.DataFrame:
    """The file's ok rows of the measure's metric with plotting columns: median, low, high,
    series (the method, with the split_by values: 'latency_signal flag_in_data'), shape (the other
    kernel and payload axes as (axis, value) pairs), pair, how ('' for the matrix's own figure,
    're-measured alone', 'sampled'). Only rows of one pair measured alone (pair_cases), each
    pair's alone_check left out where the matrix measured that pair alone itself."""
    frame = result_set.rows
    metric = measure.metric
    frame = frame[(frame["status"] == "ok") & (frame["metric"] == metric.name)
                  & frame[metric.median_column].notna() & pair_cases(frame)
                  & ~frame["method"].isin(names_of_kinds("interference"))].copy()  # plots/interference.py draws those
    if frame.empty:
        return frame
    frame["median"] = frame[metric.median_column]
    frame["low"] = frame[measure.low_column].fillna(frame["median"])
    frame["high"] = frame[measure.high_column].fillna(frame["median"])
    shape_axes = [a for a in SHAPE_AXES if a not in measure.split_by]  # split_by is in the series name
    # One pass over plain records: pandas' iterrows builds a Series per row, most of a file's plot time.
    records = frame.to_dict("records")
    frame["series"] = [" ".join([row["method"]] + [str(v) for v in (plain_value(row.get(c)) for c in measure.split_by)
                                                   if v is not None]) + (" · same GPU" if row.get("same_device") is True else "")
                       for row in records]
    frame["shape"] = [tuple((a, plain_value(row.get(a))) for a in shape_axes) for row in records]
    frame["pair"] = [_pair_text(row) for row in records]
    frame["how"] = _how_measured(frame)
    return _without_repeated_checks(frame)


def bandwidth_rows(result_set: ResultSet) -> pd.DataFrame:
    """The file's ok bandwidth rows (see measured_rows), with sms: SMs used, else blocks."""
    frame = measured_rows(result_set, BANDWIDTH_MEASURE)
    if not frame.empty:
        frame["sms"] = frame["sms_used"].fillna(frame["blocks"])
    return frame


def shape_text(shape: tuple) -> str:
    return describe_config(pd.Series(dict(shape)))


def shape_order(shape: tuple) -> tuple:
    """Sorts shapes by their numbers (b8 before b132), null axes last."""
    return tuple((value is None, value if isinstance(value, (int, float)) else 0, str(value)) for _, value in shape)


def size_series(rows: pd.DataFrame, measure: Measure = BANDWIDTH_MEASURE) -> tuple[pd.DataFrame, str]:
    """(per-size points, description) of one series: the shape measured at the most sizes, or
    the best (highest bandwidth, lowest latency) of several such shapes at each size."""
    sizes_per_shape = rows.groupby("shape")["bytes"].nunique()
    spanning = sizes_per_shape[sizes_per_shape == sizes_per_shape.max()].index.tolist()
    chosen = rows[rows["shape"].isin(spanning)]
    per_size = chosen.groupby("bytes")["median"]
    best = chosen.loc[per_size.idxmax() if measure.higher_is_better else per_size.idxmin()].sort_values("bytes")
    if len(spanning) == 1:
        return best, shape_text(spanning[0])
    return best, f"best of {len(spanning)} shapes"


def power_of_two_axis(axis, values) -> None:
    """Log-2 axis with ticks at powers of two labelled 4K/1M/1G, at most ~10 labels."""
    values = [v for v in values if v and v > 0]
    low, high = int(math.floor(math.log2(min(values)))), int(math.ceil(math.log2(max(values))))
    step = max(1, math.ceil((high - low + 1) / 10))
    ticks = [2.0**e for e in range(low, high + 1) if (e - low) % step == 0]
    axis.set_major_locator(FixedLocator(ticks))
    axis.set_minor_locator(NullLocator())
    axis.set_major_formatter(FuncFormatter(lambda v, _pos: format_size(v)))


def direction_mode_combos(prepared: list[pd.DataFrame]) -> list[tuple[str, str]]:
    return sorted({(d, m) for rows in prepared if not rows.empty for d, m in zip(rows["direction"], rows["mode"])},
                  key=lambda dm: (dm[0] != "push", dm[1] != "uni"))


def series_order(rows: pd.DataFrame) -> list[str]:
    """The rows' series names, methods in the fixed order (then by name)."""
    firsts = rows.drop_duplicates("series")
    ranked = [(METHOD_ORDER.index(m) if m in METHOD_ORDER else 99, name)
              for m, name in zip(firsts["method"], firsts["series"])]
    return [name for _, name in sorted(ranked)]


def series_colors(prepared: list[pd.DataFrame], measure: Measure) -> dict[str, str]:
    """Bandwidth series keep their method's color (all bandwidth figures agree); latency series,
    several per method (one per protocol), take the palette's colors in order."""
    names = [n for rows in prepared if not rows.empty for n in series_order(rows)]
    names = list(dict.fromkeys(names))
    if measure.fixed_colors:
        return {name: METHOD_COLORS.get(name, "tab:gray") for name in names}
    return {name: PALETTE[index % len(PALETTE)] for index, name in enumerate(names)}


def of_direction_mode(rows: pd.DataFrame, direction: str, mode: str) -> pd.DataFrame:
    return rows[(rows["direction"] == direction) & (rows["mode"] == mode)] if not rows.empty else rows
