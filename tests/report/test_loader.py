"""The loader: schema validation with messages naming file and field, and the flattened rows."""

from __future__ import annotations

import copy

import pytest
from p2pbench_report.cases import add_case_keys, describe_case, match_cases
from p2pbench_report.errors import InputError
from p2pbench_report.loader import load_results, rows_frame
from p2pbench_report.schema import first_error


def first_ok_row(document: dict, **wanted) -> int:
    return next(i for i, r in enumerate(document["results"])
                if r["status"] == "ok" and all(r.get(k) == v for k, v in wanted.items()))


@pytest.mark.parametrize("breakage, field", [
    (lambda d, i: d["results"][i].__setitem__("bandwidth_gbps", "390"), "$.results[{i}].bandwidth_gbps"),
    (lambda d, i: d["results"][i]["bandwidth_gbps"].__setitem__("median", "390"),
     "$.results[{i}].bandwidth_gbps.median"),
    (lambda d, i: d["results"][i].pop("samples"), "$.results[{i}].samples"),
    (lambda d, i: d["results"][i].__setitem__("mode", "sideways"), "$.results[{i}].mode"),
    (lambda d, i: d["meta"].pop("gpus"), "$.meta.gpus"),
    (lambda d, i: d.__setitem__("schema_version", 3), "$.schema_version"),  # 2 is version 2 now
])
def test_an_invalid_file_names_file_and_field(cli, write_json, one_baseline_document, breakage, field):
    document = copy.deepcopy(one_baseline_document)
    index = first_ok_row(document)
    breakage(document, index)
    path = write_json("broken.json", document)
    for command in (["regress", path, path], ["plot", path, "-o", path.parent / "figs"], ["compare", path, path],
                    ["export", path, "--csv", path.parent / "x.csv"]):
        code, out, err = cli(*command)
        assert code == 2, command
        assert err.count("\n") == 1, err  # one message
        assert str(path) in err and field.format(i=index) in err


def test_missing_and_non_json_files(cli, tmp_path):
    code, _, err = cli("export", tmp_path / "nope.json", "--csv", tmp_path / "x.csv")
    assert code == 2 and "nope.json" in err and "no such file" in err
    garbage = tmp_path / "garbage.json"
    garbage.write_text('{"schema_version": 1,', encoding="utf-8")
    code, _, err = cli("plot", garbage, "-o", tmp_path)
    assert code == 2 and "garbage.json" in err and "not valid JSON" in err and "line 1" in err


def test_load_raises_input_error_with_field(write_json, one_baseline_document):
    document = copy.deepcopy(one_baseline_document)
    del document["meta"]["label"]
    with pytest.raises(InputError) as caught:
        load_results(write_json("nolabel.json", document))
    assert caught.value.field == "$.meta.label"


def first_ok_row_with(document: dict, stats_field: str) -> int | None:
    """The first ok row carrying `stats_field` statistics (a latency file has no bandwidth ones)."""
    return next((i for i, r in enumerate(document["results"])
                 if r["status"] == "ok" and isinstance(r.get(stats_field), dict)), None)


def test_rows_frame_has_one_column_per_variable_and_flat_statistics(baseline_path, baseline_document):
    frame = load_results(baseline_path).rows
    assert len(frame) == len(baseline_document["results"])
    for column in ("method", "direction", "mode", "bytes", "src_rank", "dst_rank", "blocks", "threads", "unroll",
                   "smem_bytes", "stages", "buffer_pool_bytes", "bandwidth_gbps_median", "bandwidth_gbps_stdev",
                   "time_us_median", "samples_gbps", "latency_us_median", "latency_us_p95", "samples_us", "status",
                   "metric"):
        assert column in frame.columns
    checked = []
    for stats_field, samples_field, metric in (("bandwidth_gbps", "samples_gbps", "bandwidth"),
                                               ("latency_us", "samples_us", "latency")):
        index = first_ok_row_with(baseline_document, stats_field)
        if index is None:
            continue
        row = baseline_document["results"][index]
        assert frame.loc[index, f"{stats_field}_median"] == row[stats_field]["median"]
        assert frame.loc[index, samples_field] == row[samples_field]
        assert frame.loc[index, "metric"] == metric
        checked.append(metric)
    assert checked, "no ok row with bandwidth or latency statistics"
    assert str(frame["bytes"].dtype) == "Int64"


def test_every_statistic_and_sample_list_is_a_column(baseline_path, baseline_document):
    """latency_us, issue_interval_us, cycles, atomic_ops_per_s ... flattened; samples_* kept as lists."""
    frame = load_results(baseline_path).rows
    for index, row in enumerate(baseline_document["results"]):
        for field, value in row.items():
            if isinstance(value, dict):
                for stat, number in value.items():
                    assert frame.loc[index, f"{field}_{stat}"] == number, (index, field, stat)
                    assert str(frame[f"{field}_{stat}"].dtype) == "float64", field
            elif field.startswith("samples_"):
                assert frame.loc[index, field] == value, (index, field)
            elif field in ("hot_addresses", "ops_per_thread") and value is not None:
                assert frame.loc[index, field] == value and str(frame[field].dtype) == "Int64", field
    for field in [c for c in frame.columns if c.startswith("samples_")]:
        assert frame[field].map(lambda v: isinstance(v, list)).all(), field  # [] in a row without them


def test_bidir_directions_are_flattened(synthetic_document):
    frame = rows_frame(synthetic_document["results"])
    bidir = frame[(frame["mode"] == "bidir") & (frame["status"] == "ok")].iloc[0]
    assert bidir["directions_0_src_rank"] == 0 and bidir["directions_1_src_rank"] == 1
    assert bidir["directions_0_bandwidth_gbps_median"] > 0 and 0 <= bidir["overlap"] <= 1
    assert isinstance(bidir["directions_0_samples_gbps"], list)


def test_cases_match_on_independent_variables_and_payload_fields(synthetic_document):
    rows = copy.deepcopy(synthetic_document["results"][:4])
    other = copy.deepcopy(rows)
    other[0]["bytes"] += 1                 # a different case
    other[1]["iterations"] += 7            # not an independent variable: still the same case
    other[2].pop("buffer_pool_bytes")      # missing pool = 0
    matched = match_cases([rows_frame(rows), rows_frame(other)])
    both = [m for m in matched if all(r is not None for r in m.rows)]
    assert len(both) == 3 and len(matched) == 5
    signal = next(r for r in synthetic_document["results"] if r["method"] == "latency_signal")
    latency = [dict(signal, protocol="flag_in_data"), dict(signal, protocol="payload_then_flag"),
               dict(signal, protocol="flag_in_data")]
    keys = list(add_case_keys(rows_frame(latency))["case_key"])
    assert keys[0] != keys[1] and keys[0][:-1] == keys[2][:-1] and keys[2][-1] == 2  # a repeat is #2
    described = describe_case(keys[1])
    assert described["config"] == "payload_then_flag" and describe_case(keys[2])["config"] == "flag_in_data #2"


def test_the_synthetic_run_is_schema_valid(synthetic_document):
    assert first_error(synthetic_document) is None
    methods = {r["method"] for r in synthetic_document["results"]}
    assert {"ce", "ldst", "tma", "latency_signal"} <= methods
    bidir = [r for r in synthetic_document["results"] if r["mode"] == "bidir" and r["status"] == "ok"]
    assert bidir and all("overlap" in r and len(r["directions"]) == 2 for r in bidir)


def test_atomic_cases_differ_by_hot_addresses(synthetic_document):
    """Contention on 32 or 64 shared addresses is another experiment, not the same case changed."""
    base = next(r for r in synthetic_document["results"] if r["method"] == "ldst" and r["status"] == "ok")
    atomic = dict(copy.deepcopy(base), method="atomic", atomic_type="u32", atomic_pattern="hot_spot",
                  hot_addresses=32, ops_per_thread=16)
    keys = list(add_case_keys(rows_frame([atomic, dict(atomic, hot_addresses=64)]))["case_key"])
    assert keys[0] != keys[1] and keys[1][-1] == 1  # not a repeat (#2) of the first
    assert describe_case(keys[0])["config"].endswith("u32 hot_spot 32 hot addresses")
    frame = rows_frame([atomic])
    assert str(frame["hot_addresses"].dtype) == str(frame["ops_per_thread"].dtype) == "Int64"
