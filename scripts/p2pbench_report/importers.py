"""Importers: NVIDIA nvbandwidth (`-j` JSON) and nccl-tests (text table, or `-J` JSON) output
turned into p2pbench results documents, so that `plot` and `compare` show them beside p2pbench.

The schema requires meta.tool.name == "p2pbench", so an imported file records its source in
meta.label ("nvbandwidth", "nccl-tests" unless --label says otherwise) and in
meta.config.imported_from. Each imported case has a single sample (min = median = mean = max,
stdev 0): regress calls a move of such a case AMBIGUOUS, never SLOWER.

nvbandwidth mapping (bandwidth_matrix[row][column]; nvbandwidth's sources: the "write" tests
copy row -> column in the row GPU's context, the "read" tests copy column -> row in the row
GPU's context):
    device_to_device_memcpy_write_ce                -> ce   push uni    src = row, dst = column
    device_to_device_memcpy_read_ce                 -> ce   pull uni    src = column, dst = row
    device_to_device_bidirectional_memcpy_write_ce  -> ce   push bidir  (total of both directions)
    device_to_device_bidirectional_memcpy_read_ce   -> ce   pull bidir  (total of both directions)
    device_to_device_memcpy_{write,read}_sm         -> ldst push/pull uni   (nvbandwidth's SM copy
    device_to_device_bidirectional_memcpy_*_sm      -> ldst push/pull bidir  kernel: shape unknown,
                                                                             blocks/threads null)
    device_to_device_latency_sm                     -> latency_read pull uni, protocol null: the row
                                                       GPU chases a chain in the column GPU's memory
                                                       (src = column, dst = row), ns -> latency_us
  A bidirectional matrix stacks three GPU x GPU blocks: (column -> row), (row -> column), total;
  one row per GPU pair (row < column): bandwidth = the total, `directions` = the two blocks.
  bytes = nvbandwidth's buffer size: `bufferSize` (MiB) where the JSON has it, else --bytes
  (default 512 MiB, nvbandwidth's default); the latency test's chain is always 2 MiB (nvbandwidth
  runs it with a fixed 2 MiB buffer, 128-byte stride, 1,000,000 loads). The SM rows' kernel shape
  and the chase's load protocol are null: compare matches them with p2pbench's rows of any shape
  or protocol (cases.UNRECORDED) and says so.
  One GPU's host link (bandwidth_matrix: one row, the host; a column per GPU), each GPU's row
  r -> r as p2pbench's methods of a rank's own GPU write it (push uni, src = dst = the column):
    host_to_device_memcpy_ce                        -> h2d
    device_to_host_memcpy_ce                        -> d2h
    host_to_device_memcpy_sm                        -> h2d_sm  (kernel shape null, as the ldst rows)
    device_to_host_memcpy_sm                        -> d2h_sm
    host_to_device_bidirectional_memcpy_ce          -> h2d_bidir  (the named direction, the other
    device_to_host_bidirectional_memcpy_ce          -> d2h_bidir   running beside it)
    host_device_latency_sm                          -> latency_host pull uni, 2 MiB chain, protocol null
  Other testcases (local copies, all-to-one, the bidirectional SM host copies ...) have no
  p2pbench counterpart yet: they are skipped and listed in meta.config.skipped_testcases.

nccl-tests mapping: sendrecv_perf with two ranks sends in both directions at once:
    each size -> method "nccl", direction "push", mode "bidir", ranks null;
    per direction: algbw (computed unrounded as size / time); bandwidth_gbps = the total of both
    directions (2 x algbw) as for every p2pbench bidir row; directions = [0->1, 1->0] at algbw.
  Out-of-place columns unless --in-place. A size listed several times (repeated runs) becomes
  one case with one sample per listing. #wrong > 0 -> status "failed".
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from p2pbench_report.cases import SUM_OF_DIRECTIONS
from p2pbench_report.documents import (bandwidth_row, direction_figures, gpu_entry, latency_row, new_document,
                                       new_meta)
from p2pbench_report.errors import InputError
from p2pbench_report.schema import validate

NVBANDWIDTH_DEFAULT_BYTES = 512 * 2**20
NVBANDWIDTH_TESTCASE = re.compile(
    r"^device_to_device_(?P<bidir>bidirectional_)?memcpy_(?P<op>read|write)_(?P<engine>ce|sm)$")
NVBANDWIDTH_ENGINES = {"ce": "ce", "sm": "ldst"}
NVBANDWIDTH_LATENCY_TESTCASE = "device_to_device_latency_sm"
NVBANDWIDTH_HOST_TESTCASES = {  # one GPU's host link: rows r -> r (see the module doc)
    "host_to_device_memcpy_ce": "h2d", "device_to_host_memcpy_ce": "d2h",
    "host_to_device_memcpy_sm": "h2d_sm", "device_to_host_memcpy_sm": "d2h_sm",
    "host_to_device_bidirectional_memcpy_ce": "h2d_bidir", "device_to_host_bidirectional_memcpy_ce": "d2h_bidir",
}
NVBANDWIDTH_HOST_LATENCY_TESTCASE = "host_device_latency_sm"
NVBANDWIDTH_LATENCY_CHAIN_BYTES = 2 * 2**20  # nvbandwidth.cpp runs the latency tests on a fixed 2 MiB buffer
NVBANDWIDTH_LATENCY_LOADS = 1_000_000        # latencyMemAccessCnt in nvbandwidth's common.h
NVBANDWIDTH_FAILED_STATUSES = {"Error", "Running", "Not Found"}
NCCL_RANK_LINE = re.compile(
    r"^#\s*Rank\s+(?P<rank>\d+)\s+Group\s+\d+\s+Pid\s+\d+\s+on\s+(?P<host>\S+)\s+device\s+(?P<device>\d+)\s+"
    r"\[(?P<bus>[^\]]+)\]\s+(?P<name>.+?)\s*$")


def _topology(link: str | None, peak_gbps: float | None) -> dict | None:
    """meta.topology from --link/--peak-gbps, in the driver's keys (topo_label, peak_gbps_per_direction)."""
    topology: dict[str, Any] = {}
    if link:
        topology["topo_label"] = link
    if peak_gbps:
        topology["peak_gbps_per_direction"] = float(peak_gbps)
        topology["peak_source"] = "given to the importer (--peak-gbps)"
    return topology or None


def _checked(document: dict, source: Path) -> dict:
    """Every imported document must itself be schema-valid (a bug here would otherwise surface
    later, on someone else's command)."""
    validate(document, f"{source} (as imported)")
    return document


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(path, "no such file") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise InputError(path, f"not valid JSON ({error})") from None


# ---- nvbandwidth -----------------------------------------------------------------------------

def _matrix_value(text: Any) -> float | None:
    try:
        value = float(text)
    except (TypeError, ValueError):
        return None  # "N/A"
    return value if value > 0 else None


def _nvbandwidth_gpus(report: dict, driver: str | None) -> list[dict]:
    gpus = []
    for entry in report.get("GPU Device list") or []:
        match = re.match(r"^\s*(\d+)\s*:\s*(.*?)\s*\(([0-9A-Fa-f:.]+)\)", str(entry))
        if match:
            gpus.append(gpu_entry(int(match.group(1)), match.group(2), pci_bus_id=match.group(3),
                                  driver_version=driver, device_index=int(match.group(1))))
    return gpus


def _nvbandwidth_rows(testcase: dict, method: str, direction: str, bidir: bool, size: int,
                      gpu_count: int, source: Path) -> list[dict]:
    name = testcase.get("name")
    status = testcase.get("status")
    matrix = testcase.get("bandwidth_matrix") or []
    if status != "Passed":
        state = "failed" if status in NVBANDWIDTH_FAILED_STATUSES else "skipped"
        error = f"nvbandwidth {name}: {status}" + (f" ({testcase['error']})" if testcase.get("error") else "")
        mode = "bidir" if bidir else "uni"
        return [bandwidth_row(method, direction, mode, size, [], status=state, error=error)]
    if not isinstance(matrix, list) or not matrix:
        raise InputError(source, "Passed testcase without a bandwidth_matrix", field=f"testcases[{name}]")
    size_of_block = gpu_count or len(matrix[0])
    rows = []
    if not bidir:
        for row_gpu, values in enumerate(matrix[:size_of_block]):
            for column_gpu, text in enumerate(values):
                value = _matrix_value(text)
                if value is None or row_gpu == column_gpu:
                    continue
                src, dst = (row_gpu, column_gpu) if direction == "push" else (column_gpu, row_gpu)
                rows.append(bandwidth_row(method, direction, "uni", size, [value], src_rank=src, dst_rank=dst))
        return rows
    stacked = len(matrix) >= 3 * size_of_block
    total = matrix[2 * size_of_block:3 * size_of_block] if stacked else matrix[:size_of_block]
    for row_gpu in range(size_of_block):
        for column_gpu in range(row_gpu + 1, size_of_block):
            value = _matrix_value(total[row_gpu][column_gpu])
            if value is None:
                continue
            directions = []
            if stacked:
                reverse = _matrix_value(matrix[row_gpu][column_gpu])                    # column -> row
                forward = _matrix_value(matrix[size_of_block + row_gpu][column_gpu])    # row -> column
                if forward is not None and reverse is not None:
                    directions = [direction_figures(row_gpu, column_gpu, size, [forward]),
                                  direction_figures(column_gpu, row_gpu, size, [reverse])]
            row = bandwidth_row(method, direction, "bidir", size, [value], directions=directions)
            row["bidir_figure"] = SUM_OF_DIRECTIONS  # nvbandwidth's total: each direction's own figure, added
            rows.append(row)
    return rows


def _nvbandwidth_status_error(testcase: dict) -> tuple[str, str] | None:
    """(row status, error) of a testcase that did not pass, else None."""
    name, status = testcase.get("name"), testcase.get("status")
    if status == "Passed":
        return None
    error = f"nvbandwidth {name}: {status}" + (f" ({testcase['error']})" if testcase.get("error") else "")
    return ("failed" if status in NVBANDWIDTH_FAILED_STATUSES else "skipped"), error


def _nvbandwidth_host_rows(testcase: dict, method: str, size: int, source: Path) -> list[dict]:
    """Rows r -> r from a host testcase's one-row matrix (the host row, a column per GPU): GB/s for
    the copies, ns per dependent load for the latency (-> latency_host, microseconds)."""
    latency = method == "latency_host"
    common = {"direction": "pull", "iterations": NVBANDWIDTH_LATENCY_LOADS, "protocol": None} if latency else {}
    failed = _nvbandwidth_status_error(testcase)
    if failed:
        if latency:
            return [latency_row(method, NVBANDWIDTH_LATENCY_CHAIN_BYTES, [], status=failed[0], error=failed[1],
                                src_rank=0, dst_rank=0, **common)]
        return [bandwidth_row(method, "push", "uni", size, [], status=failed[0], error=failed[1], src_rank=0, dst_rank=0)]
    matrix = testcase.get("bandwidth_matrix") or []
    if not isinstance(matrix, list) or not matrix or not isinstance(matrix[0], list):
        raise InputError(source, "Passed testcase without a bandwidth_matrix", field=f"testcases[{testcase.get('name')}]")
    rows = []
    for gpu, text in enumerate(matrix[0]):
        value = _matrix_value(text)
        if value is None:
            continue
        if latency:
            rows.append(latency_row(method, NVBANDWIDTH_LATENCY_CHAIN_BYTES, [value / 1000.0], src_rank=gpu,
                                    dst_rank=gpu, **common))
        else:
            rows.append(bandwidth_row(method, "push", "uni", size, [value], src_rank=gpu, dst_rank=gpu))
    return rows


def _nvbandwidth_latency_rows(testcase: dict, source: Path) -> list[dict]:
    """latency_read rows from the pointer-chase matrix (ns): the row GPU reads the column GPU's chain."""
    name, status = testcase.get("name"), testcase.get("status")
    common = {"direction": "pull", "iterations": NVBANDWIDTH_LATENCY_LOADS, "protocol": None}
    if status != "Passed":
        error = f"nvbandwidth {name}: {status}" + (f" ({testcase['error']})" if testcase.get("error") else "")
        return [latency_row("latency_read", NVBANDWIDTH_LATENCY_CHAIN_BYTES, [], error=error,
                            status="failed" if status in NVBANDWIDTH_FAILED_STATUSES else "skipped", **common)]
    matrix = testcase.get("bandwidth_matrix") or []
    if not isinstance(matrix, list) or not matrix:
        raise InputError(source, "Passed testcase without a latency matrix", field=f"testcases[{name}]")
    rows = []
    for reader, values in enumerate(matrix):
        for owner, text in enumerate(values):
            value = _matrix_value(text)
            if value is not None and reader != owner:
                rows.append(latency_row("latency_read", NVBANDWIDTH_LATENCY_CHAIN_BYTES, [value / 1000.0],
                                        src_rank=owner, dst_rank=reader, **common))
    return rows


def _nvbandwidth_testcase_rows(testcase: dict, name: str, size: int, gpu_count: int,
                               source: Path) -> tuple[str, list[dict]] | None:
    """(what the testcase maps to, its rows), or None for a testcase without a p2pbench counterpart."""
    if name == NVBANDWIDTH_LATENCY_TESTCASE:
        return "latency_read pull uni", _nvbandwidth_latency_rows(testcase, source)
    if name == NVBANDWIDTH_HOST_LATENCY_TESTCASE:
        return "latency_host pull uni", _nvbandwidth_host_rows(testcase, "latency_host", size, source)
    if name in NVBANDWIDTH_HOST_TESTCASES:
        method = NVBANDWIDTH_HOST_TESTCASES[name]
        return f"{method} push uni", _nvbandwidth_host_rows(testcase, method, size, source)
    match = NVBANDWIDTH_TESTCASE.match(name)
    if not match:
        return None
    method = NVBANDWIDTH_ENGINES[match.group("engine")]
    direction = "push" if match.group("op") == "write" else "pull"
    bidir = bool(match.group("bidir"))
    rows = _nvbandwidth_rows(testcase, method, direction, bidir, size, gpu_count, source)
    return f"{method} {direction} {'bidir' if bidir else 'uni'}", rows


def import_nvbandwidth(path: str | Path, *, label: str = "nvbandwidth", buffer_bytes: int | None = None,
                       link: str | None = None, peak_gbps: float | None = None) -> dict:
    """A p2pbench results document from nvbandwidth's `-j` output."""
    path = Path(path)
    data = _read_json(path)
    report = data.get("nvbandwidth") if isinstance(data, dict) else None
    if not isinstance(report, dict) or not isinstance(report.get("testcases"), list):
        raise InputError(path, "not nvbandwidth -j output (expected an object 'nvbandwidth' with 'testcases')",
                         field="$.nvbandwidth.testcases")
    if buffer_bytes is None:
        buffer_bytes = int(report["bufferSize"]) * 2**20 if isinstance(report.get("bufferSize"), (int, float)) \
            else NVBANDWIDTH_DEFAULT_BYTES
    driver = report.get("Driver Version")
    gpus = _nvbandwidth_gpus(report, driver)
    rows, mapping, skipped = [], {}, []
    for index, testcase in enumerate(report["testcases"]):
        name = str(testcase.get("name", f"#{index}"))
        imported = _nvbandwidth_testcase_rows(testcase, name, buffer_bytes, len(gpus), path)
        if imported is None:
            skipped.append(name)
            continue
        mapping[name] = imported[0]
        rows += imported[1]
    if not rows:
        raise InputError(path, "no testcase with a p2pbench counterpart to import (ran nvbandwidth with -t filters?)")
    config = {"imported_from": "nvbandwidth", "source_file": path.name, "source_version": report.get("version"),
              "buffer_bytes": buffer_bytes, "mapping": mapping, "skipped_testcases": skipped,
              "samples": "one per case (nvbandwidth reports one figure per testcase and GPU pair)"}
    runtime = report.get("CUDA Runtime Version")
    meta = new_meta(label, config=config, gpus=gpus, command_line=["nvbandwidth", "-j"],
                    cuda_runtime_version=runtime if isinstance(runtime, int) else 0,
                    topology=_topology(link, peak_gbps))
    return _checked(new_document(meta, rows), path)


# ---- nccl-tests ------------------------------------------------------------------------------

def _nccl_float(value: Any) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None  # "N/A", "nan" text
    return None if number != number else number


def _nccl_text_measurements(text: str, path: Path, in_place: bool) -> tuple[dict, list[dict]]:
    """({collective, iterations, ranks, version}, [{size, time_us, wrong}]) from the text table."""
    info: dict[str, Any] = {"ranks": []}
    header: list[str] | None = None
    measurements = []
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if not stripped:
            continue
        if stripped.startswith("#"):
            if m := re.search(r"Collective test starting:\s*(\S+)", stripped):
                info["collective"] = m.group(1)
            elif m := re.search(r"nccl-tests version\s+(\S+)", stripped):
                info["version"] = m.group(1)
            elif m := re.search(r"\d\s+iters:\s*(\d+)", stripped):  # "warmup iters: 5 iters: 20"
                info["iterations"] = int(m.group(1))
            if m := NCCL_RANK_LINE.match(stripped):
                info["ranks"].append(m.groupdict())
            tokens = stripped.lstrip("#").split()
            if tokens[:2] == ["size", "count"] and "algbw" in tokens:
                header = tokens
            continue
        tokens = stripped.split()
        if header is None or not tokens[0].isdigit():
            continue
        if len(tokens) < len(header):
            raise InputError(path, f"line {number}: {len(tokens)} columns, the header names {len(header)}",
                             field=f"line {number}")
        time_columns = [i for i, name in enumerate(header) if name in ("time", "cputime")]
        wrong_columns = [i for i, name in enumerate(header) if name == "#wrong"]
        pick = 1 if in_place else 0
        if len(time_columns) <= pick:
            raise InputError(path, "the table has no in-place columns" if in_place else "no time column",
                             field="header")
        measurements.append({"size": int(tokens[0]), "time_us": _nccl_float(tokens[time_columns[pick]]),
                             "wrong": _nccl_float(tokens[wrong_columns[pick]]) if len(wrong_columns) > pick else None})
    if header is None:
        raise InputError(path, "no nccl-tests result table (expected a '#  size  count  type ... algbw' header)")
    return info, measurements


def _nccl_json_measurements(data: dict, path: Path, in_place: bool) -> tuple[dict, list[dict]]:
    config = data.get("config") or {}
    args = data.get("args") or []
    info: dict[str, Any] = {
        "collective": Path(str(args[0])).name if args else None,
        "iterations": config.get("iterations"),
        "version": f"nccl {data.get('nccl_version')}" if data.get("nccl_version") else None,
        "ranks": [{"rank": str(d.get("rank")), "host": d.get("hostname"), "device": str(d.get("device")),
                   "bus": d.get("device_hex"), "name": d.get("device_info")} for d in config.get("devices") or []],
        # nccl-tests lists each process's first device only: ranks = processes x threads x GPUs.
        "rank_count": len(config.get("devices") or []) * int(config.get("nthreads") or 1) * int(config.get("ngpus") or 1),
        "command_line": [str(a) for a in args],
    }
    measurements = []
    for index, result in enumerate(data.get("results") or []):
        body = result.get("in_place" if in_place else "out_of_place")
        if not isinstance(body, dict) or "size" not in result:
            raise InputError(path, "result without size or timing", field=f"$.results[{index}]")
        time_key = "time" if "time" in body else "cpu_time"
        measurements.append({"size": int(result["size"]), "time_us": _nccl_float(body.get(time_key)),
                             "wrong": _nccl_float(body.get("nwrong"))})
    return info, measurements


def import_nccl_tests(path: str | Path, *, label: str = "nccl-tests", in_place: bool = False,
                      link: str | None = None, peak_gbps: float | None = None) -> dict:
    """A p2pbench results document from nccl-tests sendrecv_perf output (text or -J JSON)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(path, "no such file") from None
    if text.lstrip().startswith("{"):
        data = _read_json(path)
        info, measurements = _nccl_json_measurements(data, path, in_place)
    else:
        info, measurements = _nccl_text_measurements(text, path, in_place)
    collective = info.get("collective") or ""
    if collective and not collective.startswith("sendrecv"):
        raise InputError(path, f"a {collective} run: only sendrecv_perf maps onto p2pbench rows (the schema has "
                               f"no field for a collective's name)", field="collective")
    ranks = info["ranks"]
    rank_count = info.get("rank_count", len(ranks))
    if rank_count not in (0, 2):
        raise InputError(path, f"{rank_count} ranks: a p2pbench case is one GPU pair (run sendrecv_perf on 2 GPUs)",
                         field="ranks")
    if not measurements:
        raise InputError(path, "no measurements in the table")
    by_size: dict[int, list[dict]] = {}
    for measurement in measurements:
        by_size.setdefault(measurement["size"], []).append(measurement)
    rows = []
    for size, group in sorted(by_size.items()):
        timed = [m for m in group if m["time_us"] and m["time_us"] > 0]
        wrong = sum(m["wrong"] or 0 for m in group)
        if not timed or wrong:
            error = f"nccl-tests counted {wrong:g} wrong elements" if wrong else "nccl-tests reported no time"
            rows.append(bandwidth_row("nccl", "push", "bidir", size, [], status="failed", error=error))
            continue
        per_direction = [size / (m["time_us"] * 1e3) for m in timed]  # algbw, unrounded
        rows.append(bandwidth_row(
            "nccl", "push", "bidir", size, [2 * g for g in per_direction],
            iterations=int(info.get("iterations") or 1),
            verified=all(m["wrong"] == 0 for m in timed),
            directions=[direction_figures(0, 1, size, per_direction), direction_figures(1, 0, size, per_direction)]))
    listed = {int(r["rank"]): r for r in ranks if str(r.get("rank", "")).isdigit()}
    gpus = [gpu_entry(rank, listed[rank]["name"] or "unknown", pci_bus_id=listed[rank].get("bus") or "unknown",
                      **({"device_index": int(listed[rank]["device"])} if str(listed[rank].get("device")).isdigit() else {}))
            if rank in listed else gpu_entry(rank, "unknown (not listed by nccl-tests)")
            for rank in range(rank_count)]
    hosts = sorted({r["host"] for r in ranks if r.get("host")})
    config = {"imported_from": "nccl-tests", "source_file": path.name, "source_version": info.get("version"),
              "collective": collective or "sendrecv_perf (assumed)", "columns": "in-place" if in_place else "out-of-place",
              "bandwidth": "total of both directions = 2 x algbw; algbw = size / time (unrounded)",
              "samples": "one per listing of a size"}
    meta = new_meta(label, config=config, gpus=gpus, hosts=hosts,
                    command_line=info.get("command_line") or [collective or "sendrecv_perf"],
                    topology=_topology(link, peak_gbps))
    return _checked(new_document(meta, rows), path)
