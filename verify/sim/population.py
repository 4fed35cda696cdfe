r"""Population test metrics: accuracy, loss and relevant-token selection over the test
distribution, from the query's moments :math:`\|q\|^2, q_1, q_2` alone.

A fresh test sequence of class :math:`y^* = \pm1` (balanced) has tokens
:math:`x_t = c_t\mu_{y^*} + c'_t\mu_{-y^*} + \epsilon_t`, :math:`\epsilon_t \sim
N(0, \sigma^2 I_d)` iid and independent of the trained query :math:`q = W^\top p`, with
:math:`\mu_{+1} = \|\mu\|e_1`, :math:`\mu_{-1} = \|\mu\|e_2` and the head
:math:`\nu = \gamma_0(e_1 - e_2)/\|\mu\|`. Its logits and scores are

.. math::

    a_t = m_t + \epsilon_t\cdot q, \quad m_t = \|\mu\|(c_t q_{y^*} + c'_t q_{-y^*}),
    \qquad \gamma_t = y^*\gamma_0 k_t + \epsilon_t\cdot\nu, \quad k_t = c_t - c'_t,

(:math:`q_{+1} = q_1 = q\cdot e_1`, :math:`q_{-1} = q_2`), and the pairs
:math:`(\epsilon_t\cdot q, \epsilon_t\cdot\nu)` are iid bivariate Gaussian with covariance
:math:`\sigma^2[[\|q\|^2, q\cdot\nu], [q\cdot\nu, \|\nu\|^2]]`,
:math:`q\cdot\nu = \gamma_0(q_1 - q_2)/\|\mu\|`. Write :math:`\epsilon_t\cdot q = \lambda z_t`
with :math:`\lambda = \sigma\|q\|`, :math:`z_t \sim N(0, 1)`, and
:math:`\epsilon_t\cdot\nu = b z_t + w_t` with :math:`b = \sigma\, q\cdot\nu/\|q\|` and
:math:`w_t \sim N(0, \tau^2)`, :math:`\tau^2 = \sigma^2\|\nu\|^2 - b^2`, independent of
:math:`z`. Split :math:`z = z_c + \bar z\mathbf 1` into its centred part and its mean
:math:`\bar z \sim N(0, 1/T)` (independent). The softmax :math:`s = \mathrm{softmax}(m +
\lambda z_c)` does not see :math:`\bar z`, so given :math:`z_c` the margin is Gaussian:

.. math::

    y^* f \mid z_c \sim N\Big(M, S^2\Big), \quad M = \gamma_0\sum_t s_t k_t
    + y^* b\sum_t s_t z_{c,t}, \quad S^2 = \tau^2\sum_t s_t^2 + b^2/T,

and :math:`S^2 \ge \sigma^2\|\nu\|^2/T > 0`. Hence

.. math::

    P(y^* f > 0) = E_{z_c}\big[\Phi(M/S)\big], \qquad
    E[\ell(y^* f)] = E_{z_c}\Big[\tfrac{1}{\sqrt\pi}\sum_j w_j\,
    \ell\big(M + \sqrt2 S x_j\big)\Big],

with :math:`\ell(u) = \log(1 + e^{-u})` and Gauss-Hermite nodes :math:`(x_j, w_j)`. The
remaining :math:`(T-1)`-dimensional expectation over :math:`z_c = H\xi`
(:math:`H` an orthonormal basis of :math:`\mathbf 1^\perp`, :math:`\xi \sim N(0, I_{T-1})`)
is evaluated by randomised quasi-Monte Carlo: :data:`REPLICATES` independently scrambled
Sobol' sequences, each giving one estimate; their standard error :math:`\hat s` gives the
stated error :data:`SAFETY` :math:`\times\,\hat s` (plus the quadrature's deterministic
bound), and the points double (nested Sobol' blocks, earlier points reused) until the
stated error is at most the tolerance or :data:`MAX_POINTS` are used. The
classes :math:`y^* = +1, -1` differ when :math:`q_1 \ne q_2`; both are computed, on the
same points, and averaged.

The token the model selects (the argmax logit) needs no sampling: all logits have the same
noise scale :math:`\lambda`, so the probability that a given token :math:`t` of group
:math:`g` has the largest logit is the one-dimensional integral

.. math::

    P(\arg\max = t) = \int \phi(z)\,\Phi(z)^{n_g - 1}
    \prod_{h \ne g}\Phi(z + \delta_{gh})^{n_h}\,dz, \qquad
    \delta_{gh} = (m_g - m_h)/\lambda,

evaluated by the trapezoidal rule on :math:`[-9, 9]` (its error is estimated by halving the
grid; the tails weigh :math:`2\Phi(-9) < 3\times10^{-19}`). At :math:`q = 0` every logit is
equal (uniform attention); the argmax is then a tie, broken uniformly at random, so the
relevant group is selected with probability :math:`n_R/T` (a finite test set's
``np.argmax`` would always pick the first token instead). Logit scales above
:data:`LOGIT_SCALE_CAP` are rescaled to it (the argmax limit: the softmax is then one-hot
except on an event of probability below :math:`T^2\cdot 50/\text{cap}`, added to the stated
errors).

Cost and limits. The points needed grow with :math:`\lambda`: the softmax then changes
over distances :math:`1/\lambda` in :math:`z`, and randomised QMC converges more slowly.
At :math:`T = 8` a tolerance of :math:`10^{-4}` takes :math:`16\cdot 2^9` points per class
for the benign regime after 1000 steps, :math:`16\cdot 2^{11}` for the harmful one
(:math:`\lambda \approx 0.5`), :math:`16\cdot 2^{13}` at :math:`\lambda = 1` and more than
:data:`MAX_POINTS` from :math:`\lambda \approx 3`, where the returned errors exceed the
tolerance. The standard error comes from the replicates' spread: a region of the
:math:`z_c` space that no replicate's points visit cannot show in it (the smooth
:math:`\Phi(M/S)`, with :math:`S \ge \sigma\|\nu\|/\sqrt T`, keeps such regions from
carrying a sharp feature).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import NamedTuple

import numpy as np
from scipy.special import log_ndtr, ndtr, ndtri

from theory.foundation.data_model import DataModel
from theory.foundation.validation import require
from verify.sim.observables import POPULATION_COLUMNS
from verify.sim.sobol import scrambled_sobol

#: Independent scramblings of the Sobol' sequence (each gives one estimate).
REPLICATES = 16
#: Stated error = SAFETY x the replicates' standard error. With 16 replicates the
#: standardised error follows Student's t with 15 degrees of freedom, which exceeds 4 with
#: probability 1.2e-3.
SAFETY = 4.0
#: Points per replicate start at 2**FIRST_EXPONENT and double while needed.
FIRST_EXPONENT = 9
#: Default largest number of points, all replicates together and per class (2**14 a replicate).
MAX_POINTS = REPLICATES * 2**14
#: Points evaluated at once (whole replicates; arrays of this many rows stay in cache).
CHUNK_ROWS = 4096
#: Seed of the scramblings (fixed: the same inputs give the same numbers).
SCRAMBLE_SEED = 12
#: Trapezoidal grid of the selection integral: [-GRID_HALF_WIDTH, GRID_HALF_WIDTH], step.
GRID_HALF_WIDTH = 9.0
GRID_STEP = 0.1
#: Logit noise scales above this are rescaled to it (argmax limit).
LOGIT_SCALE_CAP = 1e12
#: Standardised logit differences are clipped to +-DELTA_CLIP (Phi(9 - 60) = 0 in float64).
DELTA_CLIP = 60.0
#: Largest absolute value of the Sobol' normals (ndtri(2**-33) = -6.35); so every
#: normal z of a sequence, and the norm of its T normals, is at most NORMAL_BOUND sqrt(T).
NORMAL_BOUND = 6.4
#: Gauss-Hermite orders for the loss: (largest S, order), each with error at most
#: HERMITE_TABLE_ERROR over M in [-12, 12] (tests/sim/test_population.py measures it).
HERMITE_ORDERS = (
    (0.01, 2),
    (0.05, 3),
    (0.1, 4),
    (0.2, 5),
    (0.3, 6),
    (0.5, 8),
    (0.7, 12),
    (1.0, 16),
)
HERMITE_TABLE_ERROR = 1e-9
#: Relative slack allowed between q_1^2 + q_2^2 and ||q||^2 (rounding in the moments).
MOMENT_SLACK = 1e-6


@dataclass(frozen=True)
class PopulationMetrics:
    r"""Test accuracy :math:`P(y^*f > 0)`, expected logistic loss
    :math:`E[\log(1 + e^{-y^*f})]` and probability that the argmax token is relevant, over
    the test distribution, each with its stated error (an absolute bound), and the number
    of quasi-Monte Carlo points used per class."""

    accuracy: float
    loss: float
    selects_relevant: float
    accuracy_error: float
    loss_error: float
    selects_relevant_error: float
    points: int


@dataclass(frozen=True)
class SequenceLaw:
    r"""The law of one test sequence's logits and margin, per class (see the module
    docstring): for class row :math:`c`, label :math:`y_c`, logit means :math:`m_{c,t}`,
    logit noise scale :math:`\lambda`, margin means :math:`\gamma_0 k_t`, the score noise's
    slope :math:`b` on the logit noise and its residual standard deviation :math:`\tau`."""

    labels: np.ndarray  # (C,) y* of each class row
    logit_means: np.ndarray  # (C, T)
    logit_scale: float  # lambda = sigma ||q||
    margin_means: np.ndarray  # (T,) gamma0 k_t
    score_slope: float  # b
    score_residual: float  # tau
    groups: np.ndarray  # (T,) group index of each position (0 = R)
    cap_error: float = 0.0  # bound added when the logit scale was capped

    @property
    def T(self) -> int:
        return int(self.margin_means.shape[0])

    @property
    def score_sd(self) -> float:
        r""":math:`\sigma\|\nu\| = (b^2 + \tau^2)^{1/2}`, the largest :math:`S`."""
        return math.hypot(self.score_slope, self.score_residual)


def checked_moments(q_sq: float, q_signal: np.ndarray) -> tuple[float, float, float]:
    r""":math:`(\|q\|^2, q_1, q_2)` as floats, :math:`\|q\|^2` raised to
    :math:`q_1^2 + q_2^2` where rounding left it below; :class:`InvalidParameter` for
    non-finite values or :math:`q_1^2 + q_2^2 > (1 + 10^{-6})\|q\|^2`."""
    signal = np.asarray(q_signal, dtype=np.float64).reshape(-1)
    require(signal.shape == (2,), "q_signal", signal.tolist(), "two numbers (q.e1, q.e2)")
    q1, q2 = float(signal[0]), float(signal[1])
    require(math.isfinite(q_sq) and q_sq >= 0.0, "q_sq", q_sq, "a finite number >= 0 (||q||^2)")
    require(math.isfinite(q1) and math.isfinite(q2), "q_signal", (q1, q2), "finite numbers")
    signal_sq = q1 * q1 + q2 * q2
    require(
        signal_sq <= q_sq * (1.0 + MOMENT_SLACK) + 1e-300,
        "q_signal",
        (q1, q2),
        f"signal coordinates with q1^2 + q2^2 <= ||q||^2 = {q_sq:g}",
    )
    return max(float(q_sq), signal_sq), q1, q2


def sequence_law(model: DataModel, q_sq: float, q_signal: np.ndarray) -> SequenceLaw:
    r"""The :class:`SequenceLaw` of both classes for the query with moments
    :math:`\|q\|^2 =` ``q_sq`` and :math:`(q_1, q_2) =` ``q_signal``:
    :math:`m_{\pm} = \|\mu\|(c\,q_{\pm1} + c'\,q_{\mp1})`, :math:`\lambda = \sigma\|q\|`,
    :math:`b = \sigma\gamma_0(q_1 - q_2)/(\|\mu\|\|q\|)` (0 at :math:`q = 0`),
    :math:`\tau^2 = \sigma^2\|\nu\|^2 - b^2`."""
    q_sq, q1, q2 = checked_moments(q_sq, q_signal)
    positions = np.array(model.position_groups, dtype=np.int64)
    own = np.array([group.own for group in model.groups], dtype=np.float64)[positions]
    opposite = np.array([group.opposite for group in model.groups], dtype=np.float64)[positions]
    q_norm, sigma = math.sqrt(q_sq), model.sigma_eps
    logit_means = model.mu_norm * np.stack([own * q1 + opposite * q2, own * q2 + opposite * q1])
    scale = sigma * q_norm
    cap_error = 0.0
    if scale > LOGIT_SCALE_CAP:
        # Argmax limit: rescale all logits (their ranking is unchanged).
        shrink = LOGIT_SCALE_CAP / scale
        logit_means, scale = logit_means * shrink, LOGIT_SCALE_CAP
        cap_error = 50.0 * model.T**2 / LOGIT_SCALE_CAP
    q_dot_nu = model.gamma0 * (q1 - q2) / model.mu_norm
    slope = sigma * q_dot_nu / q_norm if q_norm > 0.0 else 0.0
    residual_sq = model.score_noise**2 - slope * slope
    return SequenceLaw(
        labels=np.array([1.0, -1.0]),
        logit_means=logit_means,
        logit_scale=scale,
        margin_means=model.gamma0 * (own - opposite),
        score_slope=slope,
        score_residual=math.sqrt(max(residual_sq, 0.0)),
        groups=positions,
        cap_error=cap_error,
    )


def centred_basis(T: int) -> np.ndarray:
    r"""An orthonormal basis of :math:`\mathbf 1^\perp \subset \mathbb R^T` (Helmert
    columns), shape (T, T - 1)."""
    basis = np.zeros((T, T - 1))
    for j in range(1, T):
        norm = math.sqrt(j * (j + 1.0))
        basis[:j, j - 1] = 1.0 / norm
        basis[j, j - 1] = -j / norm
    return basis


@lru_cache(maxsize=16)
def normal_block(T: int, exponent: int) -> np.ndarray:
    r"""Centred standard normals :math:`z_c = H\xi` for block ``exponent`` of every
    replicate's scrambled Sobol' sequence in dimension :math:`T - 1`: points
    :math:`[0, 2^e)` for the first block, :math:`[2^{e-1}, 2^e)` after it (so the blocks
    up to :math:`e` are the first :math:`2^e` points). Shape (REPLICATES, rows, T),
    read-only."""
    start = 0 if exponent == FIRST_EXPONENT else 2 ** (exponent - 1)
    rows = 2**exponent - start
    basis = centred_basis(T)
    out = np.empty((REPLICATES, rows, T))
    for replicate in range(REPLICATES):
        rng = np.random.default_rng([SCRAMBLE_SEED, T, replicate])
        uniform = scrambled_sobol(T - 1, start, rows, rng)  # in [2^-33, 1 - 2^-33]
        out[replicate] = ndtri(uniform) @ basis.T
    out.setflags(write=False)
    return out


@lru_cache(maxsize=64)
def hermite_rule(order: int) -> tuple[np.ndarray, np.ndarray]:
    r"""Nodes :math:`\sqrt2 x_j` and weights :math:`w_j/\sqrt\pi` of the ``order``-point
    Gauss-Hermite rule: :math:`E[g(N(0,1))] \approx \sum_j w_j g(\sqrt2 x_j)/\sqrt\pi`."""
    nodes, weights = np.polynomial.hermite.hermgauss(order)
    return nodes * math.sqrt(2.0), weights / math.sqrt(math.pi)


def hermite_order(score_sd: float) -> tuple[int, float]:
    r"""Gauss-Hermite order for :math:`E[\ell(M + S Z)]` with :math:`S \le` ``score_sd``,
    and its error bound. For :math:`S \le 1` the order comes from :data:`HERMITE_ORDERS`
    (measured against adaptive quadrature over :math:`M \in [-12, 12]`: error at most
    :data:`HERMITE_TABLE_ERROR`; the error grows with :math:`S`). Beyond, the loss is
    analytic in the strip :math:`|\mathrm{Im}\,u| < \pi`, so the error decays like
    :math:`\exp(-c\sqrt n/S)` (measured :math:`c \ge 4.6` for :math:`S \ge 1`): order
    :math:`\lceil 18 S^2\rceil` (at most 512) with bound :math:`2\exp(-4.5\sqrt n/S)`,
    below :math:`10^{-8}` up to :math:`S \approx 5`."""
    for largest_sd, order in HERMITE_ORDERS:
        if score_sd <= largest_sd:
            return order, HERMITE_TABLE_ERROR
    order = int(min(math.ceil(18.0 * score_sd**2), 512))
    return order, 2.0 * math.exp(-4.5 * math.sqrt(order) / score_sd)


def margin_moments(law: SequenceLaw, normals: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    r""":math:`M` and :math:`S` (module docstring) at every point of ``normals`` (rows of
    :math:`z_c`), for every class row: arrays (C, rows). With unnormalised weights
    :math:`e_t = \exp(a_t - \text{shift})`, :math:`M = (\sum e_t\gamma_0 k_t
    + y^* b\sum e_t z_{c,t})/\sum e_t` and :math:`S^2 = \tau^2\sum e_t^2/(\sum e_t)^2
    + b^2/T`. When the noise cannot move a logit by more than 300
    (:math:`6.4\lambda\sqrt T \le 300`) the shift is the class's largest mean logit and
    :math:`e_t = e^{\lambda z_{c,t}}\,e^{m_t - \max m}` (no overflow, the leading
    token's weight stays above :math:`e^{-300}`, and every sum is a matrix product shared
    by the classes); otherwise it is each point's largest logit."""
    if law.logit_scale * NORMAL_BOUND * math.sqrt(law.T) > 300.0:
        return margin_moments_shifted(law, normals)
    noise = np.exp(law.logit_scale * normals)  # (rows, T)
    factors = np.exp(law.logit_means - law.logit_means.max(axis=1, keepdims=True))  # (C, T)
    total = (noise @ factors.T).T
    scored = (noise @ (factors * law.margin_means).T).T
    tilted = ((noise * normals) @ factors.T).T
    squares = ((noise * noise) @ (factors * factors).T).T
    return margin_from_sums(law, total, scored, tilted, squares)


def margin_moments_shifted(law: SequenceLaw, normals: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    r""":func:`margin_moments` with each point's largest logit as the shift (large
    :math:`\lambda`)."""
    weights = law.logit_scale * normals[None] + law.logit_means[:, None, :]
    weights -= weights.max(axis=-1, keepdims=True)
    np.exp(weights, out=weights)
    total = weights.sum(axis=-1)
    scored = weights @ law.margin_means
    tilted = np.einsum("cnt,nt->cn", weights, normals)
    squares = np.einsum("cnt,cnt->cn", weights, weights)
    return margin_from_sums(law, total, scored, tilted, squares)


def margin_from_sums(
    law: SequenceLaw,
    total: np.ndarray,
    scored: np.ndarray,
    tilted: np.ndarray,
    squares: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    r""":math:`M` and :math:`S` from :math:`\sum e_t`, :math:`\sum e_t\gamma_0k_t`,
    :math:`\sum e_t z_{c,t}` and :math:`\sum e_t^2`, each (C, rows)."""
    mean = (scored + law.score_slope * law.labels[:, None] * tilted) / total
    spread = squares / (total * total)
    sd = np.sqrt(law.score_residual**2 * spread + law.score_slope**2 / law.T)
    return mean, sd


def conditional_accuracy(mean: np.ndarray, sd: np.ndarray) -> np.ndarray:
    r""":math:`P(y^*f > 0 \mid z_c) = \Phi(M/S)`, averaged over the class rows."""
    return ndtr(mean / sd).mean(axis=0)


def conditional_loss(mean: np.ndarray, sd: np.ndarray, order: int) -> np.ndarray:
    r""":math:`E[\ell(y^*f) \mid z_c] \approx \sum_j w_j\,\ell(M + \sqrt2 S x_j)/\sqrt\pi`
    (Gauss-Hermite of ``order``), averaged over the class rows, with
    :math:`\ell(u) = \max(-u, 0) + \log(1 + e^{-|u|})` (absolute error :math:`10^{-16}`)."""
    nodes, weights = hermite_rule(order)
    margins = mean[..., None] + sd[..., None] * nodes
    loss = np.maximum(-margins, 0.0)
    np.abs(margins, out=margins)
    np.negative(margins, out=margins)
    np.exp(margins, out=margins)
    margins += 1.0
    loss += np.log(margins, out=margins)
    return (loss @ weights).mean(axis=0)


class Estimate(NamedTuple):
    """A sampled quantity: its value, stated error and the QMC points per class used."""

    value: float
    error: float
    points: int


def replicate_estimate(sums: np.ndarray, rows: int, floor: float) -> Estimate:
    r"""The replicates' mean of ``sums / rows`` and its stated error
    SAFETY :math:`\times` standard error + ``floor`` (deterministic error bounds)."""
    estimates = sums / rows
    error = SAFETY * float(estimates.std(ddof=1)) / math.sqrt(len(estimates))
    return Estimate(float(estimates.mean()), error + floor, rows * len(estimates))


def uniform_attention_metrics(
    law: SequenceLaw, order: int, floors: dict[str, float]
) -> dict[str, Estimate]:
    r"""Accuracy and loss without logit noise (:math:`q = 0`): :math:`s = 1/T` and
    :math:`\sum_t s_t z_{c,t} = 0`, so the integrand is its value at :math:`z_c = 0`."""
    mean, sd = margin_moments(law, np.zeros((1, law.T)))
    return {
        "accuracy": Estimate(float(conditional_accuracy(mean, sd)[0]), floors["accuracy"], 1),
        "loss": Estimate(float(conditional_loss(mean, sd, order)[0]), floors["loss"], 1),
    }


def block_sums(
    law: SequenceLaw, block: np.ndarray, names: list[str], order: int
) -> dict[str, np.ndarray]:
    """Per replicate, the sums over ``block`` (REPLICATES, rows, T) of the conditional
    accuracy and/or loss (``names``), evaluated :data:`CHUNK_ROWS` points at a time (arrays
    that stay in cache)."""
    sums = {name: np.zeros(REPLICATES) for name in names}
    chunk = max(CHUNK_ROWS // block.shape[1], 1)
    for first in range(0, REPLICATES, chunk):
        part = block[first : first + chunk]
        mean, sd = margin_moments(law, part.reshape(-1, law.T))
        for name in names:
            if name == "accuracy":
                values = conditional_accuracy(mean, sd)
            else:
                values = conditional_loss(mean, sd, order)
            sums[name][first : first + chunk] = values.reshape(len(part), -1).sum(axis=1)
    return sums


def sampled_metrics(
    law: SequenceLaw, tolerance: float, max_points: int = MAX_POINTS
) -> dict[str, Estimate]:
    r"""Accuracy and loss by randomised QMC over :math:`z_c`: each quantity takes the next
    (doubling) block of every replicate until its stated error is at most ``tolerance``
    or ``max_points`` points (all replicates) are used."""
    order, hermite_bound = hermite_order(law.score_sd)
    floors = {"accuracy": law.cap_error, "loss": law.cap_error + hermite_bound}
    if law.logit_scale == 0.0:
        return uniform_attention_metrics(law, order, floors)
    sums = {name: np.zeros(REPLICATES) for name in floors}
    found: dict[str, Estimate] = {}
    rows = 0
    last = max(int(max_points // REPLICATES).bit_length() - 1, FIRST_EXPONENT)
    for exponent in range(FIRST_EXPONENT, last + 1):
        pending = [name for name in floors if name not in found or found[name].error > tolerance]
        if not pending:
            break
        block = normal_block(law.T, exponent)
        rows += block.shape[1]
        for name, values in block_sums(law, block, pending, order).items():
            sums[name] += values
            found[name] = replicate_estimate(sums[name], rows, floors[name])
    return found


def group_table(law: SequenceLaw) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The groups present: their codes, token counts and logit means (C, G)."""
    codes, first, counts = np.unique(law.groups, return_index=True, return_counts=True)
    return codes, counts, law.logit_means[:, first]


def tie_selection(law: SequenceLaw) -> np.ndarray:
    r"""Group argmax probabilities without logit noise (:math:`\lambda = 0`): the tokens
    with the largest mean share the argmax uniformly. Shape (C, G)."""
    _, counts, means = group_table(law)
    leading = means == means.max(axis=1, keepdims=True)
    tokens = leading * counts
    return tokens / tokens.sum(axis=1, keepdims=True)


def group_selection(law: SequenceLaw) -> tuple[np.ndarray, np.ndarray]:
    r"""Probability that the argmax token lies in each group, per class row, shape (C, G):
    :math:`n_g\int\phi(z)\prod_h\Phi(z + \delta_{gh})^{n_h - [h = g]}dz` by the
    trapezoidal rule on :math:`[-9, 9]` with step :data:`GRID_STEP` and, from every other
    node, with twice that step (the pair gives the error estimate)."""
    if law.logit_scale == 0.0:
        ties = tie_selection(law)
        return ties, ties
    _, counts, means = group_table(law)
    differences = means[:, :, None] - means[:, None, :]
    bound = DELTA_CLIP * law.logit_scale
    delta = np.clip(differences, -bound, bound) / law.logit_scale  # (C, G, H)
    nodes = round(2.0 * GRID_HALF_WIDTH / GRID_STEP) + 1
    grid = np.linspace(-GRID_HALF_WIDTH, GRID_HALF_WIDTH, nodes)
    powers = counts[None, :] - np.eye(len(counts))  # (G, H): n_h - [h = g]
    log_cdf = log_ndtr(grid + delta[..., None])  # (C, G, H, Z)
    log_integrand = np.einsum("gh,cghz->cgz", powers, log_cdf) - 0.5 * grid**2
    integrand = np.exp(log_integrand - 0.5 * math.log(2.0 * math.pi))
    # The end nodes weigh phi(9) < 1e-18: plain sums are the trapezoidal rule.
    fine = GRID_STEP * integrand.sum(axis=-1)
    coarse = 2.0 * GRID_STEP * integrand[..., ::2].sum(axis=-1)
    return counts * fine, counts * coarse


def selection_metrics(law: SequenceLaw) -> tuple[float, float]:
    r"""Probability that the argmax token is relevant (group 0), averaged over the class
    rows, and its error bound: the change when the grid step doubles (the trapezoidal
    rule's error on an analytic, rapidly decaying integrand shrinks far faster than the
    step), plus the tails :math:`2\Phi(-9)` per token."""
    relevant = np.flatnonzero(group_table(law)[0] == 0)
    fine, coarse = (part[:, relevant].sum(axis=1).mean() for part in group_selection(law))
    tails = law.T * 2.0 * float(ndtr(-GRID_HALF_WIDTH))
    error = (abs(float(fine - coarse)) + tails) if law.logit_scale > 0.0 else 0.0
    return float(fine), error + law.cap_error


def integrate(
    law: SequenceLaw, tolerance: float = 1e-4, max_points: int = MAX_POINTS
) -> PopulationMetrics:
    """The population metrics of ``law`` (see the module docstring)."""
    sampled = sampled_metrics(law, tolerance, max_points)
    relevant, relevant_error = selection_metrics(law)
    accuracy, loss = sampled["accuracy"], sampled["loss"]
    return PopulationMetrics(
        accuracy=min(max(accuracy.value, 0.0), 1.0),
        loss=loss.value,
        selects_relevant=min(max(relevant, 0.0), 1.0),
        accuracy_error=accuracy.error,
        loss_error=loss.error,
        selects_relevant_error=relevant_error,
        points=max(accuracy.points, loss.points),
    )


def population_metrics(
    model: DataModel,
    q_sq: float,
    q_signal: np.ndarray,
    tolerance: float = 1e-4,
    max_points: int = MAX_POINTS,
) -> PopulationMetrics:
    r"""Test accuracy, expected test loss and the probability of selecting a relevant
    token, over the test distribution of ``model``, for the trained query with
    :math:`\|q\|^2 =` ``q_sq`` and :math:`(q\cdot e_1, q\cdot e_2) =` ``q_signal``. The
    quasi-Monte Carlo points (per class, all replicates) double from
    :math:`16\cdot 2^9` until each stated error is at most ``tolerance`` or
    ``max_points`` are used; the returned errors say what was achieved."""
    require(
        math.isfinite(tolerance) and tolerance > 0.0,
        "tolerance",
        tolerance,
        "a finite number > 0",
    )
    smallest = REPLICATES * 2**FIRST_EXPONENT
    require(
        isinstance(max_points, int) and max_points >= smallest,
        "max_points",
        max_points,
        f"an integer >= {smallest}",
    )
    return integrate(sequence_law(model, q_sq, q_signal), tolerance, max_points)


#: What a run records at each log point: the tolerance, and a budget of points per class
#: that bounds the cost of one log point (about 20 ms here) when the logit noise scale
#: sigma ||q|| is large; the stated errors then say what the budget achieved.
RECORD_TOLERANCE = 1e-4
RECORD_MAX_POINTS = REPLICATES * 2**12

#: History columns written by :func:`population_columns`.


def population_columns(
    model: DataModel, q_sq: float, q_signal: np.ndarray, has_signal: bool = True
) -> dict[str, float]:
    r"""The population metrics and their stated errors as history columns
    (:data:`POPULATION_COLUMNS`); NaN when the data carry no known signal directions or the
    moments are not finite (the run's own checks report the latter). Tolerance
    :data:`RECORD_TOLERANCE`, at most :data:`RECORD_MAX_POINTS` points. Rounding that leaves
    :math:`\|q\|^2` below :math:`q_1^2 + q_2^2` is absorbed, never raised."""
    signal = np.asarray(q_signal, dtype=np.float64)
    if not (has_signal and math.isfinite(q_sq) and np.isfinite(signal).all()):
        return dict.fromkeys(POPULATION_COLUMNS, math.nan)
    q_sq = max(float(q_sq), float(signal @ signal))
    metrics = population_metrics(model, q_sq, signal, RECORD_TOLERANCE, RECORD_MAX_POINTS)
    values = (
        metrics.accuracy,
        metrics.loss,
        metrics.selects_relevant,
        metrics.accuracy_error,
        metrics.loss_error,
        metrics.selects_relevant_error,
    )
    return dict(zip(POPULATION_COLUMNS, values, strict=True))


__all__ = [
    "POPULATION_COLUMNS",
    "population_columns",
    "PopulationMetrics",
    "SequenceLaw",
    "population_metrics",
    "sequence_law",
    "integrate",
    "group_selection",
    "REPLICATES",
    "SAFETY",
]
