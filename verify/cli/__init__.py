"""Command line: ``python -m verify <command>``; ``--help`` on any command lists its flags.

One module per command group (:mod:`~verify.cli.run`, :mod:`~verify.cli.predict`,
:mod:`~verify.cli.check`, :mod:`~verify.cli.ledger`, :mod:`~verify.cli.experiments`,
:mod:`~verify.cli.realworld`);
:mod:`~verify.cli.common` holds the shared flags and the one error path. Building the
parser imports no NumPy, SciPy, SymPy or matplotlib: each command imports what it uses
when it runs.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from verify.cli import check, encoder, experiments, ledger, predict, realworld, run
from verify.cli.common import HelpFormatter, Parser, run_command

DESCRIPTION = (
    "Verification of 'Benign Overfitting in Token Selection of Attention "
    "Mechanism' (Sakamoto & Sato, ICML 2025): simulate the one-layer attention "
    "model, check the theory's predictions, reproduce the paper's experiments."
)


class VersionAction(argparse.Action):
    """``--version``: print the package version and the git commit, then exit 0 (read only
    when asked, so that building the parser stays cheap)."""

    def __init__(self, option_strings: Sequence[str], dest: str, help: str | None = None) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, help=help)

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        from verify.output.provenance import PACKAGE, git_commit, package_version

        source = git_commit()
        commit = source["commit"] or "no git checkout"
        dirty = " with uncommitted changes" if source["dirty"] else ""
        print(f"{PACKAGE} {package_version()} (commit {commit}{dirty})")
        parser.exit()


def build_parser(argv: Sequence[str] = ()) -> Parser:
    """The parser (``argv`` only decides the defaults ``run --preset X --help`` shows)."""
    parser = Parser(prog="python -m verify", description=DESCRIPTION, formatter_class=HelpFormatter)
    parser.add_argument("--version", action=VersionAction, help="package version and git commit")
    commands = parser.add_subparsers(
        dest="command", required=True, metavar="COMMAND", parser_class=Parser
    )
    run.register(commands, argv)
    predict.register(commands, argv)
    check.register(commands)
    ledger.register(commands)
    experiments.register(commands)
    realworld.register(commands)
    encoder.register(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run a command; returns the exit status (2 for any input error, with one line)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(argv)
    try:
        args = run_command(parser.parse_args, argv)
    except SystemExit as done:  # --help, or an argparse error already printed as one line
        return int(done.code or 0)
    if isinstance(args, int):  # a flag's value was refused
        return args
    args.parser = parser  # for a command that checks other command lines (ledger --check)
    return run_command(args.handler, args)


__all__ = ["main", "build_parser"]
