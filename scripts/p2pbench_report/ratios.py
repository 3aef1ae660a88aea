"""The ratio of each later file to the first, per case, and per method their summary: the
model under the comparison's summary lines and ratio figure (compare_view draws the page,
plot_ratio the figure; both read this, neither imports the other's drawing).

"Worst" is the least favourable ratio for the later file: the lowest for bandwidth (higher is
better), the highest for latency. A ratio r is outside the threshold when |r - 1| > threshold,
judged on r as the tables print it (3 decimals), so that the summary's count and the highlighted
cells agree.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from p2pbench_report.cases import BANDWIDTH, LATENCY, MatchedCase, Metric, describe_case
from p2pbench_report.compare import Comparison

DEFAULT_THRESHOLD = 0.03
RATIO_DECIMALS = 3  # as compare.values_table prints a ratio


def is_outside(ratio: float, threshold: float) -> bool:
    """|ratio - 1| > threshold for the ratio as printed (1.0304 prints 1.030: not outside ±3%)."""
    return abs(round(ratio, RATIO_DECIMALS) - 1) > threshold + 1e-12


@dataclass(frozen=True)
class Ratio:
    """file / reference for one case."""

    case: MatchedCase
    file_index: int
    metric: Metric
    value: float

    def worse_than(self, other: Ratio) -> bool:
        return self.value < other.value if self.metric.higher_is_better else self.value > other.value

    def describe(self) -> str:
        case = describe_case(self.case.key)
        return " ".join(v for v in (case["method"], case["direction"], case["mode"], case["size"], case["ranks"],
                                    case["config"]) if v)


def ratios(comparison: Comparison) -> list[Ratio]:
    """Every case listed in the tables, for each later file that measured it beside the first."""
    found = []
    for metric in (BANDWIDTH, LATENCY):
        for case in comparison.listed(metric):
            reference = case.figure(0, metric)
            for index in range(1, len(case.rows)):
                value = case.figure(index, metric)
                if value is not None and reference:
                    found.append(Ratio(case, index, metric, value / reference))
    return found


@dataclass
class MethodSummary:
    """The ratios of one later file for one method."""

    file_name: str
    reference_name: str
    method: str
    metric: Metric
    ratios: list[Ratio]

    @property
    def geometric_mean(self) -> float:
        return math.exp(sum(math.log(r.value) for r in self.ratios) / len(self.ratios))

    @property
    def worst(self) -> Ratio:
        worst = self.ratios[0]
        for ratio in self.ratios[1:]:
            if ratio.worse_than(worst):
                worst = ratio
        return worst

    def outside(self, threshold: float) -> int:
        return sum(1 for r in self.ratios if is_outside(r.value, threshold))

    def line(self, threshold: float) -> str:
        worst = self.worst
        count = len(self.ratios)
        better = "higher" if self.metric.higher_is_better else "lower"
        return (f"{self.file_name} / {self.reference_name} · {self.method} ({self.metric.name}, {better} is better): "
                f"geometric-mean ratio {self.geometric_mean:.3f} over {count} case{'s' if count != 1 else ''}; "
                f"worst {worst.value:.3f} ({(worst.value - 1) * 100:+.1f}%) at {worst.describe()}; "
                f"{self.outside(threshold)} outside ±{threshold * 100:g}%")


def summaries(comparison: Comparison) -> list[MethodSummary]:
    """One per later file x metric x method, in the tables' order."""
    groups: dict[tuple, list[Ratio]] = {}
    for ratio in ratios(comparison):
        groups.setdefault((ratio.file_index, ratio.metric.name, ratio.case.key[0]), []).append(ratio)
    names = [r.name for r in comparison.result_sets]
    return [MethodSummary(names[index], names[0], method, items[0].metric, items)
            for (index, _, method), items in groups.items()]
