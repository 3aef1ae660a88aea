"""What a results file says about the system it measured: label, GPUs, link, driver, CUDA, hosts.

Read from `meta`. The link comes from `meta.topology` as the driver writes it
(src/topology/topology.cpp): `link_type` ("nvlink", "pcie", "same_device"), `topo_label`
("NV18", or the PCIe path such as "PHB"), `nvlink.version`, `pcie.max_gen`/`max_width`, and
`peak_gbps_per_direction` (the link's theoretical peak, one direction, GB/s; null when unknown).

A version 2 file (N ranks) keeps `meta.topology` for ranks 0 and 1, which may share a GPU; its
`meta.pairs` gives every pair's link. Where the topology names no link between two GPUs (absent,
or same_device), the link and peak come from the pairs of two GPUs: their link classes, joined
where they differ, and the highest peak.
"""

from __future__ import annotations

from dataclasses import dataclass

from p2pbench_report.units import cuda_version_text

@dataclass(frozen=True)
class SystemInfo:
    label: str
    gpu_names: tuple[str, ...]
    driver: str | None  # the GPU driver's version (e.g. 580.159.04) where recorded
    cuda_driver: str
    cuda_runtime: str
    link: str | None
    peak_gbps_per_direction: float | None
    hosts: tuple[str, ...]
    tool_version: str
    git_sha: str
    timestamp_utc: str
    imported_from: str | None
    same_device: bool

    @property
    def gpu(self) -> str:
        """'2 × NVIDIA H200', or 'NVIDIA H200 + NVIDIA A100' for a mixed pair."""
        if not self.gpu_names:
            return "GPU unknown"
        distinct = sorted(set(self.gpu_names))
        if len(distinct) == 1:
            return f"{len(self.gpu_names)} × {distinct[0]}" if len(self.gpu_names) > 1 else distinct[0]
        return " + ".join(self.gpu_names)

    def title_line(self) -> str:
        """One line for figure titles: label, GPU, link and driver."""
        driver = f"driver {self.driver}" if self.driver else f"CUDA driver API {self.cuda_driver}"
        parts = [self.label, self.gpu, self.link or "link unknown", driver]
        if self.imported_from:
            parts.append(f"imported from {self.imported_from}")
        return " · ".join(parts)

    def diff_fields(self) -> dict[str, str]:
        """The fields of a metadata diff, in the order a reader scans them."""
        peak = f"{self.peak_gbps_per_direction:g} GB/s" if self.peak_gbps_per_direction else "unknown"
        return {
            "label": self.label,
            "source": self.imported_from or "p2pbench",
            "GPU": self.gpu,
            "driver": self.driver or "unknown",
            "CUDA driver API": self.cuda_driver,
            "CUDA runtime": self.cuda_runtime,
            "link": self.link or "unknown",
            "link peak per direction": peak,
            "hosts": ", ".join(self.hosts) or "unknown",
            "same device": "yes" if self.same_device else "no",
            "tool": f"{self.tool_version} ({self.git_sha})",
            "timestamp (UTC)": self.timestamp_utc,
        }


def _link_name(topology: dict) -> str | None:
    """'NV18 (NVLink 4.0)', 'PCIe Gen5 x16 (PHB)', 'same device', or the bare topo_label."""
    kind, label = topology.get("link_type"), topology.get("topo_label")
    label = label if isinstance(label, str) and label else None
    if kind == "nvlink":
        nvlink = topology.get("nvlink") if isinstance(topology.get("nvlink"), dict) else {}
        version = nvlink.get("version")
        return (label or "NVLink") + (f" (NVLink {version})" if isinstance(version, str) and version else "")
    if kind == "pcie":
        pcie = topology.get("pcie") if isinstance(topology.get("pcie"), dict) else {}
        gen, width = pcie.get("max_gen"), pcie.get("max_width")
        text = "PCIe" + (f" Gen{gen}" if gen else "") + (f" x{width}" if width else "")
        return text + (f" ({label})" if label and label != "PCIe" else "")
    if kind == "same_device":
        return "same device"
    return label


def _peak(topology: dict) -> float | None:
    value = topology.get("peak_gbps_per_direction")
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0 else None


def _pairs_link(meta: dict) -> tuple[str | None, float | None]:
    """(link, peak) from meta.pairs: the classes of the pairs of two GPUs, their highest peak."""
    pairs = [p for p in meta.get("pairs") or [] if isinstance(p, dict) and not p.get("same_device")]
    names = sorted({name for p in pairs if (name := _link_name(p))})
    peaks = [peak for p in pairs if (peak := _peak(p))]
    return (" / ".join(names) or None), (max(peaks) if peaks else None)


def _distinct_gpus(gpus: list) -> list:
    """meta.gpus has one entry per rank: a GPU that several ranks share is counted once (by
    UUID; entries without one are all kept)."""
    seen: set[str] = set()
    distinct = []
    for gpu in gpus:
        uuid = gpu.get("uuid") if isinstance(gpu, dict) else None
        if isinstance(uuid, str) and uuid:
            if uuid in seen:
                continue
            seen.add(uuid)
        distinct.append(gpu)
    return distinct


def describe_system(meta: dict) -> SystemInfo:
    gpus = _distinct_gpus(meta.get("gpus") or [])
    topology = meta.get("topology") if isinstance(meta.get("topology"), dict) else {}
    config = meta.get("config") if isinstance(meta.get("config"), dict) else {}
    drivers = sorted({g["driver_version"] for g in gpus if g.get("driver_version")})
    cuda_driver = cuda_version_text(meta.get("cuda_driver_version"))
    tool = meta.get("tool") or {}
    link, peak = _link_name(topology), _peak(topology)
    if meta.get("pairs") and (link is None or topology.get("link_type") == "same_device"):
        link, peak = _pairs_link(meta)
    return SystemInfo(
        label=meta.get("label") or "unlabelled",
        gpu_names=tuple(g.get("name", "?") for g in gpus),
        driver=", ".join(drivers) or None,
        cuda_driver=cuda_driver,
        cuda_runtime=cuda_version_text(meta.get("cuda_runtime_version")),
        link=link,
        peak_gbps_per_direction=peak,
        hosts=tuple(meta.get("hosts") or ()),
        tool_version=str(tool.get("version", "?")),
        git_sha=str(tool.get("git_sha", "?")),
        timestamp_utc=str(meta.get("timestamp_utc", "?")),
        imported_from=config.get("imported_from") if isinstance(config.get("imported_from"), str) else None,
        same_device=bool(meta.get("same_device")),
    )
