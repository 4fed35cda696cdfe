"""``ledger``: every claim of the paper, its appendix and the authors' rebuttal, with its
status and evidence; printed, and written as ``ledger.json`` and ``ledger.md``.

Without ``--report`` the check verdicts are the registered expectations; with it, those
of a ``verify check`` report. ``--check`` exits 1 when a claim is not linked to evidence
that exists, naming each.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from pathlib import Path
from typing import Any

from verify.cli.common import HelpFormatter, add_output_flags


def command_exists(parser: Any, command: str) -> bool:
    """Whether ``command`` is a command of this package that parses (``python -m verify
    ...`` with its flags, ``python -m theory ...``) or a script of the repository."""
    from verify.ledger.evidence import ROOT

    words = shlex.split(command)
    if words[:3] == ["python", "-m", "verify"]:
        try:
            parser.parse_args(words[3:])
        except (SystemExit, ValueError):  # argparse's exit, or a refused value
            return False
        return True
    if words[:3] == ["python", "-m", "theory"]:
        return set(words[3:]) <= {"--latex", "--check"}
    return len(words) > 1 and words[0] == "python" and (ROOT / words[1]).is_file()


def verdicts_for(reports: list[str]) -> Any:
    from verify.ledger.build import registered_verdicts, report_verdicts
    from verify.output.files import read_json

    if not reports:
        return registered_verdicts()
    loaded = [read_json(Path(path)) for path in reports]
    return report_verdicts(loaded, "the verdicts of " + ", ".join(reports))


def command_ledger(args: argparse.Namespace) -> int:
    from verify.ledger import LEDGER_FILES, write_ledger
    from verify.ledger.build import all_claims, build_ledger
    from verify.ledger.evidence import problems
    from verify.ledger.render import console, documentation_page
    from verify.output.files import atomic_write_text, prepare_output_dir
    from verify.output.provenance import provenance

    if args.out:
        prepare_output_dir(args.out, overwrite=args.overwrite, guarded=LEDGER_FILES)
    if args.check:
        from verify.cli import build_parser  # the package builds this module's parser

        every = build_parser()  # every command's parser, to check the claims' command lines
        found = problems(all_claims(), command_ok=lambda c: command_exists(every, c))
        for problem in found:
            print(f"ledger: {problem}", file=sys.stderr)
        if found:
            return 1
    ledger = build_ledger(verdicts_for(args.report or []))
    if args.docs_page:
        atomic_write_text(Path(args.docs_page), documentation_page(ledger))
    if args.out:
        write_ledger({**ledger, "provenance": provenance()}, args.out)
    print(json.dumps(ledger, indent=1) if args.json else console(ledger))
    if args.out:
        print(f"ledger written to {args.out}/ledger.json and ledger.md", file=sys.stderr)
    return 0


def register(commands: Any) -> None:
    ledger = commands.add_parser(
        "ledger",
        help="every claim of the paper and the rebuttal: status, checks, result files",
        formatter_class=HelpFormatter,
        description="The claim ledger: every claim of the paper, its appendix and the "
        "authors' rebuttal, its status, the checks and experiments that decide it and the "
        "evidence (result files with their SHA-256, the commit, the command that writes "
        "them again). Statuses use the registered expectations unless --report gives a "
        "check report's verdicts.",
    )
    ledger.add_argument(
        "--report",
        action="append",
        metavar="FILE",
        help="a report.json of `verify check` whose verdicts decide the checks (repeatable)",
    )
    ledger.add_argument("--json", action="store_true", help="print ledger.json instead")
    ledger.add_argument(
        "--check",
        action="store_true",
        help="first check that every claim is linked to evidence that exists; exit 1 if not",
    )
    ledger.add_argument(
        "--docs-page", metavar="FILE", help="also write the documentation's page (Markdown)"
    )
    add_output_flags(ledger, required=False, what="ledger.json and ledger.md")
    ledger.set_defaults(handler=command_ledger)


__all__ = ["register", "command_ledger", "command_exists"]
