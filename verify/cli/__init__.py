"""Command line: ``python -m verify <command>``; ``--help`` on any command lists its flags.

One module per command group (:mod:`~verify.cli.run`, :mod:`~verify.cli.predict`,
:mod:`~verify.cli.check`, :mod:`~verify.cli.experiments`, :mod:`~verify.cli.realworld`);
:mod:`~verify.cli.common` holds the shared flags and the one error path. Building the
parser imports no NumPy, SciPy, SymPy or matplotlib: each command imports what it uses
when it runs.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from verify.cli import check, encoder, experiments, predict, realworld, run
from verify.cli.common import HelpFormatter, Parser, run_command

DESCRIPTION = (
    "Verification of 'Benign Overfitting in Token Selection of Attention "
    "Mechanism' (Sakamoto & Sato, ICML 2025): simulate the one-layer attention "
    "model, check the theory's predictions, reproduce the paper's experiments."
)


def build_parser(argv: Sequence[str] = ()) -> Parser:
    """The parser (``argv`` only decides the defaults ``run --preset X --help`` shows)."""
    parser = Parser(prog="python -m verify", description=DESCRIPTION, formatter_class=HelpFormatter)
    commands = parser.add_subparsers(
        dest="command", required=True, metavar="COMMAND", parser_class=Parser
    )
    run.register(commands, argv)
    predict.register(commands, argv)
    check.register(commands)
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
    return run_command(args.handler, args)


__all__ = ["main", "build_parser"]
