"""How far the matrix measured in rounds agrees with pairs re-measured alone (docs/groups.md:
schedule `rounds`, then `alone_check` on a seeded sample of pairs), as the run wrote it
(`rounds_agreement`, src/results/pair_matrix.cpp); read, never recomputed.

A round runs disjoint pairs at once; where they share something inside the fabric (a switch
plane, a PCIe root), a pair's figure in its round falls below its figure alone. Per checked pair
and case: difference = rounds / alone - 1 (negative: slower in the round). "Alone" is the pair's
alone check, or where the run measured the whole matrix one pair at a time, that figure
(`alone_from`). Same-GPU pairs are left out (no P2P figure).
"""

from __future__ import annotations

from dataclasses import dataclass

from p2pbench_report.findings import agreement_findings, case_of
from p2pbench_report.group import describe_group, short_uuid
from p2pbench_report.loader import ResultSet
from p2pbench_report.pair_figures import CaseGroup
from p2pbench_report.tables import Table


@dataclass(frozen=True)
class Agreement:
    group: CaseGroup
    src_rank: int
    dst_rank: int
    src_gpu: str | None
    dst_gpu: str | None
    rounds: float
    alone: float
    alone_from: str = "alone_check"

    @property
    def difference(self) -> float:
        """rounds / alone - 1."""
        return self.rounds / self.alone - 1.0


def agreements(result_set: ResultSet) -> list[Agreement]:
    """Per case and checked pair measured both ways: the two figures (none in a version 1 file)."""
    group = describe_group(result_set.document["meta"])
    if group is None:
        return []
    found = []
    for entry in agreement_findings(result_set.document):
        case = case_of(entry)
        for pair in entry.get("pairs") or []:
            src, dst = int(pair["src_rank"]), int(pair["dst_rank"])
            found.append(Agreement(case, src, dst, group.gpu_of_rank.get(src), group.gpu_of_rank.get(dst),
                                   float(pair["rounds_gbps"]), float(pair["alone_gbps"]),
                                   str(pair.get("alone_from", "alone_check"))))
    return found


def agreement_table(found: list[Agreement]) -> Table:
    table = Table(["case", "pair", "GPUs", "alone GB/s", "in rounds GB/s", "rounds vs alone"], numeric={3, 4, 5})
    for a in found:
        table.add(a.group.describe(), f"{a.src_rank}→{a.dst_rank}", f"{short_uuid(a.src_gpu)}→{short_uuid(a.dst_gpu)}",
                  f"{a.alone:.1f}", f"{a.rounds:.1f}", f"{100 * a.difference:+.1f}%")
    return table


def agreement_summary(found: list[Agreement]) -> str:
    """'rounds vs alone: 3 pairs checked, differences -3.0% .. +0.2% (worst 0→2 in ce push uni 1G)'."""
    if not found:
        return "rounds vs alone: no pair was measured both in rounds and alone"
    worst = max(found, key=lambda a: abs(a.difference))
    low, high = min(a.difference for a in found), max(a.difference for a in found)
    return (f"rounds vs alone: {len(found)} pair figure{'s' if len(found) != 1 else ''} checked, differences "
            f"{100 * low:+.1f}% .. {100 * high:+.1f}% (largest: {worst.src_rank}→{worst.dst_rank} in "
            f"{worst.group.describe()}, {100 * worst.difference:+.1f}%)")
