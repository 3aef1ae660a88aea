"""The rows `compare` and `regress` match across files, and how (cases.py keys).

Every file version 2: cases are matched by GPU identity (cases.identity by_gpu): the same
physical pair is compared even where the runs numbered their ranks differently. A round of the
matrix (schedule `rounds`) is a set of disjoint pairs the scheduler chose from the rank
numbering, so a round as a whole is not a case another run repeats; each of its flows is
compared on its own instead: the round's row becomes one row per flow, with that flow's ranks,
GPUs, statistics and raw samples (and the round's pattern, schedule and index).
Any version 1 file among them: rows matched by rank, as version 1 always was (rounds still split
per flow, so that a version 2 file's pairs meet a version 1 file's only pair).
"""

from __future__ import annotations

import pandas as pd

from p2pbench_report.group_rows import FLOW_FIGURES, FLOW_LIST_FIELDS
from p2pbench_report.loader import STATS_FIELDS, ResultSet

SPLIT_SCHEDULES = ("rounds",)


def matches_by_gpu(result_sets: list[ResultSet]) -> bool:
    """True when every file is version 2 (has meta.group): match by GPU identity."""
    return bool(result_sets) and all(isinstance(r.document["meta"].get("group"), dict) for r in result_sets)


def _flow_row(row: pd.Series, flow: dict) -> pd.Series:
    """The round's row as if it had measured `flow` alone: the flow's ranks, GPUs and figures."""
    out = row.copy()
    out["src_rank"], out["dst_rank"] = flow.get("src_rank"), flow.get("dst_rank")
    out["src_gpu"], out["dst_gpu"] = flow.get("src_gpu"), flow.get("dst_gpu")
    out["same_device"] = bool(flow.get("same_device"))
    out["flow_count"] = 1
    for field in FLOW_LIST_FIELDS + FLOW_FIGURES:
        out[f"flows_{field}"] = [flow.get(field)]
    for field in ("bandwidth_gbps", "time_us"):
        stats = flow.get(field) if isinstance(flow.get(field), dict) else {}
        for stat in STATS_FIELDS[field]:
            out[f"{field}_{stat}"] = stats.get(stat, float("nan"))
    out["flows_bandwidth_gbps_median"] = [out["bandwidth_gbps_median"]]
    out["samples_gbps"] = list(flow.get("samples_gbps") or [])
    out["pct_of_peak"] = flow.get("pct_of_peak")
    out["overlap"] = float("nan")
    return out


def comparison_rows(result_set: ResultSet) -> pd.DataFrame:
    """The file's rows with every rounds row split into one row per flow (see the module doc)."""
    frame = result_set.rows
    if "schedule" not in frame.columns or not frame["schedule"].isin(SPLIT_SCHEDULES).any():
        return frame
    document_rows = result_set.document["results"]
    pieces = []
    for _, row in frame.iterrows():
        if row.get("schedule") in SPLIT_SCHEDULES:
            flows = document_rows[int(row["row_index"])].get("flows") or []
            pieces += [_flow_row(row, flow) for flow in flows]
        else:
            pieces.append(row)
    return pd.DataFrame(pieces).reset_index(drop=True).astype(frame.dtypes.to_dict(), errors="ignore")
