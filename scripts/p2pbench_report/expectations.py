"""Expected values ("is this number normal?"): an expectations file made from known-good runs,
and matching a results row against it. `check.py` judges a run with it.

Format (shared with the driver's --expect FILE; documented in README.md):
  {"format": "p2pbench-expectations", "version": 1, "system": "h200-nv18",
   "made_from": ["results/h200-nv18/default.json", ...], "tolerance_pct": 5.0,
   "made_with": {"verify": true, "samples": 10, "min_sample_time_ms": 1.0},
   "expectations": [{"match": {"method": "ce", "direction": "push", "mode": "uni",
                               "bytes": 1073741824, "blocks": null, ...},
                     "pair_class": "NV18", "metric": "bandwidth_gbps",
                     "reference": 396.03, "floor": 376.23}, ...]}
`match` holds every independent variable of the row but its ranks (MATCH_FIELDS: method,
direction, mode, bytes, the kernel shape, buffer_pool_bytes and the payload fields), null where
the row has null; a row matches when each equals the row's field (null matches null or a missing
field) and the run's meta.topology.topo_label equals `pair_class` (judged by p2pbench's own code:
check.py). Both orientations (0->1, 1->0)
of a case share one entry: the committed runs were made on several GPU pairs, and an orientation
difference seen on one pair (latency_ce: 7.6 µs 0->1, 6.6 µs 1->0) is not known to follow the
rank rather than the GPU. `reference` is the known-good median of the raw samples (where several
source rows measured the case, orientations included: the worst of them, so that every source
passes); `floor` = reference x (1 - tolerance) for bandwidth_gbps,
`ceiling` = reference x (1 + tolerance) for latency_us. `made_with` records how the sources were
made (the least of them): `check` refuses a run made with less (fewer samples, shorter samples,
verification off) unless forced. It is an addition to the agreed keys; readers ignore it.
"""

from __future__ import annotations

import json
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

from p2pbench_report.cases import INDEPENDENT_VARIABLES, PAYLOAD_DEFAULTS, identity, sort_key
from p2pbench_report.errors import InputError
from p2pbench_report.loader import read_document
from p2pbench_report.methods import names_of_kinds
from p2pbench_report.verdicts import run_verdicts

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
    """The row's independent variables. A host-link row written before host memory kinds existed
    ran on the defaults (pinned, local): its match names them, as a new row's does (the driver's
    check reads an old row's missing field the same way)."""
    match = {name: row.get(name) for name in MATCH_FIELDS}
    if row.get("method") in names_of_kinds("host_link"):
        for name, default in PAYLOAD_DEFAULTS.items():
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


def _config_number(document: dict, key: str) -> float | None:
    value = (document["meta"].get("config") or {}).get(key)
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _source_problems(document: dict) -> list[str]:
    """Why a run cannot serve as a known-good source ([] when it can)."""
    meta = document["meta"]
    problems = []
    if document.get("incomplete"):
        problems.append(f"the run is incomplete ({document.get('incomplete_reason', 'no reason given')})")
    if meta.get("verify") is not True:
        problems.append("meta.verify is not true (the copies were not verified)")
    if meta.get("sanitizer_mode") is True:
        problems.append("meta.sanitizer_mode is true (the figures are not measurements)")
    if meta.get("same_device"):
        problems.append("meta.same_device is true (not a P2P figure)")
    verdicts = run_verdicts(meta)
    if verdicts.unreliable:
        problems.append(f"its health verdicts say {verdicts.summary()} (figures may be low for that reason)")
    return problems


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


def _entry(candidate: _Candidate, tolerance: float) -> dict[str, Any]:
    _, limit, higher_is_better = METRICS[candidate.metric]
    factor = 1.0 - tolerance if higher_is_better else 1.0 + tolerance
    return {"match": candidate.match, "pair_class": candidate.pair_class, "metric": candidate.metric,
            "reference": round(candidate.reference, DIGITS), limit: round(candidate.reference * factor, DIGITS)}


def make_expectations(paths: list[str], tolerance_pct: float, system: str | None = None,
                      pair_class: str | None = None, force: bool = False) -> dict:
    """The expectations document of known-good runs `paths` (InputError for an unfit source
    unless `force`)."""
    if not 0.0 <= tolerance_pct < 100.0:
        raise InputError("--tolerance", f"{tolerance_pct:g} is outside 0..100 (percent)")
    documents = [read_document(p) for p in paths]
    for path, document in zip(paths, documents):
        problems = _source_problems(document)
        if problems and not force:
            raise InputError(path, "not a known-good run: " + "; ".join(problems) + " (--force uses it anyway)")
    worst: dict[tuple, _Candidate] = {}
    for path, document in zip(paths, documents):
        for candidate in _candidates(document, pair_class_of(document, pair_class, path)):
            key = (tuple(candidate.match.items()), candidate.pair_class, candidate.metric)
            better = METRICS[candidate.metric][2]
            kept = worst.get(key)
            if kept is None or (candidate.reference < kept.reference if better else candidate.reference > kept.reference):
                worst[key] = candidate
    if not worst:
        raise InputError(paths[0], "no ok bandwidth or latency row to make expectations from")
    ordered = sorted(worst.values(), key=lambda c: (sort_key(identity(c.match)), c.pair_class, c.metric))
    samples = [_config_number(d, "samples") for d in documents]
    sample_times = [_config_number(d, "min_sample_time_ms") for d in documents]
    made_with = {"verify": all(d["meta"].get("verify") is True for d in documents)}
    if all(s is not None for s in samples):
        made_with["samples"] = int(min(samples))
    if all(t is not None for t in sample_times):
        made_with["min_sample_time_ms"] = float(min(sample_times))
    return {"format": FORMAT, "version": VERSION, "system": system or documents[0]["meta"].get("label") or "unnamed",
            "made_from": [str(p) for p in paths], "tolerance_pct": float(tolerance_pct), "made_with": made_with,
            "expectations": [_entry(c, tolerance_pct / 100.0) for c in ordered]}


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
