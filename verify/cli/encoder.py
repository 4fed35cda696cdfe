"""``encoder`` (train the appendix's one-layer transformer encoder on the paper's data)
and ``encoder-grid`` (its regimes on a (d, ||mu||) grid against the bare model's)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from theory.foundation.data_model import DataModel
from verify.cli.common import (
    HelpFormatter,
    add_executor_flags,
    add_output_flags,
    add_parameter,
    add_progress_flag,
    add_settings_flags,
    settings_from_args,
)
from verify.encoder.config import EncoderSettings
from verify.encoder.grid import GridSettings
from verify.sim.config import PRESETS, RunConfig, parameter_specs

#: Run-configuration fields an encoder run takes besides the data model's.
RUN_FIELDS = ("steps", "alpha", "test_size", "attention_test_samples", "seed")


def add_data_flags(parser: argparse.ArgumentParser) -> None:
    """``--preset``, the data model's flags and the run fields the encoder uses."""
    parser.add_argument(
        "--preset",
        choices=sorted(PRESETS),
        default="benign",
        help=f"the paper's setting the other flags start from; choices: "
        f"{', '.join(sorted(PRESETS))}; default: benign",
    )
    add_settings_flags(
        parser, DataModel(), "data model (defaults of --preset benign)", skip=("nu_scale",)
    )
    group = parser.add_argument_group("training and recording")
    defaults = RunConfig().flat()
    for _, spec in parameter_specs():
        if spec.name in RUN_FIELDS:
            add_parameter(
                group,
                spec.name,
                spec.metadata["constraint"],
                spec.metadata["help"],
                defaults[spec.name],
            )


def add_encoder_flags(parser: argparse.ArgumentParser, grid: bool = False) -> None:
    skip = ("residual", "log_every") if grid else ("residual",)
    add_settings_flags(parser, EncoderSettings(), "encoder", skip=skip)
    if not grid:
        parser.add_argument(
            "--skip",
            dest="residual",
            action=argparse.BooleanOptionalAction,
            default=None,
            help="residual (skip) connections around the attention and the feed-forward "
            "block, as the authors' use_skip_connection; default: --skip",
        )


def encoder_settings(args: argparse.Namespace) -> Any:
    """The encoder's settings from the flags (validated)."""
    return settings_from_args(args, EncoderSettings())


def command_encoder(args: argparse.Namespace) -> int:
    from verify.cli.run import _configuration
    from verify.encoder.config import EncoderConfig, check_memory
    from verify.encoder.files import ENCODER_FILES, EncoderWriter
    from verify.encoder.reference import require_torch
    from verify.encoder.train import train_encoder
    from verify.output.files import prepare_output_dir
    from verify.runtime.interrupts import sigterm_as_interrupt
    from verify.sim.simulate import RunStatus

    run, data, _ = _configuration(args)  # the data flags, or the shape of --data-from
    config = EncoderConfig(run=run, settings=encoder_settings(args))
    if config.settings.model == "full":
        require_torch()
    check_memory(config)
    prepare_output_dir(args.out, overwrite=args.overwrite, guarded=ENCODER_FILES)
    writer = EncoderWriter(args.out)
    with sigterm_as_interrupt():
        result = train_encoder(
            config, data=data, progress=not args.no_progress, on_record=writer.append
        )
        writer.finish(result)
    print_summary(result.summary())
    if result.status is RunStatus.INTERRUPTED:
        saved = f"the finished part is saved in {args.out}"
        print(f"interrupted ({result.message}): {saved}", file=sys.stderr)
        return 128 + (result.signal or 2)
    if result.status is RunStatus.FAILED:
        print(f"error: {result.message}", file=sys.stderr)
        return 1
    return 0


def print_summary(summary: dict[str, Any]) -> None:
    width = max(len(key) for key in summary)
    for key, value in summary.items():
        print(f"{key:<{width}}  {value}")


def command_encoder_grid(args: argparse.Namespace) -> int:
    from verify.cli.experiments import executor_settings, run_experiment_command
    from verify.encoder.config import EncoderConfig, check_memory
    from verify.encoder.experiment import encoder_grid
    from verify.sim.resources import available_memory

    settings = settings_from_args(args, GridSettings())
    largest = max(d for d, _ in settings.settings())
    workers = max(executor_settings(args).workers, 1)
    check_memory(
        EncoderConfig(RunConfig.build(d=largest), EncoderSettings(mlp_dim=settings.mlp_dim)),
        available_memory() // workers,
    )
    return run_experiment_command(args, encoder_grid(settings, 0 if args.tables_only else None))


def register(commands: Any) -> None:
    encoder = commands.add_parser(
        "encoder",
        help="train the appendix's one-layer transformer encoder",
        formatter_class=HelpFormatter,
        description="Train the one-layer transformer encoder of the paper's appendix (a "
        "trainable [CLS] token, pre-LayerNorm single-head attention, a feed-forward "
        "block, every parameter trained by full-batch GD in float64) on the tokens "
        "'verify run' would train the bare model on, and record the [CLS] attention "
        "(config.json, summary.json, history.csv, attention.csv, attention.png, "
        "accuracy.png). Ctrl-C or SIGTERM keeps the finished part.",
    )
    add_data_flags(encoder)
    add_encoder_flags(encoder)
    encoder.add_argument(
        "--data-from",
        metavar="FILE.npz",
        help="external data: X_train (n,T,d), y_train, X_test, y_test, optional y_clean; "
        "n, T, d and test_size come from it",
    )
    add_output_flags(encoder, what="run's files")
    add_progress_flag(encoder)
    encoder.set_defaults(handler=command_encoder)

    grid = commands.add_parser(
        "encoder-grid",
        help="the encoder's regimes on a (d, ||mu||) grid against the bare model's",
        formatter_class=HelpFormatter,
        description="Train the encoder and the bare one-layer attention model (reduced "
        "engine) at every (d, ||mu||) of a grid (or the paper's three settings) and seed, "
        "classify both by the same mechanism rule, and write tables/encoder_grid.csv, "
        "tables/encoder_trajectories.csv, figures/regimes.png, figures/trajectories.png "
        "and encoder_grid.json. Resumable: finished runs live in OUT/runs.",
    )
    add_settings_flags(grid, GridSettings(), "grid")
    grid.add_argument(
        "--tables-only",
        action="store_true",
        help="compute no run: the tables, figures and record from the runs already in "
        "OUT/runs (the record counts the pending ones)",
    )
    add_output_flags(grid, overwrite=False, what="grid's runs, tables and figures")
    add_executor_flags(grid)
    grid.set_defaults(handler=command_encoder_grid)


__all__ = [
    "register",
    "command_encoder",
    "add_data_flags",
    "add_encoder_flags",
    "encoder_settings",
    "command_encoder_grid",
]
