r"""What the property tests assert about one drawn configuration, as functions that raise.

Each function compares a prediction with a measurement and raises its own subclass of
:class:`PropertyFailure` (an ``AssertionError``) when they disagree, so a test can name the
failure it expects and a wrong prediction fed in must make it raise:

* :func:`check_initial_gap`: the noisy samples' mean initial gap velocity
  :math:`\dot a_{W_-} - \dot a_R` of one draw lies within the kept velocity
  :math:`\pm(|b| + k\,s)` (:math:`b` the dropped terms' mean, :math:`s` the standard
  deviation of a draw's mean, :math:`k` = :data:`VELOCITY_SDS`), and where that interval
  excludes 0 its sign is the predicted side of the benign | not-overfitting boundary
  (positive: the noisy samples start to fit their flipped labels);
* :func:`check_regime`: a run ends, by the mechanism
  (:func:`verify.measures.regimes.classify_regime`), in the regime the prediction's
  mechanism gives (:func:`mechanism_regime`): the theory's claim as it stands; at the
  harmful | benign edge, where the predicted share of test sequences selecting R is 1/2
  within its error band (:func:`selection_edge`,
  :func:`theory.stage2.predictions.selection_band`), either of the two is accepted;
* :func:`check_regime_as_registered`: the same with the registered disagreements: a run
  predicted not to overfit ends benign (:data:`STAGE_TWO_SWITCH`: the stage-1 threshold
  decides the initial velocities only), and with unequal classes a mismatch is accepted
  only with its mechanism measured (:data:`CLASS_SPLIT`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from theory.foundation.data_model import DataModel
from theory.stage1.predictions import Stage1Predictions
from theory.stage2.predictions import SelectionBand
from verify.checks.space import class_counts
from verify.measures.regimes import regimes_of

#: Standard deviations of a draw's mean allowed around the kept velocity (two-sided
#: probability 6e-5 per draw for a normal mean), fixed before any run.
VELOCITY_SDS = 4.0

#: The registered disagreement for configurations predicted not to overfit: the id of the
#: catalogue's check on the paper's setting (:data:`verify.checks.catalogue.DISAGREEMENTS`).
STAGE_TWO_SWITCH = "not-overfitting.regime-flow"

#: The registered disagreement for classes of unequal size or flips.
CLASS_SPLIT = "regime with unequal classes"

#: Disagreements the property tests register, with their mechanism and numbers.
PROPERTY_DISAGREEMENTS: dict[str, str] = {
    CLASS_SPLIT: (
        "the theory lets both signal components of the query grow at one rate, as if each "
        "class held n/2 samples and n eta/2 flips; with an odd n or an odd number of flips "
        "the class with the larger fraction of flips learns its signal more slowly, and once "
        "rho beta_max > beta_min the weaker class's test sequences select the other class's "
        "W- token: "
        "at n = 6, T = 4, one flip, rho = 0.882, d = 234, ||mu|| = 52.9 (predicted benign, "
        "argmax accuracy 0.972, test sequences selecting R 0.943) the learned query has "
        "beta_+ = 0.711, beta_- = 0.965 (split 1.20), and at 1e9 stage-1 times 0.479 of "
        "the test sequences select R (harmful by the mechanism), accuracy 0.528"
    ),
}


class PropertyFailure(AssertionError):
    """A property of one drawn configuration does not hold."""


class VelocityOutside(PropertyFailure):
    """A measured initial velocity lies outside its prediction's tolerance."""


class RegimeMismatch(PropertyFailure):
    """The measured regime is not the predicted one."""


class DisagreementGone(PropertyFailure):
    """A registered disagreement no longer shows: the theory now agrees (unexpected)."""


def check_initial_gap(
    measured: float, kept: float, bias: float, mean_sd: float, regime: str
) -> float:
    r"""Raise :class:`VelocityOutside` unless :math:`|m - v| \le |b| + k s`, and
    :class:`RegimeMismatch` when :math:`m \pm (|b| + k s)` excludes 0 on the side the
    predicted ``regime`` does not have. Returns the tolerance."""
    tolerance = abs(bias) + VELOCITY_SDS * mean_sd
    if not abs(measured - kept) <= tolerance:
        raise VelocityOutside(
            f"noisy gap velocity W- - R: measured {measured:.6g}, predicted {kept:.6g} "
            f"+- {tolerance:.3g} (|bias| {abs(bias):.3g} + {VELOCITY_SDS} sd {mean_sd:.3g})"
        )
    overfits = regime != "not-overfitting"
    if abs(measured) > tolerance and (measured > 0) != overfits:
        raise RegimeMismatch(
            f"predicted {regime}, but the noisy samples' W- - R velocity is {measured:.6g} "
            f"(+- {tolerance:.3g}): they start to {'fit' if measured > 0 else 'keep'} "
            "their flipped labels"
        )
    return tolerance


def mechanism_regime(prediction: Stage1Predictions) -> str:
    r"""The regime the prediction's mechanism gives: not overfitting when the overfitting
    ratio is at most 1, else harmful when fewer than half of the test sequences select R
    in the argmax limit (Lemma 4.8's test selection), benign otherwise."""
    if prediction.overfitting_ratio <= 1:
        return "not-overfitting"
    return "benign" if prediction.test_selection.get("R", 0.0) >= 0.5 else "harmful"


def selection_edge(prediction: Stage1Predictions, tau: float) -> SelectionBand:
    r"""The predicted share of test sequences selecting R (stage 1, argmax limit) and its
    error band at the flow time ``tau`` (:func:`theory.stage2.predictions.selection_band`:
    the dropped terms' relative size on z and the flow's drift of z)."""
    from theory.stage2.predictions import selection_band

    steps = tau / prediction.training.alpha
    return selection_band(prediction.model, prediction.training, prediction.test_z, steps)


def at_the_edge(band: SelectionBand | None, expected: str, measured: str) -> bool:
    """Whether a harmful | benign mismatch lies within the band: the band holds 1/2 and
    both regimes overfit."""
    overfitting = {"harmful", "benign"}
    return band is not None and band.contains(0.5) and {expected, measured} <= overfitting


def _describe(final: Mapping[str, float]) -> str:
    keys = ("noisy_fitted", "population_test_selects_relevant", "population_test_accuracy")
    return ", ".join(f"{key} {final.get(key, math.nan):.3f}" for key in keys)


def check_regime(
    prediction: Stage1Predictions, final: Mapping[str, float], band: SelectionBand | None = None
) -> str:
    """The theory's claim as it stands: raise :class:`RegimeMismatch` unless the run's final
    state (a history row) is, by the mechanism, the regime :func:`mechanism_regime` gives,
    or (with the selection's error ``band``) the other side of the harmful | benign edge
    when the band holds 1/2 (:func:`at_the_edge`). Returns the measured regime."""
    expected = mechanism_regime(prediction)
    measured = regimes_of(final)["regime"]
    if measured != expected and not at_the_edge(band, expected, measured):
        edge = "" if band is None else f"; selection band {band.source()}"
        raise RegimeMismatch(f"predicted {expected}, measured {measured}: {_describe(final)}{edge}")
    return measured


def class_split(rho: float, final: Mapping[str, float]) -> float:
    r""":math:`\rho\,\beta_{\max}/\beta_{\min}` of the learned query, with
    :math:`\beta_{\pm} = \langle q, \mu_{\pm1}\rangle/\|\mu\|`: above 1, the weaker class's
    test sequences give the other class's :math:`W_-` token (logit
    :math:`\rho\|\mu\|\beta_{\max}`) a larger mean logit than their R token
    (:math:`\|\mu\|\beta_{\min}`); ``inf`` when a class has not learned its signal."""
    low, high = sorted(
        (final.get("q_signal_plus", math.nan), final.get("q_signal_minus", math.nan))
    )
    return rho * high / low if low > 0 else math.inf


def weaker_class(model: DataModel) -> int | None:
    """The class with the larger fraction of flipped labels (its signal component grows
    more slowly), ``None`` when both have the same fraction."""
    shares = {y: flipped / size for y, (size, flipped) in class_counts(model.n, model.eta).items()}
    if shares[1] == shares[-1]:
        return None
    return 1 if shares[1] > shares[-1] else -1


def learned_weaker_class(final: Mapping[str, float]) -> int:
    """The class whose signal component of the learned query is smaller."""
    return 1 if final.get("q_signal_plus", math.nan) < final.get("q_signal_minus", math.nan) else -1


def check_stage_two_switch(prediction: Stage1Predictions, final: Mapping[str, float]) -> str:
    r"""For a prediction of no overfitting: the run ends benign (registered disagreement
    :data:`STAGE_TWO_SWITCH`: once the clean samples are fitted their loss weights fall,
    the signal term that held the noisy samples on R collapses and their memorisation
    overtakes it). Raise :class:`DisagreementGone` when the run does not overfit (the
    theory agrees, unexpectedly) and :class:`RegimeMismatch` when it ends harmful."""
    if mechanism_regime(prediction) != "not-overfitting":
        raise RegimeMismatch(f"predicted {prediction.regime}: not a not-overfitting prediction")
    measured = regimes_of(final)["regime"]
    if measured == "not-overfitting":
        raise DisagreementGone(
            f"'{STAGE_TWO_SWITCH}' no longer shows: the run did not overfit ({_describe(final)})"
        )
    if measured != "benign":
        raise RegimeMismatch(f"registered: benign after the switch; measured {measured}")
    return measured


def check_regime_as_registered(
    prediction: Stage1Predictions,
    final: Mapping[str, float],
    balanced: bool,
    band: SelectionBand | None = None,
) -> str:
    """The regime at the horizon against the prediction with its registered disagreements:
    :func:`check_stage_two_switch` for a prediction of no overfitting; otherwise
    :func:`check_regime`, whose mismatch is accepted only as :data:`CLASS_SPLIT` registers
    it: unequal classes (``balanced`` False), a learned split :func:`class_split` above 1,
    and the weaker component the one of the class with more flips (:func:`weaker_class`).
    Returns the measured regime."""
    if mechanism_regime(prediction) == "not-overfitting":
        return check_stage_two_switch(prediction, final)
    try:
        return check_regime(prediction, final, band)
    except RegimeMismatch as mismatch:
        split = class_split(prediction.model.rho, final)
        weaker = (weaker_class(prediction.model), learned_weaker_class(final))
        if balanced or not split > 1 or weaker[0] != weaker[1]:
            detail = (
                f"{mismatch} (classes balanced: {balanced}; split {split:.3g}; weaker class "
                f"by flips {weaker[0]}, learned {weaker[1]})"
            )
            raise RegimeMismatch(detail) from mismatch
        return regimes_of(final)["regime"]


__all__ = [
    "DisagreementGone",
    "PropertyFailure",
    "RegimeMismatch",
    "STAGE_TWO_SWITCH",
    "VELOCITY_SDS",
    "VelocityOutside",
    "check_initial_gap",
    "CLASS_SPLIT",
    "PROPERTY_DISAGREEMENTS",
    "check_regime",
    "selection_edge",
    "at_the_edge",
    "check_regime_as_registered",
    "class_split",
    "learned_weaker_class",
    "weaker_class",
    "check_stage_two_switch",
    "mechanism_regime",
]
