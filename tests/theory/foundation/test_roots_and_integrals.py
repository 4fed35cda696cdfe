"""The predictions' own root finder and quadrature against closed forms and mpmath."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

from theory.foundation import integrate
from theory.foundation.integrate import gauss_kronrod, panel
from theory.foundation.numerics import normal_cdf, normal_cdf_array, normal_pdf
from theory.foundation.roots import brent_root


class Counted:
    """A function that counts its evaluations."""

    def __init__(self, function):
        self.function, self.calls = function, 0

    def __call__(self, x: float) -> float:
        self.calls += 1
        return self.function(x)


@pytest.mark.parametrize(
    ("function", "a", "b", "root", "most"),
    [
        (lambda x: x**3 - 2.0, 0.0, 2.0, 2.0 ** (1 / 3), 10),
        (lambda x: math.cos(x) - x, 0.0, 1.0, 0.7390851332151607, 10),
        (lambda x: math.exp(x) - 10.0, -5.0, 50.0, math.log(10.0), 18),
        (lambda x: math.tanh(x - 0.3), -40.0, 7.0, 0.3, 14),
    ],
)
def test_brent_root_finds_the_root_to_its_tolerance_in_few_evaluations(function, a, b, root, most):
    """Bisection alone would need log2((b - a) / 1e-12) = 41 to 46 evaluations; the
    interpolation steps must bring that well down."""
    counted = Counted(function)
    found = brent_root(counted, a, b, xtol=1e-12)
    assert abs(found - root) <= 1e-12 + 4 * 2.0**-52 * abs(root)
    assert counted.calls <= most


def test_brent_root_meets_a_loose_tolerance_without_more_work():
    loose, tight = Counted(lambda x: x**3 - 2.0), Counted(lambda x: x**3 - 2.0)
    assert abs(brent_root(loose, 0.0, 2.0, xtol=2e-3) - 2.0 ** (1 / 3)) <= 2e-3
    brent_root(tight, 0.0, 2.0, xtol=1e-12)
    assert loose.calls < tight.calls


def test_brent_root_returns_an_end_that_is_a_root_and_refuses_no_bracket():
    assert brent_root(lambda x: x - 1.0, 1.0, 3.0) == 1.0
    with pytest.raises(ValueError, match="do not bracket"):
        brent_root(lambda x: x * x + 1.0, -1.0, 1.0)


def test_the_gauss_part_is_the_seven_point_gauss_legendre_rule():
    nodes, weights = np.polynomial.legendre.leggauss(7)
    upper = nodes >= 0  # the rule is symmetric; its non-negative nodes, largest first
    order = np.argsort(-nodes[upper])
    gauss_nodes = [integrate.KRONROD_NODES[i] for i in (1, 3, 5, 7)]
    assert np.allclose(nodes[upper][order], gauss_nodes, rtol=0, atol=1e-15)
    assert np.allclose(weights[upper][order], integrate.GAUSS_WEIGHTS, rtol=1e-14, atol=0)
    assert math.isclose(2 * sum(integrate.KRONROD_WEIGHTS[:7]) + integrate.KRONROD_WEIGHTS[7], 2.0)


@pytest.mark.parametrize("degree", range(0, 25))
def test_the_rules_are_exact_to_their_degrees(degree):
    """Kronrod 15 is exact up to degree 22 and Gauss 7 up to 13: their difference (the
    error estimate) vanishes up to degree 13 and not at 14; Kronrod's value is exact up
    to 22 and not at 24."""
    value, difference = panel(lambda x: x**degree, -1.0, 1.0)
    exact = 0.0 if degree % 2 else 2.0 / (degree + 1)
    assert (difference <= 1e-15) == (degree <= 13 or degree % 2 == 1)
    assert (abs(value - exact) <= 1e-15) == (degree <= 22 or degree % 2 == 1)


def argmax_density(leads: dict[str, float], counts: dict[str, int], g: str):
    """The argmax-selection integrand of the stage-1 predictions for group g."""

    def density(u: float) -> float:
        value = counts[g] * normal_pdf(u)
        for h, other in counts.items():
            power = other - (1 if h == g else 0)
            if power:
                value *= normal_cdf(u + (leads[g] - leads[h])) ** power
        return value

    return density


@pytest.mark.parametrize(
    ("function", "a", "b", "exact"),
    [
        (
            lambda x: math.exp(-x * x),
            -12.0,
            12.0,
            mpmath.quad(lambda x: mpmath.exp(-x * x), [-12, 12]),
        ),
        (lambda x: 1.0 / (1.0 + 25 * x * x), -1.0, 1.0, 2 * mpmath.atan(5) / 5),
        (lambda x: math.sqrt(x), 0.0, 1.0, mpmath.mpf(2) / 3),
    ],
)
def test_gauss_kronrod_meets_its_tolerance(function, a, b, exact):
    assert abs(gauss_kronrod(function, a, b) - float(exact)) <= 1e-12 * abs(float(exact))


def exact_argmax_probability(leads: dict[str, float], counts: dict[str, int], g: str) -> float:
    """The same integral by mpmath at 30 digits."""

    def density(u):
        product = mpmath.fprod(
            mpmath.ncdf(u + leads[g] - leads[h]) ** (c - (h == g)) for h, c in counts.items()
        )
        return counts[g] * mpmath.npdf(u) * product

    with mpmath.workdps(30):
        return float(mpmath.quad(density, [-12, -3, 0, 3, 12]))


@pytest.mark.parametrize("scale", [0.0, 0.3, 2.0, 9.0])
def test_gauss_kronrod_on_the_argmax_selection_integrand_against_mpmath(scale):
    counts = {"R": 1, "W+": 1, "W-": 1, "I": 5}
    leads = {"R": 1.0 * scale, "W+": 0.5 * scale, "W-": -0.5 * scale, "I": 0.0}
    for g in counts:
        found = gauss_kronrod(argmax_density(leads, counts, g), -12.0, 12.0)
        assert abs(found - exact_argmax_probability(leads, counts, g)) <= 1e-14


def test_normal_cdf_array_is_phi_element_by_element():
    x = np.linspace(-37.0, 37.0, 161).reshape(7, 23)  # Phi(-37) is still a normal float
    values = normal_cdf_array(x)
    assert values.shape == x.shape
    expected = np.array([float(mpmath.ncdf(value)) for value in x.ravel()])
    # Phi's relative condition at x is about x^2 + 1: the rounding of x / sqrt(2) is
    # amplified by it (SciPy's ndtr has the same)
    tolerance = 4 * 2.0**-52 * (1 + x.ravel() ** 2) * expected
    assert np.all(np.abs(values.ravel() - expected) <= tolerance)
