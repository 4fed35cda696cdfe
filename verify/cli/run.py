"""``run`` (train one configuration) and ``assumptions`` (A1-A8 for a configuration)."""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from theory.foundation.validation import require
from verify.cli.common import (
    HelpFormatter,
    add_output_flags,
    add_parameter,
    add_progress_flag,
    given,
)
from verify.runtime.digest import FileDigest
from verify.sim.config import DELTA, PRESETS, RunConfig, parameter_specs, preset
from verify.sim.engines.registry import engines_where, spoken
from verify.sim.resources import CONFIRM_SECONDS

#: Fields that external data (``--data-from``) fixes.
DATA_SHAPE = ("n", "T", "d", "test_size")
COMPONENT_TITLES = {
    "model": "data model",
    "training": "training",
    "solver": "solver",
    "recording": "recording",
    "run": "run",
}


def preset_named(argv: Sequence[str]) -> str:
    """The ``--preset`` value in ``argv`` (for the defaults that ``--help`` shows)."""
    for index, item in enumerate(argv):
        if item == "--preset" and index + 1 < len(argv):
            return argv[index + 1]
        if item.startswith("--preset="):
            return item.split("=", 1)[1]
    return "benign"


def add_config_flags(parser: argparse.ArgumentParser, preset_name: str) -> None:
    """``--preset`` plus one flag per configuration field; the defaults shown are the
    preset's own."""
    shown = preset_name if preset_name in PRESETS else "benign"
    defaults = preset(shown).flat()
    parser.add_argument(
        "--preset",
        choices=sorted(PRESETS),
        default="benign",
        help="the paper's setting the other flags start from; choices: "
        f"{', '.join(sorted(PRESETS))}; default: benign",
    )
    groups: dict[str, Any] = {}
    for owner, spec in parameter_specs():
        if owner not in groups:
            groups[owner] = parser.add_argument_group(
                f"{COMPONENT_TITLES[owner]} (defaults of --preset {shown})"
            )
        add_parameter(
            groups[owner],
            spec.name,
            spec.metadata["constraint"],
            spec.metadata["help"],
            defaults[spec.name],
        )


def config_from_args(args: argparse.Namespace, **fixed: Any) -> RunConfig:
    """The preset with every given flag applied (and ``fixed`` values on top)."""
    names = [spec.name for _, spec in parameter_specs()]
    return preset(args.preset, **{**given(args, names), **fixed})


def _configuration(args: argparse.Namespace) -> tuple[RunConfig, Any, Any, dict | None]:
    """The run's configuration, data, W0 and the description of the data file (the last
    three ``None`` unless ``--data-from``); every input is checked here, before any
    training."""
    if not args.data_from:
        return config_from_args(args), None, None, None
    # The file's SHA-256 (recorded only with --out) is hashed while the run goes on.
    recorded = args.out and os.path.isfile(args.data_from)
    digest = FileDigest(args.data_from) if recorded else None
    from verify.sim.data import dataset_from_arrays, npz_shape, read_npz_checked_later
    from verify.sim.inputs import check_initial_weights

    engine = config_from_args(args).solver.engine
    on_tokens = engines_where(tokens=True)
    require(
        engine in on_tokens,
        "engine",
        engine,
        f"{spoken(on_tokens)} with --data-from (a d-free engine samples its own data)",
    )

    for name in DATA_SHAPE:
        value = getattr(args, name, None)
        require(
            value is None,
            name,
            value,
            "no value together with --data-from (n, T, d and test_size come from the file)",
        )
    # The members' checksums are computed while their shapes and values are checked.
    arrays, checksums = read_npz_checked_later(args.data_from)
    n, T, d, test_size = npz_shape(arrays)
    config = config_from_args(args, n=n, T=T, d=d, test_size=test_size)
    data, W0 = dataset_from_arrays(arrays, config, source=str(args.data_from))
    if W0 is not None:
        check_initial_weights(W0, config, "data_from:W0")
    checksums()
    return config, data, W0, describe_data_file(args.data_from, arrays, data, digest)


#: Fields of the data model that generate data: with --data-from they do not describe it.
GENERATING_FIELDS = ("eta", "flip", "rho", "mu_norm", "sigma_eps")


class DataFileRecord(Mapping[str, Any]):
    """A data file's description whose ``sha256`` is the digest hashed in the background
    (:class:`~verify.runtime.digest.FileDigest`), waited for only when the record is read
    (when config.json is written, at the end of the run)."""

    def __init__(self, fields: dict[str, Any], digest: FileDigest | None):
        self._fields, self._digest = fields, digest

    def __getitem__(self, key: str) -> Any:
        if key == "sha256" and self._digest is not None:
            return self._digest.hexdigest()
        return self._fields[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._fields)

    def __len__(self) -> int:
        return len(self._fields)


def describe_data_file(
    path: str, arrays: dict[str, Any], data: Any, digest: FileDigest | None
) -> Mapping[str, Any]:
    """What config.json records of a data file: its path and SHA-256 (``digest``, hashed
    in the background; ``None`` when nothing is recorded), the realised number of flipped
    labels (from ``y_clean``; unknown without it), and which configuration fields do not
    describe it. Warns (stderr) when half or more of the labels are flipped."""
    noisy = int(data.noisy.sum()) if data.y_clean is not None else None
    if noisy is not None and 2 * noisy >= data.n:
        print(
            f"warning: data_from: {noisy} of the {data.n} training labels differ from y_clean "
            "(half or more flipped: the noisy labels are the majority, so the model's notion "
            "of a flipped label is reversed)",
            file=sys.stderr,
        )
    unused = [*GENERATING_FIELDS, *(("nu_scale",) if "nu" in arrays else ())]
    fields = {
        "path": str(path),
        "sha256": None,
        "noisy_count": noisy,
        "noisy_fraction": None if noisy is None else noisy / data.n,
        "fields_not_describing_the_file": unused,
        "W0_from_file": "W0" in arrays,
    }
    return DataFileRecord(fields, digest)


def command_run(args: argparse.Namespace) -> int:
    from verify.sim.resources import check_cost, check_memory, check_runnable, cost_line

    if args.out:  # the provenance config.json records: git answers while the run goes on
        from verify.output.provenance import prefetch_git_commit

        prefetch_git_commit()
    config, data, W0, data_file = _configuration(args)
    check_runnable(config)
    check_memory(config)
    check_cost(config, confirmed=args.yes)
    if not args.out:
        print(cost_line(config), file=sys.stderr)
        return _train(args, config, data, W0, None)
    from verify.output.claim import claim_output
    from verify.sim.run_files import RUN_FILES, RunWriter

    with claim_output(args.out, overwrite=args.overwrite, guarded=RUN_FILES) as out:
        print(cost_line(config), file=sys.stderr)
        keep_partial_history(out)
        return _train(args, config, data, W0, RunWriter(out, data_file))


def keep_partial_history(out: Any) -> None:
    """A partial history an earlier, killed run left in ``out`` is moved aside (to a
    name with its time), never overwritten; the move is announced."""
    from verify.sim.run_files import PARTIAL_HISTORY

    partial = out / PARTIAL_HISTORY
    if not partial.exists():
        return
    stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(partial.stat().st_mtime))
    aside = out / f"history.partial.{stamp}.{os.getpid()}.csv"
    os.replace(partial, aside)
    print(f"note: an earlier run's partial history was moved to {aside}", file=sys.stderr)


def _train(args: argparse.Namespace, config: RunConfig, data: Any, W0: Any, writer: Any) -> int:
    from verify.runtime.interrupts import sigterm_as_interrupt
    from verify.sim.simulate import RunStatus, simulate

    with sigterm_as_interrupt():
        result = simulate(
            config,
            data=data,
            W0=W0,
            progress=not args.no_progress,
            on_record=writer.append if writer else None,
            on_warning=lambda text: print(f"warning: {text}", file=sys.stderr),
        )
        if writer:
            writer.finish(result)
    summary = result.summary()
    width = max(len(key) for key in summary)
    for key, value in summary.items():
        print(f"{key:<{width}}  {value}")
    if result.status is RunStatus.INTERRUPTED:
        saved = f": the finished part is saved in {args.out}" if args.out else ""
        print(f"interrupted ({result.message}){saved}", file=sys.stderr)
        return 128 + (result.signal or 2)
    if result.status is RunStatus.FAILED:
        print(f"error: {result.message}", file=sys.stderr)
        return 1
    return 0


DEFAULT_DELTA = 0.05


def command_assumptions(args: argparse.Namespace) -> int:
    from theory.foundation.assumptions import assess, regime_conditions, symbol_values_for
    from theory.stage1.predictions import stage1_predictions

    config = config_from_args(args)
    delta = args.delta if args.delta is not None else DEFAULT_DELTA
    model, training = config.model, config.training
    statuses = assess(symbol_values_for(model, training, delta))
    print(
        f"configuration: d={model.d} n={model.n} T={model.T} rho={model.rho} "
        f"eta={model.eta} ||mu||={model.mu_norm} sigma={model.sigma_eps} "
        f"alpha={training.alpha} delta={delta}"
    )
    print(f"{'':3} {'assumption':38} {'holds':5}  {'margin':>8}   lhs >= rhs")
    for status in statuses:
        pairs = "; ".join(f"{lhs:.4g} >= {rhs:.4g}" for lhs, rhs in status.values)
        print(
            f"{status.key:3} {status.title:38} {'yes' if status.holds else 'NO':5}  "
            f"{status.margin:8.3g}   {pairs}"
        )
        if args.verbose:
            print(f"    reason: {status.reason}")
    prediction = stage1_predictions(model, training)
    n_snr_sq = model.n * model.snr**2
    a2 = next(s for s in statuses if s.key == "A2").holds
    print(
        f"\nn SNR^2 = {n_snr_sq:.4g}; stage-1 overfitting threshold "
        f"{prediction.overfitting_threshold:.4g}; test z = {prediction.test_z:.3g}"
    )
    for basis, regime in regime_conditions(n_snr_sq, a2, prediction.overfitting_threshold).items():
        print(f"regime by {basis}: {regime}")
    print(f"predicted regime (theory.stage1.predictions): {prediction.regime}")
    return 0


def register(commands: Any, argv: Sequence[str]) -> None:
    preset_name = preset_named(argv)
    run = commands.add_parser(
        "run",
        help="train one configuration and record it",
        formatter_class=HelpFormatter,
        description="Train the one-layer attention model on one configuration and record "
        "its trajectory (config.json, summary.json, history.csv, attention.csv, "
        "gaps.csv). Ctrl-C or SIGTERM keeps the finished part.",
    )
    add_config_flags(run, preset_name)
    run.add_argument(
        "--data-from",
        metavar="FILE.npz",
        help="external data: X_train (n,T,d), y_train, X_test, y_test, optional "
        "y_clean, W0 (d,d), nu (d,); n, T, d and test_size come from it",
    )
    add_output_flags(run, required=False, what="run's files")
    add_progress_flag(run)
    run.add_argument(
        "--yes",
        action="store_true",
        help=f"run even when the estimate (printed before the run) exceeds "
        f"{CONFIRM_SECONDS / 60:g} min; without it such a run is refused before any work",
    )
    run.set_defaults(handler=command_run)

    assumptions = commands.add_parser(
        "assumptions",
        help="A1-A8 with margins and the predicted regime",
        formatter_class=HelpFormatter,
        description="The package's assumptions A1-A8 for a configuration, each with its "
        "margin, and the regime the theory predicts.",
    )
    add_config_flags(assumptions, preset_name)
    add_parameter(
        assumptions, "delta", DELTA, "failure probability in A1, A3 and A7", DEFAULT_DELTA
    )
    assumptions.add_argument("--verbose", action="store_true", help="print each reason")
    assumptions.set_defaults(handler=command_assumptions)


__all__ = ["register", "add_config_flags", "config_from_args", "command_run", "command_assumptions"]
