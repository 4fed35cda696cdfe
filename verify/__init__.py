r"""``verify``: simulate the one-layer attention model and check the theory against it.

The public entry points, imported on first use (so that ``import verify`` costs nothing)::

    import verify

    config = verify.preset("benign", steps=2000)       # the paper's setting, one change
    result = verify.simulate(config)                    # train and record
    print(result.summary()["test_accuracy"])
    verify.write_run(result, "out/benign")              # config.json, summary.json, CSVs
    forecast = verify.predict(config, 10**6)            # the theory's view: regime, boundaries

Every public function checks its arguments before any work: a wrong type is a
``TypeError`` naming the argument and the type it takes, a value outside what is allowed
an :class:`~theory.foundation.validation.InvalidParameter` (``<parameter>=<value> is
invalid: allowed <what>``), as on the command line.

Sub-packages by role, top layer first (each imports only from the layers below it):
:mod:`verify.cli` (the command line); :mod:`verify.realworld` (pre-trained transformers;
needs the ``realworld`` extra), :mod:`verify.encoder` (the appendix's one-layer transformer
encoder, every parameter trained); :mod:`verify.checks` (predictions against simulations,
the report), :mod:`verify.experiments` (sweeps and the experiments built on them);
:mod:`verify.sim` (one run: configuration, data, kernels, engines, observables, the run's
files), :mod:`verify.plots` (figures from tables); :mod:`verify.runtime` (executors,
result store, interrupts, the BLAS-thread guard), :mod:`verify.measures` (the regime of a
finished run); :mod:`verify.output` (atomic files, tables, provenance).
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS: dict[str, tuple[str, ...]] = {
    "verify.sim.config": (
        "RunConfig",
        "Solver",
        "Recording",
        "preset",
        "PRESETS",
        "PAPER_ACCURACY",
    ),
    "verify.sim.data": ("Dataset", "GROUP_NAMES", "generate", "save_npz"),
    "verify.sim.simulate": ("simulate", "RunResult", "RunStatus"),
    "verify.sim.observables": ("relevant_saturation", "attention_gaps"),
    "verify.sim.run_files": ("write_run", "read_history"),
    "verify.prediction": ("predict", "Prediction"),
    "verify.checks.suite": ("run_checks",),
    "verify.checks.variants.suite": ("run_variants",),
    "verify.checks.drawn_runs": ("drawn_run", "initial_velocities"),
    "verify.measures.regimes": ("classify_regime", "measured_regime", "RegimeThresholds"),
    "verify.checks.space": ("assumption_status",),
    "verify.checks.sampler": (
        "draw_valid_config",
        "draw_violation",
        "violate_one",
        "ASSUMPTION_KEYS",
        "TARGETS",
    ),
    "verify.experiments.driver": ("run_experiment",),
    "verify.experiments.settings": (
        "ReproduceSettings",
        "BoundarySettings",
        "LongtimeSettings",
        "PrecisionSettings",
    ),
    "verify.runtime.executors": ("ExecutorSettings",),
    "verify.experiments.reproduce": ("reproduction",),
    "verify.experiments.boundaries": ("boundary_sweep",),
    "verify.experiments.longtime": ("long_time",),
    "verify.experiments.precision": ("precision_table", "breakdown_gap", "precision_report"),
    "verify.encoder.config": ("EncoderConfig", "EncoderSettings"),
    "verify.encoder.train": ("train_encoder", "EncoderResult"),
    "verify.encoder.files": ("write_encoder_run",),
    "verify.encoder.grid": ("GridSettings",),
    "verify.encoder.experiment": ("encoder_grid",),
    "verify.encoder.claims": ("ENCODER_CLAIMS", "claim_verdict"),
    "verify.cli": ("main",),
}
_MODULE_OF = {name: module for module, names in _EXPORTS.items() for name in names}


def __getattr__(name: str) -> Any:
    """A public name, imported on first use; a function comes with its arguments checked
    (:mod:`verify.entries`)."""
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module 'verify' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    if callable(value) and not isinstance(value, type):
        value = importlib.import_module("verify.entries").checked(name, value)
        globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(_MODULE_OF)


__all__ = sorted(_MODULE_OF)
