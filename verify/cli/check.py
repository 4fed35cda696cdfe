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

REPORT_FILES = ("report.md", "report.json", "mutations.json")


def command_check(args: argparse.Namespace) -> int:
    from verify.output.files import prepare_output_dir

    out = prepare_output_dir(args.out, overwrite=args.overwrite, guarded=REPORT_FILES)
    executor = executor_settings(args)
    executor.check_reachable()
    started = time.perf_counter()
    outcome = checked(args, out, executor)
    if isinstance(outcome, int):  # interrupted: what was kept is printed
        return outcome
    results, checks, evidence = outcome
    wall = time.perf_counter() - started
    from verify.checks.report import console_table, summary_line, write_report

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


def progress_bar(disabled: bool) -> Any:
    """A bar on stderr whose description follows the stage (``None`` when disabled)."""
    if disabled:
        return None
    from tqdm.auto import tqdm

    return tqdm(desc="runs", unit="run", dynamic_ncols=True, file=sys.stderr)


def checked(args: argparse.Namespace, out: Path, executor: Any) -> tuple | int:
    """Plan, collect (resuming from ``OUT/evidence``) and judge: the results, checks and
    evidence. The checks are bound to the theory's predictions in a thread while the
    workers collect the evidence. An interrupt stops the workers, prints what was kept and
    gives the exit status (130 Ctrl-C, 143 SIGTERM)."""
    mode = "quick" if args.quick else "full"
    print(f"check ({mode}): planning the evidence from the checks' needs", file=sys.stderr)
    from verify.checks.collection import EvidenceStore, kept_message
    from verify.checks.suite import FULL, QUICK, checks_for, collect, judge
    from verify.runtime.interrupts import exit_status, reason, sigterm_as_interrupt

    plan = QUICK if args.quick else FULL
    store = EvidenceStore(out / "evidence")
    total, kept = len(plan.points()), store.kept(plan)
    print(
        f"check ({mode}): {total} evidence points, {kept} kept in {store.directory}, "
        f"the rest on {describe(executor)}",
        file=sys.stderr,
        flush=True,
    )
    bar = progress_bar(args.no_progress)

    def progress(stage: str, done: int, total: int) -> None:
        if bar is None:
            return
        if bar.desc != stage:
            bar.set_description(stage)
            bar.reset(total=total)
        bar.total = total
        bar.update(done - bar.n)

    try:
        with sigterm_as_interrupt(), executor.make() as pool:
            binding = in_thread(checks_for, plan)
            evidence = collect(plan, pool, progress, store)
            checks = binding()
            return judge(checks, evidence, progress), checks, evidence
    except KeyboardInterrupt as interrupt:
        if bar is not None:
            bar.close()
        print(
            f"\ninterrupted ({reason(interrupt)}): {kept_message(store, plan)}; no report written",
            file=sys.stderr,
        )
        return exit_status(interrupt)
    finally:
        if bar is not None:
            bar.close()


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
        help="every registered prediction against its simulation; report.md/json",
        formatter_class=HelpFormatter,
        description="Run every registered check (predictions of the theory against "
        "simulations, each with its expectation and an a priori tolerance), "
        "print the table in three groups and write report.md and report.json. "
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
        help="also run each check on wrong inputs (a wrong prediction, an "
        "untrained simulation), print the table and write "
        "mutations.json; exit 1 if a check does not fail on them",
    )
    add_output_flags(check, required=False, default="verification", what="report")
    add_executor_flags(check)
    check.set_defaults(handler=command_check)


__all__ = ["register", "command_check"]
