r"""A root of a function of one variable in a bracket, by Brent's method.

:func:`brent_root` finds :math:`x` with :math:`f(x) = 0` in :math:`[a, b]`, given
:math:`f(a)\,f(b) \le 0`, to within :math:`\mathrm{xtol} + \mathrm{rtol}\,|x|`. Brent's
method (R. P. Brent, *Algorithms for Minimization without Derivatives*, 1973, ch. 4)
keeps a bracket :math:`[b, c]` around the root with :math:`|f(b)| \le |f(c)|` and, at
each step, tries inverse quadratic interpolation through the last three points (the
secant through two when only two differ); it takes the interpolated point only when it
falls well inside the bracket and the steps keep shrinking (less than half the step
before last), and bisects otherwise. It therefore converges superlinearly on smooth
functions and never needs more than about :math:`\log_2((b - a)/\mathrm{tol})^2`
evaluations. Plain Python: the predictions call it on scalar functions, and importing a
numerical library for it would cost more than the root itself.
"""

from __future__ import annotations

import math
from collections.abc import Callable

#: Machine epsilon of a float.
EPSILON = 2.0**-52


def brent_root(
    function: Callable[[float], float],
    a: float,
    b: float,
    xtol: float = 2e-12,
    rtol: float = 4 * EPSILON,
    max_evaluations: int = 500,
) -> float:
    r"""The root of ``function`` in ``[a, b]`` to :math:`\mathrm{xtol} +
    \mathrm{rtol}\,|x|` (module docstring); :class:`ValueError` if
    :math:`f(a)\,f(b) > 0` or the evaluations run out."""
    fa, fb = function(a), function(b)
    if fa == 0.0:
        return a
    if fb == 0.0:
        return b
    if (fa > 0) == (fb > 0):
        raise ValueError(f"f({a}) = {fa} and f({b}) = {fb} do not bracket a root")
    c, fc = a, fa
    step = before = b - a
    for _ in range(max_evaluations):
        if (fb > 0) == (fc > 0):  # the root lies between a and b: c takes a's place
            c, fc = a, fa
            step = before = b - a
        if abs(fc) < abs(fb):  # b is the best estimate
            a, b, c = b, c, b
            fa, fb, fc = fb, fc, fb
        tol = 2 * EPSILON * abs(b) + 0.5 * (xtol + rtol * abs(b))
        half = 0.5 * (c - b)
        if abs(half) <= tol or fb == 0.0:
            return b
        if abs(before) >= tol and abs(fa) > abs(fb):
            p, q = _interpolation(a, b, c, fa, fb, fc, half)
            if 2 * p < min(3 * half * q - abs(tol * q), abs(before * q)):
                before, step = step, p / q
            else:
                before = step = half
        else:
            before = step = half
        a, fa = b, fb
        b += step if abs(step) > tol else math.copysign(tol, half)
        fb = function(b)
    raise ValueError(f"no root to {xtol:g} in {max_evaluations} evaluations")


def _interpolation(
    a: float, b: float, c: float, fa: float, fb: float, fc: float, half: float
) -> tuple[float, float]:
    r"""The interpolated step from b as :math:`p/q` with :math:`p \ge 0` (its sign in
    q): the secant through (a, fa), (b, fb) when a = c, else inverse quadratic
    interpolation through the three points."""
    s = fb / fa
    if a == c:
        p, q = 2 * half * s, 1 - s
    else:
        q, r = fa / fc, fb / fc
        p = s * (2 * half * q * (q - r) - (b - a) * (r - 1))
        q = (q - 1) * (r - 1) * (s - 1)
    return (p, -q) if p > 0 else (-p, q)
