r"""The valid space: configurations satisfying A1-A8, solved for rather than filtered.

A configuration is split into a :class:`Shape` (everything but the dimension and the
signal: :math:`n, T`, the flips :math:`k = n\eta`, :math:`\rho`, :math:`s_\nu`,
:math:`\sigma_\epsilon` and the initial preconditioner :math:`\kappa_0`) and two numbers,
:math:`n\,\mathrm{SNR}^2` and :math:`d`, from which :math:`\|\mu\| =
\sigma_\epsilon\sqrt{n\,\mathrm{SNR}^2\, d/n}`. At fixed :math:`n\,\mathrm{SNR}^2` the
shape fixes the stage-1 overfitting threshold :math:`\theta` (the overfitting ratio is
proportional to :math:`1/(n\,\mathrm{SNR}^2)`), and every assumption that involves
:math:`d` becomes a lower bound on :math:`d`:

* A1: :math:`d \ge C_1 n \log((nT)^2/\delta)`;
* A7: :math:`\|\mu\| \ge \sqrt2\, C_7\sigma_\epsilon\sqrt{2\log(nT/\delta)}/\rho`, i.e.
  :math:`d \ge n\|\mu\|_{\min}^2/(\sigma_\epsilon^2\, n\mathrm{SNR}^2)`
  (:math:`\gamma_0/\|\nu\| = \|\mu\|/\sqrt2` whatever :math:`s_\nu`);
* A2: the test signal-to-noise :math:`z(d) \ge C_2`, increasing in :math:`d`
  (:math:`z \propto \sqrt d` at fixed :math:`n\,\mathrm{SNR}^2`), solved by bisection.

The predicted regime is then a choice of side: not overfitting for
:math:`n\,\mathrm{SNR}^2 \ge \theta`; below it, benign where the predicted argmax test
accuracy reaches ``benign_test_accuracy`` (0.95), which, increasing in :math:`d`, happens
above the edge :func:`benign_edge`. The other assumptions involve no :math:`d`: A3
(:math:`n \ge C_3\log(1/\delta)`), A4 (:math:`\eta \le 1/C_4`), A6 (:math:`\kappa_0 \le
C_6`), A8 (:math:`1/C_8 \le s_\nu \le C_8`) bound the shape, and A5 bounds the step
(:func:`theory.foundation.stability.max_stable_step`). Every bound is taken with the factor
:data:`MARGIN`, so that rounding :math:`d` to an integer keeps it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from scipy import optimize

from theory.foundation.assumptions import ASSUMPTION_CONSTANTS, assess, symbol_values_for
from theory.foundation.data_model import noisy_count
from theory.foundation.stability import max_stable_step
from theory.stage1.predictions import (
    PREDICTION_CONSTANTS,
    argmax_test_accuracy,
    overfitting_threshold,
    rate,
)
from verify.sim.config import RunConfig

#: Failure probability :math:`\delta` in the assumptions.
DELTA = 0.05
#: Factor above every lower bound (and below every upper bound) a construction keeps.
MARGIN = 1.02
#: How far past its first bound a bisection in :math:`\log d` looks (e^60).
LOG_SPAN = 60.0


def assumption_status(config: RunConfig, delta: float = DELTA) -> dict[str, bool]:
    """Which of A1-A8 hold for ``config``."""
    values = symbol_values_for(config.model, config.training, delta)
    return {status.key: status.holds for status in assess(values)}


def step_bound(config: RunConfig) -> float:
    r"""The largest step A5 allows, :math:`\alpha_{\max}` of :mod:`theory.foundation.stability`."""
    return max_stable_step(config.model, config.training)


def stage1_z(config: RunConfig) -> float:
    """The stage-1 test signal-to-noise :math:`z` (A2's left-hand side)."""
    return rate(config.model, config.training, "test_signal_to_noise")


def predicted_accuracy(config: RunConfig) -> float:
    """The argmax-limit test accuracy
    :func:`theory.stage1.predictions.stage1_predictions` reports."""
    return argmax_test_accuracy(config.model, stage1_z(config))


@dataclass(frozen=True)
class Shape:
    r"""A configuration without its dimension and signal (see the module docstring).
    ``flips`` labels are flipped (:math:`\eta = k/n`, so :math:`\mathrm{round}(n\eta) = k`);
    ``kappa0`` sets the Gaussian initialisation scale :math:`s = \sqrt{\kappa_0/d}`."""

    n: int
    T: int
    flips: int
    rho: float
    nu_scale: float = 1.0
    sigma_eps: float = 1.0
    kappa0: float = 1.0 / 3.0

    @property
    def eta(self) -> float:
        return self.flips / self.n

    def config(self, snr_sq: float, d: float, **changes: object) -> RunConfig:
        r"""The configuration with :math:`n\,\mathrm{SNR}^2` = ``snr_sq`` at dimension ``d``
        (rounded), on the d-free engine (Gaussian :math:`W_0`, no finite test set)."""
        d = max(int(round(d)), 2)
        mu = self.sigma_eps * math.sqrt(snr_sq * d / self.n)
        values: dict[str, object] = {
            "d": d,
            "n": self.n,
            "T": self.T,
            "rho": self.rho,
            "eta": self.eta,
            "nu_scale": self.nu_scale,
            "sigma_eps": self.sigma_eps,
            "mu_norm": mu,
            "init": "gaussian",
            "init_scale": math.sqrt(self.kappa0 / d),
            "engine": "dfree",
            "test_size": 0,
            "population": "final",
        }
        return RunConfig.build(**{**values, **changes})


def stage1_threshold(shape: Shape) -> float:
    r"""The :math:`n\,\mathrm{SNR}^2` at which the overfitting ratio is 1 (independent of
    :math:`d`: :func:`theory.stage1.predictions.overfitting_threshold`)."""
    probe = shape.config(1.0, 10_000)
    return overfitting_threshold(probe.model, probe.training)


def _first_dimension(shape: Shape, snr_sq: float, increasing, level: float, low: float) -> float:
    r"""The least :math:`d \ge` ``low`` with ``increasing(config) >= level`` (bisection in
    :math:`\log d`; ``low`` itself when it already holds)."""

    def gap(log_d: float) -> float:
        return increasing(shape.config(snr_sq, math.exp(log_d))) - level

    if gap(math.log(low)) >= 0:
        return low
    return math.exp(optimize.brentq(gap, math.log(low), math.log(low) + LOG_SPAN, xtol=1e-6))


def dimension_floor(shape: Shape, snr_sq: float) -> float:
    r"""The least :math:`d` at which A1, A2 and A7 hold with :data:`MARGIN` at
    :math:`n\,\mathrm{SNR}^2` = ``snr_sq`` (see the module docstring)."""
    n, T, c = shape.n, shape.T, ASSUMPTION_CONSTANTS
    a1 = c["C_1"] * n * math.log((n * T) ** 2 / DELTA)
    mu_a7 = c["C_7"] * math.sqrt(2.0) * shape.sigma_eps * math.sqrt(2 * math.log(n * T / DELTA))
    a7 = n * (mu_a7 / shape.rho) ** 2 / (shape.sigma_eps**2 * snr_sq)
    low = MARGIN * max(a1, a7)
    return MARGIN * _first_dimension(shape, snr_sq, stage1_z, MARGIN * c["C_2"], low)


def benign_edge(shape: Shape, snr_sq: float, floor: float) -> float | None:
    r"""The :math:`d` above which the predicted argmax test accuracy reaches
    ``benign_test_accuracy`` (the benign/harmful edge at this :math:`n\,\mathrm{SNR}^2`),
    or ``None`` when it already does at ``floor`` (no valid harmful side)."""
    level = PREDICTION_CONSTANTS["benign_test_accuracy"]
    if predicted_accuracy(shape.config(snr_sq, floor)) >= level:
        return None
    return _first_dimension(shape, snr_sq, predicted_accuracy, level, floor)


def class_counts(n: int, eta: float) -> dict[int, tuple[int, int]]:
    r"""Per class :math:`y^*`: (samples, flipped samples) under exact flips: class +1 has
    :math:`\lceil n/2\rceil` samples and :math:`\lceil k/2\rceil` of the
    :math:`k = \mathrm{round}(n\eta)` flips (:func:`verify.sim.data.noisy_mask`)."""
    flips = noisy_count(n, eta)
    positives, from_positive = (n + 1) // 2, (flips + 1) // 2
    return {1: (positives, from_positive), -1: (n - positives, flips - from_positive)}


def classes_balanced(config: RunConfig) -> bool:
    """Both classes have as many samples and as many flipped labels."""
    counts = class_counts(config.model.n, config.model.eta)
    return counts[1] == counts[-1]


__all__ = [
    "DELTA",
    "MARGIN",
    "Shape",
    "assumption_status",
    "benign_edge",
    "class_counts",
    "classes_balanced",
    "dimension_floor",
    "predicted_accuracy",
    "stage1_threshold",
    "step_bound",
    "stage1_z",
]
