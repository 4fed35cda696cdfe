r"""The quadrature :math:`g(x) = 2x + 2\sinh(x - \log T)`, its inverse, and gap trajectories.

If a gap obeys :math:`\dot x = c / g'(x)` with :math:`g'(x) = 2 + 2\cosh(x - \log T)`
(the rate :math:`c` damped by the saturation factor of the selected token, see
:mod:`theory.softmax_cosh`), then :math:`\frac{d}{d\tau} g(x(\tau)) = c`, so

.. math:: x(\tau) = g^{-1}\bigl(g(x_0) + c\tau\bigr),\qquad
          \tau(x_0 \to x_1) = \frac{g(x_1) - g(x_0)}{c} \sim \frac{e^{x_1}}{cT}.

:math:`g` is strictly increasing (:math:`g' \ge 4`) and odd about :math:`(\log T, 2\log T)`:
:math:`g(\log T + u) = 2\log T + k(u)` with :math:`k(u) = 2u + 2\sinh u`. Inversion solves
:math:`k(u) = |v|`, :math:`v = y - 2\log T`, for :math:`u \ge 0` (k convex there, so Newton
from :math:`u_0 = \operatorname{asinh}(|v|/2) \ge u` converges monotonically; a bracket
:math:`[\operatorname{asinh}(|v|/4), \operatorname{asinh}(|v|/2)]` guards it), then
:math:`x = \log T + \operatorname{sign}(v) u`.

The form of g is from the authors' rebuttal (KNOWN); the numerics and the exact
statements here are this package's own reconstruction (the paper's exact statement is not
available).

Precision. ``mpmath`` entry points take ``dps`` and work inside ``mpmath.workdps`` (the
global precision is never changed). The float path is backward stable: near :math:`x = 0`
its absolute error is bounded by the conditioning floor of :func:`g_inverse_float_floor`,
:math:`\approx \epsilon\,(|g(x)|/g'(x) + \log T)` (``epsilon`` = 2.2e-16), which is above
:math:`10^{-12}|x|` only for :math:`|x| \lesssim 10^{-4}`.
"""

from __future__ import annotations

import math
from typing import Any

import mpmath
import numpy as np
import sympy as sp

from theory.foundation.numerics import LOG_FLOAT64_MAX, exp_clipped, finite_array, signed_log_add
from theory.foundation.proof import DERIVED, KNOWN, Derivation
from theory.foundation.symbols import T as T_symbol
from theory.foundation.symbols import c as c_symbol
from theory.foundation.symbols import tau as tau_symbol
from theory.foundation.symbols import u as u_symbol
from theory.foundation.symbols import x as x_symbol
from theory.foundation.symbols import x0 as x0_symbol
from theory.foundation.validation import InvalidParameter, Real

FLOAT64_EPSILON = float(np.finfo(np.float64).eps)
_LOG_FORM_THRESHOLD = 30.0  # |x - log T| beyond which g is evaluated in log form
_LOG_DOMAIN_THRESHOLD = 700.0  # log|v| beyond which k(u) = |v| is solved in log domain
_MAX_ITERATIONS = 200


# --------------------------------------------------------------------------- symbolic


def g_expression(gap: sp.Expr = x_symbol, T: sp.Expr = T_symbol) -> sp.Expr:
    r""":math:`g(x) = 2x + 2\sinh(x - \log T)` (KNOWN form, from the authors' rebuttal)."""
    return 2 * gap + 2 * sp.sinh(gap - sp.log(T))


def g_prime_expression(gap: sp.Expr = x_symbol, T: sp.Expr = T_symbol) -> sp.Expr:
    r""":math:`g'(x) = 2 + 2\cosh(x - \log T) \ge 4`."""
    return 2 + 2 * sp.cosh(gap - sp.log(T))


def g_second_expression(gap: sp.Expr = x_symbol, T: sp.Expr = T_symbol) -> sp.Expr:
    r""":math:`g''(x) = 2\sinh(x - \log T)`."""
    return 2 * sp.sinh(gap - sp.log(T))


def g_derivative_residuals() -> list[sp.Expr]:
    r"""Proof that SymPy's :math:`\frac{d}{dx} g` and :math:`\frac{d^2}{dx^2} g` are
    :func:`g_prime_expression` and :func:`g_second_expression`; returns 2 residuals (0)."""
    g = g_expression()
    return [
        sp.simplify(sp.diff(g, x_symbol) - g_prime_expression()),
        sp.simplify(sp.diff(g, x_symbol, 2) - g_second_expression()),
    ]


def quadrature_flow_residual() -> sp.Expr:
    r"""Proof of the quadrature: if :math:`\dot x = c / g'(x)` then
    :math:`\frac{d}{d\tau} g(x(\tau)) = g'(x)\,\dot x = c`, so
    :math:`g(x(\tau)) = g(x_0) + c\tau`. Returns the simplified residual
    :math:`\frac{d}{d\tau} g(x(\tau)) - c` after substituting the ODE (0)."""
    trajectory = sp.Function("x")(tau_symbol)
    derivative = sp.diff(g_expression(trajectory), tau_symbol)
    derivative = derivative.subs(
        sp.Derivative(trajectory, tau_symbol), c_symbol / g_prime_expression(trajectory)
    )
    return sp.simplify(derivative - c_symbol)


def quadrature_solution_residual() -> sp.Expr:
    r"""Proof that :math:`x(\tau) = g^{-1}(g(x_0) + c\tau)` solves the ODE, written
    implicitly: differentiating :math:`g(x(\tau)) = g(x_0) + c\tau` gives
    :math:`\dot x = c/g'(x)`. Returns :math:`\dot x - c/g'(x)` from SymPy's implicit
    differentiation (0)."""
    trajectory = sp.Function("x")(tau_symbol)
    implicit = sp.Eq(g_expression(trajectory), g_expression(x0_symbol) + c_symbol * tau_symbol)
    derivative = sp.diff(implicit.lhs - implicit.rhs, tau_symbol)
    velocity = sp.solve(derivative, sp.Derivative(trajectory, tau_symbol))[0]
    return sp.simplify(velocity - c_symbol / g_prime_expression(trajectory))


def g_symmetry_residuals() -> list[sp.Expr]:
    r"""Proof of the symmetries of g: (i) :math:`g(\log T + u) = 2\log T + 2u + 2\sinh u`,
    (ii) :math:`g(2\log T - x) = 4\log T - g(x)` (odd about :math:`(\log T, 2\log T)`),
    (iii) :math:`g_T(-x) = -g_{1/T}(x)` (the negative branch is the positive branch of
    :math:`g_{1/T}`). Returns 3 residuals (0)."""
    T = sp.Symbol("T", positive=True)
    log_T = sp.log(T)
    shifted = g_expression(log_T + u_symbol, T) - (2 * log_T + 2 * u_symbol + 2 * sp.sinh(u_symbol))
    reflected = g_expression(2 * log_T - x_symbol, T) - (4 * log_T - g_expression(x_symbol, T))
    mirrored = g_expression(-x_symbol, T) + g_expression(x_symbol, 1 / T)

    def _vanish(expression: sp.Expr) -> sp.Expr:
        expression = sp.expand(expression.rewrite(sp.exp), power_exp=True)
        return sp.simplify(sp.powsimp(sp.expand_log(expression, force=True)))

    return [_vanish(shifted), _vanish(reflected), _vanish(mirrored)]


def time_to_reach_gap_expression() -> sp.Expr:
    r""":math:`\tau(x_0 \to x) = (g(x) - g(x_0))/c`."""
    return (g_expression(x_symbol) - g_expression(x0_symbol)) / c_symbol


def time_to_reach_gap_limit() -> sp.Expr:
    r"""The headline scaling: :math:`\lim_{x\to\infty} \tau(x_0 \to x) / (e^x/(cT)) = 1`,
    i.e. reaching gap x takes time :math:`\sim e^x/(cT)`. Computed by SymPy (returns 1)."""
    T = sp.Symbol("T", positive=True)
    c = sp.Symbol("c", positive=True)
    time = (g_expression(x_symbol, T) - g_expression(x0_symbol, T)) / c
    ratio = (time / (sp.exp(x_symbol) / (c * T))).rewrite(sp.exp)
    return sp.limit(sp.expand(ratio), x_symbol, sp.oo)


# --------------------------------------------------------------------------- numeric g


def _validated_T(T: Any) -> float:
    return Real(0.0).check("T", T)


def signed_log_g(gap: np.ndarray | float, T: float) -> tuple[np.ndarray, np.ndarray]:
    r"""Sign and log-magnitude of :math:`g(x)`, overflow-free for every finite x:
    with :math:`u = x - \log T`,
    :math:`\log g = u + \operatorname{log1p}(2x e^{-u} - e^{-2u})` for :math:`u > 30`,
    :math:`\log(-g) = -u + \operatorname{log1p}(-e^{2u} - 2x e^{u})` for :math:`u < -30`,
    the direct :math:`2x + 2\sinh u` otherwise. Returns ``(sign, log|g|)``."""
    T = _validated_T(T)
    gap = finite_array("x", gap)
    shifted = gap - math.log(T)
    upper = shifted > _LOG_FORM_THRESHOLD
    lower = shifted < -_LOG_FORM_THRESHOLD
    middle_shift = np.clip(shifted, -_LOG_FORM_THRESHOLD, _LOG_FORM_THRESHOLD)
    direct = 2.0 * gap + 2.0 * np.sinh(middle_shift)
    decay_up = np.exp(-np.abs(np.where(upper, shifted, _LOG_FORM_THRESHOLD)))
    decay_down = np.exp(-np.abs(np.where(lower, shifted, -_LOG_FORM_THRESHOLD)))
    log_upper = shifted + np.log1p(2.0 * gap * decay_up - decay_up**2)
    log_lower = -shifted + np.log1p(-(decay_down**2) - 2.0 * gap * decay_down)
    direct_magnitude = np.abs(np.where(upper | lower, 1.0, direct))
    with np.errstate(divide="ignore"):
        log_direct = np.log(direct_magnitude)
    sign = np.where(upper, 1.0, np.where(lower, -1.0, np.sign(direct)))
    log_magnitude = np.where(upper, log_upper, np.where(lower, log_lower, log_direct))
    return sign, log_magnitude


def g(gap: np.ndarray | float, T: float) -> np.ndarray:
    r"""Float :math:`g(x) = 2x + 2\sinh(x - \log T)`; :math:`\pm\infty` (without a warning)
    only where :math:`|g|` exceeds the float64 range (:math:`|x - \log T| \gtrsim 709.8`)."""
    T = _validated_T(T)
    gap = finite_array("x", gap)
    shifted = gap - math.log(T)
    sign, log_magnitude = signed_log_g(gap, T)
    in_log_form = np.abs(shifted) > _LOG_FORM_THRESHOLD
    direct = 2.0 * gap + 2.0 * np.sinh(np.clip(shifted, -_LOG_FORM_THRESHOLD, _LOG_FORM_THRESHOLD))
    return np.where(in_log_form, sign * exp_clipped(log_magnitude), direct)


def log_g(gap: np.ndarray | float, T: float) -> np.ndarray:
    r""":math:`\log g(x)` for x with :math:`g(x) > 0` (i.e. x above the root
    :func:`g_root`), overflow-free for any such x: for :math:`x - \log T > 30`,
    :math:`\log g = x - \log T + \operatorname{log1p}(2x e^{-(x - \log T)}
    - e^{-2(x - \log T)})`. Raises :class:`~theory.foundation.validation.InvalidParameter` where
    :math:`g(x) \le 0`."""
    sign, log_magnitude = signed_log_g(gap, T)
    if np.any(sign <= 0.0):
        raise InvalidParameter("x", gap, f"gaps above g_root(T) = {g_root(T):.6g}, where g(x) > 0")
    return log_magnitude


def g_prime(gap: np.ndarray | float, T: float) -> np.ndarray:
    r"""Float :math:`g'(x) = 2 + 2\cosh(x - \log T)`, ``inf`` (without a warning) only
    beyond the float64 range."""
    shifted = finite_array("x", gap) - math.log(_validated_T(T))
    in_range = np.abs(shifted) <= _LOG_DOMAIN_THRESHOLD
    direct = 2.0 + 2.0 * np.cosh(np.clip(shifted, -_LOG_DOMAIN_THRESHOLD, _LOG_DOMAIN_THRESHOLD))
    return np.where(in_range, direct, exp_clipped(log_g_prime(gap, T)))


def log_g_prime(gap: np.ndarray | float, T: float) -> np.ndarray:
    r""":math:`\log g'(x) = |u| + 2\operatorname{log1p}(e^{-|u|})`, :math:`u = x - \log T`."""
    shifted = finite_array("x", gap) - math.log(_validated_T(T))
    magnitude = np.abs(shifted)
    return magnitude + 2.0 * np.log1p(np.exp(-magnitude))


def g_mp(gap: Any, T: Any, dps: int | None = None) -> mpmath.mpf:
    r"""mpmath :math:`g(x) = 2x + 2\sinh(x - \log T)` at ``dps`` digits (default: the
    caller's ``mp.dps``); never overflows (mpmath exponents are unbounded). The returned mpf
    carries the working precision."""
    with mpmath.workdps(dps if dps is not None else mpmath.mp.dps):
        gap_mp = mpmath.mpf(gap)
        return 2 * gap_mp + 2 * mpmath.sinh(gap_mp - mpmath.log(mpmath.mpf(T)))


def g_prime_mp(gap: Any, T: Any, dps: int | None = None) -> mpmath.mpf:
    r"""mpmath :math:`g'(x) = 2 + 2\cosh(x - \log T)` at ``dps`` digits."""
    with mpmath.workdps(dps if dps is not None else mpmath.mp.dps):
        gap_mp = mpmath.mpf(gap)
        return 2 + 2 * mpmath.cosh(gap_mp - mpmath.log(mpmath.mpf(T)))


def g_root(T: float) -> float:
    r"""The unique root :math:`x^*` of g (:math:`g(x) > 0 \iff x > x^*`), in float."""
    return float(g_inverse(0.0, T))


# --------------------------------------------------------------------------- g inverse


def _solve_odd_part_direct(target: np.ndarray) -> np.ndarray:
    r"""Solve :math:`2u + 2\sinh u = V` for :math:`u \ge 0`, :math:`0 \le V \le e^{700}`,
    by bracketed Newton from the upper end of
    :math:`[\operatorname{asinh}(V/4), \operatorname{asinh}(V/2)]` (monotone, quadratic)."""
    low = np.arcsinh(target / 4.0)
    high = np.arcsinh(target / 2.0)
    current = high.copy()
    active = target > 0.0
    for _ in range(_MAX_ITERATIONS):
        if not np.any(active):
            break
        residual = 2.0 * current + 2.0 * np.sinh(current) - target
        high = np.where(active & (residual > 0.0), current, high)
        low = np.where(active & (residual < 0.0), current, low)
        slope = 2.0 + 2.0 * np.cosh(current)
        proposal = current - residual / slope
        outside = (proposal < low) | (proposal > high)
        proposal = np.where(outside, 0.5 * (low + high), proposal)
        step = np.abs(proposal - current)
        current = np.where(active, proposal, current)
        active = active & (step > 2.0 * FLOAT64_EPSILON * current) & (residual != 0.0)
    return np.where(target > 0.0, current, 0.0)


def _solve_odd_part_log(log_target: np.ndarray) -> np.ndarray:
    r"""Solve :math:`2u + 2\sinh u = e^{\ell}` for :math:`\ell > 700` by the contraction
    :math:`u \mapsto \ell + \operatorname{log1p}(-2u e^{-\ell}) - \operatorname{log1p}(-e^{-2u})`
    (Lipschitz constant :math:`< 3 e^{-\ell}`), started at :math:`u = \ell`."""
    current = log_target.copy()
    decay = np.exp(-log_target)
    for _ in range(3):
        current = log_target + np.log1p(-2.0 * current * decay) - np.log1p(-np.exp(-2.0 * current))
    return current


def _solve_odd_part(sign_v: np.ndarray, log_abs_v: np.ndarray, abs_v: np.ndarray) -> np.ndarray:
    in_log_domain = log_abs_v > _LOG_DOMAIN_THRESHOLD
    direct = _solve_odd_part_direct(np.where(in_log_domain, 0.0, abs_v))
    logged = _solve_odd_part_log(np.where(in_log_domain, log_abs_v, _LOG_DOMAIN_THRESHOLD + 1.0))
    magnitude = np.where(in_log_domain, logged, direct)
    return np.where(sign_v == 0.0, 0.0, magnitude)


def g_inverse_log(log_abs_y: np.ndarray | float, T: float, sign: Any = 1) -> np.ndarray:
    r"""Float :math:`g^{-1}(y)` for :math:`y = \mathrm{sign}\cdot e^{\ell}` given
    :math:`\ell = \log|y|` (vectorised; ``sign`` in {-1, 0, +1}, broadcast; :math:`\ell =
    -\infty` means y = 0). No overflow for any finite :math:`\ell`: for
    :math:`\ell \le 700`, :math:`v = y - 2\log T` is formed directly; beyond,
    :math:`\log|v| = \ell + \operatorname{log1p}(-\mathrm{sign}\cdot 2\log T\, e^{-\ell})`.
    Then :math:`x = \log T + \operatorname{sign}(v)\, k^{-1}(|v|)`,
    :math:`k(u) = 2u + 2\sinh u` (see the module docstring).

    Reconstruction (this package's own derivation; the paper's exact statement is not
    available)."""
    T = _validated_T(T)
    log_abs_y = np.asarray(log_abs_y, dtype=np.float64)
    if np.any(np.isnan(log_abs_y)) or np.any(np.isposinf(log_abs_y)):
        raise InvalidParameter("log_abs_y", log_abs_y, "finite values or -inf")
    sign = np.asarray(sign, dtype=np.float64)
    if not np.all(np.isin(sign, (-1.0, 0.0, 1.0))):
        raise InvalidParameter("sign", sign, "-1, 0 or +1")
    sign, log_abs_y = np.broadcast_arrays(sign, log_abs_y)
    log_T = math.log(T)
    sign = np.where(np.isneginf(log_abs_y), 0.0, sign)
    moderate = log_abs_y <= _LOG_DOMAIN_THRESHOLD
    y_moderate = sign * np.exp(np.minimum(log_abs_y, _LOG_DOMAIN_THRESHOLD))
    v_moderate = y_moderate - 2.0 * log_T
    abs_v_moderate = np.abs(v_moderate)
    with np.errstate(divide="ignore"):
        log_abs_v_moderate = np.log(abs_v_moderate)
    large_log = np.where(moderate, _LOG_DOMAIN_THRESHOLD + 1.0, log_abs_y)
    log_abs_v_large = large_log + np.log1p(-sign * 2.0 * log_T * np.exp(-large_log))
    sign_v = np.where(moderate, np.sign(v_moderate), sign)
    log_abs_v = np.where(moderate, log_abs_v_moderate, log_abs_v_large)
    magnitude = _solve_odd_part(sign_v, log_abs_v, np.where(moderate, abs_v_moderate, 0.0))
    result = log_T + sign_v * magnitude
    return result if result.ndim else result[()]


def _working_dps(value: mpmath.mpf, dps: int | None) -> int:
    if dps is not None:
        return int(dps)
    carried = math.ceil(max(int(value.bc), 1) * math.log10(2.0))
    return max(mpmath.mp.dps, carried) + 10


def _g_inverse_mp(value: mpmath.mpf, T: Any, dps: int | None) -> mpmath.mpf:
    with mpmath.workdps(_working_dps(value, dps)):
        log_T = mpmath.log(mpmath.mpf(T))
        shifted = mpmath.mpf(value) - 2 * log_T
        target = abs(shifted)
        if target == 0:
            return +log_T
        low, high = mpmath.asinh(target / 4), mpmath.asinh(target / 2)
        current = high
        tolerance = mpmath.ldexp(1, -mpmath.mp.prec + 4)
        for _ in range(_MAX_ITERATIONS + mpmath.mp.prec):
            residual = 2 * current + 2 * mpmath.sinh(current) - target
            if residual == 0:
                break
            if residual > 0:
                high = current
            else:
                low = current
            proposal = current - residual / (2 + 2 * mpmath.cosh(current))
            if proposal < low or proposal > high:
                proposal = (low + high) / 2
            converged = abs(proposal - current) <= tolerance * current
            current = proposal
            if converged:
                break
        return log_T + mpmath.sign(shifted) * current


def g_inverse(y: Any, T: float, dps: int | None = None) -> Any:
    r""":math:`g^{-1}(y)`, the unique real x with :math:`2x + 2\sinh(x - \log T) = y`.

    * float / int / ndarray ``y``: float64 path (vectorised), the same algorithm as
      :func:`g_inverse_log`; backward stable (see :func:`g_inverse_float_floor`).
    * ``mpmath.mpf`` ``y`` (may be astronomically large, e.g. :math:`g(10^4)`): Newton in
      mpmath at ``dps`` digits (default: the caller's ``mp.dps`` or the digits ``y`` carries,
      whichever is larger, plus 10 guard digits); returns an mpf carrying that precision.

    Reconstruction (this package's own derivation; the paper's exact statement is not
    available)."""
    T = _validated_T(T)
    if isinstance(y, mpmath.mpf):
        return _g_inverse_mp(y, T, dps)
    values = finite_array("y", y)
    shifted = values - 2.0 * math.log(T)
    abs_shifted = np.abs(shifted)
    with np.errstate(divide="ignore"):
        log_abs_shifted = np.log(abs_shifted)
    magnitude = _solve_odd_part(np.sign(shifted), log_abs_shifted, abs_shifted)
    result = math.log(T) + np.sign(shifted) * magnitude
    return float(result) if result.ndim == 0 else result


def g_inverse_float_floor(gap: np.ndarray | float, T: float) -> np.ndarray:
    r"""Absolute accuracy floor of the float path of :math:`g^{-1}` at :math:`x`: the
    rounding of :math:`y = g(x)` (:math:`\epsilon |y|`, plus :math:`\epsilon(2|x| +
    2|\sinh u|)` from evaluating g) propagated through :math:`1/g'(x)`, plus the rounding of
    :math:`x = \log T \pm u`:

    .. math:: \epsilon\Bigl(\frac{|g(x)| + 2|x| + 2|\sinh(x-\log T)|}{g'(x)} + \log T + |x|
              \Bigr).

    A float round trip :math:`g^{-1}(g(x))` is guaranteed (and tested) within
    :math:`10^{-12}|x| + 8\times` this floor."""
    T = _validated_T(T)
    gap = finite_array("x", gap)
    shifted = gap - math.log(T)
    sign, log_abs = signed_log_g(gap, T)
    log_sinh_abs = np.abs(shifted) + np.log1p(-np.exp(-2.0 * np.abs(shifted))) - math.log(2.0)
    log_prime = log_g_prime(gap, T)
    scaled = (
        np.exp(log_abs - log_prime)
        + 2.0 * np.abs(gap) * np.exp(-log_prime)
        + 2.0 * np.exp(np.where(np.abs(shifted) > 0, log_sinh_abs, -np.inf) - log_prime)
    )
    return FLOAT64_EPSILON * (scaled + abs(math.log(T)) + np.abs(gap))


# --------------------------------------------------------------------------- quadrature


def quadrature_gap(
    x0: np.ndarray | float, c: np.ndarray | float, tau: np.ndarray | float, T: float
) -> np.ndarray:
    r"""Gap at time :math:`\tau` under :math:`\dot x = c/g'(x)`:
    :math:`x(\tau) = g^{-1}(g(x_0) + c\tau)` (vectorised, broadcast). Evaluated in signed
    log form (:math:`\log|g(x_0)|`, :math:`\log|c| + \log\tau`), so :math:`\tau` up to
    :math:`10^{30}` and beyond, and :math:`x_0` up to any size, neither overflow.

    Reconstruction (this package's own derivation; the paper's exact statement is not
    available)."""
    T = _validated_T(T)
    x0 = finite_array("x0", x0)
    c = finite_array("c", c)
    tau = finite_array("tau", tau)
    if np.any(tau < 0.0):
        raise InvalidParameter("tau", tau, "times >= 0")
    sign_start, log_start = signed_log_g(x0, T)
    drive = np.sign(c) * np.sign(tau)
    with np.errstate(divide="ignore"):
        log_drive = np.log(np.abs(c)) + np.log(tau)
    log_drive = np.where(drive == 0.0, -np.inf, log_drive)
    sign_y, log_y = signed_log_add(sign_start, log_start, drive, log_drive)
    return g_inverse_log(log_y, T, sign=sign_y)


def quadrature_gap_mp(x0: Any, c: Any, tau: Any, T: Any, dps: int = 30) -> mpmath.mpf:
    r"""mpmath :math:`x(\tau) = g^{-1}(g(x_0) + c\tau)` at ``dps`` digits (any magnitude)."""
    with mpmath.workdps(dps):
        target = g_mp(x0, T, dps) + mpmath.mpf(c) * mpmath.mpf(tau)
        return g_inverse(target, T, dps=dps)


def quadrature_time(x0: Any, x1: Any, c: Any, T: Any, dps: int = 30) -> mpmath.mpf:
    r"""Time for the gap to go from :math:`x_0` to :math:`x_1` under :math:`\dot x = c/g'(x)`:
    :math:`\tau = (g(x_1) - g(x_0))/c` as an mpf at ``dps`` digits (any magnitude; negative
    means :math:`x_1` lies on the other side of the flow and is never reached).

    Reconstruction (this package's own derivation; the paper's exact statement is not
    available)."""
    if mpmath.mpf(c) == 0:
        raise InvalidParameter("c", c, "a non-zero rate")
    with mpmath.workdps(dps):
        return (g_mp(x1, T, dps) - g_mp(x0, T, dps)) / mpmath.mpf(c)


def _signed_log_time(x0, x1, c, T) -> tuple[np.ndarray, np.ndarray]:
    """Sign and log of :math:`(g(x_1) - g(x_0))/c`, overflow-free."""
    T = _validated_T(T)
    c = finite_array("c", c)
    if np.any(c == 0.0):
        raise InvalidParameter("c", c, "a non-zero rate")
    sign_1, log_1 = signed_log_g(x1, T)
    sign_0, log_0 = signed_log_g(x0, T)
    sign_diff, log_diff = signed_log_add(sign_1, log_1, -sign_0, log_0)
    return sign_diff * np.sign(c), log_diff - np.log(np.abs(c))


def log_quadrature_time(
    x0: np.ndarray | float, x1: np.ndarray | float, c: np.ndarray | float, T: float
) -> np.ndarray:
    r""":math:`\log\tau`, :math:`\tau = (g(x_1) - g(x_0))/c`, in float (vectorised,
    overflow-free for any gaps); requires :math:`\tau > 0` (raises
    :class:`~theory.foundation.validation.InvalidParameter` otherwise) and :math:`\tau = 0` gives
    :math:`-\infty`."""
    sign, log_time = _signed_log_time(x0, x1, c, T)
    if np.any(sign < 0.0):
        raise InvalidParameter(
            "x1",
            x1,
            f"a gap reachable from x0 = {x0!r} at rate c = {c!r}, i.e. (g(x1) - g(x0)) / c >= 0",
        )
    return log_time


def quadrature_time_float(
    x0: np.ndarray | float, x1: np.ndarray | float, c: np.ndarray | float, T: float
) -> np.ndarray:
    r"""Float :math:`\tau = (g(x_1) - g(x_0))/c` (vectorised). Exact to rounding while
    :math:`|\tau|` is inside the float64 range; beyond it returns :math:`\pm\infty` cleanly
    (no warning, no NaN): the value is computed in signed log form and exponentiated with
    clipping (:math:`|\tau| > 1.8\times 10^{308}` only for gaps above about
    :math:`709 + \log(|c| T)`)."""
    sign, log_time = _signed_log_time(x0, x1, c, T)
    return sign * exp_clipped(log_time)


def log_time_to_reach_gap_scaling(
    gap: np.ndarray | float, c: np.ndarray | float, T: float
) -> np.ndarray:
    r"""Log of the headline scaling :math:`e^x/(cT)`: :math:`x - \log c - \log T` (c > 0)."""
    T = _validated_T(T)
    c = finite_array("c", c)
    if np.any(c <= 0.0):
        raise InvalidParameter("c", c, "a rate > 0")
    return finite_array("x", gap) - np.log(c) - math.log(T)


def time_to_reach_gap_scaling(
    gap: np.ndarray | float, c: np.ndarray | float, T: float
) -> np.ndarray:
    r"""Headline scaling of the time to reach gap x: :math:`e^x/(cT)`
    (:func:`time_to_reach_gap_limit` proves :math:`\tau(x_0\to x)\,cT e^{-x} \to 1`);
    ``inf`` without a warning only beyond the float64 range."""
    return exp_clipped(log_time_to_reach_gap_scaling(gap, c, T))


__all__ = [
    "FLOAT64_EPSILON",
    "LOG_FLOAT64_MAX",
    "g",
    "g_derivative_residuals",
    "g_expression",
    "g_inverse",
    "g_inverse_float_floor",
    "g_inverse_log",
    "g_mp",
    "g_prime",
    "g_prime_expression",
    "g_prime_mp",
    "g_root",
    "g_second_expression",
    "g_symmetry_residuals",
    "log_g",
    "log_g_prime",
    "log_quadrature_time",
    "log_time_to_reach_gap_scaling",
    "quadrature_flow_residual",
    "quadrature_gap",
    "quadrature_gap_mp",
    "quadrature_solution_residual",
    "quadrature_time",
    "quadrature_time_float",
    "signed_log_g",
    "time_to_reach_gap_expression",
    "time_to_reach_gap_limit",
    "time_to_reach_gap_scaling",
]


def derivations() -> list[Derivation]:
    """This module's derived results, as records for :mod:`theory.derivations`."""
    from theory.foundation.proof import SYMBOLIC
    from theory.foundation.symbols import T, c, tau, u, x, x0, y

    g_of = sp.Function("g")
    g_inv = sp.Function("g^-1")
    x_of = sp.Function("x")
    return [
        Derivation(
            "The quadrature function and its derivatives",
            sp.And(
                sp.Eq(g_of(x), g_expression()),
                sp.Eq(sp.Derivative(g_of(x), x), g_prime_expression()),
            ),
            KNOWN,
            g_derivative_residuals,
            SYMBOLIC,
            "residuals vanish for symbolic x and T",
            twin="theory.quadrature.g.g",
            test="tests/theory/quadrature/test_g.py::test_float_g_matches_mpmath",
        ),
        Derivation(
            "Quadrature: dx/dtau = c/g'(x) implies g(x(tau)) = g(x0) + c tau",
            sp.Eq(g_of(x_of(tau)), g_of(x0) + c * tau),
            KNOWN,
            lambda: [
                quadrature_flow_residual(),
                quadrature_solution_residual(),
            ],
            SYMBOLIC,
            "residuals vanish for symbolic c, tau, x0 and T",
            twin="theory.quadrature.g.quadrature_gap",
            simulated="verify.sim.observables.attention_gaps",
            test="tests/theory/quadrature/test_g.py::test_quadrature_gap_matches_mpmath_for_astronomical_times",
        ),
        Derivation(
            "Symmetries of g (odd about (log T, 2 log T); negative branch = g_{1/T})",
            sp.And(
                sp.Eq(g_of(sp.log(T) + u), 2 * sp.log(T) + 2 * u + 2 * sp.sinh(u)),
                sp.Eq(g_inv(y), -sp.Function("g_{1/T}^{-1}")(-y)),
            ),
            DERIVED,
            g_symmetry_residuals,
            SYMBOLIC,
            "residuals vanish for symbolic u, y and T",
            twin="theory.quadrature.g.g_inverse",
            test="tests/theory/quadrature/test_g.py::test_float_round_trip_through_value_path",
        ),
        Derivation(
            "Time to reach gap x, and its scaling e^x/(cT)",
            sp.Eq(
                sp.Limit(time_to_reach_gap_expression() * c * T * sp.exp(-x), x, sp.oo),
                1,
            ),
            KNOWN,
            lambda: time_to_reach_gap_limit() - 1,
            SYMBOLIC,
            "SymPy's limit equals 1 exactly",
            twin="theory.quadrature.g.time_to_reach_gap_scaling",
            test="tests/theory/quadrature/test_g.py::test_time_to_reach_gap_is_e_to_the_x_over_cT",
        ),
    ]
