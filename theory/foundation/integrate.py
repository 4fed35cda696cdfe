r"""A definite integral of a smooth function of one variable, by adaptive Gauss-Kronrod.

:func:`gauss_kronrod` estimates :math:`\int_a^b f(x)\,dx` on panels: on each, the
15-point Kronrod rule (exact for polynomials of degree 22) gives the value and its
difference from the embedded 7-point Gauss rule (degree 13, on the odd Kronrod nodes)
the error estimate; the panel with the largest estimate is halved until the estimates
sum to at most :math:`\max(\mathrm{atol}, \mathrm{rtol}\,|I|)` or ``max_panels`` are
in use. The nodes and weights are the rule's published constants (Kronrod, 1965; the
Gauss part equals ``numpy.polynomial.legendre.leggauss(7)``, which a test checks, and a
test checks both rules' exactness degrees). Plain Python, for the scalar integrands of
the predictions.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable

#: Kronrod nodes on [0, 1] (the rule is symmetric), largest first; the odd-numbered ones
#: (1, 3, 5 and the centre 7) are the 7-point Gauss nodes.
KRONROD_NODES = (
    0.991455371120812639206854697526329,
    0.949107912342758524526189684047851,
    0.864864423359769072789712788640926,
    0.741531185599394439863864773280788,
    0.586087235467691130294144845693013,
    0.405845151377397166906606412076961,
    0.207784955007898467600689403773245,
    0.0,
)
#: Kronrod weights of those nodes.
KRONROD_WEIGHTS = (
    0.022935322010529224963732008058970,
    0.063092092629978553290700663189204,
    0.104790010322250183839876322541518,
    0.140653259715525918745189590510238,
    0.169004726639267902826583426598550,
    0.190350578064785409913256402421014,
    0.204432940075298892414161999234649,
    0.209482141084727828012999174891714,
)
#: Gauss weights of nodes 1, 3, 5 and the centre.
GAUSS_WEIGHTS = (
    0.129484966168869693270611432679082,
    0.279705391489276667901467771423780,
    0.381830050505118944950369775488975,
    0.417959183673469387755102040816327,
)


def panel(function: Callable[[float], float], a: float, b: float) -> tuple[float, float]:
    """The Kronrod estimate of the integral over ``[a, b]`` and its distance from the
    Gauss estimate."""
    centre, half = 0.5 * (a + b), 0.5 * (b - a)
    middle = function(centre)
    kronrod, gauss = KRONROD_WEIGHTS[7] * middle, GAUSS_WEIGHTS[3] * middle
    for index in range(7):
        offset = half * KRONROD_NODES[index]
        pair = function(centre - offset) + function(centre + offset)
        kronrod += KRONROD_WEIGHTS[index] * pair
        if index % 2:
            gauss += GAUSS_WEIGHTS[index // 2] * pair
    return kronrod * half, abs(kronrod - gauss) * half


def gauss_kronrod(
    function: Callable[[float], float],
    a: float,
    b: float,
    atol: float = 1e-14,
    rtol: float = 1e-12,
    max_panels: int = 200,
) -> float:
    r""":math:`\int_a^b f(x)\,dx` to :math:`\max(\mathrm{atol}, \mathrm{rtol}\,|I|)`
    by the estimates of its panels (module docstring), or as close as ``max_panels``
    panels come."""
    value, error = panel(function, a, b)
    panels = [(-error, a, b, value)]
    total, total_error = value, error
    while total_error > max(atol, rtol * abs(total)) and len(panels) < max_panels:
        worst, left, right, value = heapq.heappop(panels)
        middle = 0.5 * (left + right)
        if not left < middle < right:  # the panel cannot be halved in floating point
            heapq.heappush(panels, (worst, left, right, value))
            break
        total, total_error = total - value, total_error + worst
        for start, end in ((left, middle), (middle, right)):
            part, part_error = panel(function, start, end)
            heapq.heappush(panels, (-part_error, start, end, part))
            total, total_error = total + part, total_error + part_error
    return math.fsum(entry[3] for entry in panels)
