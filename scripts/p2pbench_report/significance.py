"""The statistical test behind a SLOWER/FASTER verdict: Mann-Whitney U, one-sided, on raw samples.

With n1 and n2 samples and no ties, the smallest one-sided p-value the exact test can produce
is 1 / C(n1 + n2, n1) (complete separation of the two samples): 3 vs 3 gives 1/20 = 0.05, so
with α = 0.05 no outcome of a 3-vs-3 comparison is significant. Such cases are AMBIGUOUS rather
than tested. (The normal approximation can print p < α there; it is not trusted below that floor.)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

from p2pbench_report.errors import require

ALPHA = 0.05
TEST_NAME = "Mann-Whitney U, one-sided"


@dataclass(frozen=True)
class Significance:
    p_value: float | None      # None when the test could not reach significance at all
    min_p_value: float         # the best p the sample sizes allow
    method: str                # 'exact', 'asymptotic' or 'not run'

    def significant(self, alpha: float = ALPHA) -> bool:
        return self.p_value is not None and self.p_value < alpha

    def describe(self) -> str:
        if self.p_value is None:
            return f"{TEST_NAME}: too few samples (best reachable p = {self.min_p_value:.3g})"
        return f"{TEST_NAME} ({self.method}): p = {self.p_value:.3g}"


def min_one_sided_p(n1: int, n2: int) -> float:
    """The smallest one-sided p-value of the exact Mann-Whitney U test for these sample sizes."""
    if n1 < 1 or n2 < 1:
        return 1.0
    return 1.0 / math.comb(n1 + n2, n1)


def can_reach(n1: int, n2: int, alpha: float = ALPHA) -> bool:
    return min_one_sided_p(n1, n2) < alpha


def one_sided_less(candidate: Sequence[float], baseline: Sequence[float], alpha: float = ALPHA) -> Significance:
    """Is `candidate` stochastically lower than `baseline`? (alternative='less')"""
    floor = min_one_sided_p(len(candidate), len(baseline))
    if floor >= alpha:
        return Significance(None, floor, "not run")
    mannwhitneyu = require("scipy.stats", "for the regression test (Mann-Whitney U)").mannwhitneyu

    has_ties = len(set(candidate) | set(baseline)) < len(candidate) + len(baseline)
    method = "exact" if not has_ties and min(len(candidate), len(baseline)) <= 8 else "asymptotic"
    result = mannwhitneyu(list(candidate), list(baseline), alternative="less", method=method)
    p_value = float(result.pvalue)
    return Significance(p_value if not math.isnan(p_value) else 1.0, floor, method)


def one_sided_greater(candidate: Sequence[float], baseline: Sequence[float], alpha: float = ALPHA) -> Significance:
    """Is `candidate` stochastically higher than `baseline`?"""
    return one_sided_less(baseline, candidate, alpha)
