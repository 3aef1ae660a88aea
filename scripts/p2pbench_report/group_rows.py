"""A version 2 row's group fields (docs/groups.md) as flat columns of the loader's DataFrame.

A version 2 row carries `flows` (each with ranks, GPU identity, bytes, statistics, samples),
`aggregate` and `gpus` (per-GPU egress and ingress). One row may hold 56 flows (all_to_all on 8
GPUs), so flows are not spread into flows_<i>_<field> columns; each per-flow figure is one list
column instead, in flow order:

  flow_count                      how many flows
  flows_src_rank, flows_dst_rank  [0, 1, ...]
  flows_src_gpu, flows_dst_gpu    GPU UUIDs
  flows_same_device, flows_same_node, flows_bytes
  flows_bandwidth_gbps_median, flows_peak_gbps, flows_pct_of_peak   (None where a flow has none)
  flows_gbps_min_iteration, flows_iteration_time_us_p99, flows_iteration_time_us_p99_9
                                  each flow's bytes over its longest transfer (GB/s) and its
                                  per-transfer tails (µs); only in files whose flows carry them
  src_gpu, dst_gpu                the single flow's GPUs (None in rows of several flows)
  same_device                     True when some flow joins two ranks of one GPU: the row's figure
                                  is then no P2P figure
  aggregate_peak_gbps, aggregate_pct_of_peak   (bandwidth_gbps_* is the aggregate itself)
  gpus_uuid, gpus_egress_gbps, gpus_ingress_gbps

A bidir row carries flows instead of version 1's `directions`; its directions_<i>_<field> columns
(src_rank, dst_rank, bandwidth_gbps_<stat>, time_us_<stat>, samples_gbps) are made from its
flows, so that everything written for version 1 bidir rows (compare against nvbandwidth's
sum of directions, uni-vs-bidir bars) reads them unchanged.
"""

from __future__ import annotations

from typing import Any, Callable

GROUP_FIELDS = ("flows", "aggregate", "gpus")
FLOW_LIST_FIELDS = ("src_rank", "dst_rank", "src_gpu", "dst_gpu", "same_device", "same_node", "bytes")
FLOW_FIGURES = ("peak_gbps", "pct_of_peak")
FLOW_TAILS = ("p99", "p99_9")  # per flow, as lists: the tails a reader compares between flows
DIRECTION_FIELDS = ("src_rank", "dst_rank", "bandwidth_gbps", "time_us", "samples_gbps")
LIST_COLUMN_PREFIXES = ("flows_", "gpus_")  # list columns that are not raw samples


def is_group_row(row: dict) -> bool:
    """A version 2 row: it has a list of flows (version 1 rows have none)."""
    return isinstance(row.get("flows"), list)


def _median(figures: Any) -> float | None:
    return figures.get("median") if isinstance(figures, dict) else None


def _stat(figures: Any, stat: str) -> float | None:
    return figures.get(stat) if isinstance(figures, dict) else None


def _flow_columns(flows: list[dict]) -> dict[str, Any]:
    columns: dict[str, Any] = {"flow_count": len(flows)}
    for field in FLOW_LIST_FIELDS + FLOW_FIGURES:
        columns[f"flows_{field}"] = [f.get(field) for f in flows]
    columns["flows_bandwidth_gbps_median"] = [_median(f.get("bandwidth_gbps")) for f in flows]
    if any("iteration_time_us" in f or "gbps_min_iteration" in f for f in flows):  # files since the tails
        columns["flows_gbps_min_iteration"] = [f.get("gbps_min_iteration") for f in flows]
        for stat in FLOW_TAILS:
            columns[f"flows_iteration_time_us_{stat}"] = [_stat(f.get("iteration_time_us"), stat) for f in flows]
    single = flows[0] if len(flows) == 1 else {}
    columns["src_gpu"], columns["dst_gpu"] = single.get("src_gpu"), single.get("dst_gpu")
    columns["same_device"] = any(bool(f.get("same_device")) for f in flows)
    return columns


def _directions(flows: list[dict], flatten: Callable[..., dict]) -> dict[str, Any]:
    """directions_<i>_... from the flows of a bidir row, as version 1 wrote `directions`."""
    columns: dict[str, Any] = {}
    for index, item in enumerate(flows):
        figures = {field: item.get(field) for field in DIRECTION_FIELDS}
        columns.update(flatten(figures, prefix=f"directions_{index}_"))
    return columns


def group_columns(row: dict, flatten: Callable[..., dict]) -> dict[str, Any]:
    """The columns of a version 2 row's group fields; `flatten` is the loader's flatten_row."""
    flows = [f for f in row.get("flows") or [] if isinstance(f, dict)]
    aggregate = row.get("aggregate") if isinstance(row.get("aggregate"), dict) else {}
    gpus = [g for g in row.get("gpus") or [] if isinstance(g, dict)]
    columns = _flow_columns(flows)
    columns["aggregate_peak_gbps"] = aggregate.get("peak_gbps")
    columns["aggregate_pct_of_peak"] = aggregate.get("pct_of_peak")
    for field in ("uuid", "egress_gbps", "ingress_gbps"):
        columns[f"gpus_{field}"] = [g.get(field) for g in gpus]
    if row.get("mode") == "bidir":
        columns.update(_directions(flows, flatten))
    return columns


def without_group_fields(row: dict) -> dict:
    return {key: value for key, value in row.items() if key not in GROUP_FIELDS}


def is_list_column(column: str) -> bool:
    """flows_src_rank, gpus_uuid, ...: per-flow / per-GPU lists (not raw samples)."""
    return column.startswith(LIST_COLUMN_PREFIXES)
