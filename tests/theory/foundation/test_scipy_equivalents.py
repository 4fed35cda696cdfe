"""SciPy's quad, brentq and ndtr without SciPy (theory.foundation.scipy_equivalents): the
same numbers as SciPy bit for bit, over integrands, brackets and arguments that take every
branch (subdivision, extrapolation, each QUADPACK flag; interpolation and bisection; both
erf and erfc ranges, underflow, NaN)."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from theory.foundation import scipy_equivalents as equivalents
from theory.foundation.numerics import normal_cdf, normal_pdf


def _race_density(leads: dict[str, float], counts: dict[str, int], group: str):
    """The stage-1 argmax integrand (theory.stage1.predictions._argmax_probabilities)."""

    def density(u: float) -> float:
        value = counts[group] * normal_pdf(u)
        for other, count in counts.items():
            power = count - (1 if other == group else 0)
            if power:
                value *= normal_cdf(u + (leads[group] - leads[other])) ** power
        return value

    return density


def _integrands(rng: np.random.Generator):
    for _ in range(60):
        counts = {"R": 1, "W+": int(rng.integers(0, 3)), "W-": int(rng.integers(0, 3)), "I": 5}
        leads = {name: float(rng.normal() * rng.choice([0.1, 1.0, 5.0])) for name in counts}
        for group in counts:
            if counts[group]:
                yield _race_density(leads, counts, group), -12.0, 12.0, 200, 1.49e-8
    for _ in range(60):
        c, w = rng.uniform(-3, 3), rng.uniform(0.01, 3)
        a, b = sorted(rng.uniform(-10, 10, 2))
        for f in (
            lambda x, c=c, w=w: math.exp(-(((x - c) / w) ** 2)),
            lambda x, c=c: abs(x - c) ** 0.5,
            lambda x, w=w: math.sin(20 * x / w) * x,
            lambda x, c=c: math.log(abs(x - c) + 1e-12),
            lambda x, c=c: 1.0 if x > c else 0.0,
        ):
            for limit, tolerance in ((50, 1.49e-8), (5, 1e-12), (1, 1e-3), (100, 1e-14)):
                yield f, a, b, limit, tolerance


def test_qags_is_scipys_qagse_bit_for_bit():
    from scipy.integrate import _quadpack

    flags = set()
    for f, a, b, limit, tolerance in _integrands(np.random.default_rng(0)):
        theirs = _quadpack._qagse(f, a, b, (), 0, tolerance, tolerance, limit)
        ours = equivalents.qags(f, a, b, tolerance, tolerance, limit)
        assert (ours.value, ours.error, ours.ier) == tuple(theirs)
        flags.add(ours.ier)
    assert flags >= {0, 1, 2, 3}  # reliable, subdivision limit, roundoff, bad behaviour


def test_quad_flips_warns_and_rejects_as_scipy_does():
    from scipy import integrate

    assert equivalents.quad(math.sin, 3.0, 0.0) == integrate.quad(math.sin, 3.0, 0.0)[0]
    with pytest.warns(equivalents.QuadratureWarning):
        equivalents.quad(lambda x: abs(x) ** 0.5, -1.0, 1.0, 1e-14, 1e-14, limit=3)
    with pytest.raises(ValueError):
        equivalents.quad(math.sin, 0.0, 1.0, limit=0)


def _outcome(solver, f, low, high, xtol, rtol):
    """The root, or the kind of error (no bracket; no convergence in 100 iterations)."""
    try:
        return solver(f, low, high, xtol=xtol, rtol=rtol)
    except (ValueError, RuntimeError) as error:
        return type(error).__name__


def test_brentq_is_scipys_brentq_bit_for_bit():
    from scipy import optimize

    rng = np.random.default_rng(1)
    for trial in range(400):
        c, s = rng.uniform(-5, 5), rng.uniform(0.1, 10)
        f = (
            lambda z, c=c, s=s: math.tanh(s * (z - c)),
            lambda z, c=c: math.exp(z) - math.exp(c),
            lambda z, c=c, s=s: s * (z - c) + 0.3 * math.sin(5 * z) * (z - c),
            lambda z, c=c: (z - c) ** 3,
        )[trial % 4]
        low, high = c - rng.uniform(0.01, 10), c + rng.uniform(0.01, 10)
        for xtol, rtol in ((2e-12, 4 * np.finfo(float).eps), (1e-12, 1e-10), (2e-3, 1e-6)):
            expected = _outcome(optimize.brentq, f, low, high, xtol, rtol)
            assert _outcome(equivalents.brentq, f, low, high, xtol, rtol) == expected
    with pytest.raises(ValueError):
        equivalents.brentq(lambda z: z * z + 1, -1.0, 1.0)
    with pytest.raises(RuntimeError):
        equivalents.brentq(math.sin, -1.0, 2.0, maxiter=2)


def test_ndtr_is_scipys_ndtr_bit_for_bit():
    from scipy import special

    rng = np.random.default_rng(2)
    edges = [0.0, -0.0, math.sqrt(2), -math.sqrt(2), 8 * math.sqrt(2), -37.5, -38.6, -40.0]
    x = np.concatenate(
        [rng.normal(size=200_000) * scale for scale in (0.5, 3.0, 12.0, 40.0)]
        + [np.array(edges + [40.0, math.inf, -math.inf, math.nan, 1e-300])]
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = special.ndtr(x)
    np.testing.assert_array_equal(equivalents.ndtr(x), expected)
