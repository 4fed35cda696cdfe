r"""The data model and the training set-up, declared once for theory and simulation.

Data (Definition 3.1 of the paper, as its public code draws it): each of ``n`` training
sequences has ``T`` tokens :math:`x_t = c_t\,\mu_{y^*} + c'_t\,\mu_{-y^*} + \epsilon_t`,
:math:`\epsilon_t \sim N(0, \sigma_\epsilon^2 I_d)` iid, with signals
:math:`\mu_{+1} = \|\mu\| e_1`, :math:`\mu_{-1} = \|\mu\| e_2`. The coefficients
:math:`(c, c')` are set by the token's group (:func:`token_groups`):

====  ==========================  =========  ============
name  meaning                     own c      opposite c'
====  ==========================  =========  ============
R     relevant                    1          0
W+    weakly relevant, aligned    rho        0
W-    weakly relevant, opposite   0          rho
I     irrelevant                  0          0
====  ==========================  =========  ============

The head is fixed along :math:`\mu_{+1} - \mu_{-1}`,
:math:`\nu = s_\nu(\mu_{+1} - \mu_{-1})/(\sqrt2\|\mu\|^2)`, so a token's expected score is
:math:`y^*\gamma_0 (c - c')` with :math:`\gamma_0 = s_\nu/\sqrt2`, and every token carries
score noise :math:`\langle\epsilon, \nu\rangle \sim N(0, \sigma_\epsilon^2\|\nu\|^2)`,
:math:`\|\nu\| = s_\nu/\|\mu\|`. A set of :func:`noisy_count` labels is flipped.

Training: full-batch GD with step ``alpha`` from :math:`p(0) = 0` and :math:`W(0)` with
iid entries, uniform on :math:`(-s, s)` or :math:`N(0, s^2)`; the initial preconditioner
is :math:`W_0^\top W_0 \approx \kappa_0 I` with :math:`\kappa_0 = \sigma_0^2 d`
(:math:`\sigma_0^2 = s^2/3` uniform, :math:`s^2` Gaussian; 1/3 for the public code's
:math:`s = 1/\sqrt d`).

Variants (:mod:`theory.variants`; each at its default is the model above, with the same
numbers): the training loss (``Training.loss``: logistic, exponential, squared); the head
(``Training.head``: fixed; one GD step from a random :math:`\nu_0` at uniform attention,
on the training set or on ``head_n`` separate clean examples; or trained with W and p, step
``head_step``); a per-example weak-relevance factor :math:`\rho_i \sim U[\rho - s,
\rho + s]` (``DataModel.rho_spread``); and the readout (``DataModel.readout``: linear, or
a fixed random FFN of width ``ffn_width`` around the head, :mod:`theory.variants.ffn`).
:func:`check_variant_combination` holds the one rule that ties the two objects: the FFN
readout is built around the fixed head.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from theory.foundation.losses import LOSSES
from theory.foundation.validation import (
    Integer,
    Optional,
    Options,
    Real,
    Validated,
    parameter,
    require,
)

#: Token groups in sequence order.
GROUP_NAMES = ("R", "W+", "W-", "I")
FLIP_MODES = ("exact", "bernoulli")
INIT_KINDS = ("uniform", "gaussian")
#: The head: fixed (the paper's), one GD step from a random start, or trained with (W, p).
HEADS = ("fixed", "one-step", "trained")
#: The readout of the attention output: the paper's linear head, or a fixed random FFN.
READOUTS = ("linear", "ffn")
#: Hidden width of the FFN readout when ``ffn_width`` is not given.
DEFAULT_FFN_WIDTH = 256

Number = TypeVar("Number")


@dataclass(frozen=True)
class TokenGroup(Generic[Number]):
    r"""One token group: ``count`` tokens per sequence whose signal is
    ``own`` :math:`\mu_{y^*}` + ``opposite`` :math:`\mu_{-y^*}`. Entries may be numbers
    or SymPy symbols (the same table serves :mod:`theory.stage1.rates` and the simulator)."""

    name: str
    count: Any
    own: Number
    opposite: Number

    @property
    def score(self) -> Number:
        r"""Expected token score over :math:`y^*\gamma_0`: :math:`c - c'`."""
        return self.own - self.opposite  # type: ignore[operator]

    @property
    def signal(self) -> Number:
        r"""Coefficient of the signal logit :math:`c + c'` (both signal components of the
        query grow alike, so the token's logit gains :math:`(c + c')\langle\mu, q\rangle`)."""
        return self.own + self.opposite  # type: ignore[operator]


def token_groups(
    rho: Any, n_relevant: Any, n_weak_aligned: Any, n_weak_opposite: Any, T: Any
) -> tuple[TokenGroup, ...]:
    """The four groups R, W+, W-, I with their counts and signal coefficients."""
    zero, one = rho * 0, rho * 0 + 1
    return (
        TokenGroup("R", n_relevant, one, zero),
        TokenGroup("W+", n_weak_aligned, rho, zero),
        TokenGroup("W-", n_weak_opposite, zero, rho),
        TokenGroup("I", T - n_relevant - n_weak_aligned - n_weak_opposite, zero, zero),
    )


def noisy_count(n: int, eta: float) -> int:
    r"""Number of flipped labels under exact label noise: :math:`n\eta` rounded to the
    nearest integer (halves round up), :math:`\lfloor n\eta + 1/2\rfloor`, with a guard
    against binary round-off (``0.35 * 90`` is 31.499999...). The real-world protocol uses
    the same rule."""
    return int(math.floor(n * eta + 0.5 + 1e-9))


@dataclass(frozen=True)
class DataModel(Validated):
    """The data-generating process and the fixed head (see the module docstring)."""

    d: int = parameter(2000, Integer(2), "token dimension")
    n: int = parameter(20, Integer(1), "number of training sequences")
    T: int = parameter(8, Integer(2), "tokens per sequence")
    n_relevant: int = parameter(1, Integer(1), "relevant tokens (mu_{y*} + noise) per sequence")
    n_weak_aligned: int = parameter(
        1, Integer(0), "weakly relevant aligned tokens (rho mu_{y*} + noise)"
    )
    n_weak_opposite: int = parameter(
        1, Integer(0), "weakly relevant opposite tokens (rho mu_{-y*} + noise)"
    )
    rho: float = parameter(0.1, Real(0.0, 1.0), "weak-relevance factor")
    eta: float = parameter(0.2, Real(0.0, 0.5, closed="left"), "label-noise rate")
    flip: str = parameter(
        "exact",
        Options(FLIP_MODES),
        "exact: round(n eta) flips, half per class; bernoulli: each label "
        "flips with probability eta",
    )
    sigma_eps: float = parameter(1.0, Real(0.0, 1e100), "token-noise standard deviation")
    mu_norm: float = parameter(20.0, Real(0.0, 1e100), "signal norm ||mu||")
    nu_scale: float = parameter(
        1.0,
        Real(0.0, 1e100),
        "head scale s_nu: ||nu|| = s_nu / ||mu||, <mu_{+-1}, nu> = +-s_nu / sqrt 2",
    )
    rho_spread: float = parameter(
        0.0,
        Real(0.0, 1.0, closed="left"),
        "spread s of the weak-relevance factor per example: rho_i ~ Uniform[rho - s, rho + s] "
        "(0: every example has rho, no extra draws)",
    )
    readout: str = parameter(
        "linear",
        Options(READOUTS),
        "linear: f = nu^T X^T s (the paper's); ffn: f = a^T GELU(B X^T s + c), a fixed random "
        "FFN around nu with the same signal scores (theory.variants.ffn)",
    )
    ffn_width: int | None = parameter(
        None,
        Optional(Integer(2), f"{DEFAULT_FFN_WIDTH} with readout 'ffn'"),
        "hidden width m of the FFN readout (even: its units come in pairs); readout 'ffn' only",
    )

    def check_relations(self) -> None:
        need = self.n_relevant + self.n_weak_aligned + self.n_weak_opposite
        require(
            self.T >= need,
            "T",
            self.T,
            f"an integer >= n_relevant + n_weak_aligned + n_weak_opposite = {need}",
        )
        if self.flip == "exact":
            flips = noisy_count(self.n, self.eta)
            require(
                2 * flips < self.n,
                "eta",
                self.eta,
                f"a rate whose round(n eta) flipped labels stay below half of n = "
                f"{self.n} (here {flips} of {self.n})",
            )
        self._check_variants()
        for name in ("mu_norm", "sigma_eps"):
            value = getattr(self, name)
            # Token norms squared must stay finite in float64 (logits, Gram matrices).
            require(
                math.isfinite(value**2 * self.d * 1e6),
                name,
                value,
                f"a value whose square times d stays finite in float64 (< "
                f"{math.sqrt(1.7e308 / (self.d * 1e6)):.3g} at d = {self.d})",
            )

    def _check_variants(self) -> None:
        """The per-example spread of rho and the FFN readout's width."""
        limit = min(self.rho, 1.0 - self.rho)
        require(
            self.rho_spread <= limit,
            "rho_spread",
            self.rho_spread,
            f"a spread in [0, min(rho, 1 - rho)] = [0, {limit:g}] (rho = {self.rho:g}: every "
            "rho_i stays in [0, 1])",
        )
        if self.readout == "linear":
            require(
                self.ffn_width is None,
                "ffn_width",
                self.ffn_width,
                "None with readout 'linear' (the width belongs to readout 'ffn')",
            )
            return
        require(
            self.ffn_width is None or self.ffn_width % 2 == 0,
            "ffn_width",
            self.ffn_width,
            "an even width (the FFN's units come in pairs), or None",
        )
        require(
            self.d >= 3,
            "d",
            self.d,
            "an integer >= 3 with readout 'ffn' (its random directions avoid the signal plane)",
        )

    @property
    def hidden_width(self) -> int:
        """The FFN readout's width m (:data:`DEFAULT_FFN_WIDTH` unless ``ffn_width``)."""
        return DEFAULT_FFN_WIDTH if self.ffn_width is None else self.ffn_width

    @property
    def n_irrelevant(self) -> int:
        return self.T - self.n_relevant - self.n_weak_aligned - self.n_weak_opposite

    @property
    def snr(self) -> float:
        r""":math:`\mathrm{SNR} = \|\mu\| / (\sigma_\epsilon\sqrt d)`."""
        return self.mu_norm / (self.sigma_eps * math.sqrt(self.d))

    @property
    def gamma0(self) -> float:
        r"""A signal's score :math:`\gamma_0 = \langle\mu_{y^*}, \nu\rangle y^* = s_\nu/\sqrt2`."""
        return self.nu_scale / math.sqrt(2.0)

    @property
    def nu_norm(self) -> float:
        r""":math:`\|\nu\| = s_\nu/\|\mu\|`."""
        return self.nu_scale / self.mu_norm

    @property
    def score_noise(self) -> float:
        r"""Standard deviation of a token's noise score, :math:`\sigma_\epsilon\|\nu\|`."""
        return self.sigma_eps * self.nu_norm

    @property
    def groups(self) -> tuple[TokenGroup, ...]:
        """The token-group table with this model's counts and ``rho``."""
        return token_groups(
            self.rho, self.n_relevant, self.n_weak_aligned, self.n_weak_opposite, self.T
        )

    @property
    def group_counts(self) -> dict[str, int]:
        return {group.name: group.count for group in self.groups}

    @property
    def position_groups(self) -> tuple[int, ...]:
        """Group index (into :data:`GROUP_NAMES`) of each of the T token positions."""
        return tuple(index for index, group in enumerate(self.groups) for _ in range(group.count))

    @property
    def noisy_count(self) -> int:
        """Flipped labels under exact noise (:func:`noisy_count`)."""
        return noisy_count(self.n, self.eta)

    @property
    def n_tokens(self) -> int:
        """Training tokens :math:`N = nT`."""
        return self.n * self.T


@dataclass(frozen=True)
class Training(Validated):
    """Full-batch gradient descent from :math:`p(0) = 0` and a random :math:`W(0)`."""

    alpha: float = parameter(5e-3, Real(0.0, 1e100), "GD step size")
    steps: int = parameter(1000, Integer(0), "GD steps (integers accept 1e13)")
    init: str = parameter(
        "uniform",
        Options(INIT_KINDS),
        "W(0) entries: uniform on (-s, s) (the authors' code) or N(0, s^2)",
    )
    init_scale: float | None = parameter(
        None,
        Optional(Real(0.0, 1e100), "s = 1/sqrt(d)"),
        "initialisation scale s (default 1/sqrt d)",
    )
    loss: str = parameter(
        "logistic",
        Options(LOSSES),
        "loss of the margin z = y f: logistic log(1 + e^-z), exponential e^-z, squared "
        "(1 - z)^2 / 2",
    )
    head: str = parameter(
        "fixed",
        Options(HEADS),
        "fixed: nu along mu_{+1} - mu_{-1} (the paper's); one-step: one GD step on nu from a "
        "random nu0 at uniform attention, then fixed; trained: nu trained with W and p from "
        "the fixed head",
    )
    head_step: float | None = parameter(
        None,
        Optional(Real(0.0, 1e100, closed="left"), "derived, see theory.variants.head"),
        "the head's step alpha_nu; default: one-step, the step with E||nu1||^2 = ||nu||^2 of "
        "the fixed head; trained, alpha",
    )
    head_init_scale: float | None = parameter(
        None,
        Optional(Real(0.0, 1e100), "s = 0.1 s_nu / (||mu|| sqrt d)"),
        "one-step: nu0 entries N(0, s^2); default a tenth of the fixed head's norm",
    )
    head_n: int = parameter(
        0,
        Integer(0),
        "one-step: 0 = the step uses the training set (noisy labels included); m > 0 = m "
        "separate clean examples of the data model",
    )

    def check_relations(self) -> None:
        if self.head == "fixed":
            for name in ("head_step", "head_init_scale"):
                value = getattr(self, name)
                require(value is None, name, value, "None with head 'fixed' (nu does not move)")
        if self.head != "one-step":
            require(
                self.head_init_scale is None,
                "head_init_scale",
                self.head_init_scale,
                f"None with head {self.head!r} (only the one-step head starts from a random nu0)",
            )
            require(
                self.head_n == 0,
                "head_n",
                self.head_n,
                f"0 with head {self.head!r} (only the one-step head may use a separate set)",
            )
        elif self.head_step is not None:
            require(
                self.head_step > 0,
                "head_step",
                self.head_step,
                "a positive step with head 'one-step', or None (derived)",
            )

    def scale(self, d: int) -> float:
        r"""The initialisation scale :math:`s` (default :math:`1/\sqrt d`)."""
        return self.init_scale if self.init_scale is not None else 1.0 / math.sqrt(d)

    def entry_variance(self, d: int) -> float:
        r""":math:`\sigma_0^2`: :math:`s^2/3` (uniform) or :math:`s^2` (Gaussian)."""
        return self.scale(d) ** 2 / (3.0 if self.init == "uniform" else 1.0)

    def kappa0(self, d: int) -> float:
        r"""The initial preconditioner :math:`\kappa_0 = \sigma_0^2 d`."""
        return self.entry_variance(d) * d


def check_variant_combination(model: DataModel, training: Training) -> None:
    """The rule between the data model and the training set-up: the FFN readout replaces the
    linear head around the fixed head, so it takes ``head='fixed'`` (a composed settings
    object calls this from its own relation check)."""
    if model.readout == "ffn":
        require(
            training.head == "fixed",
            "head",
            training.head,
            "'fixed' with readout 'ffn' (the FFN readout is built around the fixed head)",
        )


__all__ = [
    "check_variant_combination",
    "GROUP_NAMES",
    "FLIP_MODES",
    "INIT_KINDS",
    "HEADS",
    "READOUTS",
    "DEFAULT_FFN_WIDTH",
    "LOSSES",
    "TokenGroup",
    "token_groups",
    "noisy_count",
    "DataModel",
    "Training",
]
