"""The `expect make` and `check` subcommands (expected values: expectations.py, check.py)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def _percent(text: str) -> float:
    try:
        value = float(str(text).rstrip("%"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a percentage (write 5 or 5%)") from None
    if not 0.0 <= value < 100.0:
        raise argparse.ArgumentTypeError(f"{text!r} is outside 0..100 (percent)")
    return value


def run_expect_make(args: argparse.Namespace) -> int:
    from p2pbench_report.expectations import make_expectations, render_expectations, spread_report

    document = make_expectations(args.results, args.tolerance, system=args.system, pair_class=args.pair_class,
                                 force=args.force, allow_warnings=args.allow_warnings)
    text = render_expectations(document)
    if args.output in (None, "-"):
        sys.stdout.write(text)
    else:
        Path(args.output).write_text(text, encoding="utf-8")
        print(f"wrote {args.output}: {len(document['expectations'])} expectations from {len(args.results)} "
              f"file(s), tolerance {args.tolerance:g}%", file=sys.stderr)
    for line in spread_report(document):
        print(line, file=sys.stderr)
    return 0


def run_check(args: argparse.Namespace) -> int:
    from p2pbench_report.check import check, render_text

    report = check(args.results, args.expect, force=args.force, pair_class=args.pair_class)
    sys.stdout.write(render_text(report))
    return report.exit_code


def register(subparsers, subcommand) -> None:
    """Adds `expect` (with `make`) and `check`; `subcommand` is cli._subcommand."""
    expect = subcommand(
        subparsers, "expect", lambda args: (args.expect_parser.print_help(), 2)[1],
        "expected values of a system, made from known-good runs (see 'expect make')",
        "Expected values answer 'is this number normal?': floors for bandwidth and ceilings for\n"
        "latency per case (method, direction, mode, size, ranks, kernel shape) and pair class\n"
        "(meta.topology.topo_label, e.g. NV18), made from known-good runs with a stated tolerance.",
        "examples:\n  p2pbench-report expect make good-1.json good-2.json good-3.json -o expect.json --tolerance 5")
    expect.set_defaults(expect_parser=expect)
    actions = expect.add_subparsers(title="actions", metavar="ACTION")
    make = actions.add_parser(
        "make", help="write an expectations file from known-good results files",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Writes floors (bandwidth: reference x (1 - tolerance)) and ceilings (latency:\n"
                    "reference x (1 + tolerance)). A run's figure for a case is the median of its raw\n"
                    "samples (the worst of its orientations); the reference is the median over the runs\n"
                    "that measured the case. Give several runs of the same cases: each entry then says how\n"
                    "far the worst run lies from the reference (worst_run_pct), and cases whose runs spread\n"
                    "wider than the tolerance are named (a run like their worst would FAIL). The file\n"
                    "records each source: path, commit, dirty, diff and source hashes, start time, verdicts.\n"
                    "Sources must be complete, verified, not sanitizer runs, not one GPU (else --force), and\n"
                    "their health verdicts must carry no warning: contention, throttling, NVLink errors\n"
                    "(else --allow-warnings).",
        epilog="examples:\n"
               "  p2pbench-report expect make results/h200-nv18/default.json -o expectations/h200-nv18.json\n"
               "  p2pbench-report expect make a.json b.json c.json --tolerance 3 --system my-node -o expect.json\n\n"
               "exit status: 0 written; 2 unusable input (the message names the file, and the verdict\n"
               "of a source refused for its warnings).")
    make.set_defaults(handler=run_expect_make)
    make.add_argument("results", nargs="+", metavar="GOOD.json", help="known-good p2pbench results files")
    make.add_argument("-o", "--output", metavar="EXPECT.json", help="where to write (default: stdout)")
    make.add_argument("--tolerance", type=_percent, default=5.0, metavar="PCT",
                      help="percent below the reference a bandwidth may fall, above it a latency may rise (default 5)")
    make.add_argument("--system", metavar="NAME", help="name of the system (default: meta.label of the first file)")
    make.add_argument("--pair-class", metavar="LABEL",
                      help="pair class for files without meta.topology.topo_label (e.g. NV18)")
    make.add_argument("--force", action="store_true",
                      help="use sources that are incomplete, unverified, sanitizer or one-GPU runs all the same")
    make.add_argument("--allow-warnings", action="store_true",
                      help="use sources whose health verdicts carry warnings (recorded in the file)")

    checking = subcommand(
        subparsers, "check", run_check, "PASS/FAIL of a run's figures against expected values",
        "Prints, per case, PASS or FAIL with the margin to the floor (bandwidth) or ceiling (latency)\n"
        "in the unit and in %, rows without expectation, expectations the run did not measure, and a\n"
        "summary line. The compared figure is the median of the row's raw samples. A run made with less\n"
        "than the expectations' sources (incomplete, verify off, fewer or shorter samples, sanitizer\n"
        "mode, contention or throttled clocks) is refused unless --force.",
        "examples:\n"
        "  p2pbench-report check results.json --expect expectations/h200-nv18.json\n\n"
        "exit status: 0 every case PASS; 1 a case FAIL; 2 unusable input or a refused run.")
    checking.add_argument("results", metavar="RESULTS.json")
    checking.add_argument("--expect", required=True, metavar="EXPECT.json", help="expectations file (expect make)")
    checking.add_argument("--force", action="store_true", help="check a run made differently all the same (warned)")
    checking.add_argument("--pair-class", metavar="LABEL", help="pair class for a file without meta.topology.topo_label")
