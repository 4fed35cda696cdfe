r"""The package's own assumptions A1-A8 and regime conditions, as data.

The paper's (A1)-(A8) are not available; these are this package's reconstruction, in
the same spirit as the paper's: each is a list of SymPy relations :math:`\text{lhs} \ge
\text{rhs}` over named symbols with named constants, a one-line reason (the step of
the derivation in :mod:`theory.stage1.rates` / :mod:`theory.stage1.predictions` that needs it), and
an evaluator that reports, for concrete values, whether it holds and by what margin
(:math:`\min \text{lhs}/\text{rhs}`; at least 1 means it holds).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cache

import sympy as sp

from theory.foundation.data_model import DataModel, Training
from theory.foundation.stability import C5 as C5_DEFAULT
from theory.foundation.symbols import T as T_symbol
from theory.foundation.symbols import (
    alpha,
    d,
    delta,
    eta,
    gamma0,
    mu_norm,
    n,
    nu_norm,
    rho,
    sigma_0,
    sigma_eps,
)
from theory.stage1 import rates

C1, C2, C3, C4, C5, C6, C7, C8 = sp.symbols("C_1:9", positive=True)
kappa0 = sigma_0**2 * d
_test_z = rates.test_signal_to_noise().subs(
    {rates.n_R: 1, rates.n_A: 1, rates.n_O: 1, rates.kappa0: kappa0}
)

#: Default constants (the package's choice; see :data:`CALIBRATION` for measured ones).
ASSUMPTION_CONSTANTS: dict[str, float] = {
    "C_1": 4.0,
    "C_2": 4.0,
    "C_3": 2.0,
    "C_4": 4.0,
    "C_5": C5_DEFAULT,
    "C_6": 1.0,
    "C_7": 1.0,
    "C_8": 2.0,
}


@dataclass(frozen=True)
class Assumption:
    key: str
    title: str
    relations: tuple[tuple[sp.Expr, sp.Expr], ...]  # each (lhs, rhs): lhs >= rhs
    reason: str

    def statement(self) -> list[sp.Rel]:
        return [sp.GreaterThan(lhs, rhs, evaluate=False) for lhs, rhs in self.relations]


@dataclass(frozen=True)
class AssumptionStatus:
    key: str
    title: str
    holds: bool
    margin: float  # min lhs / rhs over the relations
    values: list[tuple[float, float]] = field(default_factory=list)
    reason: str = ""


ASSUMPTIONS: tuple[Assumption, ...] = (
    Assumption(
        "A1",
        "high dimension",
        ((d, C1 * n * sp.log((n * T_symbol) ** 2 / delta)),),
        "the memorisation of one sample must not move the others: random-sign cross terms "
        "sum_j <eps_i, eps_j> ~ sigma^2 sqrt(n d log) stay below the self term sigma^2 d "
        "(dropped in theory.stage1.rates)",
    ),
    Assumption(
        "A2",
        "SNR lower bound (benign vs harmful)",
        ((_test_z, C2),),
        "a fresh test token's relevant logit must lead its noise by z >= C2 standard "
        "deviations (Lemma 4.8; z = theory.stage1.rates.test_signal_to_noise ~ (1 - 2 eta) "
        "sqrt(n) SNR^2 sqrt(d), the paper's SNR^2 >= C d^(-1/2) with the package's n)",
    ),
    Assumption(
        "A3",
        "enough samples",
        ((n, C3 * sp.log(1 / delta)),),
        "class and noise counts concentrate, so the signal rate has its expected sign "
        "(w = (1 - eta) l_c - eta l_n > 0 for the realised counts)",
    ),
    Assumption(
        "A4",
        "small label noise",
        ((1 / C4, eta),),
        "the clean majority drives the signal: w > 0 needs eta < l_c / (l_c + l_n) ~ 1/2; "
        "1/C4 keeps a margin",
    ),
    Assumption(
        "A5",
        "small step",
        ((T_symbol / C5, alpha * kappa0 * gamma0 * (mu_norm**2 / 4 + sigma_eps**2 * d / (2 * n))),),
        "a gap moves by at most ~1/C5 per GD step at tau = 0, so GD tracks the flow and its "
        "quadrature (theory.quadrature.gd bounds the difference)",
    ),
    Assumption(
        "A6",
        "small initialisation",
        ((C6, kappa0),),
        "p(0) = 0 and the preconditioner W0^T W0 ~ sigma_0^2 d I stays O(1), as the stage-1 "
        "rates assume",
    ),
    Assumption(
        "A7",
        "weak relevance",
        (
            (1 / C7 - rho, 0),
            (rho * gamma0, C7 * sigma_eps * nu_norm * sp.sqrt(2 * sp.log(n * T_symbol / delta))),
        ),
        "the W- token's score rho gamma_0 must beat every token's noise score "
        "sigma ||nu|| sqrt(2 log(nT/delta)), or noisy samples select irrelevant tokens "
        "(theory.stage1.predictions.stage1_selection); rho < 1 so W tokens stay weaker than R",
    ),
    Assumption(
        "A8",
        "head scale",
        ((nu_norm * mu_norm, 1 / C8), (C8, nu_norm * mu_norm)),
        "nu along mu_{+1} - mu_{-1} with ||nu|| ||mu|| = Theta(1): token scores O(1) "
        "(Theorem 4.1's ||nu|| = O(1/||mu||))",
    ),
)


@cache
def _compiled(expression: sp.Expr) -> tuple[tuple[sp.Symbol, ...], Callable[..., float]]:
    symbols = tuple(sorted(sp.sympify(expression).free_symbols, key=str))
    return symbols, sp.lambdify(symbols, expression, modules="math")


def _substitute(expression: sp.Expr, values: Mapping[sp.Symbol, float]) -> float:
    """``expression`` at ``values`` (lambdified once per expression)."""
    symbols, function = _compiled(sp.sympify(expression))
    return float(function(*(values[symbol] for symbol in symbols)))


def symbol_values(
    d_value: int,
    n_value: int,
    T_value: int,
    rho_value: float,
    eta_value: float,
    mu_value: float,
    sigma_value: float,
    alpha_value: float,
    sigma0_value: float,
    nu_value: float,
    delta_value: float = 0.05,
    gamma0_value: float = 1 / math.sqrt(2),
    constants: Mapping[str, float] | None = None,
) -> dict[sp.Symbol, float]:
    """A substitution dictionary for :func:`assess`."""
    constants = {**ASSUMPTION_CONSTANTS, **(constants or {})}
    values = {
        d: d_value,
        n: n_value,
        T_symbol: T_value,
        rho: rho_value,
        eta: eta_value,
        mu_norm: mu_value,
        sigma_eps: sigma_value,
        alpha: alpha_value,
        sigma_0: sigma0_value,
        nu_norm: nu_value,
        delta: delta_value,
        gamma0: gamma0_value,
    }
    values.update({sp.Symbol(name, positive=True): value for name, value in constants.items()})
    return values


def symbol_values_for(
    model: DataModel,
    training: Training,
    delta: float = 0.05,
    constants: Mapping[str, float] | None = None,
) -> dict[sp.Symbol, float]:
    """:func:`symbol_values` for a data model and training set-up."""
    return symbol_values(
        model.d,
        model.n,
        model.T,
        model.rho,
        model.eta,
        model.mu_norm,
        model.sigma_eps,
        training.alpha,
        math.sqrt(training.entry_variance(model.d)),
        model.nu_norm,
        delta,
        model.gamma0,
        constants,
    )


def assess(values: Mapping[sp.Symbol, float]) -> list[AssumptionStatus]:
    """Which assumptions hold at ``values`` (from :func:`symbol_values`), with margins."""
    out = []
    for assumption in ASSUMPTIONS:
        pairs = [
            (_substitute(lhs, values), _substitute(rhs, values))
            for lhs, rhs in assumption.relations
        ]
        margins = []
        for lhs, rhs in pairs:
            if rhs > 0:
                margins.append(lhs / rhs)
            else:  # a relation lhs >= 0: margin 1 + lhs (>= 1 iff it holds)
                margins.append(1.0 + lhs - rhs)
        margin = min(margins)
        out.append(
            AssumptionStatus(
                assumption.key, assumption.title, margin >= 1.0, margin, pairs, assumption.reason
            )
        )
    return out


#: Regime constants on n SNR^2. ``stage1_threshold`` is derived
#: (:func:`theory.stage1.predictions.overfitting_threshold`, ~5.4 for the paper's setting);
#: ``C_no`` is CALIBRATED from simulation (``python -m verify sweep-boundaries``): at
#: the paper's 1000 steps, d = 2000, n = 20, every noisy sample stays unfitted only
#: above ||mu|| = 185, i.e. n SNR^2 = 340 (63x the stage-1 threshold); the boundary
#: scales like d^0.95 n^-1.36 at 1000 steps, like sqrt(d/n) from 1e5 steps on, and
#: moves up with training time (||mu|| = 290 at 1e5 steps, 388 at 1e8). A2 separates
#: benign from harmful.
CALIBRATION: dict[str, float] = {"C_no_1000_steps": 340.0}


def regime_conditions(
    n_snr_sq: float,
    a2_holds: bool,
    stage1_threshold: float,
    not_overfitting_threshold: float = CALIBRATION["C_no_1000_steps"],
) -> dict[str, str]:
    """The regime by the stage-1 derivation and by the calibrated constant (one token per
    group; A2 decides benign vs harmful)."""

    def regime(threshold: float) -> str:
        if n_snr_sq >= threshold:
            return "not-overfitting"
        return "benign" if a2_holds else "harmful"

    return {
        "stage-1 derivation": regime(stage1_threshold),
        "calibrated (1000 steps)": regime(not_overfitting_threshold),
    }


__all__ = [
    "ASSUMPTIONS",
    "Assumption",
    "AssumptionStatus",
    "ASSUMPTION_CONSTANTS",
    "CALIBRATION",
    "assess",
    "symbol_values",
    "symbol_values_for",
    "regime_conditions",
]
