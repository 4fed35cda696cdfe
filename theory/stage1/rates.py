r"""Stage-1 rates of signal learning and memorisation, derived symbolically.

Reconstruction (this package's own derivation; the paper's Lemmas 4.5-4.6 are not
available). At :math:`\tau = 0`, :math:`p = 0`, every attention probability is
:math:`1/T` and the flow velocity of the query is

.. math::

    \frac{dq}{d\tau} = -(W^\top W + \|p\|^2 I) G \approx -\kappa_0 G, \qquad
    -G = \frac{1}{nT}\sum_{j,t} \ell_j\, y_j (\gamma_{j,t} - f_j)\, x_{j,t},

with :math:`\ell_j = -\ell'(y_j f_j) = 1/(1 + e^{y_j f_j})` and
:math:`\kappa_0 = \sigma_0^2 d` (:math:`W_0^\top W_0 \approx \sigma_0^2 d\, I` on any fixed
vector; :math:`1/3` for the public code's uniform initialisation). Dropping the
cross terms :math:`\langle\epsilon, \epsilon'\rangle` and :math:`\langle\mu, \epsilon\rangle`
(assumption A1) and the tokens' noise scores (mean zero), the logit velocity of a
token of group :math:`g` (signal :math:`a_g \mu_{y^*} + b_g \mu_{-y^*}`, expected score
:math:`y^*\gamma_g`) in a clean (:math:`\varsigma = +1`) or noisy (:math:`\varsigma = -1`)
sample is

.. math::

    v_g = \underbrace{\frac{\kappa_0 \sigma_\epsilon^2 d\, \ell\, \varsigma\, (\gamma_g - \bar f)}
    {nT}}_{\text{memorisation (own noise)}} + \underbrace{(a_g + b_g)\, S}_{\text{signal}},
    \qquad S = \frac{\kappa_0 w \|\mu\|^2}{2T} \sum_h n_h (a_h + b_h)(\gamma_h - \bar f),

where :math:`\bar f = \sum_h n_h\gamma_h / T`, :math:`w = (1-\eta)\ell_c - \eta\ell_n` and
:math:`\ell_{c,n} = 1/(1 + e^{\pm\bar f})`. Both :math:`\mu_{+1}` and :math:`\mu_{-1}` components
of :math:`q` grow at the same rate :math:`S` (each class learns to select its own
relevant token). Everything below is built by SymPy from this table of groups.

These closed forms are tied to the exact gradient: :mod:`theory.stage1.moments` takes the
expectation of the velocity :math:`x_{j,u}^\top W_0^\top W_0 (-G)` at :math:`p = 0` with
the moment rules of :mod:`theory.foundation.expectation` (Gaussian noise, :math:`E[W_0^\top W_0] =
\kappa_0 I`) and proves that its kept terms equal :func:`token_velocity` for every group,
clean and noisy samples (residuals that vanish identically,
:func:`theory.stage1.moments.token_velocity_residuals`). The approximations are
named there: the loss slope taken at the mean output (linearised in the noise scores),
:math:`W_0^\top W_0` replaced by its mean, and the cross terms dropped; their bias and
variance are :func:`theory.stage1.moments.velocity_error`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import lru_cache

import sympy as sp

from theory.foundation.data_model import TokenGroup, token_groups
from theory.foundation.losses import LOSSES, weight_expression
from theory.foundation.symbols import d, eta, gamma0, mu_norm, n, rho, sigma_eps

#: Group sizes (R, W+, W-) and the other symbols of the rates.
n_R, n_A, n_O = sp.symbols("n_R n_W+ n_W-", positive=True, integer=True)
T_tokens = sp.Symbol("T", positive=True, integer=True)
kappa0 = sp.Symbol("kappa_0", positive=True)  # initial preconditioner sigma_0^2 d
varsigma = sp.Symbol("varsigma")  # +1 clean, -1 noisy

Groups = Sequence[TokenGroup]


def paper_groups() -> tuple[TokenGroup, ...]:
    """The data model's token-group table with symbolic counts and ``rho``
    (:func:`theory.foundation.data_model.token_groups`: R = mu, W+ = rho mu,
    W- = rho mu_{-y*}, I = 0)."""
    return token_groups(rho, n_R, n_A, n_O, T_tokens)


def _group(table: Groups, name: str) -> TokenGroup:
    return next(group for group in table if group.name == name)


def _score(group: TokenGroup) -> sp.Expr:
    r""":math:`\gamma_g = \gamma_0 (c_g - c'_g)`, since :math:`\langle\mu_{\pm y^*},\nu\rangle
    = \pm y^* \gamma_0`."""
    return gamma0 * group.score


def mean_score(table: Groups) -> sp.Expr:
    r""":math:`\bar f = \frac1T\sum_g n_g \gamma_g` (the output at :math:`\tau = 0`, class +1)."""
    return _mean_score(tuple(table))


@lru_cache(maxsize=64)
def _mean_score(table: tuple[TokenGroup, ...]) -> sp.Expr:
    # The common factor gamma_0 pulled out (what simplify gives here, without its cost).
    return sp.factor_terms(sum(g.count * _score(g) for g in table) / T_tokens)


def loss_weights(table: Groups, loss: str = "logistic") -> tuple[sp.Expr, sp.Expr]:
    r"""The loss weights :math:`w(\pm\bar f)` at the mean output
    (:mod:`theory.foundation.losses`): logistic :math:`\ell_c = 1/(1+e^{\bar f})` (clean)
    and :math:`\ell_n = 1/(1+e^{-\bar f})` (noisy); exponential :math:`e^{\mp\bar f}`;
    squared :math:`1 \mp \bar f`."""
    f0 = mean_score(table)
    return weight_expression(f0, loss), weight_expression(-f0, loss)


def signal_rate(table: Groups | None = None, loss: str = "logistic") -> sp.Expr:
    r"""Signal learning rate :math:`S = \langle\mu_{\pm1}, dq/d\tau\rangle` at :math:`\tau = 0`."""
    table = table or paper_groups()
    ell_c, ell_n = loss_weights(table, loss)
    w = (1 - eta) * ell_c - eta * ell_n
    f0 = mean_score(table)
    total = sum(g.count * g.signal * (_score(g) - f0) for g in table)
    return kappa0 * w * mu_norm**2 * total / (2 * T_tokens)


def memorisation_rate(
    table: Groups | None = None, noisy: bool = False, loss: str = "logistic"
) -> sp.Expr:
    r"""Memorisation coefficient :math:`M = \kappa_0\sigma_\epsilon^2 d\,\ell\,\gamma_0/(nT)`; a
    token's own-noise velocity is :math:`\varsigma M (\gamma_g - \bar f)/\gamma_0`."""
    table = table or paper_groups()
    ell_c, ell_n = loss_weights(table, loss)
    ell = ell_n if noisy else ell_c
    return kappa0 * sigma_eps**2 * d * ell * gamma0 / (n * T_tokens)


def token_velocity(
    group: str, noisy: bool, table: Groups | None = None, loss: str = "logistic"
) -> sp.Expr:
    r""":math:`v_g = \varsigma M (\gamma_g - \bar f)/\gamma_0 + (a_g + b_g) S` at :math:`\tau=0`."""
    table = table or paper_groups()
    sign = -1 if noisy else 1
    f0 = mean_score(table)
    chosen = _group(table, group)
    memo = memorisation_rate(table, noisy, loss) * sign * (_score(chosen) - f0) / gamma0
    return memo + chosen.signal * signal_rate(table, loss)


def gap_velocity(leader: str, other: str, noisy: bool, table: Groups | None = None) -> sp.Expr:
    r"""Initial velocity of the gap :math:`a_{\text{leader}} - a_{\text{other}}`:
    clean :math:`d\Lambda_{R,u}/d\tau` (leader R) and noisy :math:`d\Gamma_{W_-,u}/d\tau`
    (leader :math:`W_-`). The mean score cancels: only score differences enter."""
    table = table or paper_groups()
    return sp.simplify(token_velocity(leader, noisy, table) - token_velocity(other, noisy, table))


def overfitting_ratio(
    table: Groups | None = None, simplify: bool = True, loss: str = "logistic"
) -> sp.Expr:
    r"""Memorisation over signal in the noisy gap :math:`\Gamma_{W_-,R}`:

    .. math::

        r = \frac{M_n (\gamma_R - \gamma_{W_-})/\gamma_0}
                 {S\,[(a_R + b_R) - (a_{W_-} + b_{W_-})]} ,

    :math:`r > 1` iff the noisy samples' :math:`W_-` token starts to overtake the relevant
    token (overfitting); for one token per group
    :math:`r = \frac{2\ell_n(1+\rho)}{w(1-\rho)(1 - (1 + 2\rho)/T)}
    \,\frac{1}{n\,\mathrm{SNR}^2}`. ``simplify=False`` skips the (slow) simplification
    when only the numeric value matters.
    """
    table = table or paper_groups()
    relevant, opposite = _group(table, "R"), _group(table, "W-")
    memo = memorisation_rate(table, True, loss) * (_score(relevant) - _score(opposite)) / gamma0
    signal = signal_rate(table, loss) * (relevant.signal - opposite.signal)
    ratio = memo / signal
    return sp.simplify(ratio) if simplify else ratio


def query_velocity_norms(
    table: Groups | None = None, loss: str = "logistic"
) -> tuple[sp.Expr, sp.Expr]:
    r"""Expected squared norms of the signal and memorisation parts of :math:`dq/d\tau`:

    .. math::

        \|\dot q_{\mu}\|^2 = 2S^2/\|\mu\|^2, \qquad
        \|\dot q_{\perp}\|^2 = \Big(\frac{\kappa_0}{nT}\Big)^2 \sigma_\epsilon^2 d\;
        n[(1-\eta)\ell_c^2 + \eta\ell_n^2]\Big[\sum_g n_g(\gamma_g - \bar f)^2
        + (T-1)\sigma_\epsilon^2\|\nu\|^2\Big],

    with :math:`\|\nu\| = \sqrt2\gamma_0/\|\mu\|` (head along :math:`\mu_{+1} - \mu_{-1}`); the
    last term is the tokens' noise scores :math:`\langle\epsilon, \nu\rangle`.
    """
    table = table or paper_groups()
    ell_c, ell_n = loss_weights(table, loss)
    f0 = mean_score(table)
    S = signal_rate(table, loss)
    nu_sq = 2 * gamma0**2 / mu_norm**2
    spread = (
        sum(g.count * (_score(g) - f0) ** 2 for g in table) + (T_tokens - 1) * sigma_eps**2 * nu_sq
    )
    memo_sq = (
        (kappa0 / (n * T_tokens)) ** 2
        * sigma_eps**2
        * d
        * n
        * ((1 - eta) * ell_c**2 + eta * ell_n**2)
        * spread
    )
    return 2 * S**2 / mu_norm**2, memo_sq


def test_signal_to_noise(table: Groups | None = None, loss: str = "logistic") -> sp.Expr:
    r"""Reconstruction of the quantity behind Lemma 4.8 / Remark 4.2: a fresh test token's
    logit is :math:`\langle\text{signal}, q\rangle + N(0, \sigma_\epsilon^2\|q\|^2)`; in stage 1
    :math:`q \approx \tau\,\dot q`, so the relevant token leads an irrelevant one by

    .. math::

        z = \frac{S}{\sigma_\epsilon \sqrt{\|\dot q_\mu\|^2 + \|\dot q_\perp\|^2}}

    noise standard deviations (group :math:`g` leads by :math:`(a_g + b_g) z`). For the
    paper's groups :math:`z \propto (1-2\eta)\sqrt n\,\|\mu\|^2/(\sigma_\epsilon^2\sqrt d)`:
    the harmful/benign boundary is :math:`\|\mu\| \propto d^{1/4} n^{-1/4}`.
    """
    signal_sq, memo_sq = query_velocity_norms(table, loss)
    return signal_rate(table, loss) / (sigma_eps * sp.sqrt(signal_sq + memo_sq))


#: Argument names of the generated kernels (valid identifiers), in the predictions' order.
KERNEL_ARGUMENTS = (
    "d",
    "n",
    "T",
    "n_R",
    "n_Wp",
    "n_Wm",
    "rho",
    "eta",
    "mu_norm",
    "sigma_eps",
    "gamma0",
    "kappa0",
)
#: The rates the predictions evaluate, as (name, arguments, training loss).
KERNELS: tuple[tuple, ...] = tuple(
    (*rate, loss)
    for loss in LOSSES
    for rate in (
        ("signal_rate",),
        ("memorisation_rate", False),
        ("memorisation_rate", True),
        *(("token_velocity", g, noisy) for g in ("R", "W+", "W-", "I") for noisy in (False, True)),
        ("overfitting_ratio",),
        ("test_signal_to_noise",),
    )
)
#: Where the generated kernels live (:func:`kernels_source` writes it).
KERNELS_MODULE = "theory/stage1/kernels.py"


def kernel_symbols() -> tuple[sp.Symbol, ...]:
    """The rates' symbols, in the order of :data:`KERNEL_ARGUMENTS`."""
    return (d, n, T_tokens, n_R, n_A, n_O, rho, eta, mu_norm, sigma_eps, gamma0, kappa0)


def kernel_name(name: str, *arguments: str | bool) -> str:
    """The generated function's name for a rate, its arguments and the training loss."""
    words = [
        name,
        *(("noisy" if a else "clean") if isinstance(a, bool) else str(a) for a in arguments),
    ]
    return "_".join(words).replace("W+", "Wp").replace("W-", "Wm")


def kernel_expression(name: str, *arguments: str | bool) -> sp.Expr:
    """The SymPy expression of a rate (:data:`KERNELS`: the name, its arguments, then the
    training loss)."""
    *rest, loss = arguments
    loss = str(loss)
    builders: dict[str, Callable[..., sp.Expr]] = {
        "signal_rate": lambda: signal_rate(loss=loss),
        "memorisation_rate": lambda noisy: memorisation_rate(noisy=noisy, loss=loss),
        "token_velocity": lambda group, noisy: token_velocity(group, noisy, loss=loss),
        # simplify=False: the same numbers, without the simplification's cost.
        "overfitting_ratio": lambda: overfitting_ratio(simplify=False, loss=loss),
        "test_signal_to_noise": lambda: test_signal_to_noise(loss=loss),
    }
    return builders[name](*rest)


def kernels_source() -> str:
    """The source of :data:`KERNELS_MODULE`: each rate of :data:`KERNELS` printed by SymPy
    as plain Python on ``math`` (the predictions evaluate them without importing SymPy;
    a test keeps the file equal to this)."""
    rename = {s: sp.Symbol(k) for s, k in zip(kernel_symbols(), KERNEL_ARGUMENTS, strict=True)}
    lines = [
        '"""Stage-1 rates as plain Python: generated from the SymPy expressions of',
        ":mod:`theory.stage1.rates` by :func:`theory.stage1.rates.kernels_source`; do not edit",
        '(regenerate it; ``tests/theory/stage1/test_kernels.py`` keeps it equal)."""',
        "",
        "import math",
        "",
    ]
    names = []
    for key in KERNELS:
        code = sp.pycode(kernel_expression(*key).xreplace(rename))
        names.append((key, kernel_name(*key)))
        lines += [
            "",
            f"def {names[-1][1]}({', '.join(KERNEL_ARGUMENTS)}):",
            f"    return {code}",
            "",
        ]
    lines += ["", "KERNELS = {"]
    lines += [f"    {key!r}: {name}," for key, name in names]
    lines += ["}", ""]
    return "\n".join(lines)


__all__ = [
    "KERNEL_ARGUMENTS",
    "KERNELS",
    "KERNELS_MODULE",
    "kernel_symbols",
    "kernel_name",
    "kernel_expression",
    "kernels_source",
    "paper_groups",
    "mean_score",
    "loss_weights",
    "signal_rate",
    "memorisation_rate",
    "token_velocity",
    "gap_velocity",
    "overfitting_ratio",
    "query_velocity_norms",
    "test_signal_to_noise",
    "n_R",
    "n_A",
    "n_O",
    "T_tokens",
    "kappa0",
]
