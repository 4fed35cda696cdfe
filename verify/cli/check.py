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

REPORT_FILES = (
    "report.md",
    "report.json",
    "report.html",
    "ledger.json",
    "ledger.md",
    "mutations.json",
)


def command_check(args: argparse.Namespace) -> int:
    from verify.output.files import prepare_output_dir

    prepare_output_dir(args.out, overwrite=args.overwrite, guarded=REPORT_FILES)
    from verify.checks.report import console_table, summary_line
    from verify.checks.suite import FULL, QUICK, checks_for, collect, judge
    from verify.runtime.interrupts import exit_status, sigterm_as_interrupt
    from verify.runtime.progress import Stages

    executor = executor_settings(args)
    executor.check_reachable()
    plan = QUICK if args.quick else FULL
    points = plan.points()
    print(
        f"check: {'quick' if args.quick else 'full'} plan, {len(points)} groups of runs on "
        f"{executor.workers or 1} worker(s)",
        file=sys.stderr,
        flush=True,
    )
    stages = Stages({"runs": "group", "checks": "check"}, enabled=not args.no_progress)
    started = time.perf_counter()
    try:
        with sigterm_as_interrupt(), executor.make() as pool:
            checks = checks_for(plan)
            stages.start("runs", len(points), predicted_seconds(points, executor.workers))
            evidence = collect(plan, pool, stages)
            results = judge(checks, evidence, stages)
    except KeyboardInterrupt as interrupt:
        print("\ninterrupted: no report written", file=sys.stderr)
        return exit_status(interrupt)
    finally:
        stages.close()
    wall = time.perf_counter() - started
    print(console_table(results))
    write_all(results, args, wall)
    unexpected = any(r.verdict.unexpected for r in results)
    if args.mutations:
        unexpected |= not report_mutations(checks, evidence, args.out)
    print(summary_line(results))
    return 1 if unexpected else 0


def write_all(results: Any, args: argparse.Namespace, wall: float) -> None:
    """report.md/json/html and ledger.json/md, the ledger's statuses from this run."""
    from verify.checks.report import write_report
    from verify.ledger import write_ledger
    from verify.ledger.build import build_ledger, run_verdicts
    from verify.ledger.evidence import ROOT
    from verify.ledger.render import counts_line
    from verify.output.provenance import provenance

    mode = "quick" if args.quick else "full"
    source = f"this run of `verify check` ({mode})"
    ledger = build_ledger(run_verdicts(results, source), provenance=provenance())
    figures = [
        (f"{result['experiment']}: {entry['path']}", (ROOT / entry["path"]).read_bytes())
        for claim in ledger["claims"]
        for result in claim["results"]
        for entry in result.get("files", [])
        if entry["path"].endswith(".png")
    ]
    write_report(results, args.out, {"mode": mode, "wall_seconds": wall}, ledger, figures)
    write_ledger(ledger, args.out)
    print(
        f"report written to {args.out}/report.html, report.md, report.json, ledger.md and "
        f"ledger.json ({wall:.1f} s)"
    )
    print(f"ledger: {counts_line(ledger)}")


def predicted_seconds(points: list[dict[str, Any]], workers: int | None) -> float | None:
    """The runs' predicted wall time at the engines' stated rates, spread over the
    workers (boundary scans not counted); None when nothing is predicted."""
    from verify.ledger.costs import plan_seconds

    seconds, _ = plan_seconds(points)
    return seconds / max(workers or 1, 1) if seconds > 0 else None


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
        help="every registered prediction against its simulation; report.md/json/html and "
        "the claim ledger",
        formatter_class=HelpFormatter,
        description="Run every registered check (predictions of the theory against "
        "simulations, each with its expectation, a tolerance that says where it came from, "
        "and its power: how far the prediction must move for the verdict to flip), "
        "print the table in three groups and write report.md, report.json and report.html "
        "(the claim ledger on top) and the ledger with its statuses from this run "
        "(ledger.json, ledger.md). "
        "Exit status 0 exactly when nothing is unexpected.",
    )
    check.add_argument(
        "--quick", action="store_true", help="the benign preset only, fewer seeds (about a minute)"
    )
    check.add_argument(
        "--mutations",
        action="store_true",
        help="also run each check on wrong inputs (its prediction shifted by twice its "
        "tolerance, down and up; an untrained simulation), print the table and write "
        "mutations.json; exit 1 if a check does not fail on them",
    )
    add_output_flags(check, required=False, default="verification", what="report")
    add_executor_flags(check)
    check.set_defaults(handler=command_check)


__all__ = ["register", "command_check"]
