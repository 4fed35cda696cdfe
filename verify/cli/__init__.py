"""Command line: ``python -m verify <command>``; ``--help`` on any command lists its flags.

One module per command group (:mod:`~verify.cli.run`, :mod:`~verify.cli.predict`,
:mod:`~verify.cli.check`, :mod:`~verify.cli.variants`, :mod:`~verify.cli.ledger`,
:mod:`~verify.cli.experiments`,
:mod:`~verify.cli.realworld`, :mod:`~verify.cli.encoder`), imported only
when the command line names one of its commands;
:mod:`~verify.cli.common` holds the shared flags and the one error path. Building the
parser imports no NumPy, SciPy, SymPy or matplotlib: each command imports what it uses
when it runs.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from verify.cli.common import HelpFormatter, Parser, run_command

DESCRIPTION = (
    "Verification of 'Benign Overfitting in Token Selection of Attention "
    "Mechanism' (Sakamoto & Sato, ICML 2025): simulate the one-layer attention "
    "model, check the theory's predictions, reproduce the paper's experiments."
)

#: The command modules in the order of ``--help``, and the commands each registers.
COMMANDS: dict[str, tuple[str, ...]] = {
    "run": ("run", "assumptions"),
    "predict": ("predict",),
    "check": ("check",),
    "variants": ("variants",),
    "ledger": ("ledger",),
    "experiments": (
        "reproduce",
        "phase-diagram",
        "sweep-boundaries",
        "longtime",
        "max-margin",
        "precision",
    ),
    "realworld": ("realworld",),
    "encoder": ("encoder", "encoder-grid"),
}
#: Modules whose ``register`` reads the command line (the defaults ``--help`` shows).
READS_ARGV = ("run", "predict")


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


def modules_for(argv: Sequence[str]) -> list[str]:
    """The command modules a command line needs: the one that registers its command, or
    all of them (top-level help, or a command no module registers, which argparse then
    names among the choices)."""
    named = [module for module, commands in COMMANDS.items() if argv and argv[0] in commands]
    return named or list(COMMANDS)


def build_parser(argv: Sequence[str] = (), complete: bool = True) -> Parser:
    """The parser (``argv`` decides the defaults ``run --preset X --help`` shows and,
    unless ``complete``, which command modules are imported: only the named command's)."""
    parser = Parser(prog="python -m verify", description=DESCRIPTION, formatter_class=HelpFormatter)
    parser.add_argument("--version", action=VersionAction, help="package version and git commit")
    commands = parser.add_subparsers(
        dest="command", required=True, metavar="COMMAND", parser_class=Parser
    )
    for name in COMMANDS if complete else modules_for(argv):
        module = importlib.import_module(f"verify.cli.{name}")
        if name in READS_ARGV:
            module.register(commands, argv)
        else:
            module.register(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run a command; returns the exit status (2 for any input error, with one line)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(argv, complete=False)
    try:
        args = run_command(parser.parse_args, argv)
    except SystemExit as done:  # --help, or an argparse error already printed as one line
        return int(done.code or 0)
    if isinstance(args, int):  # a flag's value was refused
        return args
    return run_command(args.handler, args)


__all__ = ["main", "build_parser"]
