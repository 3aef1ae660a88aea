"""Which GPUs a results row moved data between, and whether it stayed within one GPU.

Two ranks may share a GPU (docs/groups.md): a flow between them never crosses a link, so its
figure is the GPU's own memory bandwidth, not P2P. The exports must therefore name every GPU a
row touched and mark such rows; this is the one place that decides it, for both file versions:

  version 2 rows: their `flows` (src_gpu, dst_gpu, same_device; a flow without same_device is
                  same-GPU when both UUIDs are known and equal);
  version 1 rows: their ranks (a bidir row: its `directions`) through meta.gpus; same-GPU when
                  both ranks' UUIDs are equal, or, where UUIDs are missing, when meta.same_device
                  says so. A row whose two ends are one rank (h2d, d2h: host and GPU) is never
                  same-GPU.
"""

from __future__ import annotations

from dataclasses import dataclass

SAME, DIFFERENT, MIXED = "true", "false", "mixed"


@dataclass(frozen=True)
class RowGpus:
    """Per flow, in flow order: source GPU, destination GPU (UUIDs, None where unknown), and
    whether the flow stayed within one GPU."""

    src: tuple[str | None, ...]
    dst: tuple[str | None, ...]
    same: tuple[bool, ...]

    @property
    def uuids(self) -> list[str]:
        """Every GPU of the row: each flow's source then destination, in flow order, once each."""
        ordered = [u for pair in zip(self.src, self.dst) for u in pair if u]
        return list(dict.fromkeys(ordered))

    @property
    def same_gpu(self) -> str:
        """'true' when every flow stayed within one GPU, 'false' when none did, 'mixed' otherwise."""
        if self.same and all(self.same):
            return SAME
        return MIXED if any(self.same) else DIFFERENT

    @property
    def is_p2p(self) -> bool:
        """True when no flow stayed within one GPU: only then is the row's figure a P2P figure."""
        return not any(self.same)


def _uuid(value) -> str | None:
    return value if isinstance(value, str) and value else None


def _flow_gpus(flows: list[dict]) -> RowGpus:
    src = tuple(_uuid(f.get("src_gpu")) for f in flows)
    dst = tuple(_uuid(f.get("dst_gpu")) for f in flows)
    same = tuple(bool(f["same_device"]) if isinstance(f.get("same_device"), bool) else (s is not None and s == d)
                 for f, s, d in zip(flows, src, dst))
    return RowGpus(src, dst, same)


def _rank_pairs(row: dict) -> list[tuple]:
    """(source rank, destination rank) of each flow of a version 1 row; a bidir row without
    directions: 0 -> 1 and 1 -> 0."""
    if row.get("src_rank") is not None or row.get("dst_rank") is not None:
        return [(row.get("src_rank"), row.get("dst_rank"))]
    directions = [d for d in row.get("directions") or [] if isinstance(d, dict)]
    if directions:
        return [(d.get("src_rank"), d.get("dst_rank")) for d in directions]
    return [(0, 1), (1, 0)] if row.get("mode") == "bidir" else [(0, 1)]


def row_gpus(meta: dict, row: dict) -> RowGpus:
    """The GPUs of one results row (see the module docstring)."""
    flows = [f for f in row.get("flows") or [] if isinstance(f, dict)]
    if flows:
        return _flow_gpus(flows)
    uuid_of = {g.get("rank"): _uuid(g.get("uuid")) for g in meta.get("gpus") or [] if isinstance(g, dict)}
    pairs = _rank_pairs(row)
    src = tuple(uuid_of.get(s) for s, _ in pairs)
    dst = tuple(uuid_of.get(d) for _, d in pairs)
    same = []
    for (s_rank, d_rank), s, d in zip(pairs, src, dst):
        if s_rank == d_rank:  # one rank at both ends: host <-> GPU, no pair of GPUs
            same.append(False)
        elif s is not None and d is not None:
            same.append(s == d)
        else:
            same.append(meta.get("same_device") is True)
    return RowGpus(src, dst, tuple(same))
