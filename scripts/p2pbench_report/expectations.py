"""Expected values ("is this number normal?"): an expectations file made from known-good runs,
and matching a results row against it. `check.py` judges a run with it.

Format (shared with the driver's --expect FILE; documented in README.md):
  {"format": "p2pbench-expectations", "version": 1, "system": "h200-nv18",
   "made_from": ["results/h200-nv18/default.json", ...],
   "sources": [{"path": ..., "commit": ..., "dirty": false, "diff_sha256": null, "source_sha256": ...,
                "started_utc": "2026-11-23T04:21:50Z", "verdicts": "ok"}, ...],
   "tolerance_pct": 5.0, "made_with": {"verify": true, "samples": 10, "min_sample_time_ms": 1.0},
   "allow_warnings": true (only where --allow-warnings was given),
   "expectations": [{"match": {"method": "ce", "direction": "push", "mode": "uni",
                               "bytes": 1073741824, "blocks": null, ...},
                     "pair_class": "NV18", "metric": "bandwidth_gbps",
                     "reference": 396.03, "floor": 376.23, "runs": 3, "worst_run_pct": 1.2}, ...]}
`match` holds every independent variable of the row but its ranks (MATCH_FIELDS: method,
direction, mode, bytes, the kernel shape, buffer_pool_bytes and the payload fields), null where
the row has null; a row matches when each equals the row's field (null matches null or a missing
field) and the run's meta.topology.topo_label equals `pair_class` (judged by p2pbench's own code:
check.py). Both orientations (0->1, 1->0)
of a case share one entry: the committed runs were made on several GPU pairs, and an orientation
difference seen on one pair (latency_ce: 7.6 µs 0->1, 6.6 µs 1->0) is not known to follow the
rank rather than the GPU. A run's figure for a case is the median of a row's raw samples, the
worst of its rows (orientations), so that each of its pairs passes; `reference` is the median of
the runs' figures (`runs` of them) and `worst_run_pct` (two or more runs) how far the worst run
lies from it: where it exceeds the tolerance, a run like that one would FAIL (spread_report says
so). `floor` = reference x (1 - tolerance) for bandwidth_gbps, `ceiling` = reference x
(1 + tolerance) for latency_us. `sources` says which run each file is (expectation_sources.py);
`made_with` records how the sources were made (the least of them): `check` refuses a run made
with less (fewer samples, shorter samples, verification off) unless forced. Both are additions
to the agreed keys; readers ignore them.
"""

from __future__ import annotations

import json
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

from p2pbench_report.cases import INDEPENDENT_VARIABLES, identity, sort_key
from p2pbench_report.errors import InputError
from p2pbench_report.expectation_sources import carries_warning, check_sources, made_with, source_record
from p2pbench_report.loader import read_document
from p2pbench_report.methods import identity_defaults_of

FORMAT = "p2pbench-expectations"
VERSION = 1
# metric -> (raw samples field, the limit's key, higher is better)
METRICS = {"bandwidth_gbps": ("samples_gbps", "floor", True), "latency_us": ("samples_us", "ceiling", False)}
MATCH_FIELDS = tuple(name for name in INDEPENDENT_VARIABLES if name not in ("src_rank", "dst_rank"))
DIGITS = 4  # GB/s and µs to 1e-4: far below any run-to-run difference


def metric_of(row: dict) -> str | None:
    """'bandwidth_gbps' or 'latency_us': the statistics object an ok row carries."""
    for metric in METRICS:
        if isinstance(row.get(metric), dict):
            return metric
    return None


def figure_of(row: dict, metric: str) -> float:
    """The median of the row's raw samples, or its stored median where it has none."""
    samples = row.get(METRICS[metric][0]) or []
    return float(statistics.median(samples)) if samples else float(row[metric]["median"])


def match_of(row: dict) -> dict[str, Any]:
    """The row's independent variables. A row written before an identity field of its method
    existed ran on the field's default (host-link: pinned, local; interference: normal priority):
    its match names it, as a new row's does (the driver's check reads an old row's missing field
    the same way). Other methods' rows keep null there."""
    match = {name: row.get(name) for name in MATCH_FIELDS}
    for name, default in identity_defaults_of(row.get("method", "")).items():
        if match.get(name) is None:
            match[name] = default
    return match


def pair_class_of(document: dict, override: str | None, source: str) -> str:
    """meta.topology.topo_label, or `override` (--pair-class) for a file that lacks it."""
    topology = document["meta"].get("topology")
    label = topology.get("topo_label") if isinstance(topology, dict) else None
    if override:
        if label and label != override:
            raise InputError(source, f"--pair-class {override} contradicts the file's meta.topology.topo_label "
                                     f"{label!r}", field="$.meta.topology.topo_label")
        return override
    if not isinstance(label, str) or not label:
        raise InputError(source, "the file does not say which link joins its GPUs: give --pair-class "
                                 "(e.g. NV18, PIX, SYS)", field="$.meta.topology.topo_label")
    return label


@dataclass
class _Candidate:
    match: dict[str, Any]
    pair_class: str
    metric: str
    reference: float


def _candidates(document: dict, pair_class: str) -> Iterable[_Candidate]:
    for row in document["results"]:
        metric = metric_of(row)
        if row.get("status") == "ok" and metric is not None:
            yield _Candidate(match_of(row), pair_class, metric, figure_of(row, metric))


def _worse(a: float, b: float, metric: str) -> float:
    return min(a, b) if METRICS[metric][2] else max(a, b)


def _per_run(documents: list[dict], paths: list[str], pair_class: str | None) -> dict[tuple, list[float]]:
    """Per case (match, pair class, metric): one figure per run that measured it, the worst of
    the run's rows (its orientations), so that each of its pairs is within the reference."""
    runs: dict[tuple, list[float]] = {}
    for path, document in zip(paths, documents):
        this_run: dict[tuple, float] = {}
        for c in _candidates(document, pair_class_of(document, pair_class, path)):
            key = (tuple(c.match.items()), c.pair_class, c.metric)
            this_run[key] = _worse(this_run[key], c.reference, c.metric) if key in this_run else c.reference
        for key, figure in this_run.items():
            runs.setdefault(key, []).append(figure)
    return runs


def _entry(key: tuple, figures: list[float], tolerance: float) -> dict[str, Any]:
    """The case's entry: reference = the median over runs; with two or more runs, how far the worst
    of them lies from it (worst_run_pct: below for bandwidth, above for latency)."""
    match, pair_class, metric = dict(key[0]), key[1], key[2]
    _, limit, higher_is_better = METRICS[metric]
    reference = float(statistics.median(figures))
    factor = 1.0 - tolerance if higher_is_better else 1.0 + tolerance
    entry = {"match": match, "pair_class": pair_class, "metric": metric, "reference": round(reference, DIGITS),
             limit: round(reference * factor, DIGITS), "runs": len(figures)}
    if len(figures) >= 2:
        worst = min(figures) if higher_is_better else max(figures)
        entry["worst_run_pct"] = round(abs(worst - reference) / reference * 100.0, 2)
    return entry


def make_expectations(paths: list[str], tolerance_pct: float, system: str | None = None,
                      pair_class: str | None = None, force: bool = False, allow_warnings: bool = False) -> dict:
    """The expectations document of known-good runs `paths`: per case the median over the runs
    (InputError for an unfit source: expectation_sources.py)."""
    if not 0.0 <= tolerance_pct < 100.0:
        raise InputError("--tolerance", f"{tolerance_pct:g} is outside 0..100 (percent)")
    documents = [read_document(p) for p in paths]
    check_sources(paths, documents, force, allow_warnings)
    runs = _per_run(documents, paths, pair_class)
    if not runs:
        raise InputError(paths[0], "no ok bandwidth or latency row to make expectations from")
    ordered = sorted(runs, key=lambda k: (sort_key(identity(dict(k[0]))), k[1], k[2]))
    document = {"format": FORMAT, "version": VERSION,
                "system": system or documents[0]["meta"].get("label") or "unnamed",
                "made_from": [str(p) for p in paths],
                "sources": [source_record(p, d) for p, d in zip(paths, documents)],
                "tolerance_pct": float(tolerance_pct), "made_with": made_with(documents)}
    if allow_warnings and any(carries_warning(d) for d in documents):
        document["allow_warnings"] = True  # and their verdicts are in "sources"
    document["expectations"] = [_entry(k, runs[k], tolerance_pct / 100.0) for k in ordered]
    return document


def spread_report(document: dict) -> list[str]:
    """How the tolerance relates to the runs' spread: a source run further from the median than
    the tolerance would FAIL these expectations itself."""
    tolerance = document["tolerance_pct"]
    spread = [e for e in document["expectations"] if "worst_run_pct" in e]
    if not spread:
        return [f"every case comes from one run: the tolerance ({tolerance:g}%) is not weighed against a spread "
                "between runs (give several runs of the same cases)"]
    widths = sorted(e["worst_run_pct"] for e in spread)
    lines = [f"{len(spread)} of {len(document['expectations'])} cases measured by two or more runs: the worst run lies "
             f"{statistics.median(widths):.2f}% from the median in the middle case, {widths[-1]:.2f}% at most; "
             f"the tolerance is {tolerance:g}%"]
    wider = [e for e in spread if e["worst_run_pct"] > tolerance]
    if wider:
        named = "; ".join(f"{describe(e)}: {e['worst_run_pct']:.2f}%" for e in wider[:5])
        lines.append(f"WARNING: {len(wider)} case(s) spread wider than the tolerance, so a run like their worst would "
                     f"FAIL: {named}{' ...' if len(wider) > 5 else ''} (a larger --tolerance, or find out why)")
    return lines


def describe(entry: dict) -> str:
    """'ce push uni 1073741824 B (NV18)': a case of an expectations entry, in one phrase."""
    match = entry["match"]
    words = [str(match.get(k)) for k in ("method", "direction", "mode") if match.get(k) is not None]
    size = f"{match['bytes']} B" if match.get("bytes") is not None else ""
    return " ".join(words + ([size] if size else [])) + f" ({entry['pair_class']})"


def render_expectations(document: dict) -> str:
    """JSON text with one line per expectation (reviewable, and a diff shows the cases that moved)."""
    head = json.dumps({k: v for k, v in document.items() if k != "expectations"}, indent=1)
    entries = ",\n".join("  " + json.dumps(entry) for entry in document["expectations"])
    return head[:-2] + ',\n "expectations": [\n' + entries + "\n ]\n}\n"


def _entry_problem(entry: Any) -> str | None:
    if not isinstance(entry, dict) or not isinstance(entry.get("match"), dict):
        return "an entry without a 'match' object"
    metric = entry.get("metric")
    if metric not in METRICS:
        return f"metric {metric!r} is not one of {', '.join(METRICS)}"
    limit = METRICS[metric][1]
    if not isinstance(entry.get(limit), (int, float)) or isinstance(entry.get(limit), bool):
        return f"a {metric} entry needs a number '{limit}'"
    if not isinstance(entry.get("pair_class"), str):
        return "'pair_class' must be a string"
    return None


def read_expectations(path: str | Path) -> dict:
    """Parses and checks an expectations file; InputError naming the field otherwise."""
    path = Path(path)
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(path, "no such file") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise InputError(path, f"not a readable JSON file ({error})") from None
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise InputError(path, f"not an expectations file (its \"format\" must be {FORMAT!r})", field="$.format")
    if document.get("version") != VERSION:
        raise InputError(path, f"version {document.get('version')!r} is not supported (this tool reads {VERSION})",
                         field="$.version")
    if not isinstance(document.get("expectations"), list):
        raise InputError(path, "'expectations' must be a list", field="$.expectations")
    for index, entry in enumerate(document["expectations"]):
        problem = _entry_problem(entry)
        if problem:
            raise InputError(path, problem, field=f"$.expectations[{index}]")
    return document
