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
    (lambda d, i: d.__setitem__("schema_version", 2), "$.schema_version"),
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


def test_rows_frame_has_one_column_per_variable_and_flat_statistics(baseline_path, baseline_document):
    frame = load_results(baseline_path).rows
    assert len(frame) == len(baseline_document["results"])
    for column in ("method", "direction", "mode", "bytes", "src_rank", "dst_rank", "blocks", "threads", "unroll",
                   "smem_bytes", "stages", "buffer_pool_bytes", "bandwidth_gbps_median", "bandwidth_gbps_stdev",
                   "time_us_median", "samples_gbps", "status", "metric"):
        assert column in frame.columns
    index = first_ok_row(baseline_document)
    row = baseline_document["results"][index]
    assert frame.loc[index, "bandwidth_gbps_median"] == row["bandwidth_gbps"]["median"]
    assert frame.loc[index, "samples_gbps"] == row["samples_gbps"]
    assert str(frame["bytes"].dtype) == "Int64"


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
