"""``check``: every prediction against its simulation, as a table and a report."""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

from theory.validation import Integer
from verify.cli.common import HelpFormatter, add_output_flags, add_parameter, add_progress_flag

SEEDS = Integer(1, 1000)
REPORT_FILES = ("report.md", "report.json")


def command_check(args: argparse.Namespace) -> int:
    from verify.output.files import prepare_output_dir

    prepare_output_dir(args.out, overwrite=args.overwrite, guarded=REPORT_FILES)
    from verify.checks.report import console_table, write_report
    from verify.checks.suite import run_checks
    from verify.interrupts import exit_status, sigterm_as_interrupt

    count = args.seeds if args.seeds is not None else (1 if args.quick else 3)
    seeds = tuple(range(count))
    bar = None
    if not args.no_progress:
        from tqdm.auto import tqdm

        bar = tqdm(desc="checks", unit="check", dynamic_ncols=True, file=sys.stderr)

    def progress(done: int, total: int, result: Any) -> None:
        if bar is not None:
            bar.total = total
            bar.set_postfix_str(f"{result.verdict} {result.name}"[:60])
            bar.update(done - bar.n)

    started = time.perf_counter()
    try:
        with sigterm_as_interrupt():
            results = run_checks(quick=args.quick, seeds=seeds, progress=progress)
    except KeyboardInterrupt as interrupt:
        print("\ninterrupted: no report written", file=sys.stderr)
        return exit_status(interrupt)
    finally:
        if bar is not None:
            bar.close()
    wall = time.perf_counter() - started
    print(console_table(results))
    meta = {"mode": "quick" if args.quick else "full", "seeds": list(seeds), "wall_seconds": wall}
    write_report(results, args.out, meta)
    print(f"report written to {args.out}/report.md and report.json ({wall:.1f} s)")
    return 0 if all(r.verdict == "pass" for r in results) else 1


def register(commands: Any) -> None:
    check = commands.add_parser(
        "check",
        help="every prediction against its simulation; writes report.md/json",
        formatter_class=HelpFormatter,
        description="Run every prediction-vs-simulation check, print the table and write "
        "report.md and report.json.",
    )
    check.add_argument(
        "--quick", action="store_true", help="the benign preset on one seed (under a minute)"
    )
    add_parameter(check, "seeds", SEEDS, "seeds of the simulations (0..K-1); default 3, --quick: 1")
    add_output_flags(check, required=False, default="verification", what="report")
    add_progress_flag(check)
    check.set_defaults(handler=command_check)


__all__ = ["register", "command_check"]
