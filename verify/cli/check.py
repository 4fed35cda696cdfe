"""``check``: every registered prediction against its simulation, a table and a report.

The exit status is 0 exactly when nothing is unexpected (every check agrees, or disagrees
as registered); 1 when a check fails unexpectedly or a registered disagreement now agrees.
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

from verify.cli.common import HelpFormatter, add_executor_flags, add_output_flags
from verify.cli.experiments import executor_settings

REPORT_FILES = ("report.md", "report.json", "mutations.json")


def command_check(args: argparse.Namespace) -> int:
    from verify.output.files import prepare_output_dir

    prepare_output_dir(args.out, overwrite=args.overwrite, guarded=REPORT_FILES)
    from verify.checks.report import console_table, summary_line, write_report
    from verify.checks.suite import FULL, QUICK, checks_for, collect, judge
    from verify.runtime.interrupts import exit_status, sigterm_as_interrupt

    executor = executor_settings(args)
    executor.check_reachable()
    bar: Any = None
    if not args.no_progress:
        from tqdm.auto import tqdm

        bar = tqdm(desc="runs", unit="run", dynamic_ncols=True, file=sys.stderr)

    def progress(stage: str, done: int, total: int) -> None:
        if bar is None:
            return
        if bar.desc != stage:
            bar.set_description(stage)
            bar.reset(total=total)
        bar.total = total
        bar.update(done - bar.n)

    started = time.perf_counter()
    try:
        with sigterm_as_interrupt(), executor.make() as pool:
            plan = QUICK if args.quick else FULL
            checks = checks_for(plan)
            evidence = collect(plan, pool, progress)
            results = judge(checks, evidence, progress)
    except KeyboardInterrupt as interrupt:
        print("\ninterrupted: no report written", file=sys.stderr)
        return exit_status(interrupt)
    finally:
        if bar is not None:
            bar.close()
    wall = time.perf_counter() - started
    print(console_table(results))
    write_report(
        results, args.out, {"mode": "quick" if args.quick else "full", "wall_seconds": wall}
    )
    print(f"report written to {args.out}/report.md and report.json ({wall:.1f} s)")
    unexpected = any(r.verdict.unexpected for r in results)
    if args.mutations:
        unexpected |= not report_mutations(checks, evidence, args.out)
    print(summary_line(results))
    return 1 if unexpected else 0


def report_mutations(checks: Any, evidence: Any, out: str) -> bool:
    """Print and write (mutations.json) each check on its wrong inputs; True when every
    check fails on each of them."""
    from verify.checks.report import mutation_table
    from verify.checks.suite import mutations, mutations_ok
    from verify.output.files import atomic_write_json

    rows = mutations(checks, evidence)
    print(mutation_table(rows))
    atomic_write_json(f"{out}/mutations.json", rows)
    return all(mutations_ok(row) for row in rows)


def register(commands: Any) -> None:
    check = commands.add_parser(
        "check",
        help="every registered prediction against its simulation; report.md/json",
        formatter_class=HelpFormatter,
        description="Run every registered check (predictions of the theory against "
        "simulations, each with its expectation and an a priori tolerance), "
        "print the table in three groups and write report.md and report.json. "
        "Exit status 0 exactly when nothing is unexpected.",
    )
    check.add_argument(
        "--quick", action="store_true", help="the benign preset only, fewer seeds (about a minute)"
    )
    check.add_argument(
        "--mutations",
        action="store_true",
        help="also run each check on wrong inputs (a wrong prediction, an "
        "untrained simulation), print the table and write "
        "mutations.json; exit 1 if a check does not fail on them",
    )
    add_output_flags(check, required=False, default="verification", what="report")
    add_executor_flags(check)
    check.set_defaults(handler=command_check)


__all__ = ["register", "command_check"]
