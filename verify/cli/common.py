"""What every command shares: how values are read, the shared flags, and the one error path.

Conventions (the same in every command):

* integers accept scientific notation (``--steps 1e13``); lists are comma-separated
  (``--d-values 500,1000,2000``); ``--seeds K`` always means the first K seeds, 0..K-1;
* a flag's help says what it is, its default and, for a choice, the choices;
* an input error (a value outside what is allowed, an unreadable input file, an output
  place that cannot be written, a run that would not fit in memory, options that
  conflict) is found before any work and reported as one line,
  ``error: <parameter>=<value> is invalid: allowed <what>``, with exit status 2; other
  errors keep their traceback;
* Ctrl-C, SIGTERM and SIGHUP stop a command with the finished part kept (exit 130, 143
  and 129);
* a command that writes claims its ``--out`` first (:mod:`verify.output.claim`): a
  place another process is writing into is refused with exit status 2.
"""

from __future__ import annotations

import argparse
import dataclasses
import decimal
import re
import sys
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

from theory.foundation.validation import (
    Boolean,
    Constraint,
    Integer,
    InvalidParameter,
    Optional,
    Options,
    Real,
    parameter_fields,
)
from theory.foundation.validation import Sequence as SequenceOf

EXIT_INPUT_ERROR = 2

#: A command-line word that is a negative number (a value, not a flag).
NEGATIVE_NUMBER = re.compile(
    r"^-(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$|^-(inf|infinity|nan)$", re.IGNORECASE
)


class Parser(argparse.ArgumentParser):
    """argparse with its own errors (unknown flags, missing values) as one line, exit 2,
    and every negative number (``-1e5``, ``-inf``, ``-nan``) read as a value, not a flag
    (argparse alone takes only ``-5`` and ``-.5`` for numbers)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._negative_number_matcher = NEGATIVE_NUMBER

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_INPUT_ERROR, f"error: {self.prog}: {message}\n")


class HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Wider help columns; defaults are written into each help text by :func:`flag_help`."""

    def __init__(self, prog: str) -> None:
        super().__init__(prog, max_help_position=34, width=100)

    def _get_help_string(self, action: argparse.Action) -> str:
        return action.help or ""


def parse_text(name: str, text: str, constraint: Constraint) -> Any:
    """The command-line text ``text`` as a value ``constraint`` allows, or
    :class:`InvalidParameter` naming ``name``."""
    if isinstance(constraint, Optional):
        if text.strip().lower() == "none":
            return None
        return parse_text(name, text, constraint.inner)
    if isinstance(constraint, SequenceOf):
        parts = [part.strip() for part in text.split(",") if part.strip()]
        return constraint.check(name, [scalar(part, constraint.inner) for part in parts])
    return constraint.check(name, scalar(text, constraint))


def scalar(text: str, constraint: Constraint) -> Any:
    """One command-line word as the kind of value ``constraint`` takes: an integer read
    exactly (``12345678901234567891`` and ``1e30`` with every digit, never through a
    float), a real number, or the text itself when it reads as neither (the constraint
    then refuses it, showing the text)."""
    if isinstance(constraint, Integer | Real):
        try:
            return exact_number(text.strip()) if isinstance(constraint, Integer) else float(text)
        except ValueError:
            return text
    if isinstance(constraint, Boolean):
        return {"true": True, "false": False}.get(text.strip().lower(), text)
    return text


def exact_number(text: str) -> int | float:
    """``text`` as an ``int`` when it names an integer exactly (``"1000"``, ``"1e13"``,
    ``"2.0e3"``), else as a float (``"2.5"``, ``"nan"``); :class:`ValueError` when it is
    not a number."""
    try:
        return int(text)
    except ValueError:
        pass
    try:
        number = decimal.Decimal(text)
    except decimal.InvalidOperation:
        raise ValueError(text) from None
    if number.is_finite() and number == number.to_integral_value():
        if number.adjusted() > MAX_DIGITS:
            return float(text)
        return int(number)
    return float(text)


#: Digits beyond which an integer flag is not expanded (``1e100000`` stays a float).
MAX_DIGITS = 400


class ParameterAction(argparse.Action):
    """Stores a flag's value converted by its constraint; an invalid value raises
    :class:`InvalidParameter` at once (before any work)."""

    def __init__(
        self, option_strings: Sequence[str], dest: str, constraint: Constraint, **kwargs: Any
    ) -> None:
        self.constraint = constraint
        super().__init__(option_strings, dest, **kwargs)

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        setattr(namespace, self.dest, parse_text(self.dest, values, self.constraint))


def flag_help(help_text: str, constraint: Constraint, default: Any) -> str:
    """Help text with the choices and the default spelled out (no markup)."""
    parts = [help_text]
    if isinstance(constraint, Optional) and constraint.meaning:
        parts.append(f"none: {constraint.meaning}")
        constraint = constraint.inner
    if isinstance(constraint, Options):
        parts.append(f"choices: {', '.join(constraint.choices)}")
    if default is not None and not isinstance(constraint, Boolean):
        shown = ",".join(str(v) for v in default) if isinstance(default, tuple) else default
        parts.append(f"default: {shown:g}" if isinstance(shown, float) else f"default: {shown}")
    return "; ".join(parts)


def metavar(constraint: Constraint) -> str:
    if isinstance(constraint, Optional):
        return metavar(constraint.inner)
    if isinstance(constraint, SequenceOf):
        return f"{metavar(constraint.inner)},..."
    if isinstance(constraint, Integer):
        return "INT"
    if isinstance(constraint, Real):
        return "X"
    if isinstance(constraint, Options):
        return "{" + ",".join(constraint.choices) + "}"
    if isinstance(constraint, Boolean):
        return "{true,false}"
    return "TEXT"


def add_parameter(
    group: Any,
    name: str,
    constraint: Constraint,
    help_text: str,
    default: Any = None,
    flag: str | None = None,
    unset: Any = None,
    required: bool = False,
) -> None:
    """One flag for a validated parameter (``--name-with-dashes``); the parsed value is
    ``unset`` (``None``, or ``argparse.SUPPRESS`` where ``none`` is a value the flag may
    set) unless given, so that defaults stay with the settings object."""
    option = flag or "--" + name.replace("_", "-")
    if isinstance(constraint, Boolean) and unset is None:
        group.add_argument(
            option,
            dest=name,
            action="store_true",
            default=None,
            help=flag_help(help_text, constraint, default),
        )
        return
    group.add_argument(
        option,
        dest=name,
        action=ParameterAction,
        constraint=constraint,
        default=unset,
        required=required,
        metavar=metavar(constraint),
        help=flag_help(help_text, constraint, default),
    )


def add_settings_flags(
    parser: argparse.ArgumentParser, defaults: Any, title: str, skip: Sequence[str] = ()
) -> None:
    """A flag per :func:`~theory.foundation.validation.parameter` field of the settings object
    ``defaults`` (its values are the defaults shown)."""
    group = parser.add_argument_group(title)
    for spec in parameter_fields(defaults):
        if spec.name not in skip:
            add_parameter(
                group,
                spec.name,
                spec.metadata["constraint"],
                spec.metadata["help"],
                getattr(defaults, spec.name),
            )


def given(args: argparse.Namespace, names: Sequence[str]) -> dict[str, Any]:
    """The flags among ``names`` that were given on the command line."""
    return {name: getattr(args, name) for name in names if getattr(args, name, None) is not None}


def settings_from_args(args: argparse.Namespace, base: Any) -> Any:
    """``base`` with every given flag of its fields applied (validated again)."""
    names = [spec.name for spec in parameter_fields(base)]
    return dataclasses.replace(base, **given(args, names))


def reject_together(
    args: argparse.Namespace, flag: str, others: Sequence[str], reason: str
) -> None:
    """:class:`InvalidParameter` if ``flag`` was given together with any of ``others``."""
    if not getattr(args, flag, None):
        return
    for name in others:
        value = getattr(args, name, None)
        if value not in (None, False):
            raise InvalidParameter(
                name, value, f"no value together with --{flag.replace('_', '-')} ({reason})"
            )


# -- shared flags ------------------------------------------------------------------------

SEEDS = Integer(1, 100_000)
WORKERS = Integer(0, 256)


def add_output_flags(
    parser: argparse.ArgumentParser,
    required: bool = True,
    default: str | None = None,
    what: str = "results",
    overwrite: bool = True,
) -> None:
    parser.add_argument(
        "--out",
        required=required,
        default=default,
        metavar="DIR",
        help=f"directory for the {what}" + (f"; default: {default}" if default else ""),
    )
    if overwrite:
        parser.add_argument(
            "--overwrite",
            action="store_true",
            help="replace an earlier result in --out (otherwise refused)",
        )


def add_progress_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--no-progress", action="store_true", help="no progress bars")


def add_executor_flags(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("execution")
    add_parameter(group, "workers", WORKERS, "worker processes (0 runs in this process)", 2)
    where = group.add_mutually_exclusive_group()
    where.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="a Dask scheduler address tcp://HOST:PORT (needs the dask extra)",
    )
    where.add_argument(
        "--dask-local",
        action="store_true",
        help="start a Dask LocalCluster on loopback with --workers processes",
    )
    add_progress_flag(parser)


def run_command(handler: Callable[[Any], Any], args: Any) -> Any:
    """Call ``handler(args)``: an :class:`InvalidParameter` becomes one line on stderr and
    the exit status 2."""
    try:
        return handler(args)
    except InvalidParameter as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_INPUT_ERROR


__all__ = [
    "Parser",
    "HelpFormatter",
    "parse_text",
    "ParameterAction",
    "add_parameter",
    "add_settings_flags",
    "settings_from_args",
    "given",
    "reject_together",
    "add_output_flags",
    "add_progress_flag",
    "add_executor_flags",
    "run_command",
    "EXIT_INPUT_ERROR",
    "SEEDS",
    "WORKERS",
]
