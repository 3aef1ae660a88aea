"""Command line: `p2pbench-report SUBCOMMAND ...`. `main(argv)` returns the exit status.

Exit status: 0 success; 1 `regress` found a SLOWER or BROKEN case (or MISSING with
--require-all), or `check` a FAIL, or `suspects` a suspect pair, or `burn-in` a warn verdict; 2 unusable input (a file missing, not JSON, not schema-valid,
a run `check` refuses) or bad usage; 3 `regress`: a slowdown measured on a contended or throttled
candidate (UNRELIABLE: re-run).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Callable, Sequence

from p2pbench_report import __version__
from p2pbench_report.errors import DependencyError, InputError
from p2pbench_report.units import parse_fraction, parse_size

PROGRAM = "p2pbench-report"

OVERVIEW = """\
Analyse p2pbench results files (JSON, schema/results.schema.json): figures, side-by-side
comparisons, regression checks for CI, CSV export, and importers that bring nvbandwidth and
nccl-tests figures into the same format. Every input is validated against the schema first.
Bandwidth is in GB/s with 1 GB = 1e9 bytes; sizes are in bytes (K = 2^10, M = 2^20, G = 2^30).
"""

OVERVIEW_EPILOG = """\
examples:
  p2pbench-report plot results/h200-nv18/run.json -o figures/
  p2pbench-report compare old.json new.json --html comparison.html
  p2pbench-report regress baseline.json candidate.json --threshold 5%
  p2pbench-report suspects matrix.json                  # pairs well below comparable pairs (exit 1)
  p2pbench-report export run.json --csv run.csv
  p2pbench-report burn-in burn-in.json --plot figures/    # windows, worst window, verdicts (exit 1 on warn)
  p2pbench-report tails run.json                        # p50 .. p99.9 per row
  p2pbench-report expect make good.json -o expect.json && p2pbench-report check run.json --expect expect.json
  p2pbench-report import-nvbandwidth nvbandwidth.json -o nvbandwidth.p2pbench.json
  p2pbench-report plot run.json nvbandwidth.p2pbench.json -o figures/   # p2pbench beside nvbandwidth

exit status: 0 ok; 1 regress found a regression / check a FAIL / suspects found a suspect pair /
burn-in a warn verdict;
2 unusable input or bad usage; 3 regress: UNRELIABLE (slower on a contended or throttled candidate: re-run).
'p2pbench-report SUBCOMMAND --help' explains each subcommand.
"""


def _fraction(text: str) -> float:
    try:
        return parse_fraction(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _size(text: str) -> int:
    try:
        return parse_size(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _formats(text: str) -> tuple[str, ...]:
    formats = tuple(f.strip().lower() for f in text.split(",") if f.strip())
    unknown = [f for f in formats if f not in ("png", "svg", "pdf")]
    if not formats or unknown:
        raise argparse.ArgumentTypeError(f"{text!r}: choose from png, svg, pdf (comma-separated)")
    return formats


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if value <= 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive number of GB/s")
    return value


# ---- subcommands -------------------------------------------------------------------------------

def _group_summary(result_sets) -> str:
    """The suspect pairs (and rounds-vs-alone agreement) of the version 2 files, for the top of
    `plot`'s output: the first thing an operator reads. '' for version 1 files."""
    from p2pbench_report.agreement import agreement_summary, agreements
    from p2pbench_report.suspects import find_suspects, render_text

    reports = [find_suspects(r) for r in result_sets if isinstance(r.document["meta"].get("group"), dict)]
    if not reports:
        return ""
    lines = [render_text(reports)]
    for report in reports:
        found = agreements(report.result_set)
        if found:
            lines.append(f"{report.result_set.name}: {agreement_summary(found)}\n")
    return "\n".join(lines)


def run_plot(args: argparse.Namespace) -> int:
    from p2pbench_report.loader import load_many
    from p2pbench_report.plots.figures import build_figures, close_figures, write_figures

    result_sets = load_many(args.results)
    sys.stdout.write(_group_summary(result_sets))
    figures = build_figures(result_sets)
    try:
        write_figures(figures, args.output_dir, args.format)
    finally:
        close_figures(figures)
    if not figures:
        print("no figure: the files hold no ok bandwidth or latency rows that a figure could show", file=sys.stderr)
        return 0
    print(f"wrote {len(figures)} figures ({', '.join(args.format)}) to {args.output_dir}:")
    for plotted in figures:
        print(f"  {plotted.name}: {'; '.join(plotted.series)}")
    return 0


def run_compare(args: argparse.Namespace) -> int:
    from p2pbench_report.compare import compare, render_markdown
    from p2pbench_report.compare_view import render_html, render_markdown_summary
    from p2pbench_report.loader import load_many

    if len(args.results) < 2:
        print(f"{PROGRAM} compare: error: give two or more results files to compare", file=sys.stderr)
        return 2
    comparison = compare(load_many(args.results), all_cases=args.all_cases)
    sys.stdout.write(render_markdown(comparison) + render_markdown_summary(comparison, args.threshold))
    if args.html:
        Path(args.html).write_text(render_html(comparison, args.threshold), encoding="utf-8")
        print(f"\nwrote {args.html}")
    return 0


def run_regress(args: argparse.Namespace) -> int:
    from p2pbench_report.loader import load_results
    from p2pbench_report.regress import Thresholds, regress, render_json, render_markdown

    report = regress(load_results(args.baseline), load_results(args.candidate),
                     Thresholds(bandwidth=args.threshold, latency=args.latency_threshold),
                     require_all=args.require_all)
    sys.stdout.write(render_json(report) if args.format == "json" else render_markdown(report, args.verbose))
    return report.exit_code


def run_suspects(args: argparse.Namespace) -> int:
    from p2pbench_report.loader import load_many
    from p2pbench_report.suspects import find_suspects, render

    reports = [find_suspects(r, args.margin) for r in load_many(args.results)]
    sys.stdout.write(render(reports, args.format))
    return 1 if any(r.suspects for r in reports) else 0


def run_export(args: argparse.Namespace) -> int:
    from p2pbench_report.export import write_csv
    from p2pbench_report.loader import load_results

    output = args.output or args.csv
    if not output:
        print(f"{PROGRAM} export: error: say where to write: -o FILE (or --csv FILE; '-' for stdout)", file=sys.stderr)
        return 2
    if args.format == "prometheus":
        from p2pbench_report.prometheus import write_prometheus  # prometheus_client only when asked for

        write_prometheus(load_results(args.results).document, output, with_timestamps=args.with_timestamps,
                         source=args.results)
    elif args.with_timestamps:
        print(f"{PROGRAM} export: error: --with-timestamps belongs to --format prometheus", file=sys.stderr)
        return 2
    else:
        write_csv(load_results(args.results), output)
    if output != "-":
        print(f"wrote {output} ({args.format})", file=sys.stderr)
    return 0


def _write_document(document: dict, output: str | None) -> None:
    text = json.dumps(document, indent=2) + "\n"
    if output in (None, "-"):
        sys.stdout.write(text)
    else:
        Path(output).write_text(text, encoding="utf-8")
        skipped = document["meta"]["config"].get("skipped_testcases")
        note = f"; skipped testcases without a p2pbench counterpart: {', '.join(skipped)}" if skipped else ""
        print(f"wrote {output}: {len(document['results'])} rows{note}", file=sys.stderr)


def run_import_nvbandwidth(args: argparse.Namespace) -> int:
    from p2pbench_report.importers import import_nvbandwidth

    document = import_nvbandwidth(args.input, label=args.label, buffer_bytes=args.bytes, link=args.link,
                                  peak_gbps=args.peak_gbps)
    _write_document(document, args.output)
    return 0


def run_import_nccl_tests(args: argparse.Namespace) -> int:
    from p2pbench_report.importers import import_nccl_tests

    document = import_nccl_tests(args.input, label=args.label, in_place=args.in_place, link=args.link,
                                 peak_gbps=args.peak_gbps)
    _write_document(document, args.output)
    return 0


# ---- parser ----------------------------------------------------------------------------------

def _subcommand(subparsers, name: str, handler: Callable[[argparse.Namespace], int], summary: str,
                description: str, epilog: str) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(name, help=summary, description=description, epilog=epilog,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.set_defaults(handler=handler)
    return parser


def _import_options(parser: argparse.ArgumentParser, default_label: str) -> None:
    parser.add_argument("-o", "--output", metavar="OUT.json", help="where to write the results file (default: stdout)")
    parser.add_argument("--label", default=default_label, help=f"meta.label of the imported run (default: {default_label})")
    parser.add_argument("--link", help="link name for figure titles, recorded as meta.topology.topo_label (e.g. NV18)")
    parser.add_argument("--peak-gbps", type=_positive_float, metavar="GBPS",
                        help="the link's theoretical peak per direction, recorded as "
                             "meta.topology.peak_gbps_per_direction (plots draw it)")


def _add_suspects(subparsers) -> None:
    """The `suspects` subcommand (suspects.py)."""
    suspects = _subcommand(
        subparsers, "suspects", run_suspects, "suspect pairs: pairs measured well below comparable pairs",
        "The first thing to read after a matrix run (schema version 2 files): the pairs of ranks whose\n"
        "median GB/s is more than --margin below the median of the OTHER comparable pairs, ranked by\n"
        "that shortfall. p2pbench judges every pair when it writes the file (suspect_pairs); this reads\n"
        "that judgement and never recomputes it. Comparable: the same matrix (method, direction, mode,\n"
        "size, kernel shape; one pair at a time, in rounds, or sampled; alone checks are a sample and not\n"
        "judged) and the same link class (meta.pairs link_type + topo_label, e.g. 'nvlink NV18', 'pcie\n"
        "PHB'). Each pair's figure is its flow's median (bidir: each direction's own). Pairs of two ranks\n"
        "on one GPU (same_device) are never judged nor used as a reference. A version 1 file (one pair)\n"
        "has nothing to compare; a file written before every judged pair was kept lists only the pairs\n"
        "below the run's own margin. `plot` prints the same table at the top of its output.",
        "examples:\n"
        "  p2pbench-report suspects matrix.json\n"
        "  p2pbench-report suspects matrix.json --margin 5% --format csv > suspects.csv\n"
        "  p2pbench-report suspects matrix.json --format json | jq '.files[0].suspects[0]'\n\n"
        "exit status: 0 no suspect pair; 1 some pair is suspect; 2 unusable input.")
    suspects.add_argument("results", nargs="+", metavar="RESULTS.json", help="p2pbench results files")
    suspects.add_argument("--margin", type=_fraction, default=None, metavar="PCT",
                          help="how far below the comparable pairs' median a pair must be, as 10%% or 0.1 "
                               "(default: the run's own, 10%%)")
    suspects.add_argument("--format", choices=("text", "csv", "json"), default="text",
                          help="text: a Markdown table per file (default); csv; json")


def _add_plot(subparsers) -> None:
    """The plot subcommand."""
    plot = _subcommand(
        subparsers, "plot", run_plot, "figures (PNG and SVG) of one or several results files",
        "Draws the figures the data supports, one file each per format:\n"
        "  size_<direction>_<mode>      bandwidth vs message size per method (log-2 axis), with the\n"
        "                               link's peak dashed when meta.topology.peak_gbps_per_direction is known\n"
        "  sm_scaling_<direction>_<mode> bandwidth vs SMs used, knee = fewest SMs reaching 90% of the best\n"
        "  heatmap_ldst_* / heatmap_tma_* blocks x threads (LD/ST), blocks x shared memory (TMA)\n"
        "  uni_vs_bidir_<direction>     one direction vs both directions at once\n"
        "  bars_<direction>_<mode>      instead of size_*, where every method was measured at one size\n"
        "  latency_<direction>_<mode>   latency (µs) vs message size per method and protocol (latency rows)\n"
        "  latency_bars_<dir>_<mode>    instead of latency_*, where every series has one size (latency_read)\n"
        "  time_<direction>_<mode>      time per transfer vs size on log-log axes (sizes below 1 MiB present)\n"
        "  atomics_<direction>          remote atomics, Gops/s by atomic type x access pattern\n"
        "  matrix_<case>_<schedule>_<system>  schema v2: N x N heatmap per method/direction/mode/size/shape\n"
        "                               (rows = source rank, columns = destination; colours from 0 to the\n"
        "                               link peak, never the data's min-max; same-GPU cells hatched)\n"
        "  agreement_<case>_<system>    schema v2: matrix in rounds vs pairs re-measured alone, % per pair\n"
        "  patterns_<method>_<dir>_<mode>_<system>  schema v2: aggregate per pattern vs the sum of its peaks\n"
        "  burn_in_<method>_<dir>_<mode>_<size>_<src>to<dst>_<system>  a burn-in's timeline per flow (see burn-in)\n"
        "Several files are overlaid, each series labelled by its system (meta.label). For schema v2 files\n"
        "the suspect-pairs table (see `suspects`) and the rounds-vs-alone agreement are printed first.",
        "examples:\n"
        "  p2pbench-report plot run.json -o figures/\n"
        "  p2pbench-report plot h200.json a100.json nvbandwidth.p2pbench.json -o figures/ --format png")
    plot.add_argument("results", nargs="+", metavar="RESULTS.json", help="p2pbench results files")
    plot.add_argument("-o", "--output-dir", required=True, metavar="DIR", help="folder for the figures (created)")
    plot.add_argument("--format", type=_formats, default=("png", "svg"), metavar="png,svg",
                      help="comma-separated image formats (default: png,svg)")


def _add_compare(subparsers) -> None:
    """The compare subcommand."""
    comparison = _subcommand(
        subparsers, "compare", run_compare, "side-by-side table of several results files",
        "Matches cases on their independent variables (method, direction, mode, bytes, src_rank,\n"
        "dst_rank, blocks, threads, unroll, smem_bytes, stages, buffer_pool_bytes, and payload fields of\n"
        "latency rows) and prints, as Markdown, a metadata diff (GPU, driver, CUDA, link, hosts; the\n"
        "source tree each file was built from: commit, changes, sources' hash, build, with a WARNING\n"
        "where the trees differ or one is not known; how each run was made: verify, samples, sample\n"
        "time, buffer pool, clocks, NCCL, sanitizer mode; each run's health verdicts, with a WARNING\n"
        "where these differ) and\n"
        "each file's median with the ratio to the first file, then one summary line per file and method\n"
        "(geometric-mean ratio, worst case). The HTML page adds a ratio-vs-size figure and highlights\n"
        "ratios outside --threshold. Cases measured in only one file are left out unless --all-cases.\n"
        "Imported rows that lack a shape or load protocol (nvbandwidth) match p2pbench's rows of any\n"
        "shape or protocol; the config column says 'matched ignoring ...'.",
        "examples:\n"
        "  p2pbench-report compare before.json after.json\n"
        "  p2pbench-report compare run.json nvbandwidth.p2pbench.json --html report.html")
    comparison.add_argument("results", nargs="+", metavar="RESULTS.json", help="two or more results files; the first is the reference")
    comparison.add_argument("--html", metavar="FILE", help="also write a self-contained HTML page with the figures inlined")
    comparison.add_argument("--all-cases", action="store_true", help="list cases measured in only one file too")
    comparison.add_argument("--threshold", type=_fraction, default=0.03, metavar="3%",
                            help="ratios further than this from 1 are counted in the summary and highlighted "
                                 "in the HTML table (default 3%%)")


def _add_regress(subparsers) -> None:
    """The regress subcommand (a CI gate)."""
    regression = _subcommand(
        subparsers, "regress", run_regress, "regression check of a candidate run against a baseline (for CI)",
        "Classifies every case of the baseline:\n"
        "  SLOWER     median worse by more than the threshold AND a one-sided Mann-Whitney U test on\n"
        "             the raw samples (alpha = 0.05) says the candidate is worse       -> exit 1\n"
        "  BROKEN     ok in the baseline, failed or skipped in the candidate            -> exit 1\n"
        "  UNRELIABLE would be SLOWER, but the candidate run had contention or throttled clocks\n"
        "             (meta.verdicts, or derived from its health snapshots): re-run  -> exit 3\n"
        "  MISSING    absent from the candidate                         -> exit 1 only with --require-all\n"
        "  AMBIGUOUS  the median moved past the threshold but the test cannot confirm it (too few\n"
        "             samples for p < alpha, e.g. 3 vs 3, or p >= alpha)\n"
        "  FASTER     better by more than the threshold, confirmed (never fails)\n"
        "  SAME       within the threshold;  UNMEASURED: not ok in the baseline;  NEW: candidate only\n"
        "Bandwidth rows use --threshold (higher is better); latency rows (latency_us) use\n"
        "--latency-threshold (lower is better). Medians and the test come from the raw samples.\n"
        "Both runs' health verdicts and any difference in how they were made (verify, samples,\n"
        "sample time, buffer pool, clocks, NCCL, sanitizer mode) are printed. SLOWER and BROKEN\n"
        "cases are listed first.",
        "examples:\n"
        "  p2pbench-report regress baseline.json candidate.json\n"
        "  p2pbench-report regress baseline.json candidate.json --threshold 3% --require-all\n"
        "  p2pbench-report regress baseline.json candidate.json --format json > verdicts.json\n\n"
        "exit status: 0 no regression; 1 SLOWER or BROKEN (or MISSING with --require-all); 2 unusable\n"
        "input; 3 no failing case but an UNRELIABLE one (a gate must not pass it: re-run on idle GPUs).")
    regression.add_argument("baseline", metavar="BASELINE.json")
    regression.add_argument("candidate", metavar="CANDIDATE.json")
    regression.add_argument("--threshold", type=_fraction, default=0.05, metavar="5%",
                            help="bandwidth change that counts, as 5%% or 0.05 (default 5%%)")
    regression.add_argument("--latency-threshold", type=_fraction, default=0.15, metavar="15%",
                            help="latency change that counts (default 15%%)")
    regression.add_argument("--require-all", action="store_true", help="fail when a baseline case is missing from the candidate")
    regression.add_argument("--format", choices=("markdown", "json"), default="markdown",
                            help="markdown for people and CI logs (default), json for bots")
    regression.add_argument("-v", "--verbose", action="store_true", help="list SAME cases too (markdown)")


def _add_export(subparsers) -> None:
    """The export subcommand: CSV or Prometheus."""
    export = _subcommand(
        subparsers, "export", run_export, "CSV for spreadsheets, or a Prometheus textfile",
        "csv: one row per case, one column per field. Statistics are flattened (bandwidth_gbps_median,\n"
        "time_us_stdev, latency_us_p95 ...), bidir per-direction figures become directions_<i>_<field>,\n"
        "raw samples one ';'-joined column; label, host, GPU names, UUIDs, bus ids and driver version\n"
        "on every row, so files of several clusters stack; gpu_uuids names every GPU of the row's flows,\n"
        "same_gpu (true/false/mixed) marks rows with a flow within one GPU (two ranks sharing it).\n"
        "prometheus: OpenMetrics text for node-exporter's textfile collector (needs prometheus_client):\n"
        "p2pbench_bandwidth_gbps and p2pbench_latency_seconds (between two GPUs only), their\n"
        "p2pbench_same_gpu_* twins (rows with a flow within one GPU: never P2P), p2pbench_case_ok per\n"
        "case, labelled method, direction, mode, bytes, shape, src/dst rank and GPU UUID, gpu_uuids,\n"
        "same_gpu, host, label; p2pbench_run_health_ok, _contention, _throttled, _link_errors and\n"
        "_timestamp_seconds per run. docs/results.md (Prometheus export) has the details.\n"
        "Tails: p2pbench_transfer_time_seconds{quantile=\"0.99\"|\"0.999\"} per bandwidth case. A burn-in adds\n"
        "its windows: p2pbench_window_bandwidth_gbps, _min_bandwidth_gbps, _nvlink_errors, _throttled,\n"
        "labelled window, without timestamps in the textfile (the collector refuses them); with\n"
        "--with-timestamps, the window series alone, each sample stamped with its window's end (OpenMetrics,\n"
        "for promtool tsdb create-blocks-from openmetrics or a remote-write path). docs/burn-in.md.",
        "examples:\n  p2pbench-report export run.json --csv run.csv\n  p2pbench-report export run.json --csv - | head\n"
        "  p2pbench-report export --format prometheus run.json -o /var/lib/node_exporter/textfile/p2pbench.prom\n"
        "  p2pbench-report export --format prometheus --with-timestamps burn-in.json -o burn-in.om")
    export.add_argument("results", metavar="RESULTS.json")
    export.add_argument("--format", choices=("csv", "prometheus"), default="csv", help="what to write (default csv)")
    export.add_argument("-o", "--output", metavar="FILE", help="file to write ('-' for stdout)")
    export.add_argument("--csv", metavar="FILE", help="the same as --format csv -o FILE")
    export.add_argument("--with-timestamps", action="store_true",
                        help="prometheus: a burn-in's window series alone, as OpenMetrics text whose every sample "
                             "carries its window's end as timestamp (for backfill or remote write; "
                             "node-exporter's textfile collector refuses timestamps, so never for it)")


def _add_importers(subparsers) -> None:
    """The importers of nvbandwidth and nccl-tests output."""
    nvbandwidth = _subcommand(
        subparsers, "import-nvbandwidth", run_import_nvbandwidth,
        "turn nvbandwidth -j output into a p2pbench results file",
        "Maps device-to-device testcases onto p2pbench rows, one sample each:\n"
        "  device_to_device_memcpy_write_ce -> ce push uni     ..._memcpy_read_ce -> ce pull uni\n"
        "  device_to_device_bidirectional_memcpy_{write,read}_ce -> ce push/pull bidir (total)\n"
        "  ..._sm testcases -> ldst (nvbandwidth's SM copy kernel; shape unknown: compare matches\n"
        "                      it with p2pbench's ldst and tma rows of any shape, and says so)\n"
        "  device_to_device_latency_sm -> latency_read (2 MiB chain; matched with every load protocol)\n"
        "Other testcases are skipped (listed in meta.config.skipped_testcases). The source is recorded\n"
        "as meta.label and meta.config.imported_from.",
        "examples:\n"
        "  nvbandwidth -j > nvb.json; p2pbench-report import-nvbandwidth nvb.json -o nvb.p2pbench.json\n"
        "  p2pbench-report import-nvbandwidth nvb.json --bytes 256MiB --link NV18 --peak-gbps 478 -o out.json")
    nvbandwidth.add_argument("input", metavar="FILE.json", help="nvbandwidth -j output")
    nvbandwidth.add_argument("--bytes", type=_size, metavar="SIZE",
                             help="buffer size nvbandwidth ran with (its -b), when the JSON lacks bufferSize "
                                  "(default 512MiB, nvbandwidth's default)")
    _import_options(nvbandwidth, "nvbandwidth")

    nccl = _subcommand(
        subparsers, "import-nccl-tests", run_import_nccl_tests,
        "turn nccl-tests sendrecv_perf output (text table or -J JSON) into a p2pbench results file",
        "Each message size becomes a row: method nccl, direction push, mode bidir (two ranks send to\n"
        "each other at once). Per direction: algbw (= size / time); bandwidth_gbps: both directions\n"
        "together (2 x algbw), as every p2pbench bidir row counts it. One sample per listing of a size.",
        "examples:\n"
        "  sendrecv_perf -b 8 -e 1G -f 4 -g 2 > sendrecv.txt\n"
        "  p2pbench-report import-nccl-tests sendrecv.txt -o nccl.p2pbench.json\n"
        "  p2pbench-report plot run.json nccl.p2pbench.json -o figures/")
    nccl.add_argument("input", metavar="FILE", help="nccl-tests output: its text (stdout) or its -J JSON file")
    nccl.add_argument("--in-place", action="store_true", help="use the in-place columns (default: out-of-place)")
    _import_options(nccl, "nccl-tests")

def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=PROGRAM, description=OVERVIEW, epilog=OVERVIEW_EPILOG,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    subparsers = parser.add_subparsers(title="subcommands", metavar="SUBCOMMAND", required=True)

    _add_plot(subparsers)
    _add_compare(subparsers)
    _add_regress(subparsers)
    _add_suspects(subparsers)
    _add_export(subparsers)
    _add_importers(subparsers)

    from p2pbench_report.cli_expect import register as register_expectations
    register_expectations(subparsers, _subcommand)  # expect make, check
    from p2pbench_report.cli_burn_in import register as register_burn_in
    register_burn_in(subparsers, _subcommand, _formats)  # burn-in, tails
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_request:  # --help, --version, usage errors
        return int(exit_request.code or 0)
    try:
        return args.handler(args)
    except (InputError, DependencyError) as error:
        print(f"{PROGRAM}: error: {error}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # `... | head`: the reader left; not an error of ours
        sys.stdout = open(os.devnull, "w", encoding="utf-8")
        return 0
