r"""Checks of the claims about the data and the readout (R1, R3): the regimes, the token
selection and the boundaries with :math:`\rho_i` varying across examples or a fixed FFN
readout, against the base model's predictions.

R1's theory (:mod:`theory.variants.rho`): a noisy sample's initial gap velocity is linear
in its own :math:`\rho_i`, so the *mean* velocity over the samples is the base model's at
:math:`\rho`, and its sign changes at the base threshold exactly; each sample's own threshold
moves with :math:`\psi(\rho_i) = (1 + \rho_i)/(1 - \rho_i)`, so the training outcome's boundary
moves by the second-order :math:`E\psi(\rho_i)/\psi(\rho) - 1`. R3's
(:mod:`theory.variants.readout`): the FFN keeps the token scores' signs and order, and at
uniform attention the stage-1 rates are the base model's with the score differences scaled;
the regime and the selection of the relevant token are claimed to carry over.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from theory.foundation.data_model import DataModel
from theory.variants.rho import mean_threshold
from verify.checks.catalogue.boundaries import crossing_shift
from verify.checks.catalogue.declare import PAPER, STAGE1, CheckKind, Context
from verify.checks.catalogue.estimators import crossing, n_snr_sq, selection_measurement
from verify.checks.catalogue.paper_horizon import (
    Selection,
    measure_regime,
    predicted_regime,
    predicted_selection,
)
from verify.checks.registry import Measurement, PaperResult, compare
from verify.checks.variants.runs import SPREAD, Need
from verify.measures.intervals import mean_interval, ratio_interval

R1 = PaperResult((), "rebuttal R1: rho varying across examples")
R3 = PaperResult((), "rebuttal R3: a fixed FFN readout")
#: The scans of both kinds (each a grid of ||mu|| at the benign preset's (d, n)).
SCANS = (Need("scan", 8), Need("scan-spread", 8))


def spread_model(model: DataModel) -> DataModel:
    """The preset's data model with :math:`\\rho_i \\sim U[\\rho - s, \\rho + s]`."""
    return model.replace(rho_spread=SPREAD)


def scan_values(scans: list[dict], model: DataModel, key: str, level: float) -> np.ndarray:
    """Per scan seed, the n SNR^2 where ``key`` crosses ``level`` downwards."""
    return np.array(
        [n_snr_sq(model, crossing(np.asarray(s["mu"]), np.asarray(s[key]), level)) for s in scans]
    )


@dataclass(frozen=True)
class SpreadThreshold:
    """The base stage-1 threshold (where the mean noisy velocity changes sign, with or
    without the spread) and the base model's crossing shift as its model error."""

    model: DataModel
    predicted: float
    shift: float


def spread_velocity_threshold(context: Context) -> SpreadThreshold:
    p = context.prediction
    return SpreadThreshold(spread_model(p.model), p.overfitting_threshold, crossing_shift(p))


def measure_spread_velocity_sign(
    target: SpreadThreshold, ev, claim: float | None = None
) -> Measurement:
    """Seed mean of the n SNR^2 where the mean initial noisy gap velocity changes sign under
    the spread, against the base threshold (linear in rho_i: unmoved)."""
    values = scan_values(ev.scans["scan-spread"], target.model, "noisy_velocity", 0.0)
    mean, interval = mean_interval(values)
    return compare(
        target.predicted if claim is None else claim,
        mean,
        interval,
        f"{values.size} scan seeds",
        target.shift,
        "mean over seeds of the n SNR^2 where the mean initial noisy gap velocity changes "
        f"sign, rho_i ~ U[rho - {SPREAD}, rho + {SPREAD}] (log-interpolated scan)",
        model_error_source="the base model's crossing shift: the dropped terms' mean "
        "velocity over the velocity's slope in n SNR^2 (the spread adds nothing at first "
        "order: the mean velocity is linear in rho_i)",
    )


@dataclass(frozen=True)
class BoundaryShift:
    r"""The training outcome's boundary under the spread over the base's: the predicted
    ratio :math:`E\psi(\rho_i)/\psi(\rho)` and its model error (the shift itself)."""

    model: DataModel
    predicted: float
    model_error: float


def spread_boundary_shift(context: Context) -> BoundaryShift:
    """The mean per-sample threshold over the base threshold; the model error is that
    second-order shift itself: the theory derives it at stage 1, while at the paper's
    horizon the stage-2 switch sets the boundary, whose dependence on rho_i is not derived."""
    p = context.prediction
    ratio = mean_threshold(spread_model(p.model), p.training) / p.overfitting_threshold
    return BoundaryShift(p.model, ratio, abs(ratio - 1.0))


def measure_boundary_shift(target: BoundaryShift, ev, claim: float | None = None) -> Measurement:
    """Per scan seed (same draws), the n SNR^2 where half of the noisy samples are fitted
    after 1000 steps with the spread over the base's; their geometric mean."""
    spread = scan_values(ev.scans["scan-spread"], target.model, "noisy_fitted", 0.5)
    base = scan_values(ev.scans["scan"], target.model, "noisy_fitted", 0.5)
    ratios = spread / base
    ratio, interval = ratio_interval(ratios)
    return compare(
        target.predicted if claim is None else claim,
        ratio,
        interval,
        f"{ratios.size} scan seeds (paired)",
        target.model_error,
        "geometric mean over seeds of the ratio (spread / base) of the n SNR^2 where the "
        "fraction of noisy samples fitted after 1000 steps drops below 1/2",
        detail=f"base boundary {math.exp(np.mean(np.log(base))):.4g}, spread "
        f"{math.exp(np.mean(np.log(spread))):.4g} (geometric means)",
        model_error_source="the second-order shift E psi(rho_i)/psi(rho) - 1 itself (stage 1 "
        "derives it; the stage-2 switch that sets the boundary at 1000 steps is not derived "
        "under the spread)",
    )


@dataclass(frozen=True)
class VariantSelection:
    """The base model's predicted selection share, measured on the variant's runs."""

    selection: Selection
    run: str


def variant_selection(context: Context, run: str, noisy: bool, group: str) -> VariantSelection:
    return VariantSelection(predicted_selection(context, noisy, group), run)


def measure_variant_selection(
    target: VariantSelection, ev, claim: float | None = None
) -> Measurement:
    """The share of the variant's samples selecting the group after 1000 steps."""
    s = target.selection
    return selection_measurement(
        ev(s.preset, target.run),
        s.group,
        s.predicted if claim is None else claim,
        s.noisy,
        s.model_error,
        s.source,
    )


R1_VELOCITY_SIGN = CheckKind(
    id="r1.velocity-sign",
    name="R1: with rho_i spread, the noisy velocity still changes sign at the base threshold",
    paper=R1,
    horizon=STAGE1,
    needs=(SCANS[1],),
    prepare=spread_velocity_threshold,
    measure=measure_spread_velocity_sign,
)
R1_BOUNDARY = CheckKind(
    id="r1.boundary-shift",
    name="R1: the benign | not-overfitting boundary moves by the factor {predicted:.4f}",
    paper=R1,
    horizon=PAPER,
    needs=SCANS,
    prepare=spread_boundary_shift,
    measure=measure_boundary_shift,
)
R1_REGIME = CheckKind(
    id="r1.regime",
    name="R1: with rho_i spread, the regime is {regime} ({label})",
    paper=R1,
    horizon=PAPER,
    needs=(Need("spread", 24),),
    prepare=predicted_regime,
    measure=measure_regime,
    params={"run": "spread", "label": "1000 steps"},
)
R3_REGIME = CheckKind(
    id="r3.regime",
    name="R3: with the FFN readout, the regime is {regime} ({label})",
    paper=R3,
    horizon=PAPER,
    needs=(Need("ffn", 24),),
    prepare=predicted_regime,
    measure=measure_regime,
    params={"run": "ffn", "label": "1000 steps"},
)
R3_CLEAN_SELECTION = CheckKind(
    id="r3.clean-selection",
    name="R3: with the FFN readout, clean samples select R",
    paper=R3,
    horizon=PAPER,
    needs=(Need("ffn", 24),),
    prepare=variant_selection,
    measure=measure_variant_selection,
    params={"run": "ffn", "noisy": False, "group": "R"},
)

__all__ = [
    "R1_VELOCITY_SIGN",
    "R1_BOUNDARY",
    "R1_REGIME",
    "R3_REGIME",
    "R3_CLEAN_SELECTION",
    "variant_selection",
    "measure_variant_selection",
    "scan_values",
]
