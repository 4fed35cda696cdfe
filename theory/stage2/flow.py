r"""Stage-2 dynamics: the mean-field flow of the attention logits with a growing preconditioner.

Reconstruction (this package's own derivation; the paper's stage-2 lemmas are not
available). After the first instants the effective query :math:`q = W^\top p` moves under
gradient flow as :math:`\dot q = -(W^\top W + \|p\|^2 I) G` with
:math:`G = \sum_{i,t} h_{i,t} x_{i,t}`. This module closes that flow in a few numbers.

**Preconditioner (two channels).** If the direction :math:`u = p/\|p\|` of :math:`p` stays
fixed, :math:`\dot W = -p G^\top` makes :math:`W - W_0 = u r^\top` rank one. Write
:math:`s = \|p\|`, :math:`\pi = s^2`, :math:`k = W_0^\top p` (the "W0 channel") and
:math:`q = k + s r` (the second term is the "p channel"). Then (proved in
:mod:`theory.stage2.preconditioner`)

.. math::

    W^\top W = W_0^\top W_0 + \frac{q q^\top - k k^\top}{\pi},\qquad
    \dot r = -s G,\quad \dot k = -W_0^\top W_0 G - k\,\frac{r\cdot G}{s},\quad
    \dot s = -\frac{q\cdot G}{s},

and :math:`\|q\|^2 = \pi^2 + \kappa_p \pi` exactly, with
:math:`\kappa_p = u^\top W_0 W_0^\top u \approx 2\kappa_0` (:math:`p` lies in the range of
:math:`W_0`; for a square :math:`W_0` with iid entries the ratio of the second to the first
moment of :math:`W_0^\top W_0`'s spectrum is :math:`2\kappa_0`). The preconditioner seen by a
training token therefore grows from :math:`\kappa_0` to about :math:`\kappa_0 + 2\pi`.

**Mean field.** On the training tokens, :math:`W_0^\top W_0` acts as :math:`\kappa_0` and the
Gram matrix keeps only its self terms :math:`\sigma_\epsilon^2 d` and the signal block
(noise-noise and noise-signal cross terms dropped, assumption A1). Samples of one type
(clean, :math:`\varsigma = 1`; noisy, :math:`\varsigma = -1`) are identical, both classes
alike, so the state is per type :math:`k` and token slot :math:`t` (group; :math:`m_t`
tokens with signal coefficient :math:`\sigma_t = c_t + c'_t` and score
:math:`\bar\gamma_{k,t}` in units of :math:`y^*`). With logits
:math:`a = b + s\tilde r` (:math:`b = B^\top k`, :math:`\tilde r = B^\top r`),

.. math::

    h_{k,t} &= -\tfrac1n \ell_k \varsigma_k\, s_{k,t} \sum_u m_u s_{k,u}
              (\bar\gamma_{k,t} - \bar\gamma_{k,u}),\qquad
    \ell_k = w(\varsigma_k \bar f_k),\\
    (\mathcal G h)_{k,t} &= \sigma_\epsilon^2 d\, h_{k,t}
        + \sigma_t \frac{\|\mu\|^2}{2}\sum_{k',u} w_{k'} m_u \sigma_u h_{k',u},\\
    \dot{\tilde r} &= -s\,\mathcal G h,\qquad
    \dot b = -\kappa_0 \mathcal G h - b\,\frac{\tilde r\cdot h}{s},\qquad
    \dot s = -\frac{a\cdot h}{s},

(:math:`x\cdot h = \sum_k w_k\sum_t m_t x_{k,t} h_{k,t}`, :math:`w_k` samples of type k;
:math:`w(z) = -\ell'(z)` is the training loss's weight, :math:`1/(1 + e^{z})` for the
logistic loss, :mod:`theory.foundation.losses`).
The signal logit :math:`\beta = \langle\mu_{\pm1}, q\rangle` follows the same two channels
with :math:`(\mathcal G h)_\beta = \frac{\|\mu\|^2}{2}\sum w m \sigma h`. Near
:math:`\tau = 0` (:math:`s = 0`) the series :math:`b = -\kappa_0\tau\mathcal G h_0`,
:math:`s = \tau s_1`, :math:`\tilde r = -\tfrac{\tau^2}{2} s_1 \mathcal G h_0`,
:math:`s_1^2 = \kappa_0\, h_0\cdot\mathcal G h_0` starts the flow, which is integrated in
:math:`u = \log(1 + \tau)` (gaps grow like :math:`\log\tau`).

What this drops, and how large it is, is stated with each prediction
(:mod:`theory.stage2.predictions`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from operator import mul
from typing import Any

import numpy as np

from theory.foundation.data_model import DataModel, Training
from theory.foundation.losses import weight_function
from theory.foundation.validation import Real, require

#: The integrator per loss: explicit DOP853, except for the squared loss, whose finite target
#: :math:`yf = 1` can stop a gap at a stationary point that is stiff in log-time (LSODA
#: switches to an implicit method there).
SOLVER_METHODS = {"logistic": "DOP853", "exponential": "DOP853", "squared": "LSODA"}
#: :math:`\kappa_p / \kappa_0` for a square :math:`W_0` with iid entries (Marchenko-Pastur
#: with aspect ratio 1: second over first spectral moment of :math:`W_0^\top W_0`).
KAPPA_P_RATIO = 2.0


@dataclass(frozen=True)
class Population:
    r"""The mean-field population: sample types (rows) by token slots (columns).

    ``weights[k]`` samples of type k with sign ``varsigma[k]`` (+1 clean, -1 noisy);
    ``counts[t]`` tokens in slot t with signal coefficient ``signal[t]``; ``scores[k, t]``
    the expected token score over :math:`y^*`; ``memorisation`` = :math:`\sigma_\epsilon^2 d`
    (scaled for sensitivity bands); ``signal_strength`` = :math:`\|\mu\|^2`."""

    names: tuple[str, ...]
    weights: np.ndarray
    varsigma: np.ndarray
    counts: np.ndarray
    signal: np.ndarray
    scores: np.ndarray
    n: float
    memorisation: float
    signal_strength: float
    kappa0: float
    kappa_p: float
    #: The training loss (:mod:`theory.foundation.losses`); it enters through the weights.
    loss: str = "logistic"
    #: :math:`\bar\gamma_{k,t} - \bar\gamma_{k,u}`, shape (K, S, S) (derived).
    differences: np.ndarray = field(init=False, repr=False)
    #: :math:`w_k m_t`, tokens of each (type, slot) in the training set (derived).
    multiplicity: np.ndarray = field(init=False, repr=False)
    #: The flow's arithmetic on Python floats (derived; see :class:`FlowKernel`).
    kernel: FlowKernel = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        differences = self.scores[:, :, None] - self.scores[:, None, :]
        object.__setattr__(self, "differences", differences)
        object.__setattr__(self, "multiplicity", np.outer(self.weights, self.counts))
        object.__setattr__(self, "kernel", FlowKernel(self))

    def slot(self, name: str) -> int:
        return self.names.index(name)


def population(model: DataModel, training: Training, memorisation_scale: float = 1.0) -> Population:
    r"""The clean and noisy sample types of ``model`` with one slot per present token group
    (R, W+, W-, I); :math:`n\eta` noisy samples under Bernoulli flips, ``noisy_count``
    under exact flips. ``memorisation_scale`` multiplies :math:`\sigma_\epsilon^2 d` (the
    sensitivity bands of the predictions)."""
    Real(0.0, 1e100).check("memorisation_scale", memorisation_scale)
    groups = [group for group in model.groups if group.count > 0]
    noisy = model.noisy_count if model.flip == "exact" else model.n * model.eta
    score = np.array([model.gamma0 * float(group.score) for group in groups])
    kappa0 = training.kappa0(model.d)
    return Population(
        names=tuple(group.name for group in groups),
        weights=np.array([model.n - noisy, noisy], dtype=float),
        varsigma=np.array([1.0, -1.0]),
        counts=np.array([group.count for group in groups], dtype=float),
        signal=np.array([float(group.signal) for group in groups]),
        scores=np.vstack([score, score]),
        n=float(model.n),
        memorisation=model.sigma_eps**2 * model.d * memorisation_scale,
        signal_strength=model.mu_norm**2,
        kappa0=kappa0,
        kappa_p=KAPPA_P_RATIO * kappa0,
        loss=training.loss,
    )


@dataclass(frozen=True)
class Gradient:
    """Per-slot logit gradient, attention probabilities and outputs of every type."""

    h: np.ndarray  # (K, S): dL/da of one token of the slot
    probabilities: np.ndarray  # (K, S): softmax probability of one token of the slot
    outputs: np.ndarray  # (K,): f / y*


Rows = list[list[float]]


class FlowKernel:
    r"""The mean-field flow's arithmetic for one population, on Python floats: the state
    has a few dozen numbers, for which NumPy's per-call overhead would dominate the
    solver's time. Every formula of the flow is here once; the array functions below
    (:func:`logit_gradient`, :func:`gram_product`, :func:`dot`, :func:`velocity`) call it."""

    def __init__(self, pop: Population) -> None:
        self.shape = pop.scores.shape
        self.counts = pop.counts.tolist()
        self.signal = pop.signal.tolist()
        self.scores = pop.scores.tolist()
        self.differences = pop.differences.tolist()
        self.multiplicity = pop.multiplicity.tolist()
        self.loss_scale = [v / pop.n for v in pop.varsigma.tolist()]
        self.varsigma = pop.varsigma.tolist()
        self.memorisation = pop.memorisation
        self.half_strength = 0.5 * pop.signal_strength
        self.kappa0 = pop.kappa0
        self.loss_weight = weight_function(pop.loss)

    def row_gradient(self, k: int, logits: list[float]) -> tuple[list[float], list[float], float]:
        r""":math:`h_{k,t}` without cancellation (:math:`\bar\gamma_t - \bar f =
        \sum_u m_u s_u(\bar\gamma_t - \bar\gamma_u)`), :math:`s_{k,t}` and :math:`\bar f_k`
        for the samples of type ``k``."""
        top = max(logits)
        weights = [math.exp(a - top) for a in logits]
        partition = sum(map(mul, weights, self.counts))
        probabilities = [w / partition for w in weights]
        mass = list(map(mul, probabilities, self.counts))
        output = sum(map(mul, mass, self.scores[k]))
        loss_weight = self.loss_weight(self.varsigma[k] * output)
        scale = -loss_weight * self.loss_scale[k]
        h = [
            scale * p * sum(map(mul, gaps, mass))
            for p, gaps in zip(probabilities, self.differences[k], strict=True)
        ]
        return h, probabilities, output

    def gradient(self, logits: Rows) -> tuple[Rows, Rows, list[float]]:
        """:meth:`row_gradient` of every type: h, probabilities and outputs."""
        rows = [self.row_gradient(k, row) for k, row in enumerate(logits)]
        return [row[0] for row in rows], [row[1] for row in rows], [row[2] for row in rows]

    def dot(self, x: Rows, h: Rows) -> float:
        r""":math:`x\cdot h = \sum_k w_k \sum_t m_t x_{k,t} h_{k,t}` over every training token."""
        return sum(
            sum(map(mul, weights, map(mul, xs, hs)))
            for weights, xs, hs in zip(self.multiplicity, x, h, strict=True)
        )

    def gram(self, h: Rows) -> tuple[Rows, float]:
        r"""Mean-field :math:`(\mathcal G h)_{k,t}` and the signal row
        :math:`(\mathcal G h)_\beta`."""
        signal_row = self.half_strength * self.dot([self.signal] * len(h), h)
        product = [
            [self.memorisation * v + c * signal_row for v, c in zip(row, self.signal, strict=True)]
            for row in h
        ]
        return product, signal_row

    def derivative(self, y: list[float]) -> list[float]:
        r"""The two-channel flow :math:`d/d\tau` of the packed state (:meth:`State.pack`)."""
        rows, width = self.shape
        size = rows * width
        b_signal, s = y[-3], y[-1]
        b = [y[k * width : (k + 1) * width] for k in range(rows)]
        r = [y[size + k * width : size + (k + 1) * width] for k in range(rows)]
        logits = [[u + s * v for u, v in zip(b[k], r[k], strict=True)] for k in range(rows)]
        h = [self.row_gradient(k, logits[k])[0] for k in range(rows)]
        gh, g_signal = self.gram(h)
        shrink = self.dot(r, h) / s
        kappa0 = self.kappa0
        db = [
            -kappa0 * g - u * shrink for k in range(rows) for g, u in zip(gh[k], b[k], strict=True)
        ]
        dr = [-s * g for row in gh for g in row]
        tail = [-kappa0 * g_signal - b_signal * shrink, -s * g_signal, -self.dot(logits, h) / s]
        return db + dr + tail


def logit_gradient(pop: Population, logits: np.ndarray) -> Gradient:
    r""":math:`h_{k,t}`, :math:`s_{k,t}` and :math:`\bar f_k` (:meth:`FlowKernel.gradient`)."""
    h, probabilities, outputs = pop.kernel.gradient(np.asarray(logits, dtype=float).tolist())
    return Gradient(np.array(h), np.array(probabilities), np.array(outputs))


def gram_product(pop: Population, h: np.ndarray) -> tuple[np.ndarray, float]:
    r"""Mean-field :math:`(\mathcal G h)_{k,t}` and the signal row (:meth:`FlowKernel.gram`)."""
    product, signal_row = pop.kernel.gram(np.asarray(h, dtype=float).tolist())
    return np.array(product), signal_row


def dot(pop: Population, x: np.ndarray, h: np.ndarray) -> float:
    r""":math:`x\cdot h = \sum_k w_k \sum_t m_t x_{k,t} h_{k,t}` (:meth:`FlowKernel.dot`)."""
    x = np.broadcast_to(np.asarray(x, dtype=float), pop.scores.shape)
    return pop.kernel.dot(x.tolist(), np.asarray(h, dtype=float).tolist())


@dataclass(frozen=True)
class State:
    """One point of the flow: W0-channel logits ``b``, p-channel ``r`` (logits of r),
    the same two for the signal logit, and :math:`s = \\|p\\|`."""

    b: np.ndarray
    r: np.ndarray
    b_signal: float
    r_signal: float
    s: float

    @property
    def logits(self) -> np.ndarray:
        return self.b + self.s * self.r

    @property
    def beta(self) -> float:
        r"""The signal logit :math:`\beta = \langle \mu_{\pm1}, q\rangle`."""
        return self.b_signal + self.s * self.r_signal

    @classmethod
    def unpack(cls, y: np.ndarray, shape: tuple[int, int]) -> State:
        size = shape[0] * shape[1]
        return cls(y[:size].reshape(shape), y[size : 2 * size].reshape(shape), y[-3], y[-2], y[-1])

    def pack(self) -> np.ndarray:
        tail = [self.b_signal, self.r_signal, self.s]
        return np.concatenate([self.b.ravel(), self.r.ravel(), tail])


def velocity(pop: Population, state: State) -> State:
    r"""The two-channel mean-field flow :math:`d/d\tau` of every state variable
    (:meth:`FlowKernel.derivative`)."""
    derivative = pop.kernel.derivative(state.pack().tolist())
    return State.unpack(np.array(derivative), pop.scores.shape)


def initial_state(pop: Population) -> tuple[float, State]:
    r"""Start time :math:`\tau_0` and the series state there (see the module docstring):
    :math:`\tau_0 = 10^{-6}/\max|\kappa_0 \mathcal G h_0|`, far inside the linear regime."""
    shape = pop.scores.shape
    h0 = logit_gradient(pop, np.zeros(shape)).h
    gh, g_signal = gram_product(pop, h0)
    s1 = math.sqrt(pop.kappa0 * dot(pop, gh, h0))
    tau0 = 1e-6 / float(np.max(np.abs(pop.kappa0 * gh)))
    state = State(
        b=-pop.kappa0 * tau0 * gh,
        r=-0.5 * tau0**2 * s1 * gh,
        b_signal=-pop.kappa0 * tau0 * g_signal,
        r_signal=-0.5 * tau0**2 * s1 * g_signal,
        s=tau0 * s1,
    )
    return tau0, state


#: An event: a function of (population, state) whose sign change marks it.
EventFunction = Callable[[Population, State], float]


def noisy_output(pop: Population, state: State) -> float:
    r""":math:`\bar f` of a noisy sample; it turns negative when the sample is fitted."""
    return float(logit_gradient(pop, state.logits).outputs[1])


def noisy_lead(pop: Population, state: State) -> float:
    r"""How far the best non-R token of a noisy sample lies above its relevant token
    (:math:`\max_{t \ne R} a_t - a_R`); turns positive when the sample leaves R."""
    logits = state.logits[1]
    relevant = pop.slot("R")
    return float(np.delete(logits, relevant).max() - logits[relevant])


EVENTS: dict[str, tuple[EventFunction, int]] = {
    "noisy_fitted": (noisy_output, -1),
    "noisy_switched": (noisy_lead, 1),
}


@dataclass(frozen=True)
class Trajectory:
    r"""The flow at the requested times: ``tau`` (P,), ``logits`` (P, K, S), ``beta``,
    ``pi`` (:math:`\|p\|^2`), ``w0_logits`` (the W0 channel b of the logits), and the first
    time of each requested event (``inf`` if not reached, 0 if it holds from the start)."""

    population: Population
    tau: np.ndarray
    logits: np.ndarray
    beta: np.ndarray
    pi: np.ndarray
    events: dict[str, float]
    #: The W0-channel part b of the logits at each point, (P, K, S).
    w0_logits: np.ndarray

    @property
    def query_norm_sq(self) -> np.ndarray:
        r""":math:`\|q\|^2 = \pi^2 + \kappa_p\pi` (from :math:`WW^\top - pp^\top = W_0W_0^\top`)."""
        return self.pi**2 + self.population.kappa_p * self.pi

    def clean_gap(self) -> np.ndarray:
        r"""Clean sample: :math:`a_R - \max_{t\ne R} a_t` at each point."""
        relevant = self.population.slot("R")
        others = np.delete(self.logits[:, 0, :], relevant, axis=1)
        return self.logits[:, 0, relevant] - others.max(axis=1)


def _event(pop: Population, shape: tuple[int, int], name: str, terminal: bool) -> Any:
    """The solver's event function for ``name`` (direction and terminal flag attached)."""
    function, direction = EVENTS[name]

    def event(u: float, y: np.ndarray) -> float:
        return function(pop, State.unpack(y, shape))

    event.direction = direction  # type: ignore[attr-defined]
    event.terminal = terminal  # type: ignore[attr-defined]
    return event


def solve(
    pop: Population,
    tau_end: float,
    tau_eval: np.ndarray | None = None,
    events: tuple[str, ...] = (),
    stop_at: str | None = None,
    rtol: float = 1e-6,
    start: tuple[float, State] | None = None,
) -> Trajectory:
    r"""Integrate the mean-field flow to :math:`\tau` = ``tau_end`` (in
    :math:`u = \log(1+\tau)`, :data:`SOLVER_METHODS`), recording at ``tau_eval`` and
    locating ``events`` (names of :data:`EVENTS`) by root finding on the solver's dense
    output; the run stops at the first ``stop_at`` event. ``start`` = (time, state) starts
    it elsewhere than the series at :math:`\tau \to 0` (:func:`initial_state`), e.g. where
    the GD map hands over (:func:`theory.stage2.discrete.to_flow_state`)."""
    tau_end = Real(0.0, 1e300, closed="neither").check("tau_end", tau_end)
    for name in events + ((stop_at,) if stop_at else ()):
        require(name in EVENTS, "events", name, "one of " + ", ".join(EVENTS))
    shape = pop.scores.shape
    tau0, first = start or initial_state(pop)
    already = {name: 0.0 for name in events if EVENTS[name][1] * EVENTS[name][0](pop, first) > 0}
    pending = [name for name in events if name not in already]
    if stop_at in already:
        tau_end = min(tau_end, 2 * tau0)
    handlers = [_event(pop, shape, name, name == stop_at) for name in pending]
    u_eval = None
    if tau_eval is not None:
        u_eval = np.log1p(np.clip(np.asarray(tau_eval, dtype=float), tau0, tau_end))

    derivative = pop.kernel.derivative
    from scipy.integrate import solve_ivp  # imported where the flow is solved: it is slow

    def rhs(u: float, y: np.ndarray) -> np.ndarray:
        return np.array(derivative(y.tolist())) * math.exp(u)

    solution = solve_ivp(
        rhs,
        (math.log1p(tau0), math.log1p(tau_end)),
        first.pack(),
        method=SOLVER_METHODS[pop.loss],
        t_eval=u_eval,
        events=handlers or None,
        rtol=rtol,
        atol=1e-12,
    )
    found = dict(already)
    for index, name in enumerate(pending):
        times = solution.t_events[index]
        found[name] = float(np.expm1(times[0])) if times.size else math.inf
    states = [State.unpack(solution.y[:, j], shape) for j in range(solution.y.shape[1])]
    return Trajectory(
        population=pop,
        tau=np.expm1(solution.t),
        logits=np.array([state.logits for state in states]).reshape(-1, *shape),
        beta=np.array([state.beta for state in states]),
        pi=np.array([state.s**2 for state in states]),
        events=found,
        w0_logits=np.array([state.b for state in states]).reshape(-1, *shape),
    )


__all__ = [
    "SOLVER_METHODS",
    "KAPPA_P_RATIO",
    "Population",
    "population",
    "Gradient",
    "FlowKernel",
    "logit_gradient",
    "gram_product",
    "dot",
    "State",
    "velocity",
    "initial_state",
    "noisy_output",
    "noisy_lead",
    "EVENTS",
    "Trajectory",
    "solve",
]
