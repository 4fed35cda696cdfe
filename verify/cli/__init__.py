"""Command line: ``python -m verify {run,check,assumptions,precision,reproduce,
sweep-boundaries,longtime}``."""

from __future__ import annotations

import argparse
import sys
import types
import typing
from collections.abc import Sequence
from typing import Any

from verify.cli.experiments import register_experiment_commands
from verify.cli.realworld import register_realworld_commands
from verify.sim.config import PRESETS, ConfigError, RunConfig, config_fields, preset


def _field_type(annotation: Any) -> type:
    if isinstance(annotation, str):
        annotation = {"int": int, "float": float, "str": str, "float | None": float}[annotation]
    if isinstance(annotation, types.UnionType) or typing.get_origin(annotation) is typing.Union:
        return next(arg for arg in typing.get_args(annotation) if arg is not type(None))
    return annotation


def add_config_flags(parser: argparse.ArgumentParser) -> None:
    """``--preset`` plus one flag per :class:`RunConfig` field (defaults: the preset's)."""
    parser.add_argument("--preset", choices=sorted(PRESETS), default="benign",
                        help="the paper's setting to start from (default: benign)")
    group = parser.add_argument_group("configuration (each overrides the preset)")
    for spec in config_fields():
        kind = _field_type(spec.type)
        group.add_argument(f"--{spec.name.replace('_', '-')}", dest=spec.name, type=kind,
                           default=None, metavar=kind.__name__.upper(),
                           help=f"default {spec.default!r}")


def config_from_args(args: argparse.Namespace, **fixed: Any) -> RunConfig:
    overrides = {spec.name: getattr(args, spec.name) for spec in config_fields()
                 if getattr(args, spec.name, None) is not None}
    overrides.update(fixed)
    return preset(args.preset, **overrides)


def _command_run(args: argparse.Namespace) -> int:
    import numpy as np

    from verify.sim.data import load_npz
    from verify.sim.run_files import write_run
    from verify.sim.simulate import simulate

    data = W0 = None
    source = "generated"
    if args.data_from:
        with np.load(args.data_from) as archive:
            n, T, d = archive["X_train"].shape
        config = config_from_args(args, n=int(n), T=int(T), d=int(d))
        data, W0 = load_npz(args.data_from, config)
        config = config.replace(test_size=int(data.X_test.shape[0]))
        source = str(args.data_from)
    else:
        config = config_from_args(args)
    result = simulate(config, data=data, W0=W0, progress=not args.no_progress)
    if args.out:
        write_run(result, args.out, data_source=source)
    summary = result.summary()
    width = max(len(key) for key in summary)
    for key, value in summary.items():
        print(f"{key:<{width}}  {value}")
    if result.status == "interrupted":
        print(f"interrupted: the finished part is saved in {args.out}" if args.out
              else "interrupted", file=sys.stderr)
        return 130
    if result.status == "failed":
        print(f"error: {result.message}", file=sys.stderr)
        return 1
    return 0


def _command_check(args: argparse.Namespace) -> int:
    import time

    from verify.checks.report import console_table, write_report
    from verify.checks.suite import run_checks

    started = time.perf_counter()
    seeds = tuple(args.seeds) if args.seeds else None
    results = run_checks(quick=args.quick, seeds=seeds,
                         progress=None if args.no_progress else
                         (lambda line: print(line, file=sys.stderr, flush=True)))
    wall = time.perf_counter() - started
    print(console_table(results))
    meta = {"mode": "quick" if args.quick else "full",
            "seeds": list(seeds or ((0,) if args.quick else (0, 1, 2))), "wall_seconds": wall}
    write_report(results, args.out, meta)
    print(f"report written to {args.out}/report.md and report.json ({wall:.1f} s)")
    return 0 if all(r.verdict == "pass" for r in results) else 1


def _command_assumptions(args: argparse.Namespace) -> int:
    import math

    from theory.assumptions import evaluate, regime_conditions, symbol_values
    from theory.predictions import predict
    from verify.checks.runs import setting_from_config

    config = config_from_args(args)
    setting = setting_from_config(config)
    values = symbol_values(config.d, config.n, config.T, config.rho, config.eta,
                           config.mu_norm, config.sigma_eps, config.alpha,
                           math.sqrt(setting.kappa0 / config.d),
                           config.nu_scale / config.mu_norm, args.delta, setting.gamma0)
    statuses = evaluate(values)
    print(f"configuration: d={config.d} n={config.n} T={config.T} rho={config.rho} "
          f"eta={config.eta} ||mu||={config.mu_norm} sigma={config.sigma_eps} "
          f"alpha={config.alpha} delta={args.delta}")
    print(f"{'':3} {'assumption':38} {'holds':5}  {'margin':>8}   lhs >= rhs")
    for status in statuses:
        pairs = "; ".join(f"{lhs:.4g} >= {rhs:.4g}" for lhs, rhs in status.values)
        print(f"{status.key:3} {status.title:38} {'yes' if status.holds else 'NO':5}  "
              f"{status.margin:8.3g}   {pairs}")
        if args.verbose:
            print(f"    reason: {status.reason}")
    prediction = predict(setting)
    n_snr_sq = config.n * config.snr**2
    a2 = next(s for s in statuses if s.key == "A2").holds
    print(f"\nn SNR^2 = {n_snr_sq:.4g}; stage-1 overfitting threshold "
          f"{prediction.overfitting_threshold:.4g}; test z = {prediction.test_z:.3g}")
    for basis, regime in regime_conditions(n_snr_sq, a2, prediction.overfitting_threshold).items():
        print(f"regime by {basis}: {regime}")
    print(f"predicted regime (theory.predictions): {prediction.regime}")
    return 0


def _command_precision(args: argparse.Namespace) -> int:
    from pathlib import Path

    from verify.experiments.precision import breakdown_gap, precision_table
    from verify.output.files import atomic_write_csv

    methods = ["naive_float32", "naive_float64", "stable_float64", "naive_mp60", "stable_mp30"]
    rows = precision_table(args.gaps, methods, reference_dps=args.reference_dps)
    print(f"relative error of the leader's update vs {args.reference_dps}-digit mpmath")
    print("gap     " + "".join(f"{m:>16}" for m in methods))
    for gap in args.gaps:
        errors = {r.method: r.relative_error for r in rows if r.gap == gap}
        print(f"{gap:<8g}" + "".join(f"{errors[m]:>16.2e}" for m in methods))
    for method in methods[:3]:
        print(f"{method}: relative error first exceeds 1e-2 at gap "
              f"{breakdown_gap(method, 1e-2, reference_dps=args.reference_dps):g}")
    if args.out:
        atomic_write_csv(Path(args.out) / "precision.csv",
                         ["gap", "method", "value", "reference", "relative_error"],
                         ([r.gap, r.method, r.value, r.reference, r.relative_error]
                          for r in rows))
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m verify", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)

    run = commands.add_parser("run", help="train one configuration and record it")
    add_config_flags(run)
    run.add_argument("--data-from", metavar="FILE.npz",
                     help="external data (X_train, y_train, X_test, y_test, optional "
                          "y_clean, W0, nu); n, T, d are taken from it")
    run.add_argument("--out", metavar="DIR", help="directory for the result files")
    run.add_argument("--no-progress", action="store_true", help="no progress bar")
    run.set_defaults(handler=_command_run)

    check = commands.add_parser("check", help="run every prediction-vs-simulation check and "
                                "write report.md / report.json (exit 1 if a check fails)")
    check.add_argument("--quick", action="store_true",
                       help="the benign preset on one seed (under a minute)")
    check.add_argument("--seeds", type=int, nargs="+", metavar="SEED",
                       help="seeds of the simulations (default 0 1 2; quick: 0)")
    check.add_argument("--out", default="verification", metavar="DIR",
                       help="directory for report.md and report.json (default: verification)")
    check.add_argument("--no-progress", action="store_true", help="no per-check progress lines")
    check.set_defaults(handler=_command_check)

    assumptions = commands.add_parser("assumptions", help="A1-A8 with margins and the "
                                      "predicted regime for a configuration")
    add_config_flags(assumptions)
    assumptions.add_argument("--delta", type=float, default=0.05,
                             help="failure probability in A1, A3, A7 (default 0.05)")
    assumptions.add_argument("--verbose", action="store_true", help="print each reason")
    assumptions.set_defaults(handler=_command_assumptions)

    precision = commands.add_parser("precision", help="naive vs stable vs mpmath update "
                                    "at large attention gaps (spec 02)")
    precision.add_argument("--gaps", type=float, nargs="+",
                           default=[5, 10, 15, 17, 20, 30, 37, 40, 100, 300, 700])
    precision.add_argument("--reference-dps", type=int, default=60)
    precision.add_argument("--out", metavar="DIR", help="also write precision.csv here")
    precision.set_defaults(handler=_command_precision)
    register_experiment_commands(commands)
    register_realworld_commands(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.handler(args)
    except ConfigError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2


__all__ = ["main", "build_parser", "add_config_flags", "config_from_args", "RunConfig"]
