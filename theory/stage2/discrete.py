r"""Stage 2 in discrete time: the mean-field GD map at the configuration's own step.

Reconstruction (this package's own derivation). Full-batch GD on
:math:`f(X) = \nu^\top X^\top\mathrm{softmax}(XW^\top p)` moves
:math:`p \leftarrow p - \alpha WG`, :math:`W \leftarrow W - \alpha pG^\top`
(:math:`G = \sum_{i,t}h_{i,t}x_{i,t}`, :math:`h = \partial L/\partial a`). The query
:math:`q = W^\top p`, :math:`M = W^\top W` and :math:`\pi = \|p\|^2` then obey, exactly,

.. math::

    q' &= q - \alpha(M + \pi I)G + \alpha^2 (q\cdot G)\,G,\\
    M' &= M - \alpha(Gq^\top + qG^\top) + \alpha^2\pi\,GG^\top,\\
    \pi' &= \pi - 2\alpha\,q\cdot G + \alpha^2\,G^\top M G

(:func:`step_residuals` checks it symbolically). The gradient flow is the
:math:`\alpha\to0` limit. In token space (:math:`a = Xq`, :math:`g = XG`) only
:math:`XMX^\top = XW_0^\top W_0X^\top + L` enters, :math:`L` the sum of the rank-two
updates: no rank-one closure (:mod:`theory.stage2.preconditioner`) is needed.

**Mean field.** As for the flow (:mod:`theory.stage2.flow`): :math:`XW_0^\top W_0X^\top
\approx \kappa_0\mathcal G`, with the mean-field Gram :math:`\mathcal G` (self terms
:math:`\sigma_\epsilon^2 d` and the signal block), and samples of one type identical. The
state is the logits per type and token slot, extended by the signal logits :math:`\beta_s`
(no training tokens: they carry no weight in :math:`x\cdot h = \sum w_k m_t x_{k,t}h_{k,t}`):

.. math::

    a' = a - \alpha(\kappa_0 g + L h + \pi g) + \alpha^2(a\cdot h)\,g,\quad
    L' = L - \alpha(g\otimes a + a\otimes g) + \alpha^2\pi\, g\otimes g,\quad
    \pi' = \pi - 2\alpha\,a\cdot h + \alpha^2\,h\cdot(\kappa_0 g + L h)

(:math:`u\otimes v` maps :math:`h` to :math:`u\,(v\cdot h)`), from :math:`a = 0`,
:math:`L = 0`, :math:`\pi = 0`.

**Where GD departs from the flow.** The first step moves the signal logit by
:math:`\alpha\kappa_0(\mathcal Gh_0)_\beta \propto \alpha\kappa_0\|\mu\|^2\gamma_0`: when
:math:`\alpha\|\mu\|^2 \gg 1` the clean samples saturate within the first steps and the
signal overshoots what the flow reaches at the time :math:`\alpha k`; the noisy samples,
whose relevant token carries the same signal, then need a longer memorisation to
switch. Larger still, the noisy samples' logits oscillate from step to step (the map is
chaotic in :math:`\|\mu\|`, and so are the runs).

**Long horizons.** The map takes up to :data:`MAP_STEPS` steps exactly. Beyond, once no
logit moves by more than :data:`SETTLED` in a step, a GD step is a step of the flow to
first order, and the closure flow (:mod:`theory.stage2.flow`, from the map's state by
:func:`to_flow_state`; the map tracks :math:`b = XW_0^\top p` for it) carries the state on
(:func:`evolve`); a member still oscillating reaches no further. The flow of the map's own
variables (:func:`velocity`, :func:`flow_to`: the map without its :math:`\alpha^2` terms)
needs no closure; it tests the closure (it is stiff in :math:`\log\tau`, so the closure
flow is the one used for long horizons).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

from theory.foundation.data_model import DataModel, Training
from theory.stage2.flow import Population, State, population
from theory.variants.kernels import loss_weight as loss_weights

#: A member is settled (GD follows the flow) once no training logit moves by more than
#: this in one step (for :data:`QUIET_STEPS` steps in a row).
SETTLED = 0.02
#: GD steps the map takes exactly; beyond, the settled members follow the flow.
MAP_STEPS = 5000
#: Relative and absolute tolerance of the flow after the hand-over (Bogacki-Shampine).
FLOW_RTOL, FLOW_ATOL = 1e-4, 1e-7


@dataclass(frozen=True)
class Table:
    r"""The mean-field population as arrays, for a batch of signal strengths (leading
    axis B). Types k (rows; ``multiplicity[k, t]`` = :math:`w_k m_t` training tokens per
    cell), slots t, and P signal directions: a token of cell (k, t) carries
    ``coef[k, t, s]`` of direction s, whose squared norm is ``strength[b, s]`` (the
    symmetric population folds both classes into one direction with
    :math:`\sigma_t = c_t + c'_t` and :math:`\|\mu\|^2/2`; :func:`two_class_table` keeps
    :math:`\mu_{+1}, \mu_{-1}` apart). ``signal_kappa`` (B, P), if given, replaces
    :math:`\kappa_0` by :math:`\kappa_0\,\kappa_s` along each signal direction;
    ``memorisation`` may differ per member (the sensitivity probes)."""

    counts: np.ndarray  # (S,)
    scores: np.ndarray  # (K, S)
    multiplicity: np.ndarray  # (K, S)
    loss_scale: np.ndarray  # (K,): varsigma_k / n
    varsigma: np.ndarray  # (K,)
    coef: np.ndarray  # (K, S, P)
    memorisation: float | np.ndarray  # sigma^2 d, or (B, 1) per member
    kappa0: float
    strength: np.ndarray  # (B, P)
    signal_kappa: np.ndarray | None = None
    loss: str = "logistic"  # the training loss, whose weight w(varsigma f) enters h

    @property
    def batch(self) -> int:
        return self.strength.shape[0]

    @property
    def cells(self) -> int:
        return self.scores.size

    @classmethod
    def of(
        cls,
        pop: Population,
        strengths: np.ndarray | None = None,
        memorisation: np.ndarray | None = None,
        signal_kappa: np.ndarray | None = None,
    ) -> Table:
        r"""The symmetric table of ``pop`` at its own :math:`\|\mu\|^2` or at each of
        ``strengths`` (the batch); ``memorisation`` and ``signal_kappa`` scale
        :math:`\sigma_\epsilon^2 d` and :math:`\kappa_0` along the signal per member."""
        values = np.atleast_1d(
            np.asarray(pop.signal_strength if strengths is None else strengths, dtype=float)
        )
        K = pop.scores.shape[0]
        scaled = (
            pop.memorisation
            if memorisation is None
            else pop.memorisation * np.asarray(memorisation, dtype=float)[:, None]
        )
        kappa = None if signal_kappa is None else np.asarray(signal_kappa, dtype=float)[:, None]
        return cls(
            counts=pop.counts,
            scores=pop.scores,
            multiplicity=pop.multiplicity,
            loss_scale=pop.varsigma / pop.n,
            varsigma=pop.varsigma,
            coef=np.broadcast_to(pop.signal[None, :, None], (K, pop.signal.size, 1)),
            memorisation=scaled,
            kappa0=pop.kappa0,
            strength=0.5 * values[:, None],
            signal_kappa=kappa,
            loss=pop.loss,
        )

    def select(self, members: np.ndarray) -> Table:
        """The table of some batch members only."""
        kappa = None if self.signal_kappa is None else self.signal_kappa[members]
        memorisation = self.memorisation
        if isinstance(memorisation, np.ndarray):
            memorisation = memorisation[members]
        return replace(
            self, strength=self.strength[members], signal_kappa=kappa, memorisation=memorisation
        )


def two_class_table(model: DataModel, training: Training, strengths: np.ndarray) -> Table:
    r"""Both classes apart, at each :math:`\|\mu\|^2` of ``strengths``: types (clean, +1),
    (noisy, +1), (clean, -1), (noisy, -1), each with half of its type's samples; signal
    directions :math:`\mu_{+1}, \mu_{-1}`, a token of a class-:math:`y^*` sample carrying
    :math:`c_t` of its own class's signal and :math:`c'_t` of the other's."""
    pop = population(model, training)
    groups = [group for group in model.groups if group.count > 0]
    own = np.array([float(group.own) for group in groups])
    other = np.array([float(group.opposite) for group in groups])
    plus, minus = np.stack([own, other], axis=-1), np.stack([other, own], axis=-1)
    weights = np.concatenate([pop.weights, pop.weights]) / 2
    varsigma = np.concatenate([pop.varsigma, pop.varsigma])
    values = np.atleast_1d(np.asarray(strengths, dtype=float))
    return Table(
        counts=pop.counts,
        scores=np.vstack([pop.scores, pop.scores]),
        multiplicity=np.outer(weights, pop.counts),
        loss_scale=varsigma / pop.n,
        varsigma=varsigma,
        coef=np.stack([plus, plus, minus, minus]),
        memorisation=pop.memorisation,
        kappa0=pop.kappa0,
        strength=values[:, None] * np.ones(2),
        loss=pop.loss,
    )


def _loss_weight(table: Table, margins: np.ndarray) -> np.ndarray:
    """The training loss's weight w at ``margins``; the logistic one as the flow's
    ``weight_function`` writes it (no overflow)."""
    if table.loss == "logistic":
        return 0.5 * (1.0 - np.tanh(0.5 * margins))
    return loss_weights(margins, table.loss)


def logit_gradient(table: Table, logits: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    r""":math:`h_{k,t} = -w(\varsigma_k\bar f_k)\varsigma_k s_{k,t}(\bar\gamma_{k,t} -
    \bar f_k)/n` (shape (B, K, S); w the training loss's weight) and the outputs
    :math:`\bar f_k` (B, K) at ``logits`` (B, K, S), as
    :meth:`theory.stage2.flow.FlowKernel.row_gradient` computes them row by row."""
    weights = np.exp(logits - logits.max(axis=-1, keepdims=True))
    probabilities = weights / (weights @ table.counts)[..., None]
    output = (probabilities * table.scores) @ table.counts
    loss_weight = _loss_weight(table, table.varsigma * output)
    gaps = table.scores - output[..., None]
    return -(loss_weight * table.loss_scale)[..., None] * probabilities * gaps, output


def gram(table: Table, h: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    r"""Mean-field :math:`\mathcal Gh` on the cells, flattened (B, C), and the signal rows
    (B, P): :math:`g_s = \|\mu_s\|^2\sum w_k m_t c_{k,t,s}h_{k,t}`,
    :math:`(\mathcal Gh)_{k,t} = \sigma_\epsilon^2 d\,h_{k,t} + \sum_s c_{k,t,s}g_s`."""
    coef = table.coef.reshape(table.cells, -1)
    flat = h.reshape(h.shape[0], -1)
    rows = table.strength * ((table.multiplicity.reshape(-1) * flat) @ coef)
    return table.memorisation * flat + rows @ coef.T, rows


@dataclass(frozen=True)
class MapState:
    r"""The mean field for a batch: the logits extended by the signal logits, ``a``
    (B, C + P); ``L`` (B, C + P, C), the columns of the rank-two updates that meet the
    cells; :math:`\pi` (B,); the flow time ``tau`` (B,); the :math:`W_0` channel
    :math:`b = XW_0^\top p` (B, C + P) and ``B`` (B, C + P, C), the sum of
    :math:`b_j\otimes g_j` its update needs; the GD steps taken."""

    a: np.ndarray
    L: np.ndarray
    pi: np.ndarray
    tau: np.ndarray
    b: np.ndarray
    B: np.ndarray
    steps: int

    @classmethod
    def zero(cls, table: Table) -> MapState:
        size, batch = table.cells + table.strength.shape[1], table.batch
        vector, matrix = np.zeros((batch, size)), np.zeros((batch, size, table.cells))
        return cls(vector, matrix, np.zeros(batch), np.zeros(batch), vector, matrix, 0)

    def logits(self, table: Table) -> np.ndarray:
        """The training logits (B, K, S)."""
        return self.a[:, : table.cells].reshape(-1, *table.scores.shape)

    def signal(self, table: Table) -> np.ndarray:
        r"""The signal logits :math:`\beta_s` (B, P)."""
        return self.a[:, table.cells :]

    def select(self, members: np.ndarray) -> MapState:
        return MapState(
            self.a[members],
            self.L[members],
            self.pi[members],
            self.tau[members],
            self.b[members],
            self.B[members],
            self.steps,
        )


@dataclass(frozen=True)
class Forces:
    """What one state drives: the gradient ``w`` = :math:`w_k m_t h_{k,t}` (B, C), the
    extended :math:`g` (B, C + P), :math:`XW_0^\top W_0X^\top h` = ``start``,
    :math:`Kh` = ``kernel`` and :math:`a\\cdot h`."""

    w: np.ndarray
    g: np.ndarray
    start: np.ndarray
    kernel: np.ndarray
    a_dot_h: np.ndarray


def forces(table: Table, a: np.ndarray, L: np.ndarray) -> Forces:
    r""":math:`h`, :math:`g = \mathcal Gh`, :math:`(\kappa_0\mathcal G + L)h` and
    :math:`a\cdot h` at the logits ``a`` (module docstring)."""
    cells = table.cells
    h, _ = logit_gradient(table, a[:, :cells].reshape(-1, *table.scores.shape))
    g_cells, rows = gram(table, h)
    g = np.concatenate([g_cells, rows], axis=1)
    w = table.multiplicity.reshape(-1) * h.reshape(h.shape[0], -1)
    start = table.kappa0 * g
    if table.signal_kappa is not None:
        excess = rows * (table.signal_kappa - 1.0)
        coef = table.coef.reshape(cells, -1)
        start = start + table.kappa0 * np.concatenate([excess @ coef.T, excess], axis=1)
    kernel = start + (L @ w[:, :, None])[:, :, 0]
    return Forces(w, g, start, kernel, np.einsum("bi,bi->b", w, a[:, :cells]))


def step(
    table: Table, state: MapState, alpha: float, f: Forces | None = None, channel: bool = True
) -> MapState:
    """One GD step of the discrete mean field (module docstring), every batch member
    (``f``: the state's :func:`forces`, if already computed). The :math:`W_0` channel
    (only where ``channel``: the hand-over to the flow needs it):
    :math:`b' = b - \alpha\\kappa_0 g + \alpha^2 B h`, :math:`B' = B + b\\otimes g`."""
    f = f or forces(table, state.a, state.L)
    pi = state.pi[:, None]
    cells = table.cells
    g, a = f.g, state.a
    columns = -alpha * a[:, None, :cells] + alpha**2 * pi[:, :, None] * g[:, None, :cells]
    L = state.L + g[:, :, None] * columns - alpha * a[:, :, None] * g[:, None, :cells]
    b, B = state.b, state.B
    if channel:
        b = b + alpha**2 * (B @ f.w[:, :, None])[:, :, 0] - alpha * f.start
        B = B + state.b[:, :, None] * g[:, None, :cells]
    return MapState(
        a=a - alpha * (f.kernel + pi * g) + alpha**2 * f.a_dot_h[:, None] * g,
        L=L,
        pi=state.pi
        - 2 * alpha * f.a_dot_h
        + alpha**2 * np.einsum("bi,bi->b", f.w, f.kernel[:, :cells]),
        tau=state.tau + alpha,
        b=b,
        B=B,
        steps=state.steps + 1,
    )


class Stepper:
    r"""The map's steps for one table, in place on buffers allocated once: the arithmetic
    of :func:`forces` and :func:`step` operation for operation, in the same order and on
    the same array layouts (so the numbers are the same bit for bit); NumPy's per-call
    allocations and views are made once. For the logistic loss with types of sign
    :math:`\varsigma = \pm1` the loss weight times :math:`-\varsigma/n` is formed as
    :math:`(1 - \tanh((\varsigma/2)\bar f))\,(-\varsigma/(2n))`: the scalings by one
    half and the sign changes are exact, so it equals :func:`logit_gradient`'s
    :math:`-\tfrac12(1 - \tanh(\tfrac12\varsigma\bar f))\,\varsigma/n`.

    ``a``, ``L``, ``pi``, ``tau`` (and ``b``, ``B`` with the :math:`W_0` ``channel``) hold
    the state; :meth:`compute_forces` fills ``w``, ``g``, ``start``, ``kernel`` and
    ``a_dot_h`` for it, :meth:`update` then takes the step."""

    def __init__(self, table: Table, alpha: float, state: MapState, channel: bool) -> None:
        batch, (K, S), cells = table.batch, table.scores.shape, table.cells
        size, signals = cells + table.strength.shape[1], table.strength.shape[1]
        self.table, self.alpha, self.channel = table, alpha, channel
        self.a, self.L, self.pi = state.a.copy(), state.L.copy(), state.pi.copy()
        self.b, self.B = state.b.copy(), state.B.copy()
        self.coef = table.coef.reshape(cells, -1)
        self.coef_t = self.coef.T
        self.multiplicity = table.multiplicity.reshape(-1)
        self.exact_logistic = table.loss == "logistic" and bool(np.all(np.abs(table.varsigma) == 1))
        self.half_varsigma, self.scale = 0.5 * table.varsigma, -0.5 * table.loss_scale
        self.kappa_excess = None if table.signal_kappa is None else table.signal_kappa - 1.0
        self.step_scales = np.array([alpha**2, 2 * alpha])
        empty = np.empty
        cube, row, vector = (batch, K, S), (batch, K), (batch, size)
        self.top, self.denominator, self.output, self.factor = (empty(row) for _ in range(4))
        self.e, self.p, self.weighted, self.gaps, self.h = (empty(cube) for _ in range(5))
        self.w, self.columns, self.cell_work, self.signal_part = (
            empty((batch, cells)) for _ in range(4)
        )
        self.rows, self.excess = empty((batch, signals)), empty((batch, signals))
        self.g, self.start, self.kernel, self.extra, self.scaled, self.work = (
            empty(vector) for _ in range(6)
        )
        self.product, self.outer = empty((batch, size, 1)), empty(self.L.shape)
        self.a_dot_h, self.w_kernel, self.per_member = (empty(batch) for _ in range(3))
        self.scaled_a_dot_h = empty((batch, 2))
        self.tau = state.tau.copy()
        self._forces = Forces(self.w, self.g, self.start, self.kernel, self.a_dot_h)
        self._views(batch, K, S, cells)

    def _views(self, batch: int, K: int, S: int, cells: int) -> None:
        """The buffers' views the steps read and write (made once)."""
        self.z = self.a[:, :cells].reshape(batch, K, S)
        self.slots = [self.z[..., slot] for slot in range(S)]
        self.a_cells, self.g_cells, self.g_signal = self.a[:, :cells], *np.split(self.g, [cells], 1)
        self.extra_cells, self.extra_signal = np.split(self.extra, [cells], 1)
        self.flat = self.h.reshape(batch, cells)
        self.top_, self.denominator_ = self.top[..., None], self.denominator[..., None]
        self.output_, self.factor_ = self.output[..., None], self.factor[..., None]
        self.w_, self.product_ = self.w[:, :, None], self.product[:, :, 0]
        self.kernel_cells, self.pi_ = self.kernel[:, :cells], self.pi[:, None]
        self.per_member_, self.g_ = self.per_member[:, None], self.g[:, :, None]
        self.columns_, self.g_cells_ = self.columns[:, None, :], self.g_cells[:, None, :]
        self.scaled_, self.b_ = self.scaled[:, :, None], self.b[:, :, None]
        self.scaled_cells, self.a_dot_h_ = self.scaled[:, :cells], self.a_dot_h[:, None]
        self.a_dot_h_alpha_sq = self.scaled_a_dot_h[:, :1]
        self.a_dot_h_twice_alpha = self.scaled_a_dot_h[:, 1]

    def forces(self) -> Forces:
        """The forces :meth:`compute_forces` filled (the buffers themselves: valid until
        the next step)."""
        return self._forces

    def _gradient(self) -> None:
        """:func:`logit_gradient` into ``h`` (and ``output``)."""
        t, top, factor = self.table, self.top, self.factor
        e, p, output = self.e, self.p, self.output
        slots = self.slots  # the largest logit of each row (a maximum is exact in any order)
        if len(slots) == 1:
            np.copyto(top, slots[0])
        else:
            np.maximum(slots[0], slots[1], out=top)
        for slot in slots[2:]:
            np.maximum(top, slot, out=top)
        np.subtract(self.z, self.top_, out=e)
        np.exp(e, out=e)
        np.matmul(e, t.counts, out=self.denominator)
        np.divide(e, self.denominator_, out=p)
        np.multiply(p, t.scores, out=self.weighted)
        np.matmul(self.weighted, t.counts, out=output)
        if self.exact_logistic:
            np.multiply(self.half_varsigma, output, out=factor)
            np.tanh(factor, out=factor)
            np.subtract(1.0, factor, out=factor)
            np.multiply(factor, self.scale, out=factor)
        else:
            np.negative(_loss_weight(t, t.varsigma * output) * t.loss_scale, out=factor)
        np.subtract(t.scores, self.output_, out=self.gaps)
        np.multiply(self.factor_, p, out=self.h)
        np.multiply(self.h, self.gaps, out=self.h)

    def compute_forces(self) -> None:
        """:func:`forces` of the current state into the buffers."""
        self._gradient()
        t, flat, rows, start = self.table, self.flat, self.rows, self.start
        np.multiply(self.multiplicity, flat, out=self.w)
        np.matmul(self.w, self.coef, out=rows)
        np.multiply(t.strength, rows, out=rows)
        np.multiply(t.memorisation, flat, out=self.cell_work)
        np.matmul(rows, self.coef_t, out=self.signal_part)
        np.add(self.cell_work, self.signal_part, out=self.g_cells)
        np.copyto(self.g_signal, rows)
        np.multiply(t.kappa0, self.g, out=start)
        if self.kappa_excess is not None:
            np.multiply(rows, self.kappa_excess, out=self.excess)
            np.matmul(self.excess, self.coef_t, out=self.signal_part)
            np.copyto(self.extra_cells, self.signal_part)
            np.copyto(self.extra_signal, self.excess)
            np.multiply(t.kappa0, self.extra, out=self.extra)
            np.add(start, self.extra, out=start)
        np.matmul(self.L, self.w_, out=self.product)
        np.add(start, self.product_, out=self.kernel)
        np.einsum("bi,bi->b", self.w, self.a_cells, out=self.a_dot_h)

    def update(self) -> None:
        """:func:`step` from the current state with the forces :meth:`compute_forces`
        filled, in place."""
        alpha, alpha_sq = self.alpha, self.alpha**2
        a, g, pi, L, outer = self.a, self.g, self.pi, self.L, self.outer
        columns, per_member, work = self.columns, self.per_member, self.work
        if self.channel:
            self._update_channel()
        # columns = -alpha a + alpha^2 pi g = alpha^2 pi g - alpha a: (-alpha) a = -(alpha a)
        # and x + (-y) = x - y exactly
        np.multiply(alpha, a, out=self.scaled)
        np.multiply(alpha_sq, pi, out=per_member)
        np.multiply(self.per_member_, self.g_cells, out=self.cell_work)
        np.subtract(self.cell_work, self.scaled_cells, out=columns)
        np.multiply(self.g_, self.columns_, out=outer)
        np.add(L, outer, out=L)
        np.multiply(self.scaled_, self.g_cells_, out=outer)
        np.subtract(L, outer, out=L)
        np.multiply(self.pi_, g, out=work)
        np.add(self.kernel, work, out=work)
        np.multiply(alpha, work, out=work)
        np.subtract(a, work, out=a)
        np.multiply(self.a_dot_h_, self.step_scales, out=self.scaled_a_dot_h)  # alpha^2, 2 alpha
        np.multiply(self.a_dot_h_alpha_sq, g, out=work)
        np.add(a, work, out=a)
        np.einsum("bi,bi->b", self.w, self.kernel_cells, out=self.w_kernel)
        np.subtract(pi, self.a_dot_h_twice_alpha, out=pi)
        np.multiply(alpha_sq, self.w_kernel, out=self.w_kernel)
        np.add(pi, self.w_kernel, out=pi)
        np.add(self.tau, alpha, out=self.tau)

    def _update_channel(self) -> None:
        r""":math:`b' = b + \alpha^2 Bw - \alpha\,` start, :math:`B' = B + b\otimes g`."""
        alpha, alpha_sq, work = self.alpha, self.alpha**2, self.work
        np.matmul(self.B, self.w_, out=self.product)
        np.multiply(self.b_, self.g_cells_, out=self.outer)
        np.add(self.B, self.outer, out=self.B)
        np.multiply(alpha_sq, self.product_, out=work)
        np.add(self.b, work, out=self.b)
        np.multiply(alpha, self.start, out=work)
        np.subtract(self.b, work, out=self.b)


def velocity(table: Table, a: np.ndarray, L: np.ndarray, pi: np.ndarray) -> tuple[np.ndarray, ...]:
    r"""The flow :math:`d/d\tau` of :math:`(a, L, \pi)`: the map's first-order terms."""
    f = forces(table, a, L)
    cells = table.cells
    da = -(f.kernel + pi[:, None] * f.g)
    dL = -(f.g[:, :, None] * a[:, None, :cells] + a[:, :, None] * f.g[:, None, :cells])
    return da, dL, -2 * f.a_dot_h


def to_flow_state(table: Table, state: MapState, member: int) -> State:
    r"""The closure flow's two-channel state (:class:`theory.stage2.flow.State`) of one
    member of a symmetric table: :math:`b`, :math:`s = \sqrt\pi`,
    :math:`\tilde r = (a - b)/s`."""
    s = math.sqrt(float(state.pi[member]))
    cells = table.cells
    a, b = state.a[member], state.b[member]
    return State(
        b=b[:cells].reshape(table.scores.shape).copy(),
        r=((a - b)[:cells] / s).reshape(table.scores.shape),
        b_signal=float(b[cells]),
        r_signal=float(a[cells] - b[cells]) / s,
        s=s,
    )


@dataclass(frozen=True)
class Evolution:
    r"""Where :func:`evolve` left a batch: the final state, the first GD step at which a
    watched lead turned positive (``inf`` if never; ``nan`` when not watched), and which
    members reached the horizon (beyond :data:`MAP_STEPS`, only those that had settled)."""

    state: MapState
    first_lead: np.ndarray
    reached: np.ndarray


#: A watched quantity: a function of (table, extended logits (B, C + P)) -> (B,) whose
#: first positive value is recorded; its ``event`` attribute names the closure flow's
#: event (:data:`theory.stage2.flow.EVENTS`) that continues it beyond the map.
Lead = Callable[[Table, np.ndarray], np.ndarray]
#: Steps in a row below :data:`SETTLED` that make a member settled.
QUIET_STEPS = 10
#: Continues one member with the closure flow: (member, its flow state, the time, the
#: time to reach, the event to locate) -> (logits (K, S), beta, pi, the event's time).
Handover = Callable[[int, State, float, float, str | None], tuple[np.ndarray, float, float, float]]


def _record(first: np.ndarray, lead: np.ndarray, at: float) -> None:
    """Set ``first`` to ``at`` where ``lead`` turns positive for the first time."""
    first[(lead > 0) & ~np.isfinite(first)] = at


def _map(table, alpha, horizon, lead, observe, until_led, handing_over, tracks_quiet):
    """The map's loop (:func:`evolve`, by :class:`Stepper`): the state, the first leads and
    which members are quiet (only counted where ``tracks_quiet``: else all ``False``)."""
    batch, cells = table.batch, table.cells
    stepper = Stepper(table, alpha, MapState.zero(table), channel=handing_over)
    quiet = np.zeros(batch, dtype=int)
    first = np.full(batch, math.inf if lead else math.nan)
    before = np.empty((batch, cells))
    steps = 0
    while steps < horizon and not (until_led and np.all(np.isfinite(first))):
        if handing_over and np.all(quiet >= QUIET_STEPS):
            break
        stepper.compute_forces()
        if observe:
            observe(_state(stepper, steps), stepper.forces())
        if tracks_quiet:
            np.copyto(before, stepper.a[:, :cells])
        stepper.update()
        steps += 1
        if tracks_quiet:
            moved = np.abs(stepper.a[:, :cells] - before).max(axis=1)
            quiet = np.where(moved < SETTLED, quiet + 1, 0)
        if lead:
            _record(first, lead(table, stepper.a), float(steps))
    return _state(stepper, steps), first, quiet >= QUIET_STEPS


def _state(stepper: Stepper, steps: int) -> MapState:
    """The stepper's state (its buffers) after ``steps`` steps."""
    s = stepper
    return MapState(s.a, s.L, s.pi, s.tau, s.b, s.B, steps)


def evolve(
    table: Table,
    alpha: float,
    steps: float,
    lead: Lead | None = None,
    observe: Callable[[MapState, Forces], None] | None = None,
    until_led: bool = False,
    handover: Handover | None = None,
) -> Evolution:
    r"""The batch after ``steps`` GD steps of size ``alpha``: the map, step by step, up to
    :data:`MAP_STEPS` steps. Beyond (with a ``handover``), the map runs until every member
    has settled (no training logit moving by more than :data:`SETTLED` a step for
    :data:`QUIET_STEPS` steps), and each settled member follows the closure flow
    (:func:`theory.stage2.flow.solve` from :func:`to_flow_state`) to
    :math:`\tau = \alpha\,` ``steps``; a member still oscillating reaches no further.
    ``observe(state, forces)`` is called before every map step; ``until_led`` stops once
    every member's ``lead`` has turned positive."""
    beyond = steps > MAP_STEPS and handover is not None
    horizon = int(min(steps, MAP_STEPS))
    # the quiet count decides only where the loop may stop short of ``steps``
    tracks_quiet = beyond or until_led or horizon < steps
    state, first, settled = _map(
        table, alpha, horizon, lead, observe, until_led, beyond, tracks_quiet
    )
    if not beyond or until_led and np.all(np.isfinite(first)):
        return Evolution(state, first, settled | (steps <= state.steps))
    a, pi = state.a.copy(), state.pi.copy()
    tau_end, event = alpha * steps, getattr(lead, "event", None)
    assert handover is not None  # beyond the map only with a hand-over
    for member in np.flatnonzero(settled):
        start = to_flow_state(table, state, int(member))
        logits, beta, pi[member], at = handover(
            int(member), start, alpha * state.steps, tau_end, event
        )
        a[member] = np.concatenate([np.ravel(logits), [beta]])
        if lead and not np.isfinite(first[member]):
            first[member] = at / alpha
    flown = replace(state, a=a, pi=pi, tau=np.full(table.batch, tau_end))
    return Evolution(flown, first, settled)


#: Bogacki-Shampine 3(2): nodes, stage weights, third- and second-order weights.
_BS_NODES = (0.5, 0.75)
_BS_THIRD = (2 / 9, 1 / 3, 4 / 9, 0.0)
_BS_SECOND = (7 / 24, 1 / 4, 1 / 3, 1 / 8)


def _derivative(table: Table, y: tuple[np.ndarray, ...], tau: float) -> tuple[np.ndarray, ...]:
    r""":math:`d/du` of :math:`(a, L, \pi)` in :math:`u = \log\tau`."""
    return tuple(tau * part for part in velocity(table, *y))


def flow_to(
    table: Table, state: MapState, tau_end: float, lead=None
) -> tuple[MapState, np.ndarray]:
    r"""The flow of :math:`(a, L, \pi)` (:func:`velocity`) from ``state`` (all members at
    one flow time) to ``tau_end``, integrated in :math:`u = \log\tau` by the
    Bogacki-Shampine 3(2) pair with one step size for the batch (error: the largest over
    the members, :data:`FLOW_RTOL`, :data:`FLOW_ATOL`); returns the state and the flow
    time at which ``lead`` first turns positive (linear between accepted steps; ``inf``)."""
    u, u_end = math.log(float(state.tau[0])), math.log(tau_end)
    y = (state.a, state.L, state.pi)
    first = np.full(table.batch, math.inf)
    before = lead(table, y[0]) if lead else None
    k1 = _derivative(table, y, math.exp(u))
    du = min(0.05, u_end - u)
    while u < u_end - 1e-12:
        du = min(du, u_end - u)
        k2 = _derivative(table, _axpy(y, du, (k1,), (0.5,)), math.exp(u + 0.5 * du))
        k3 = _derivative(table, _axpy(y, du, (k2,), (0.75,)), math.exp(u + 0.75 * du))
        new = _axpy(y, du, (k1, k2, k3), _BS_THIRD[:3])
        k4 = _derivative(table, new, math.exp(u + du))
        error = _error(y, new, du, (k1, k2, k3, k4))
        if error <= 1.0:
            if lead and before is not None:
                after = lead(table, new[0])
                crossing = (before <= 0) & (after > 0) & ~np.isfinite(first)
                fraction = before[crossing] / (before[crossing] - after[crossing])
                first[crossing] = np.exp(u + fraction * du)
                before = after
            u, y, k1 = u + du, new, k4
        du *= min(4.0, max(0.2, 0.9 * error ** (-1 / 3))) if error > 0 else 4.0
    tau = np.full(table.batch, tau_end)
    return MapState(y[0], y[1], y[2], tau, state.b, state.B, state.steps), first


def _axpy(y, du, ks, weights):
    return tuple(
        part + du * sum(w * k[index] for w, k in zip(weights, ks, strict=True))
        for index, part in enumerate(y)
    )


def _error(y, new, du, ks) -> float:
    """The largest scaled difference of the third- and second-order solutions."""
    worst = 0.0
    for index, (old, part) in enumerate(zip(y, new, strict=True)):
        difference = du * sum(
            (third - second) * k[index]
            for third, second, k in zip((*_BS_THIRD,), _BS_SECOND, ks, strict=True)
        )
        scale = FLOW_ATOL + FLOW_RTOL * np.maximum(np.abs(old), np.abs(part))
        worst = max(worst, float(np.max(np.abs(difference) / scale)))
    return worst


def step_residuals(d: int = 2) -> list:
    r"""Proof of the exact GD step of :math:`(q, M, \pi)` (module docstring) for symbolic
    :math:`d\times d` :math:`W` and vectors :math:`p, G`: with :math:`W' = W - \alpha pG^\top`,
    :math:`p' = p - \alpha WG`, the residuals of :math:`q' = W'^\top p'`,
    :math:`M' = W'^\top W'` and :math:`\pi' = p'^\top p'` against the closed forms (zero)."""
    import sympy as sp

    from theory.foundation.symbols import real_matrix, real_vector

    W, p, G = real_matrix("W", d, d), real_vector("p", d), real_vector("G", d)
    alpha = sp.Symbol("alpha", positive=True)
    W_next, p_next = W - alpha * p * G.T, p - alpha * W * G
    q, M, pi = W.T * p, W.T * W, (p.T * p)[0, 0]
    q_dot_G = (q.T * G)[0, 0]
    claimed_q = q - alpha * (M + pi * sp.eye(d)) * G + alpha**2 * q_dot_G * G
    claimed_M = M - alpha * (G * q.T + q * G.T) + alpha**2 * pi * G * G.T
    claimed_pi = pi - 2 * alpha * q_dot_G + alpha**2 * (G.T * M * G)[0, 0]
    residuals = [
        (W_next.T * p_next - claimed_q).applyfunc(sp.expand),
        (W_next.T * W_next - claimed_M).applyfunc(sp.expand),
        sp.expand((p_next.T * p_next)[0, 0] - claimed_pi),
    ]
    return residuals


def derivations() -> list:
    """This module's records, for :mod:`theory.derivations`."""
    import sympy as sp

    from theory.foundation.proof import NUMERIC, RECONSTRUCTION, SYMBOLIC, Derivation

    q, G, q_next = sp.symbols("q G q'")
    alpha, M, pi = sp.symbols("alpha M pi")
    return [
        Derivation(
            "Exact GD step of the query, W^T W and ||p||^2",
            sp.Eq(q_next, q - alpha * (M + pi) * G + alpha**2 * q * G**2, evaluate=False),
            RECONSTRUCTION,
            lambda: step_residuals(2),
            proof=SYMBOLIC,
            evidence="the three updates expanded for symbolic 2 x 2 W and vectors p, G",
            twin="theory.stage2.discrete.step",
            simulated="verify.sim.engines.reduced.ReducedEngine.step",
            test="tests/theory/stage2/test_discrete.py::test_the_map_follows_the_simulated_gd",
        ),
        Derivation(
            "Mean-field GD map: its flow limit and the runs it predicts",
            sp.Eq(sp.Symbol("a'"), sp.Symbol("a") - alpha * sp.Symbol("K h"), evaluate=False),
            RECONSTRUCTION,
            proof=NUMERIC,
            evidence="tests/theory/stage2/test_discrete.py: the map tends to the flow of its "
            "own variables as alpha -> 0, and follows the d-free GD simulation where GD "
            "leaves the flow",
            twin="theory.stage2.horizon.gd_horizon",
            simulated="verify.sim.engines.dfree.DfreeEngine",
            test="tests/theory/stage2/test_discrete.py::test_the_map_follows_the_simulated_gd",
        ),
    ]
