"""Units and their spelling: binary sizes (4K = 4096 B), fractions ("5%" or "0.05"), GB/s, µs.

Bandwidth is in GB/s with 1 GB = 1e9 bytes (the schema's unit), latency in microseconds; sizes
are in bytes and shown with binary suffixes (K = 2**10, M = 2**20, G = 2**30), the way message
sizes are swept.
"""

from __future__ import annotations

import math
import re

BANDWIDTH_AXIS_LABEL = "bandwidth (GB/s, 1 GB = 1e9 B)"
LATENCY_AXIS_LABEL = "latency (µs, microseconds)"
SIZE_AXIS_LABEL = "message size (bytes; K = 2^10, M = 2^20, G = 2^30)"

_SUFFIXES = (("T", 2**40), ("G", 2**30), ("M", 2**20), ("K", 2**10))
_SIZE_PATTERN = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*([KMGT]?)(?:i?B)?\s*$", re.IGNORECASE)


def format_size(size_bytes: float | int | None) -> str:
    """4096 -> '4K', 1048576 -> '1M', 1536 -> '1.5K', 100 -> '100'; None -> '-'."""
    if size_bytes is None or (isinstance(size_bytes, float) and math.isnan(size_bytes)):
        return "-"
    value = float(size_bytes)
    for suffix, factor in _SUFFIXES:
        if value >= factor:
            scaled = value / factor
            text = f"{scaled:.0f}" if scaled == int(scaled) else f"{scaled:.3g}"
            return text + suffix
    return f"{value:.0f}"


def parse_size(text: str) -> int:
    """'512MiB', '512M', '512m', '4096' -> bytes (binary suffixes). Raises ValueError."""
    match = _SIZE_PATTERN.match(str(text))
    if not match:
        raise ValueError(f"{text!r} is not a size (examples: 4096, 64K, 512MiB, 1G)")
    number, suffix = float(match.group(1)), match.group(2).upper()
    factor = dict(_SUFFIXES).get(suffix, 1)
    return int(round(number * factor))


def parse_fraction(text: str) -> float:
    """'5%' -> 0.05, '0.05' -> 0.05. Values must lie in [0, 1). Raises ValueError."""
    raw = str(text).strip()
    try:
        value = float(raw[:-1]) / 100.0 if raw.endswith("%") else float(raw)
    except ValueError:
        raise ValueError(f"{text!r} is not a threshold (write 5% or 0.05)") from None
    if not 0.0 <= value < 1.0 or math.isnan(value):
        raise ValueError(f"{text!r} is outside 0%..100% (write 5% or 0.05)")
    return value


def format_percent(fraction: float | None, signed: bool = True) -> str:
    if fraction is None or math.isnan(fraction):
        return "-"
    return f"{fraction * 100:+.1f}%" if signed else f"{fraction * 100:.1f}%"


def format_value(value: float | None, digits: int = 1) -> str:
    """A median for a table: '391.2'; None/NaN -> '-'."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    if abs(value) >= 100 or digits == 0:
        return f"{value:.{digits}f}"
    return f"{value:.3g}" if abs(value) < 1 else f"{value:.{max(digits, 2)}f}"


def cuda_version_text(version: int | None) -> str:
    """CUDA's integer versions: 13000 -> '13.0', 12040 -> '12.4'; 0/None -> 'unknown'."""
    if not version:
        return "unknown"
    return f"{version // 1000}.{(version % 1000) // 10}"
