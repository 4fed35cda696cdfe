"""``variants``: the checks of the claims R1-R6 about the model's neighbours (the rebuttal's
and its reviewers'), with the vocabulary, statistics and report of ``check``.

The exit status is 0 exactly when nothing is unexpected (every check agrees, or disagrees
as registered, and with ``--mutations`` every check fails on its wrong inputs); 1
otherwise; 130 or 143 when Ctrl-C or SIGTERM stopped it.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

from verify.cli.check import REPORT_FILES
from verify.cli.common import HelpFormatter, add_executor_flags, add_output_flags
from verify.cli.experiments import executor_settings


def command_variants(args: argparse.Namespace) -> int:
    from verify.output.claim import claim_output

    with claim_output(args.out, overwrite=args.overwrite, guarded=REPORT_FILES) as out:
        return checked_and_reported(args, out)


def checked_and_reported(args: argparse.Namespace, out: Path) -> int:
    """Collect, judge and report on the claimed output place; the exit status (130 or 143
    when Ctrl-C or SIGTERM stopped the runs: no report is written)."""
    executor = executor_settings(args)
    executor.check_reachable()
    from verify.checks.report import console_table, summary_line
    from verify.checks.variants.suite import run_variants
    from verify.runtime.interrupts import exit_status, reason, sigterm_as_interrupt
    from verify.runtime.progress import Stages

    started = time.perf_counter()
    stages = Stages({"runs": "group"}, enabled=not args.no_progress)
    try:
        with sigterm_as_interrupt(), executor.make() as pool:
            results, checks, evidence = run_variants(
                args.quick, pool, lambda done, total: stages("runs", done, total)
            )
    except KeyboardInterrupt as interrupt:
        print(f"\ninterrupted ({reason(interrupt)}): no report written", file=sys.stderr)
        return exit_status(interrupt)
    finally:
        stages.close()
    wall = time.perf_counter() - started
    print(console_table(results))
    write_all(results, args, out, wall)
    unexpected = any(r.verdict.unexpected for r in results)
    if args.mutations:
        unexpected |= not report_mutations(checks, evidence, out)
    print(summary_line(results))
    return 1 if unexpected else 0


def configuration(quick: bool) -> dict[str, Any]:
    """What ran: the preset, each run kind's changes, the seeds per kind and the scans' grid."""
    from verify.checks.variants.catalogue import FULL, PRESET, QUICK
    from verify.checks.variants.runs import KINDS

    plan = QUICK if quick else FULL
    return {
        "preset": PRESET,
        "kinds": {k.name: {"integrates": k.integrates, **k.changes} for k in KINDS.values()},
        "seeds": {kind: f"0..{seeds - 1}" for _, kind, seeds in plan.runs},
        "scan_mu": list(plan.scan_mu),
    }


def write_all(results: Any, args: argparse.Namespace, out: Path, wall: float) -> None:
    """report.md/json/html and ledger.json/md, the variant claims' statuses from this run
    (the other claims' from the registered expectations of ``check``'s checks)."""
    from verify.checks.report import write_report
    from verify.ledger import write_ledger
    from verify.ledger.build import build_ledger, run_then_registered
    from verify.ledger.render import counts_line
    from verify.output.provenance import provenance

    mode = "quick" if args.quick else "full"
    source = f"this run of `verify variants` ({mode})"
    ledger = build_ledger(run_then_registered(results, source), provenance=provenance())
    meta = {"command": "variants", "mode": mode, "wall_seconds": wall, **configuration(args.quick)}
    write_report(results, out, meta, ledger)
    write_ledger(ledger, out)
    print(f"report written to {out}/report.html, report.md, report.json, ledger.md and ledger.json")
    print(f"ledger: {counts_line(ledger)}")


def report_mutations(checks: Any, evidence: Any, out: Path) -> bool:
    """Print and write (mutations.json) each check on its wrong inputs; True when every
    check fails on each of them."""
    from verify.checks.report import mutation_table
    from verify.checks.suite import mutations_ok
    from verify.checks.variants.suite import mutations
    from verify.output.files import atomic_write_json

    rows = mutations(checks, evidence)
    print(mutation_table(rows))
    atomic_write_json(out / "mutations.json", rows)
    return all(mutations_ok(row) for row in rows)


def register(commands: Any) -> None:
    variants = commands.add_parser(
        "variants",
        help="the claims R1-R6 about the model's neighbours (rho per example, a one-step or "
        "trained head, an FFN readout, other losses, the noisy samples' share of the "
        "gradient) as registered checks; the report and the ledger",
        formatter_class=HelpFormatter,
        description="Run the model variants' registered checks, each naming the claim it "
        "tests (R1-R6 of the authors' rebuttal and its reviewers), with the vocabulary, "
        "statistics and report of `check`: print the table and write report.md, "
        "report.json and report.html, and the ledger with the variant claims' statuses from "
        "this run (ledger.json, ledger.md). Exit status 0 exactly when nothing is "
        "unexpected.",
    )
    variants.add_argument(
        "--quick",
        action="store_true",
        help="fewer seeds: 8 GD runs of each kind and 4 boundary scans (the 12 flows of the "
        "full run)",
    )
    variants.add_argument(
        "--mutations",
        action="store_true",
        help="also run each check on wrong inputs (its prediction shifted by twice its "
        "tolerance; an untrained simulation), print the table and write mutations.json; "
        "exit 1 if a check does not fail on them",
    )
    add_output_flags(variants, required=True, what="report")
    add_executor_flags(variants)
    variants.set_defaults(handler=command_variants)


__all__ = ["register", "command_variants"]
