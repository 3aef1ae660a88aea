"""What a version 2 file's meta says about its group: the ranks, each rank's GPU, and the link of
every ordered pair of ranks (meta.group, meta.gpus, meta.pairs; docs/groups.md).

A pair's link class is its `link_type` with its `topo_label` ("nvlink NV18", "pcie PHB"): pairs of
one class are expected to measure alike (the suspect-pairs table compares within a class). A GPU
is named by its rank(s) and a short UUID: the first 8 hex digits after "GPU-", which tell the GPUs
of one node apart.
"""

from __future__ import annotations

from dataclasses import dataclass, field

UNKNOWN_CLASS = "unknown link"


@dataclass(frozen=True)
class PairLink:
    """One entry of meta.pairs."""

    src_rank: int
    dst_rank: int
    same_device: bool
    same_node: bool
    link_type: str | None
    topo_label: str | None
    peak_gbps: float | None

    @property
    def link_class(self) -> str:
        parts = [p for p in (self.link_type, self.topo_label) if isinstance(p, str) and p]
        return " ".join(dict.fromkeys(parts)) or UNKNOWN_CLASS


@dataclass(frozen=True)
class Group:
    """The ranks of one run, their GPUs and the links between them."""

    ranks: int
    gpu_of_rank: dict[int, str] = field(default_factory=dict)
    pairs: dict[tuple[int, int], PairLink] = field(default_factory=dict)
    ranks_per_node: int | None = None  # --ranks-per-node K (node_override); None: nodes are hosts

    def link(self, src_rank: int, dst_rank: int) -> PairLink | None:
        return self.pairs.get((src_rank, dst_rank))

    def link_class(self, src_rank: int, dst_rank: int) -> str:
        link = self.link(src_rank, dst_rank)
        return link.link_class if link else UNKNOWN_CLASS

    def same_device(self, src_rank: int, dst_rank: int) -> bool:
        link = self.link(src_rank, dst_rank)
        if link is not None:
            return link.same_device
        src, dst = self.gpu_of_rank.get(src_rank), self.gpu_of_rank.get(dst_rank)
        return src is not None and src == dst and src_rank != dst_rank

    def max_peak(self) -> float | None:
        """The highest link peak per direction among pairs of two GPUs (None if none is known):
        the top of a matrix heatmap's colour scale where pairs differ."""
        peaks = [p.peak_gbps for p in self.pairs.values() if p.peak_gbps and not p.same_device]
        return max(peaks) if peaks else None

    def rank_label(self, rank: int) -> str:
        """'r2 · 3f1e9a0c': the rank and its GPU's short UUID."""
        uuid = self.gpu_of_rank.get(rank)
        return f"r{rank} · {short_uuid(uuid)}" if uuid else f"r{rank}"

    def ranks_of_gpu(self, uuid: str) -> list[int]:
        return sorted(r for r, u in self.gpu_of_rank.items() if u == uuid)

    def gpu_label(self, uuid: str | None) -> str:
        """'3f1e9a0c (r2)': a GPU by short UUID and the ranks on it."""
        ranks = self.ranks_of_gpu(uuid) if uuid else []
        return f"{short_uuid(uuid)} (r{','.join(str(r) for r in ranks)})" if ranks else short_uuid(uuid)


def short_uuid(uuid: str | None) -> str:
    """'GPU-3f1e9a0c-7379-...' -> '3f1e9a0c'; other names unchanged; None -> '?'."""
    if not uuid:
        return "?"
    text = uuid[4:] if uuid.upper().startswith("GPU-") else uuid
    return text[:8] if len(text) > 8 else text


def _number(value) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0 else None


def node_override_of(group: dict | None) -> int | None:
    """meta.group.node_override as an int (--ranks-per-node K) or None. The writer now writes the
    plain integer; earlier builds wrote {"ranks_per_node": K}, and committed files keep that form,
    so every reader goes through here rather than reading the field itself."""
    value = group.get("node_override") if isinstance(group, dict) else None
    if isinstance(value, dict):
        value = value.get("ranks_per_node")
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    return None


def describe_group(meta: dict) -> Group | None:
    """The group of a version 2 file's meta; None for a version 1 file (no meta.group)."""
    group = meta.get("group")
    if not isinstance(group, dict):
        return None
    gpus = {g.get("rank"): g.get("uuid") for g in meta.get("gpus") or [] if isinstance(g, dict)}
    pairs = {}
    for entry in meta.get("pairs") or []:
        if not isinstance(entry, dict):
            continue
        link = PairLink(entry.get("src_rank"), entry.get("dst_rank"), bool(entry.get("same_device")),
                        bool(entry.get("same_node", True)), entry.get("link_type"), entry.get("topo_label"),
                        _number(entry.get("peak_gbps_per_direction")))
        pairs[(link.src_rank, link.dst_rank)] = link
    ranks = group.get("ranks") if isinstance(group.get("ranks"), int) else len(gpus)
    return Group(ranks, {r: u for r, u in gpus.items() if isinstance(r, int)}, pairs, node_override_of(group))
