"""``check``: every registered prediction against its simulation, a table and a report.

The exit status is 0 exactly when nothing is unexpected (every check agrees, or disagrees
as registered); 1 when a check fails unexpectedly or a registered disagreement now agrees;
130 or 143 when Ctrl-C or SIGTERM stopped it (the evidence that finished is kept in
``OUT/evidence`` and the same command resumes from it).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
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
    from verify.output.claim import claim_output

    with claim_output(args.out, overwrite=args.overwrite, guarded=REPORT_FILES) as out:
        return checked_and_reported(args, out)


def checked_and_reported(args: argparse.Namespace, out: Path) -> int:
    """The check on the claimed output place: collect, judge, report; the exit status."""
    executor = executor_settings(args)
    executor.check_reachable()
    started = time.perf_counter()
    outcome = checked(args, out, executor)
    if isinstance(outcome, int):  # interrupted: what was kept is printed
        return outcome
    results, checks, evidence = outcome
    wall = time.perf_counter() - started
    from verify.checks.report import console_table, summary_line

    print(console_table(results))
    write_all(results, args, wall)
    unexpected = any(r.verdict.unexpected for r in results)
    if args.mutations:
        unexpected |= not report_mutations(checks, evidence, args.out)
    print(summary_line(results))
    return 1 if unexpected else 0


def write_all(results: Any, args: argparse.Namespace, wall: float) -> None:
    """report.md/json/html and ledger.json/md, the ledger's statuses from this run (the
    variant claims' from the registered expectations of their checks)."""
    from verify.checks.report import write_report
    from verify.ledger import write_ledger
    from verify.ledger.build import build_ledger, run_then_registered
    from verify.ledger.evidence import ROOT
    from verify.ledger.render import counts_line
    from verify.output.provenance import provenance

    mode = "quick" if args.quick else "full"
    source = f"this run of `verify check` ({mode})"
    ledger = build_ledger(run_then_registered(results, source), provenance=provenance())
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


def checked(args: argparse.Namespace, out: Path, executor: Any) -> tuple | int:
    """Plan, collect (resuming from ``OUT/evidence``) and judge: the results, checks and
    evidence. The workers of a fresh check start first, importing what they run while this
    process plans; the checks are bound to the theory's predictions in a thread while the
    workers collect the evidence. An interrupt stops the workers, prints what was kept and
    gives the exit status (130 Ctrl-C, 143 SIGTERM)."""
    mode = "quick" if args.quick else "full"
    print(f"check ({mode}): planning the evidence from the checks' needs", file=sys.stderr)
    from verify.checks.collection import WORKER_MODULES, EvidenceStore, kept_message
    from verify.runtime.interrupts import exit_status, reason, sigterm_as_interrupt
    from verify.runtime.progress import Stages

    store = EvidenceStore(out / "evidence")
    stages = Stages({"runs": "group", "checks": "check"}, enabled=not args.no_progress)
    plan = None
    try:
        with sigterm_as_interrupt(), executor.make() as pool:
            if not store.results.keys():  # nothing to resume from: every point runs
                pool.warm(WORKER_MODULES)
            from verify.checks.suite import FULL, QUICK, checks_for, collect, judge

            plan = QUICK if args.quick else FULL
            points = plan.points()
            print(
                f"check ({mode}): {len(points)} evidence points, {store.kept(plan)} kept in "
                f"{store.directory}, the rest on {describe(executor)}",
                file=sys.stderr,
                flush=True,
            )
            binding = in_thread(checks_for, plan)
            stages.start("runs", len(points), predicted_seconds(points, executor.workers))
            evidence = collect(plan, pool, stages, store)
            checks = binding()
            return judge(checks, evidence, stages), checks, evidence
    except KeyboardInterrupt as interrupt:
        kept = "no evidence point was planned" if plan is None else kept_message(store, plan)
        print(
            f"\ninterrupted ({reason(interrupt)}): {kept}; no report written",
            file=sys.stderr,
        )
        return exit_status(interrupt)
    finally:
        stages.close()


def describe(executor: Any) -> str:
    if executor.scheduler:
        return f"the Dask scheduler {executor.scheduler}"
    if executor.workers == 0:
        return "this process"
    return f"{executor.workers} worker processes"


def in_thread(function: Any, *arguments: Any) -> Any:
    """Start ``function(*arguments)`` in a daemon thread; returns a call that waits for it
    and gives its result (or raises its exception)."""
    import threading

    outcome: dict[str, Any] = {}

    def run() -> None:
        try:
            outcome["value"] = function(*arguments)
        except BaseException as error:  # re-raised in the caller's thread
            outcome["error"] = error

    thread = threading.Thread(target=run, name=f"{function.__name__}", daemon=True)
    thread.start()

    def result() -> Any:
        thread.join()
        if "error" in outcome:
            raise outcome["error"]
        return outcome["value"]

    return result


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
        "Each evidence point is kept in OUT/evidence as it finishes (keyed by the point "
        "and the source code): Ctrl-C or SIGTERM stops the workers at once, and the same "
        "command resumes from what was kept. "
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
