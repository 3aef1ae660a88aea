"""Schema version 2 (docs/groups.md): each file validated against its version's schema, v2 rows
flattened (flows as list columns, bidir directions made from flows), v1 files as before."""

from __future__ import annotations

import copy

import make_fixtures
import pandas as pd
import pytest
from p2pbench_report.errors import InputError
from p2pbench_report.export import read_csv
from p2pbench_report.group import describe_group
from p2pbench_report.loader import load_results, rows_frame
from p2pbench_report.schema import first_error, known_versions

V2_COLUMNS = ("pattern", "schedule", "round", "flow_count", "flows_src_rank", "flows_src_gpu", "src_gpu", "dst_gpu",
              "same_device", "flows_bandwidth_gbps_median", "aggregate_peak_gbps", "gpus_uuid")


def row_of(document: dict, **wanted) -> int:
    return next(i for i, r in enumerate(document["results"]) if all(r.get(k) == v for k, v in wanted.items()))


def test_both_versions_are_read(group_document, one_baseline_document):
    assert known_versions() == [1, 2]
    assert first_error(group_document) is None
    assert first_error(one_baseline_document) is None
    assert one_baseline_document["schema_version"] == 1 and group_document["schema_version"] == 2


def test_a_version_1_file_loads_as_before(one_baseline_path, one_baseline_document):
    frame = load_results(one_baseline_path).rows
    assert not set(V2_COLUMNS) & set(frame.columns)
    assert not any(c.startswith(("flows_", "gpus_", "aggregate_")) for c in frame.columns)
    assert list(frame["row_index"]) == list(range(len(one_baseline_document["results"])))


def test_unknown_versions_are_named(write_json, cli, one_baseline_document):
    document = dict(copy.deepcopy(one_baseline_document), schema_version=7)
    code, _, err = cli("suspects", write_json("v7.json", document))
    assert code == 2 and "$.schema_version" in err and "7 is not a schema_version this tool reads (1, 2)" in err


def test_group_rows_are_flattened(group_path, group_document):
    frame = load_results(group_path).rows
    rows = group_document["results"]
    assert set(V2_COLUMNS) <= set(frame.columns)
    for index, row in enumerate(rows):
        flows = row["flows"]
        assert frame.loc[index, "flow_count"] == len(flows)
        assert frame.loc[index, "flows_src_rank"] == [f["src_rank"] for f in flows]
        assert frame.loc[index, "flows_dst_gpu"] == [f["dst_gpu"] for f in flows]
        assert frame.loc[index, "flows_bandwidth_gbps_median"] == [
            f["bandwidth_gbps"]["median"] if f["bandwidth_gbps"] else None for f in flows]
        assert bool(frame.loc[index, "same_device"]) == any(f["same_device"] for f in flows)
        if len(flows) == 1:
            assert frame.loc[index, "src_gpu"] == flows[0]["src_gpu"]
        else:
            assert pd.isna(frame.loc[index, "src_gpu"])
    rounds = row_of(group_document, schedule="rounds", round=2)
    assert frame.loc[rounds, "round"] == 2 and frame.loc[rounds, "pattern"] == "matrix"
    assert str(frame["round"].dtype) == "Int64" and str(frame["flow_count"].dtype) == "Int64"
    same = row_of(group_document, src_rank=0, dst_rank=1, method="ce", schedule="sequential")
    assert bool(frame.loc[same, "same_device"]) and frame.loc[same, "src_gpu"] == frame.loc[same, "dst_gpu"]


def test_bidir_rows_get_directions_from_their_flows(group_path, group_document):
    frame = load_results(group_path).rows
    index = row_of(group_document, mode="bidir", status="ok")
    flows = group_document["results"][index]["flows"]
    for i, item in enumerate(flows):
        assert frame.loc[index, f"directions_{i}_src_rank"] == item["src_rank"]
        assert frame.loc[index, f"directions_{i}_bandwidth_gbps_median"] == item["bandwidth_gbps"]["median"]
        assert frame.loc[index, f"directions_{i}_samples_gbps"] == item["samples_gbps"]
    from p2pbench_report.cases import directions_total
    assert directions_total(frame.loc[index]) == pytest.approx(sum(f["bandwidth_gbps"]["median"] for f in flows))


def test_a_flow_whose_statistics_disagree_with_its_samples_is_refused(write_json, group_document):
    document = copy.deepcopy(group_document)
    index = row_of(document, pattern="ring")
    document["results"][index]["flows"][1]["bandwidth_gbps"]["median"] += 5.0
    with pytest.raises(InputError) as caught:
        load_results(write_json("edited.json", document))
    assert caught.value.field == f"$.results[{index}].flows[1].bandwidth_gbps.median"


def test_the_group_is_described(group_document):
    group = describe_group(group_document["meta"])
    assert group.ranks == 4 and group.same_device(0, 1) and not group.same_device(0, 2)
    assert group.link_class(0, 2) == "nvlink NV18" and group.link_class(2, 3) == "pcie PHB"
    assert group.max_peak() == make_fixtures.NVLINK_PEAK
    assert group.rank_label(2) == "r2 · 7b2d4410"
    assert describe_group(make_fixtures.synthetic_results()["meta"]) is None  # version 1


def test_the_system_line_names_the_pairs_links(group_path):
    """meta.topology (ranks 0 and 1) is a same-GPU pair here: the link and peak come from meta.pairs."""
    system = load_results(group_path).system
    assert system.link == "NV18 / PCIe (PHB)" and system.peak_gbps_per_direction == make_fixtures.NVLINK_PEAK


def test_the_system_line_counts_gpus_not_ranks(group_path):
    """Four ranks on three GPUs (ranks 0 and 1 share one): the GPU count is three."""
    assert load_results(group_path).system.gpu == "3 × NVIDIA H200"


def test_group_rows_survive_the_csv(cli, tmp_path, group_path, group_document):
    output = tmp_path / "group.csv"
    assert cli("export", group_path, "--csv", output)[0] == 0
    frame = read_csv(output)
    loaded = load_results(group_path).rows
    for column in ("flows_src_rank", "flows_src_gpu", "flows_same_device", "flows_bandwidth_gbps_median",
                   "flows_peak_gbps", "gpus_egress_gbps"):
        assert list(frame[column]) == list(loaded[column]), column
    assert list(frame.columns).index("pattern") < list(frame.columns).index("samples")
    assert frame.loc[row_of(group_document, method="latency_signal"), "flows_bandwidth_gbps_median"] == [None]


def test_prometheus_labels_stay_unique_with_many_pairs(tmp_path, cli, group_path):
    parser = pytest.importorskip("prometheus_client.parser")
    output = tmp_path / "group.prom"
    assert cli("export", "--format", "prometheus", group_path, "-o", output)[0] == 0
    families = {f.name: f for f in parser.text_string_to_metric_families(output.read_text(encoding="utf-8"))}
    labels = [tuple(sorted(s.labels.items())) for s in families["p2pbench_case_ok"].samples]
    assert len(labels) == len(set(labels)) == len(load_results(group_path).rows)


def test_version_2_rows_of_a_v1_shape_match_v1_keys(synthetic_document):
    """A v1 bidir row names its only pair (0<->1) as a v2 row of those two flows does."""
    from p2pbench_report.cases import identity

    bidir = next(r for r in synthetic_document["results"] if r["mode"] == "bidir" and r["status"] == "ok")
    v2 = copy.deepcopy(bidir)
    v2.update(pattern="matrix", schedule="sequential", round=None, flows=[
        {"src_rank": 1, "dst_rank": 0}, {"src_rank": 0, "dst_rank": 1}])
    assert identity(bidir) == identity(v2)
    assert identity(rows_frame([bidir]).iloc[0]) == identity(rows_frame([v2]).iloc[0])


def test_a_schema_folder_elsewhere_serves_both_versions(monkeypatch, tmp_path, group_document, one_baseline_document):
    """P2PBENCH_SCHEMA may name a copy of schema/ (the package copied elsewhere): each version
    finds its own file there."""
    import shutil

    from p2pbench_report.schema import REPOSITORY_SCHEMA, schema_path_for

    copy_dir = tmp_path / "schemas"
    shutil.copytree(REPOSITORY_SCHEMA.parent, copy_dir)
    monkeypatch.setenv("P2PBENCH_SCHEMA", str(copy_dir))
    assert schema_path_for(1) == copy_dir / "results-v1.schema.json"
    assert schema_path_for(2) == copy_dir / "results.schema.json"
    assert first_error(group_document) is None and first_error(one_baseline_document) is None
