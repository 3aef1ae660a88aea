"""Exports: CSV identity columns (files of several clusters stack), the Prometheus textfile."""

from __future__ import annotations

import copy
import sys

import pandas as pd
import pytest
from p2pbench_report.cases import INDEPENDENT_VARIABLES
from p2pbench_report.export import IDENTITY_COLUMNS, read_csv


def test_csv_rows_say_where_they_were_measured(cli, write_json, tmp_path, one_baseline_path, one_baseline_document):
    meta = one_baseline_document["meta"]
    other = copy.deepcopy(one_baseline_document)
    other["meta"].update(label="cluster-b", hosts=["node-b"])
    for rank in other["meta"]["ranks"]:
        rank["host"] = "node-b"
    for gpu in other["meta"]["gpus"]:
        gpu.update(uuid=f"GPU-b-{gpu['rank']}", driver_version="999.1")
    frames = []
    for name, path in (("a.csv", one_baseline_path), ("b.csv", write_json("b.json", other))):
        assert cli("export", path, "--csv", tmp_path / name)[0] == 0
        frames.append(read_csv(tmp_path / name))
    columns = list(frames[0].columns)
    assert columns[: len(INDEPENDENT_VARIABLES) + len(IDENTITY_COLUMNS)] == \
        list(INDEPENDENT_VARIABLES) + list(IDENTITY_COLUMNS)
    gpus = {g["rank"]: g for g in meta["gpus"]}
    hosts = {r["rank"]: r["host"] for r in meta["ranks"]}
    for (_, exported), row in zip(frames[0].iterrows(), one_baseline_document["results"]):
        if row["src_rank"] is None:
            continue  # bidir: the pair (checked below)
        src, dst = gpus[row["src_rank"]], gpus[row["dst_rank"]]
        assert exported["label"] == meta["label"] and exported["host"] == hosts[row["src_rank"]]
        assert (exported["src_gpu_uuid"], exported["dst_gpu_uuid"]) == (src["uuid"], dst["uuid"])
        assert (exported["src_gpu_pci_bus_id"], exported["src_gpu_name"]) == (src["pci_bus_id"], src["name"])
        assert exported["driver_version"] == src["driver_version"]
    bidir = frames[0][frames[0]["mode"] == "bidir"]
    if not bidir.empty:
        assert set(bidir["src_gpu_uuid"]) | set(bidir["dst_gpu_uuid"]) == {g["uuid"] for g in meta["gpus"]}
    stacked = pd.concat(frames, ignore_index=True)
    assert stacked.groupby("label")["host"].unique().map(list).to_dict() == {
        meta["label"]: [hosts[0]], "cluster-b": ["node-b"]}
    assert set(stacked[stacked["label"] == "cluster-b"]["driver_version"]) == {"999.1"}


def _families(text: str) -> dict:
    parser = pytest.importorskip("prometheus_client.parser")
    return {family.name: family for family in parser.text_string_to_metric_families(text)}


def test_prometheus_textfile_parses_and_carries_every_case(cli, tmp_path, baseline_path, baseline_document):
    pytest.importorskip("prometheus_client")
    output = tmp_path / "p2pbench.prom"
    code, _, err = cli("export", "--format", "prometheus", baseline_path, "-o", output)
    assert code == 0, err
    families = _families(output.read_text(encoding="utf-8"))
    rows = baseline_document["results"]
    by_labels = {}
    for name in ("p2pbench_bandwidth_gbps", "p2pbench_latency_seconds", "p2pbench_same_gpu_bandwidth_gbps",
                 "p2pbench_same_gpu_latency_seconds"):
        for sample in families[name].samples if name in families else []:
            key = tuple(sorted(sample.labels.items()))
            assert key not in by_labels, f"two samples with the labels {key}"  # Prometheus rejects that
            by_labels[key] = sample.value
    ok_bandwidth = [r for r in rows if r["status"] == "ok" and isinstance(r.get("bandwidth_gbps"), dict)]
    ok_latency = [r for r in rows if r["status"] == "ok" and isinstance(r.get("latency_us"), dict)]
    assert len(by_labels) == len(ok_bandwidth) + len(ok_latency)
    medians = sorted([r["bandwidth_gbps"]["median"] for r in ok_bandwidth] +
                     [r["latency_us"]["median"] * 1e-6 for r in ok_latency])
    assert sorted(by_labels.values()) == pytest.approx(medians, rel=1e-12)
    assert len(families["p2pbench_case_ok"].samples) == len(rows)
    assert sum(s.value for s in families["p2pbench_case_ok"].samples) == sum(r["status"] == "ok" for r in rows)
    some = next(iter(families["p2pbench_case_ok"].samples)).labels
    assert set(some) == {"method", "direction", "mode", "bytes", "shape", "src_rank", "dst_rank", "src_gpu_uuid",
                         "dst_gpu_uuid", "gpu_uuids", "same_gpu", "host", "label"}
    assert some["label"] == baseline_document["meta"]["label"]
    for name in ("p2pbench_run_health_ok", "p2pbench_run_contention", "p2pbench_run_throttled",
                 "p2pbench_run_link_errors"):
        assert [s.value for s in families[name].samples] in ([0.0], [1.0]), name


def test_prometheus_verdict_gauges_follow_meta_verdicts(cli, write_json, one_baseline_document):
    pytest.importorskip("prometheus_client")
    busy = copy.deepcopy(one_baseline_document)
    busy["meta"]["verdicts"] = {"status": "warn", "contention": True, "throttled": False, "link_errors": False,
                                "items": []}
    code, out, _ = cli("export", "--format", "prometheus", write_json("busy.json", busy), "-o", "-")
    families = _families(out)
    assert code == 0
    assert families["p2pbench_run_contention"].samples[0].value == 1.0
    assert families["p2pbench_run_health_ok"].samples[0].value == 0.0
    assert families["p2pbench_run_throttled"].samples[0].value == 0.0


def test_without_prometheus_client_only_that_export_fails(cli, monkeypatch, one_baseline_path, tmp_path):
    for name in [m for m in sys.modules if m == "prometheus_client" or m.startswith("prometheus_client.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "prometheus_client", None)  # import raises ImportError
    monkeypatch.setitem(sys.modules, "prometheus_client.core", None)
    code, _, err = cli("export", "--format", "prometheus", one_baseline_path, "-o", tmp_path / "x.prom")
    assert code == 2 and "prometheus_client" in err and "Prometheus export" in err
    assert not (tmp_path / "x.prom").exists()
    assert cli("export", one_baseline_path, "--csv", tmp_path / "x.csv")[0] == 0


def test_export_needs_a_destination(cli, one_baseline_path):
    code, _, err = cli("export", one_baseline_path)
    assert code == 2 and "-o FILE" in err
