"""Closed forms of the dropped terms' variances: derived by the moment engine (symbolic
residuals), equal to the pattern sums of theory.stage1.moments, and the leading
noise-score form where it holds (and where it stops holding)."""

from __future__ import annotations

import math

import pytest
import sympy as sp

from theory.foundation.data_model import DataModel, Training
from theory.stage1 import variance as vv
from theory.stage1.moments import direction_error
from theory.stage1.setting import numeric_setting
from theory.stage1.velocity import Category

GAPS = {False: {"R": 1.0, "I": -1.0}, True: {"W-": 1.0, "R": -1.0}}


def test_closed_forms_are_derived_by_the_moment_engine():
    assert vv.closed_form_residuals() == [0, 0, 0]


def test_a_wrong_closed_form_leaves_a_residual():
    """Without the entries' kurtosis term (Gaussian-entry rule for uniform W0), or without
    the correlation of eps_D with g_eps, the residual does not vanish."""
    derived = vv.derived_variances()
    typed = vv.closed_form_expressions()
    s = vv.SYMBOLS
    no_kurtosis = typed["w0_fluctuation"].subs(s["chi"], 0)
    assert sp.expand(derived["w0_fluctuation"] - no_kurtosis) != 0
    no_correlation = typed["noise_cross"].subs(s["rho"], 0)
    assert sp.expand(derived["noise_cross"] - no_correlation) != 0


@pytest.mark.parametrize(
    "model, init, noisy",
    [
        (DataModel(d=300, n=10, T=4, mu_norm=8.0), "uniform", False),
        (DataModel(d=2000, n=20, T=8, mu_norm=20.0), "gaussian", True),
    ],
)
def test_pattern_sums_equal_the_closed_forms(model, init, noisy):
    setting = numeric_setting(model, Training(init=init))
    category = Category(1, -1 if noisy else 1)
    closed = vv.closed_form_variances(setting, GAPS[noisy], category)
    exact = direction_error(setting, GAPS[noisy], noisy).pieces
    for piece in ("noise_cross", "signal_cross", "w0_fluctuation"):
        assert exact[piece] == pytest.approx(math.sqrt(closed[piece]), rel=1e-9)


def test_leading_noise_score_form_holds_in_the_harmful_preset_and_not_beyond():
    """The own-sample leading form is within 3 % of the exact noise-score piece at
    (d, ||mu||) = (5000, 5), where sigma^2 d >> ||mu||^2 and d >> nT; at (1000, 100)
    (||mu||^2 / (sigma^2 d) = 10) the scores' effect on the signal term dominates and the
    leading form misses most of the piece (clean gap R - I)."""
    noisy = False
    for (dimension, mu), within in (((5000, 5.0), True), ((1000, 100.0), False)):
        setting = numeric_setting(DataModel(d=dimension, n=20, T=8, mu_norm=mu), Training())
        category = Category(1, -1 if noisy else 1)
        leading = math.sqrt(vv.closed_form_variances(setting, GAPS[noisy], category)["noise_score"])
        exact = direction_error(setting, GAPS[noisy], noisy).pieces["noise_score"]
        assert (abs(leading / exact - 1) < 0.03) is within
