"""Host-link rows of different host memory kinds and NUMA placements are different cases
(docs/host-memory.md): their keys differ and describe_config names the kind; the defaults
(pinned, local) key as a row without the fields, so files from before the host axis still match."""

from __future__ import annotations

from p2pbench_report.cases import add_case_keys, describe_config, identity

import pandas as pd


def h2d_row(**fields) -> dict:
    row = {"method": "h2d", "direction": "push", "mode": "uni", "bytes": 1 << 30, "src_rank": 0, "dst_rank": 0,
           "buffer_pool_bytes": 0}
    row.update(fields)
    return row


def test_kinds_and_placements_are_separate_cases():
    keys = {identity(h2d_row(host_memory=kind, host_numa=numa))
            for kind in ("pinned", "registered", "huge_pages", "pageable") for numa in ("local", "remote")}
    assert len(keys) == 8


def test_defaults_match_a_row_from_before_the_axis():
    assert identity(h2d_row(host_memory="pinned", host_numa="local")) == identity(h2d_row())
    assert identity(h2d_row(host_memory="pageable", host_numa="local")) != identity(h2d_row())


def test_one_file_of_several_kinds_keys_each_once():
    frame = pd.DataFrame([h2d_row(host_memory=k, host_numa="local") for k in ("pinned", "pageable")])
    keys = add_case_keys(frame)["case_key"].tolist()
    assert keys[0] != keys[1] and all(key[-1] == 1 for key in keys)  # no occurrence counter needed


def test_describe_names_the_kind_but_not_the_defaults():
    assert describe_config(pd.Series(h2d_row(host_memory="pinned", host_numa="local"))) == ""
    text = describe_config(pd.Series(h2d_row(host_memory="huge_pages", host_numa="remote")))
    assert "huge_pages host memory" in text and "remote NUMA node" in text
    key = identity(h2d_row(host_memory="pageable", host_numa="local")) + (1,)
    assert describe_config(key) == "pageable host memory"
