"""The `burn-in` and `tails` subcommands (burn_in.py, burn_in_summary.py, plots/burn_in.py, tails.py)."""

from __future__ import annotations

import argparse
import sys


def run_burn_in(args: argparse.Namespace) -> int:
    from p2pbench_report.burn_in import burn_in_of
    from p2pbench_report.burn_in_summary import exit_status, render_summary
    from p2pbench_report.errors import InputError
    from p2pbench_report.loader import load_results

    result_set = load_results(args.results)
    burn_in = burn_in_of(result_set.document)
    if burn_in is None:
        raise InputError(args.results, "no burn_in: not a burn-in run (p2pbench --duration S --window S, or a "
                                       "config's \"burn_in\")", field="$.burn_in")
    sys.stdout.write(render_summary(burn_in, f"{result_set.name} ({args.results})"))
    if args.plot:
        _write_plots(result_set, args.plot, args.format)
    return exit_status(burn_in)


def _write_plots(result_set, directory: str, formats: tuple[str, ...]) -> None:
    from p2pbench_report.plots.burn_in import burn_in_figures
    from p2pbench_report.plots.figures import close_figures, write_figures

    figures = burn_in_figures([result_set])
    try:
        written = write_figures(figures, directory, formats)
    finally:
        close_figures(figures)
    print(f"\nwrote {len(written)} figure files to {directory}:")
    for path in written:
        print(f"  {path.name}")


def run_tails(args: argparse.Namespace) -> int:
    from p2pbench_report.loader import load_results
    from p2pbench_report.tails import render_tails

    sys.stdout.write(render_tails(load_results(args.results).document))
    return 0


def register(subparsers, subcommand, formats) -> None:
    """Adds `burn-in` and `tails`; `subcommand` is cli._subcommand, `formats` cli._formats."""
    burn_in = subcommand(
        subparsers, "burn-in", run_burn_in, "one-screen summary of a burn-in, and its timelines (--plot)",
        "A burn-in repeats the same cases in windows (p2pbench --duration 300 --window 10) to catch a\n"
        "link that is slow only now and then. Prints: how many of the planned windows ran and for how\n"
        "long; per flow (method, direction, mode, bytes, src->dst) the median of its window medians, its\n"
        "worst window (lowest min per transfer: the flow's bytes over its longest transfer, GB/s) with\n"
        "that window's index and p99.9 time per transfer, the slow and throttled windows; then the\n"
        "verdict items the driver wrote (burn_in.verdicts: intermittent_flow, error_burst,\n"
        "throttled_window, errors_in_fast_windows). The driver owns those rules; a checkpoint of a run\n"
        "that was killed has no verdicts yet: it is called incomplete, and its slow / throttled windows\n"
        "are derived by docs/burn-in.md's rules (and said to be).\n"
        "--plot DIR: per flow burn_in_<method>_<dir>_<mode>_<size>_<src>to<dst>_<system>.png: bandwidth\n"
        "per window (median and min per transfer) against time, NVLink error-counter rises of the flow's\n"
        "GPUs on the right axis, slow windows shaded, throttled windows hatched, the injected-fault\n"
        "window marked. `plot` draws the same figures for a file with a burn-in.",
        "examples:\n"
        "  p2pbench-report burn-in burn-in.json\n"
        "  p2pbench-report burn-in burn-in.json --plot figures/\n\n"
        "exit status: 0 verdict ok (or none yet); 1 the driver's verdict is warn; 2 unusable input or no burn_in.")
    burn_in.add_argument("results", metavar="RESULTS.json", help="a p2pbench results file with a burn_in block")
    burn_in.add_argument("--plot", metavar="DIR", help="also write one timeline per flow to DIR (created)")
    burn_in.add_argument("--format", type=formats, default=("png",), metavar="png",
                         help="comma-separated image formats of --plot (default: png)")

    tails = subcommand(
        subparsers, "tails", run_tails, "p50 / p90 / p99 / p99.9 of every row: time per transfer, or latency",
        "One line per ok row with tails: bandwidth rows give the time per transfer of their tail sample\n"
        "(µs; a CUDA event after every transfer, the slowest flow's) and the slowest flow's bytes over\n"
        "its longest transfer (GB/s); latency rows the quantiles of their samples (µs). `count` says\n"
        "how many transfers or samples stand behind the quantiles (p99.9 of fewer than 1000 is close to\n"
        "the max). Files written before p2pbench recorded tails have none. The CSV export carries the same\n"
        "figures as iteration_time_us_p50 ... _p99_9 and latency_us_p50 ... _p99_9.",
        "examples:\n  p2pbench-report tails run.json\n  p2pbench-report tails burn-in.json | grep ' ce '")
    tails.add_argument("results", metavar="RESULTS.json", help="a p2pbench results file")
