"""Subcommands ``reproduce``, ``sweep-boundaries`` and ``longtime`` of ``python -m verify``.

Every command is resumable: finished runs live in ``OUT/runs/<key>.json``; rerunning
the same command skips them. Ctrl-C stops it without losing finished runs (exit 130).
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any


def _executor_flags(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("execution")
    group.add_argument("--workers", type=int, default=2, metavar="N",
                       help="worker processes (default 2; 0 runs in this process)")
    where = group.add_mutually_exclusive_group()
    where.add_argument("--scheduler", metavar="ADDRESS",
                       help="a Dask scheduler address (tcp://host:port); needs the dask extra")
    where.add_argument("--dask-local", action="store_true",
                       help="start a Dask LocalCluster on loopback with N worker processes")
    group.add_argument("--no-progress", action="store_true", help="no progress bars")


def _executor(args: argparse.Namespace):
    from verify.experiments.sweep import make_executor

    return make_executor(workers=args.workers, scheduler_address=args.scheduler,
                         dask_local=args.dask_local)


def _run(args: argparse.Namespace, body: Callable[[Any], dict[str, Any]]) -> int:
    from concurrent.futures.process import BrokenProcessPool

    from verify.experiments.sweep import SweepError

    executor = _executor(args)
    try:
        with executor:
            record = body(executor)
    except KeyboardInterrupt:
        print(f"\ninterrupted: finished runs are saved in {Path(args.out) / 'runs'}; "
              "rerun the same command to resume", file=sys.stderr)
        return 130
    except BrokenProcessPool:
        print(f"\nerror: a worker process died (out of memory?); finished runs are saved in "
              f"{Path(args.out) / 'runs'}; rerun (perhaps with fewer --workers) to resume",
              file=sys.stderr)
        return 1
    except SweepError as error:
        print(f"\nerror: {error}", file=sys.stderr)
        return 1
    for key in ("tables", "figures"):
        for path in record.get(key, []):
            print(Path(args.out) / path)
    return 0


def _command_reproduce(args: argparse.Namespace) -> int:
    from verify.experiments.reproduce import ReproduceSettings, reproduce

    if args.figures_only:
        from verify.plots.reproduce import draw_reproduce_figures

        for path in draw_reproduce_figures(args.out):
            print(path)
        return 0
    settings = (ReproduceSettings.quick(seeds=args.seeds or 2) if args.quick
                else ReproduceSettings.full(seeds=args.seeds or 5, phase_seeds=args.phase_seeds))
    return _run(args, lambda executor: reproduce(args.out, settings, executor,
                                                 progress=not args.no_progress))


def _int_tuple(text: str) -> tuple[int, ...]:
    """``"500,1000"`` -> (500, 1000); ``""`` or ``"none"`` -> () (skip that sweep)."""
    if text.strip().lower() in ("", "none"):
        return ()
    return tuple(int(value) for value in text.split(","))


def _command_boundaries(args: argparse.Namespace) -> int:
    from verify.checks.regimes import RegimeThresholds
    from verify.experiments.boundaries import BoundarySettings, sweep_boundaries

    settings = BoundarySettings.quick() if args.quick else BoundarySettings()
    changes: dict[str, Any] = {}
    for name in ("d_values", "n_values", "steps", "engine", "rounds", "fitted_level",
                 "test_size", "d_fixed", "n_fixed"):
        if getattr(args, name) is not None:
            changes[name] = getattr(args, name)
    if args.seeds is not None:
        changes["seeds"] = tuple(range(args.seeds))
    if args.test_threshold is not None:
        changes["thresholds"] = RegimeThresholds(test_accuracy=args.test_threshold)
    settings = dataclasses.replace(settings, **changes)
    return _run(args, lambda executor: sweep_boundaries(args.out, settings, executor,
                                                        progress=not args.no_progress))


def _command_longtime(args: argparse.Namespace) -> int:
    from verify.experiments.longtime import LongtimeSettings, run_longtime

    settings = LongtimeSettings.quick() if args.quick else LongtimeSettings()
    changes: dict[str, Any] = {}
    if args.steps is not None:
        changes["steps"] = args.steps
    if args.seeds is not None:
        changes["seeds"] = tuple(range(args.seeds))
        changes["benign_seeds"] = tuple(range(max(args.seeds, len(settings.benign_seeds))))
    settings = dataclasses.replace(settings, **changes)
    return _run(args, lambda executor: run_longtime(args.out, settings, executor,
                                                    progress=not args.no_progress))


def register_experiment_commands(commands: argparse._SubParsersAction) -> None:
    """Add ``reproduce``, ``sweep-boundaries`` and ``longtime`` to ``python -m verify``."""
    reproduce = commands.add_parser(
        "reproduce", help="the paper's Figures 1-5, phase diagram and accuracy table",
        description="Run the presets over several seeds and the 39 x 39 phase diagram, "
                    "write tables (CSV/Parquet + JSON provenance), then draw the figures "
                    "from the tables.")
    reproduce.add_argument("--out", required=True, metavar="DIR", help="output directory")
    reproduce.add_argument("--quick", action="store_true",
                           help="low resolution (small d, 300 steps, 5 x 5 grid, 2 seeds)")
    reproduce.add_argument("--seeds", type=int, default=None, metavar="K",
                           help="seeds per preset (default 5; --quick: 2)")
    reproduce.add_argument("--phase-seeds", type=int, default=1, metavar="K",
                           help="seeds per phase-diagram cell (default 1)")
    reproduce.add_argument("--figures-only", action="store_true",
                           help="redraw the figures from DIR/tables and stop")
    _executor_flags(reproduce)
    reproduce.set_defaults(handler=_command_reproduce)

    boundaries = commands.add_parser(
        "sweep-boundaries", help="locate the regime boundaries and fit their exponents",
        description="Bisection in log ||mu|| per (d, n, seed) for the harmful|benign and "
                    "benign|not-overfitting boundaries; exponents with 95%% intervals.")
    boundaries.add_argument("--out", required=True, metavar="DIR")
    boundaries.add_argument("--quick", action="store_true", help="tiny problem, for tests")
    boundaries.add_argument("--seeds", type=int, metavar="K", help="seeds (default 5)")
    boundaries.add_argument("--d-values", type=_int_tuple, metavar="D1,D2,...")
    boundaries.add_argument("--n-values", type=_int_tuple, metavar="N1,N2,...")
    boundaries.add_argument("--d-fixed", type=int, metavar="D", help="d of the n-sweep")
    boundaries.add_argument("--n-fixed", type=int, metavar="N", help="n of the d-sweep")
    boundaries.add_argument("--steps", type=int, help="training steps per run (default 1000)")
    boundaries.add_argument("--engine", choices=("reduced", "flow"),
                            help="reduced GD (default) or gradient flow for long horizons")
    boundaries.add_argument("--rounds", type=int, help="bisection rounds (default 7)")
    boundaries.add_argument("--test-size", type=int, help="test samples (default 1000)")
    boundaries.add_argument("--test-threshold", type=float,
                            help="harmful|benign test-accuracy threshold (default 0.95)")
    boundaries.add_argument("--fitted-level", type=float,
                            help="benign|not: noisy-fitted fraction level (default 0.5)")
    _executor_flags(boundaries)
    boundaries.set_defaults(handler=_command_boundaries)

    longtime = commands.add_parser(
        "longtime", help="follow gradient flow to 1e13 steps; gaps, fitting, delays",
        description="Flow runs of benign and nearby configurations on log-spaced steps.")
    longtime.add_argument("--out", required=True, metavar="DIR")
    longtime.add_argument("--quick", action="store_true", help="tiny problem, for tests")
    longtime.add_argument("--steps", type=int, help="GD-equivalent horizon (default 1e13)")
    longtime.add_argument("--seeds", type=int, metavar="K", help="seeds per configuration")
    _executor_flags(longtime)
    longtime.set_defaults(handler=_command_longtime)


__all__ = ["register_experiment_commands"]
