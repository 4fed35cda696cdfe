r"""SciPy's quad, brentq and ndtr in plain Python and NumPy, with SciPy's numbers bit for bit.

They follow SciPy's compiled code operation for operation (IEEE double arithmetic in the
same order, the same constants), so a prediction that needs them does not import SciPy,
whose import costs more than the prediction:

* :func:`quad`: ``scipy.integrate.quad`` on a finite interval, QUADPACK's QAGS
  (Piessens, de Doncker-Kapenga, Ueberhuber, Kahaner 1983): 21-point Gauss-Kronrod rules on
  a globally adaptive bisection, extrapolated by Wynn's epsilon algorithm;
* :func:`brentq`: ``scipy.optimize.brentq``, Brent's root finder on a bracket;
* :func:`ndtr`: ``scipy.special.ndtr``, the standard normal distribution function by the
  Cephes rational approximations of erf and erfc.

``tests/theory/foundation/test_scipy_equivalents.py`` compares them with SciPy bit for bit.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

EPS = 2.220446049250313e-16  # float64 machine epsilon
TINY = 2.2250738585072014e-308  # smallest normal float64
HUGE = 1.7976931348623157e308  # largest float64

# --------------------------------------------------------------------------- IEEE helpers


def _fmax(x: float, y: float) -> float:
    """C's ``fmax``: the larger, a NaN argument ignored."""
    if x != x:
        return y
    if y != y:
        return x
    return x if x >= y else y


def _fmin(x: float, y: float) -> float:
    """C's ``fmin``: the smaller, a NaN argument ignored."""
    if x != x:
        return y
    if y != y:
        return x
    return x if x <= y else y


def _divide(x: float, y: float) -> float:
    """``x / y`` with IEEE semantics (an infinity or NaN where Python would raise)."""
    if y != 0.0:
        return x / y
    if x != x or x == 0.0:
        return math.nan
    return math.copysign(math.inf, x) * math.copysign(1.0, y)


# --------------------------------------------------------------------------- QUADPACK QAGS

#: Gauss weights (10 points) and Kronrod abscissae and weights (21 points) on [-1, 1].
_GAUSS = (
    0.066671344308688137593568809893332,
    0.149451349150580593145776339657697,
    0.219086362515982043995534934228163,
    0.269266719309996355091226921569469,
    0.295524224714752870173892994651338,
)
_KRONROD_NODES = (
    0.995657163025808080735527280689003,
    0.973906528517171720077964012084452,
    0.930157491355708226001207180059508,
    0.865063366688984510732096688423493,
    0.780817726586416897063717578345042,
    0.679409568299024406234327365114874,
    0.562757134668604683339000099272694,
    0.433395394129247190799265943165784,
    0.294392862701460198131126603103866,
    0.148874338981631210884826001129720,
    0.000000000000000000000000000000000,
)
_KRONROD = (
    0.011694638867371874278064396062192,
    0.032558162307964727478818972459390,
    0.054755896574351996031381300244580,
    0.075039674810919952767043140916190,
    0.093125454583697605535065465083366,
    0.109387158802297641899210590325805,
    0.123491976262065851077958109831074,
    0.134709217311473325928054001771707,
    0.142775938577060080797094273138717,
    0.147739104901338491374841515972068,
    0.149445554002916905664936468389821,
)


def _kronrod21(f: Callable[[float], float], a: float, b: float) -> tuple[float, ...]:
    r"""The 21-point Kronrod estimate of :math:`\int_a^b f`, its error estimate, the
    integral of :math:`|f|` and of :math:`|f - \text{mean}|` (QUADPACK's QK21)."""
    centre, half = 0.5 * (a + b), 0.5 * (b - a)
    length = abs(half)
    f_centre = float(f(centre))
    gauss, kronrod = 0.0, _KRONROD[10] * f_centre
    absolute = abs(kronrod)
    left, right = [0.0] * 10, [0.0] * 10
    for j in (1, 3, 5, 7, 9, 0, 2, 4, 6, 8):  # the Gauss nodes first, as QK21 takes them
        offset = half * _KRONROD_NODES[j]
        value1, value2 = float(f(centre - offset)), float(f(centre + offset))
        left[j], right[j] = value1, value2
        pair = value1 + value2
        if j % 2:
            gauss = gauss + _GAUSS[j // 2] * pair
        kronrod = kronrod + _KRONROD[j] * pair
        absolute = absolute + _KRONROD[j] * (abs(value1) + abs(value2))
    mean = kronrod * 0.5
    spread = _KRONROD[10] * abs(f_centre - mean)
    for j in range(10):
        spread = spread + _KRONROD[j] * (abs(left[j] - mean) + abs(right[j] - mean))
    result, absolute, spread = kronrod * half, absolute * length, spread * length
    error = abs((kronrod - gauss) * half)
    if spread != 0.0 and error != 0.0:
        error = spread * _fmin(1.0, (200.0 * error / spread) ** 1.5)
    if absolute > TINY / (50.0 * EPS):
        error = _fmax(EPS * 50.0 * absolute, error)
    return result, error, absolute, spread


def _sort_errors(limit: int, last: int, state: _Subdivision) -> None:
    """QUADPACK's QPSRT: keep ``order`` sorted by decreasing error over the intervals that
    may be bisected next and set ``largest`` to the one with the largest error."""
    errors, order = state.errors, state.order
    if last <= 2:
        order[0], order[1] = 0, 1
    else:
        bisected = errors[state.largest]
        while state.position > 0 and bisected > errors[order[state.position - 1]]:
            order[state.position] = order[state.position - 1]
            state.position -= 1
        top = limit - last + 2 if last > limit // 2 + 2 else last - 1
        smallest = errors[last - 1]
        bound = top - 1
        i = state.position + 1
        while i <= bound and not bisected >= errors[order[i]]:
            order[i - 1] = order[i]
            i += 1
        if i > bound:
            order[bound], order[top] = state.largest, last - 1
        else:
            order[i - 1] = state.largest
            k = bound
            for _ in range(i, bound + 1):
                if smallest < errors[order[k]]:
                    break
                order[k + 1] = order[k]
                k -= 1
            if smallest < errors[order[k]]:
                order[k + 1] = last - 1
            else:
                order[i] = last - 1
    state.largest = order[state.position]
    state.error_max = errors[state.largest]


@dataclass
class _Epsilon:
    """Wynn's epsilon table (QUADPACK's QELG state): ``table`` (52 entries), its last
    index ``n``, the last three results and how many calls."""

    table: list[float]
    n: int = 1
    last_three: tuple[float, float, float] = (0.0, 0.0, 0.0)
    calls: int = 0

    def extrapolate(self) -> tuple[float, float]:
        """QELG: the extrapolated limit of the sequence in ``table`` and its error."""
        table, start = self.table, self.n
        self.calls += 1
        result = table[start]
        if start < 2:
            return result, _fmax(HUGE, 5.0 * EPS * abs(result))
        error = HUGE
        table[start + 2] = table[start]
        elements = start // 2
        table[start] = HUGE
        k1 = start
        for i in range(elements):
            e0, e1, e2 = table[k1 - 2], table[k1 - 1], table[k1 + 2]
            res = e2
            e1_abs = abs(e1)
            delta2 = e2 - e1
            err2, tol2 = abs(delta2), _fmax(abs(e2), e1_abs) * EPS
            delta3 = e1 - e0
            err3, tol3 = abs(delta3), _fmax(e1_abs, abs(e0)) * EPS
            if not (err2 > tol2 or err3 > tol3):
                return res, _fmax(err2 + err3, 5.0 * EPS * abs(res))
            e3 = table[k1]
            table[k1] = e1
            delta1 = e1 - e3
            err1, tol1 = abs(delta1), _fmax(e1_abs, abs(e3)) * EPS
            if err1 <= tol1 or err2 <= tol2 or err3 <= tol3:
                self.n = i + i
                break
            ss = 1.0 / delta1 + 1.0 / delta2 - 1.0 / delta3
            if not (abs(ss * e1) > 1e-4):
                self.n = i + i
                break
            res = e1 + 1.0 / ss
            table[k1] = res
            k1 -= 2
            candidate = err2 + abs(res - e2) + err3
            if not (candidate > error):
                error, result = candidate, res
        if self.n == 49:
            self.n = 48
        shift = start % 2
        for i in range(elements + 1):
            table[2 * i + shift] = table[2 * i + 2 + shift]
        if self.n != start:
            index = start - self.n
            for i in range(self.n + 1):
                table[i] = table[index]
                index += 1
        if self.calls < 4:
            three = list(self.last_three)
            three[self.calls - 1] = result
            self.last_three = (three[0], three[1], three[2])
            error = HUGE
        else:
            r0, r1, r2 = self.last_three
            error = abs(result - r2) + abs(result - r1) + abs(result - r0)
            self.last_three = (r1, r2, result)
        return result, _fmax(error, 5.0 * EPS * abs(result))


@dataclass
class _Subdivision:
    """The intervals of QAGS: ends, integrals and errors by interval, ``order`` by error;
    ``largest`` the interval to bisect next, ``error_max`` its error, ``position`` its
    place in ``order``."""

    lower: list[float]
    upper: list[float]
    integrals: list[float]
    errors: list[float]
    order: list[int]
    largest: int = 0
    error_max: float = 0.0
    position: int = 0


@dataclass
class QuadResult:
    """:func:`qags`'s integral, error estimate and QUADPACK's ``ier`` (0: reliable)."""

    value: float
    error: float
    ier: int


def qags(
    f: Callable[[float], float],
    a: float,
    b: float,
    epsabs: float = 1.49e-8,
    epsrel: float = 1.49e-8,
    limit: int = 50,
) -> QuadResult:
    r""":math:`\int_a^b f` by QUADPACK's QAGS, as ``scipy.integrate.quad`` computes it on
    a finite interval (its ``_qagse``): bisect the interval of largest error, up to
    ``limit`` intervals, until the summed error is below
    :math:`\max(\epsilon_{abs}, \epsilon_{rel}|I|)`, extrapolating the sequence of sums
    (:class:`_Epsilon`) once the small intervals dominate the error."""
    a, b = float(a), float(b)
    if limit < 1 or (epsabs <= 0.0 and epsrel < _fmax(50.0 * EPS, 0.5e-28)):
        return QuadResult(0.0, 0.0, 6)
    s = _Subdivision(
        [a] + [0.0] * (limit - 1),
        [b] + [0.0] * (limit - 1),
        [0.0] * limit,
        [0.0] * limit,
        [0] * limit,
    )
    result, abserr, defabs, resabs = _kronrod21(f, a, b)
    dres = abs(result)
    errbnd = _fmax(epsabs, epsrel * dres)
    s.integrals[0], s.errors[0] = result, abserr
    ier = 0
    if abserr <= 100.0 * EPS * defabs and abserr > errbnd:
        ier = 2
    if limit == 1:
        ier = 1
    if ier != 0 or (abserr <= errbnd and abserr != resabs) or abserr == 0.0:
        return QuadResult(result, abserr, ier)
    return _adapt(f, a, b, epsabs, epsrel, limit, s, result, abserr, defabs, dres)


def _adapt(f, a, b, epsabs, epsrel, limit, s, result, abserr, defabs, dres) -> QuadResult:
    """QAGS's bisection loop and its final decisions (:func:`qags`)."""
    epsilon = _Epsilon([0.0] * 52)
    epsilon.table[0] = result
    s.error_max, area, errsum, abserr = abserr, result, abserr, HUGE
    small = erlarg = ertest = correc = 0.0
    ier = ierror = ktmin = iroff1 = iroff2 = iroff3 = 0
    extrap = noext = False
    ksgn = 1 if dres >= (1.0 - 50.0 * EPS) * defabs else -1
    summed = False
    L = 0
    for L in range(1, limit):
        last = L + 1
        a1, b2 = s.lower[s.largest], s.upper[s.largest]
        b1 = 0.5 * (a1 + b2)
        a2, erlast = b1, s.error_max
        area1, error1, _, defab1 = _kronrod21(f, a1, b1)
        area2, error2, _, defab2 = _kronrod21(f, a2, b2)
        area12, error12 = area1 + area2, error1 + error2
        errsum = errsum + error12 - s.error_max
        area = area + area12 - s.integrals[s.largest]
        if defab1 != error1 and defab2 != error2:
            previous = s.integrals[s.largest]
            if not (abs(previous - area12) > 1.0e-5 * abs(area12) or error12 < 0.99 * s.error_max):
                if extrap:
                    iroff2 += 1
                else:
                    iroff1 += 1
            if L > 9 and error12 > s.error_max:
                iroff3 += 1
        s.integrals[s.largest], s.integrals[L] = area1, area2
        errbnd = _fmax(epsabs, epsrel * abs(area))
        if iroff1 + iroff2 >= 10 or iroff3 >= 20:
            ier = 2
        if iroff2 >= 5:
            ierror = 3
        if last == limit:
            ier = 1
        if _fmax(abs(a1), abs(b2)) <= (1.0 + 100.0 * EPS) * (abs(a2) + 1000.0 * TINY):
            ier = 4
        if not (error2 > error1):
            s.lower[L], s.upper[s.largest], s.upper[L] = a2, b1, b2
            s.errors[s.largest], s.errors[L] = error1, error2
        else:
            s.lower[s.largest], s.lower[L], s.upper[L] = a2, a1, b1
            s.integrals[s.largest], s.integrals[L] = area2, area1
            s.errors[s.largest], s.errors[L] = error2, error1
        _sort_errors(limit, last, s)
        if errsum <= errbnd:
            summed = True
            break
        if ier != 0:
            break
        if L == 1:
            small, erlarg, ertest = abs(b - a) * 0.375, errsum, errbnd
            epsilon.table[1] = area
            continue
        if noext:
            continue
        erlarg = erlarg - erlast
        if abs(b1 - a1) > small:
            erlarg = erlarg + error12
        if not extrap:
            if abs(s.upper[s.largest] - s.lower[s.largest]) > small:
                continue
            extrap, s.position = True, 1
        if not (ierror == 3 or erlarg <= ertest):
            if _large_interval_left(limit, last, small, s):
                continue
        epsilon.n += 1
        epsilon.table[epsilon.n] = area
        reseps, abseps = epsilon.extrapolate()
        ktmin += 1
        if ktmin > 5 and abserr < 1.0e-3 * errsum:
            ier = 5
        if not (abseps >= abserr):
            ktmin, abserr, result, correc = 0, abseps, reseps, erlarg
            ertest = _fmax(epsabs, epsrel * abs(reseps))
            if abserr <= ertest:
                break
        if epsilon.n == 0:
            noext = True
        if ier == 5:
            break
        s.largest = s.order[0]
        s.error_max, s.position, extrap = s.errors[s.largest], 0, False
        small, erlarg = small * 0.5, errsum
    if not summed:
        summed, result, abserr, ier = _final(
            result, abserr, area, errsum, ier, ierror, correc, ksgn, defabs
        )
    if summed:
        result = 0.0
        for k in range(L + 1):
            result = result + s.integrals[k]
        abserr = errsum
    return QuadResult(result, abserr, ier - 1 if ier > 2 else ier)


def _large_interval_left(limit: int, last: int, small: float, s: _Subdivision) -> bool:
    """Move to the next interval (by error) still larger than ``small``; whether one was
    found before the ordered list's usable end."""
    bound = limit + 3 - last if last > 2 + limit // 2 else last
    for _ in range(s.position, bound):
        s.largest = s.order[s.position]
        s.error_max = s.errors[s.largest]
        if abs(s.upper[s.largest] - s.lower[s.largest]) > small:
            return True
        s.position += 1
    return False


def _final(result, abserr, area, errsum, ier, ierror, correc, ksgn, defabs):
    """QAGS's choice after the loop between the extrapolated ``result`` and the plain sum
    of the intervals (``summed``), and its final ``ier``."""
    if abserr == HUGE:
        return True, result, abserr, ier
    if ier + ierror != 0:
        if ierror == 3:
            abserr = abserr + correc
        if ier == 0:
            ier = 3
        if result != 0.0 and area != 0.0:
            if abserr / abs(result) > errsum / abs(area):
                return True, result, abserr, ier
        elif abserr > errsum:
            return True, result, abserr, ier
        elif area == 0.0:
            return False, result, abserr, ier
    if ksgn == -1 and _fmax(abs(result), abs(area)) <= defabs * 0.01:
        return False, result, abserr, ier
    ratio = _divide(result, area)
    if 0.01 > ratio or ratio > 100.0 or errsum > abs(area):
        ier = 6
    return False, result, abserr, ier


class QuadratureWarning(UserWarning):
    """:func:`quad` did not reach the requested accuracy (QUADPACK ``ier`` 1 to 5)."""


_QUAD_MESSAGES = {
    1: "the maximum number of subdivisions (limit) was reached",
    2: "roundoff error prevents the requested tolerance",
    3: "extremely bad integrand behaviour occurs at some points of the interval",
    4: "the algorithm does not converge: roundoff error in the extrapolation table",
    5: "the integral is probably divergent, or slowly convergent",
}


def quad(
    f: Callable[[float], float],
    a: float,
    b: float,
    epsabs: float = 1.49e-8,
    epsrel: float = 1.49e-8,
    limit: int = 50,
) -> float:
    r"""``scipy.integrate.quad(f, a, b, epsabs=, epsrel=, limit=)[0]`` for finite ``a``,
    ``b``: :func:`qags` from the smaller to the larger, negated if ``b < a``; a
    :class:`QuadratureWarning` where QUADPACK flags the result (``ier`` 1-5),
    ``ValueError`` for invalid tolerances or ``limit`` (``ier`` 6)."""
    if not (math.isfinite(a) and math.isfinite(b)):
        raise ValueError(f"quad: finite limits only, got a = {a}, b = {b}")
    done = qags(f, min(a, b), max(a, b), epsabs, epsrel, limit)
    if done.ier == 6:
        raise ValueError("quad: invalid tolerances (epsabs, epsrel) or limit < 1")
    if done.ier:
        warnings.warn(f"quad: {_QUAD_MESSAGES[done.ier]}", QuadratureWarning, stacklevel=2)
    return -done.value if b < a else done.value


# --------------------------------------------------------------------------- Brent's root


def _value(f: Callable[[float], float], x: float) -> float:
    value = float(f(x))
    if value != value:
        raise ValueError(f"The function value at x={x} is NaN; solver cannot continue.")
    return value


def brentq(
    f: Callable[[float], float],
    a: float,
    b: float,
    xtol: float = 2e-12,
    rtol: float = 4 * EPS,
    maxiter: int = 100,
) -> float:
    """A root of ``f`` in the bracket [a, b] (``f(a)``, ``f(b)`` of opposite signs) by
    Brent's method, as ``scipy.optimize.brentq`` computes it: inverse quadratic or secant
    steps when they shrink the bracket fast enough, else bisection, until half the bracket
    is below ``(xtol + rtol |x|) / 2``. ``ValueError`` for a bad bracket or tolerance,
    ``RuntimeError`` after ``maxiter`` iterations."""
    if xtol <= 0:
        raise ValueError(f"xtol too small ({xtol:g} <= 0)")
    if rtol < 4 * EPS:
        raise ValueError(f"rtol too small ({rtol:g} < {4 * EPS:g})")
    xpre, xcur = float(a), float(b)
    fpre, fcur = _value(f, xpre), _value(f, xcur)
    if fpre == 0:
        return xpre
    if fcur == 0:
        return xcur
    if math.copysign(1.0, fpre) == math.copysign(1.0, fcur):
        raise ValueError("f(a) and f(b) must have different signs")
    xblk = fblk = spre = scur = 0.0
    for _ in range(maxiter):
        if fpre != 0 and fcur != 0 and math.copysign(1.0, fpre) != math.copysign(1.0, fcur):
            xblk, fblk = xpre, fpre
            spre = scur = xcur - xpre
        if abs(fblk) < abs(fcur):
            xpre, xcur, xblk = xcur, xblk, xcur
            fpre, fcur, fblk = fcur, fblk, fcur
        delta = (xtol + rtol * abs(xcur)) / 2
        sbis = (xblk - xcur) / 2
        if fcur == 0 or abs(sbis) < delta:
            return xcur
        spre, scur = _brent_step(xpre, xcur, xblk, fpre, fcur, fblk, spre, scur, sbis, delta)
        xpre, fpre = xcur, fcur
        if abs(scur) > delta:
            xcur += scur
        else:
            xcur += delta if sbis > 0 else -delta
        fcur = _value(f, xcur)
    raise RuntimeError(f"Failed to converge after {maxiter} iterations, value is {xcur}.")


def _brent_step(xpre, xcur, xblk, fpre, fcur, fblk, spre, scur, sbis, delta):
    """The next (previous, current) step of :func:`brentq`: interpolated where it is short
    enough, else the bisection ``sbis``."""
    if not (abs(spre) > delta and abs(fcur) < abs(fpre)):
        return sbis, sbis
    if xpre == xblk:  # secant
        stry = _divide(-fcur * (xcur - xpre), fcur - fpre)
    else:  # inverse quadratic
        dpre = _divide(fpre - fcur, xpre - xcur)
        dblk = _divide(fblk - fcur, xblk - xcur)
        stry = _divide(-fcur * (fblk * dblk - fpre * dpre), dblk * dpre * (fblk - fpre))
    first, second = abs(spre), 3 * abs(sbis) - delta
    if 2 * abs(stry) < (first if first < second else second):
        return scur, stry
    return sbis, sbis


# --------------------------------------------------------------------------- normal cdf

_SQRT_HALF = 0.70710678118654752440
_MAX_LOG = 7.09782712893383996732e2  # log of the largest float64
#: Cephes' erfc on [1, 8) (P / Q), on [8, inf) (R / S) and erf on [0, 1] (T / U).
_ERFC_P = (
    2.46196981473530512524e-10,
    5.64189564831068821977e-1,
    7.46321056442269912687e0,
    4.86371970985681366614e1,
    1.96520832956077098242e2,
    5.26445194995477358631e2,
    9.34528527171957607540e2,
    1.02755188689515710272e3,
    5.57535335369399327526e2,
)
_ERFC_Q = (
    1.32281951154744992508e1,
    8.67072140885989742329e1,
    3.54937778887819891062e2,
    9.75708501743205489753e2,
    1.82390916687909736289e3,
    2.24633760818710981792e3,
    1.65666309194161350182e3,
    5.57535340817727675546e2,
)
_ERFC_R = (
    5.64189583547755073984e-1,
    1.27536670759978104416e0,
    5.01905042251180477414e0,
    6.16021097993053585195e0,
    7.40974269950448939160e0,
    2.97886665372100240670e0,
)
_ERFC_S = (
    2.26052863220117276590e0,
    9.39603524938001434673e0,
    1.20489539808096656605e1,
    1.70814450747565897222e1,
    9.60896809063285878198e0,
    3.36907645100081516050e0,
)
_ERF_T = (
    9.60497373987051638749e0,
    9.00260197203842689217e1,
    2.23200534594684319226e3,
    7.00332514112805075473e3,
    5.55923013010394962768e4,
)
_ERF_U = (
    3.35617141647503099647e1,
    5.21357949780152679795e2,
    4.59432382970980127987e3,
    2.26290000613890934246e4,
    4.92673942608635921086e4,
)


def _polynomial(x: np.ndarray, coefficients: tuple[float, ...]) -> np.ndarray:
    """Horner's rule, highest power first (Cephes' ``polevl``)."""
    total = np.full_like(x, coefficients[0])
    for c in coefficients[1:]:
        total = total * x + c
    return total


def _monic(x: np.ndarray, coefficients: tuple[float, ...]) -> np.ndarray:
    """Horner's rule with a leading 1 not stored (Cephes' ``p1evl``)."""
    total = x + coefficients[0]
    for c in coefficients[1:]:
        total = total * x + c
    return total


def _erfc_tail(z: np.ndarray) -> np.ndarray:
    r"""Cephes' :math:`\mathrm{erfc}(z)` for :math:`z \ge 1`: :math:`e^{-z^2} P(z)/Q(z)`,
    0 where :math:`z^2` exceeds the float64 exponent range or the value underflows (the
    exponential by the C library, as Cephes takes it)."""
    square = -z * z
    exponential = np.array([math.exp(v) for v in square.tolist()])
    near = z < 8.0
    with np.errstate(over="ignore", invalid="ignore"):  # where z^2 is out of range: 0 below
        numerator = np.where(near, _polynomial(z, _ERFC_P), _polynomial(z, _ERFC_R))
        denominator = np.where(near, _monic(z, _ERFC_Q), _monic(z, _ERFC_S))
        value = (exponential * numerator) / denominator
    return np.where(square < -_MAX_LOG, 0.0, value)


def ndtr(values: np.ndarray | float) -> np.ndarray:
    r""":math:`\Phi(a)` elementwise, as ``scipy.special.ndtr`` (Cephes) computes it: with
    :math:`x = a/\sqrt2`, :math:`\tfrac12 + \tfrac12\mathrm{erf}(x)` for :math:`|x| < 1`
    (:math:`\mathrm{erf}(x) = xT(x^2)/U(x^2)`), else :math:`\tfrac12\mathrm{erfc}(|x|)`,
    reflected for :math:`x > 0`."""
    a = np.asarray(values, dtype=np.float64)
    x = a * _SQRT_HALF
    z = np.abs(x)
    inner = z < 1.0
    out = np.empty_like(x)
    xi = x[inner]
    square = xi * xi
    out[inner] = 0.5 + 0.5 * (xi * _polynomial(square, _ERF_T) / _monic(square, _ERF_U))
    outer = ~inner
    tail = 0.5 * _erfc_tail(z[outer])
    out[outer] = np.where(x[outer] > 0, 1.0 - tail, tail)
    return out


__all__ = ["quad", "qags", "QuadResult", "QuadratureWarning", "brentq", "ndtr"]
