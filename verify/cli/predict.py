"""``predict``: the theory's regime, accuracies and both boundaries for a configuration.

Nothing is trained: the numbers come from :func:`verify.prediction.predict` at the
horizon ``--steps`` (the run flag, default 1000). ``--json`` prints one JSON object with
the configuration, the horizon and the provenance (package version, git commit).
"""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Sequence
from typing import Any

from verify.cli.common import HelpFormatter
from verify.cli.run import add_config_flags, config_from_args, preset_named


def _relative(error: float) -> str:
    return "" if math.isnan(error) else f" +- {100 * error:.1f}%"


def boundary_line(name: str, k: str, mu: float, error: float, validity: str, band: Any) -> str:
    """One boundary: its value and error, or that there is none and why (and a band)."""
    if math.isnan(mu):
        ends = f" (band [{band[0]:.4g}, {band[1]:.4g}])" if band else ""
        return f"boundary {name} at {k} steps: no prediction{ends}: {validity}"
    if mu == 0:  # every ||mu|| on the grid lies above it
        return f"boundary {name} at {k} steps: below every ||mu|| of the grid (||mu|| = 0)"
    return f"boundary {name} at {k} steps: ||mu|| = {mu:.4g}{_relative(error)}"


def report_lines(prediction: Any) -> list[str]:
    """The human-readable report of a :class:`~verify.prediction.Prediction`."""
    p, k = prediction, f"{prediction.steps:g}"
    model, training = p.config.model, p.config.training
    test = (
        f"test accuracy at {k} steps (stage 2): {p.test_accuracy:.4f} "
        f"+- {p.test_accuracy_error:.4f}; test sequences selecting R: {p.selects_relevant:.4f}"
        if math.isfinite(p.test_accuracy)
        else f"test accuracy at {k} steps (stage 2): no prediction: {p.test_validity}"
    )
    return [
        f"configuration: d={model.d} n={model.n} T={model.T} rho={model.rho} eta={model.eta} "
        f"||mu||={model.mu_norm:g} sigma={model.sigma_eps:g} alpha={training.alpha:g}; "
        f"horizon {k} steps of the {p.dynamics}",
        f"predicted regime (Theorem 4.1, stage 1): {p.regime} "
        f"(n SNR^2 = {p.n_snr_sq:.4g}; overfitting below {p.overfitting_threshold:.4g})",
        f"regime at {k} steps by the boundaries below: {p.regime_at_horizon}",
        f"train accuracy (stage 1): {p.train_accuracy:.4f}",
        f"test accuracy (stage 1, argmax limit): {p.test_accuracy_argmax:.4f}",
        test,
        f"test accuracy of uniform attention (baseline): {p.uniform_test_accuracy:.4f}",
        boundary_line(
            "harmful | benign",
            k,
            p.boundary_harmful_benign_mu,
            p.boundary_harmful_benign_error,
            p.boundary_harmful_benign_validity,
            None,
        )
        + " (below it fewer than half of the test sequences select R)",
        boundary_line(
            "benign | not-overfitting",
            k,
            p.boundary_benign_not_mu,
            p.boundary_benign_not_error,
            p.boundary_benign_not_validity,
            p.boundary_benign_not_band,
        )
        + " (above it fewer than half of the noisy samples are fitted)",
        f"errors: harmful | benign {p.boundary_harmful_benign_error_source or '-'}; benign | "
        f"not-overfitting {p.boundary_benign_not_error_source or '-'}",
        f"note: {p.note}",
    ]


def command_predict(args: argparse.Namespace) -> int:
    from verify.prediction import predict

    prediction = predict(config_from_args(args))  # checks the inputs before any work
    if args.json:
        from verify.output.provenance import provenance

        record = {**prediction.as_dict(), "provenance": provenance()}
        print(json.dumps(record, allow_nan=False))
    else:
        print("\n".join(report_lines(prediction)))
    return 0


def register(commands: Any, argv: Sequence[str]) -> None:
    parser = commands.add_parser(
        "predict",
        help="the theory's regime, accuracies and both regime boundaries (no training)",
        formatter_class=HelpFormatter,
        description="What the theory predicts for a configuration after --steps steps of "
        "its own dynamics (the horizon, default 1000), without training: the regime, the "
        "train and test accuracies (and uniform attention's), and the harmful | benign and "
        "benign | not-overfitting boundaries in ||mu|| at the configuration's d and n, each "
        "number with its derived error and where the error came from. Domain: a GD engine "
        "is predicted by the mean-field GD map at the configuration's alpha (exact steps up "
        "to 5000, then the flow once GD has settled), a flow engine by the mean-field flow. "
        "No number (JSON null, with a validity reason) where the GD map is chaotic around "
        "the benign | not-overfitting boundary (a band wider than 25%: the band is printed), "
        "where GD has not settled and the horizon lies beyond 5000 steps, or where no "
        "crossing is found. The errors are first order in the dropped cross terms; at d "
        "below about 10 n T the two classes split further than that (benchmarks/"
        "predict_gd_sweep.py measures how far). Stage-1 numbers state no error. The stage-2 "
        "predictions are the package's own reconstruction.",
    )
    add_config_flags(parser, preset_named(argv))
    parser.add_argument(
        "--json", action="store_true", help="print one JSON object (with the provenance)"
    )
    parser.set_defaults(handler=command_predict)


__all__ = ["register", "command_predict", "report_lines"]
