"""``reproduce``, ``phase-diagram``, ``sweep-boundaries``, ``longtime``, ``max-margin`` and
``precision``.

The sweeps are resumable: finished runs live in ``OUT/runs/<key>.json`` and rerunning the
same command skips them. Ctrl-C or SIGTERM stops a sweep without losing finished runs
(exit 130 or 143).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from theory.foundation.validation import parameter_fields, require
from verify.cli.common import (
    HelpFormatter,
    add_executor_flags,
    add_output_flags,
    add_settings_flags,
    reject_together,
    settings_from_args,
)
from verify.experiments.max_margin_settings import MaxMarginSettings
from verify.experiments.settings import (
    BoundarySettings,
    LongtimeSettings,
    PhaseDiagramSettings,
    PrecisionSettings,
    ReproduceSettings,
)


def executor_settings(args: argparse.Namespace) -> Any:
    from verify.runtime.executors import ExecutorSettings

    return ExecutorSettings(
        workers=2 if args.workers is None else args.workers,
        scheduler=args.scheduler,
        dask_local=args.dask_local,
    )


def run_experiment_command(args: argparse.Namespace, experiment: Any) -> int:
    """Run an experiment with the executor the flags ask for; the finished runs survive an
    interruption or a dead worker."""
    # a command loads what it runs when it runs (the parser needs none of it)
    from concurrent.futures.process import BrokenProcessPool

    from verify.experiments.driver import run_experiment
    from verify.experiments.sweep import SweepError
    from verify.runtime.interrupts import exit_status, reason, sigterm_as_interrupt

    executor = executor_settings(args)
    runs = Path(args.out) / "runs"
    try:
        with sigterm_as_interrupt():
            record = run_experiment(experiment, args.out, executor, progress=not args.no_progress)
    except KeyboardInterrupt as interrupt:
        print(
            f"\ninterrupted ({reason(interrupt)}): finished runs are saved in {runs}; "
            "rerun the same command to resume",
            file=sys.stderr,
        )
        return exit_status(interrupt)
    except BrokenProcessPool:
        print(
            f"\nerror: a worker process died (out of memory?); finished runs are saved in "
            f"{runs}; rerun (perhaps with fewer --workers) to resume",
            file=sys.stderr,
        )
        return 1
    except SweepError as error:
        print(f"\nerror: {error}", file=sys.stderr)
        return 1
    for key in ("tables", "figures"):
        for path in record.get(key, []):
            print(Path(args.out) / path)
    return 0


def _settings(args: argparse.Namespace, defaults: Any, quick: Callable[[], Any]) -> Any:
    return settings_from_args(args, quick() if args.quick else defaults)


def command_reproduce(args: argparse.Namespace) -> int:
    from verify.experiments.reproduce import reproduction

    if args.figures_only:
        return redraw_reproduce(args)
    settings = _settings(args, ReproduceSettings(), ReproduceSettings.quick)
    return run_experiment_command(args, reproduction(settings))


def redraw_reproduce(args: argparse.Namespace) -> int:
    """``reproduce --figures-only``: the figures again from ``OUT/tables``."""
    from verify.plots.reproduce import draw_reproduce_figures

    names = [spec.name for spec in parameter_fields(ReproduceSettings)]
    reject_together(args, "figures_only", ["quick", *names], "it only redraws figures")
    tables = Path(args.out) / "tables"
    missing = [
        name
        for name in ("preset_accuracy.csv", "phase_diagram.csv")
        if not (tables / name).is_file()
    ]
    require(
        not missing,
        "out",
        args.out,
        f"a directory holding the tables of an earlier "
        f"reproduce run (tables/{', '.join(missing)} missing)",
    )
    for path in draw_reproduce_figures(tables, Path(args.out) / "figures"):
        print(path)
    return 0


def command_phase_diagram(args: argparse.Namespace) -> int:
    from verify.experiments.phase_diagram import phase_diagram

    settings = _settings(args, PhaseDiagramSettings(), PhaseDiagramSettings.quick)
    return run_experiment_command(args, phase_diagram(settings))


def command_boundaries(args: argparse.Namespace) -> int:
    from verify.experiments.boundaries import boundary_sweep

    settings = _settings(args, BoundarySettings(), BoundarySettings.quick)
    return run_experiment_command(args, boundary_sweep(settings))


def command_longtime(args: argparse.Namespace) -> int:
    from verify.experiments.longtime import long_time

    settings = _settings(args, LongtimeSettings(), LongtimeSettings.quick)
    return run_experiment_command(args, long_time(settings))


def command_max_margin(args: argparse.Namespace) -> int:
    from verify.experiments.max_margin import max_margin

    settings = _settings(args, MaxMarginSettings(), MaxMarginSettings.quick)
    return run_experiment_command(args, max_margin(settings))


def command_precision(args: argparse.Namespace) -> int:
    from verify.experiments.precision import METHODS, precision_report
    from verify.output.files import prepare_output_dir

    settings = settings_from_args(args, PrecisionSettings())
    if args.out:
        prepare_output_dir(args.out, overwrite=args.overwrite, guarded=("precision.csv",))
    print(precision_report(settings, METHODS, Path(args.out) if args.out else None))
    return 0


def _add_experiment(
    commands: Any,
    name: str,
    handler: Callable[[argparse.Namespace], int],
    defaults: Any,
    help_text: str,
    description: str,
    quick_help: str,
) -> argparse.ArgumentParser:
    parser = commands.add_parser(
        name, help=help_text, description=description, formatter_class=HelpFormatter
    )
    add_output_flags(parser, what="tables, figures and runs/ (reused to resume)", overwrite=False)
    parser.add_argument("--quick", action="store_true", help=quick_help)
    add_settings_flags(parser, defaults, "settings (each overrides the default or --quick)")
    add_executor_flags(parser)
    parser.set_defaults(handler=handler)
    return parser


def register(commands: Any) -> None:
    reproduce = _add_experiment(
        commands,
        "reproduce",
        command_reproduce,
        ReproduceSettings(),
        "the paper's Figures 1-5, phase diagram and accuracy table",
        "Run the presets over several seeds and the 39 x 39 phase diagram, write tables "
        "(CSV/Parquet + JSON provenance), then draw the figures from the tables.",
        "low resolution: small d, 300 steps, a 5 x 5 grid, 2 seeds",
    )
    reproduce.add_argument(
        "--figures-only", action="store_true", help="redraw the figures from OUT/tables and stop"
    )

    _add_experiment(
        commands,
        "phase-diagram",
        command_phase_diagram,
        PhaseDiagramSettings(),
        "final train and test metrics over a (d, ||mu||) grid (the paper's Figure 4, right)",
        "The paper's 39 x 39 phase diagram (d in 250..5000, ||mu|| in 5..100, 1000 GD "
        "steps): each column's runs share their set-up and train in one compiled loop; test "
        "metrics over the data distribution; tables, then the figure.",
        "a 5 x 5 grid at small d",
    )
    _add_experiment(
        commands,
        "sweep-boundaries",
        command_boundaries,
        BoundarySettings(),
        "locate the regime boundaries and fit their exponents",
        "Bisection in log ||mu|| per (d, n, seed) for the harmful|benign and "
        "benign|not-overfitting boundaries; exponents with 95% intervals.",
        "a tiny problem, for tests",
    )

    _add_experiment(
        commands,
        "longtime",
        command_longtime,
        LongtimeSettings(),
        "follow gradient flow to 1e13 steps: gaps, fitting, delays",
        "Gradient-flow runs of the benign preset and nearby configurations on log-spaced "
        "steps: gap slopes, fitting and settling times, and a GD-vs-flow check.",
        "a tiny problem, for tests",
    )

    _add_experiment(
        commands,
        "max-margin",
        command_max_margin,
        MaxMarginSettings(),
        "follow the flow to 1e40 steps against the max-margin token-selection SVMs",
        "Gradient-flow runs of the presets: the cosine between q(t) and the attention-SVM "
        "of the late-selected tokens (l2, and the metrics (A + cI)^-1 of the "
        "initialisation), its rate, KKT checks; tables, then the figure.",
        "one small benign run to 1e12 steps, for tests",
    )

    precision = commands.add_parser(
        "precision",
        help="naive vs stable vs mpmath update at large attention gaps",
        formatter_class=HelpFormatter,
        description="Relative error of the leader's update (naive and cancellation-free "
        "forms in float32, float64 and mpmath) against a high-precision mpmath "
        "reference, as the attention gap grows.",
    )
    add_settings_flags(precision, PrecisionSettings(), "settings")
    add_output_flags(precision, required=False, what="precision.csv")
    precision.set_defaults(handler=command_precision)


__all__ = ["register", "run_experiment_command", "executor_settings"]
