r"""The values of the stage-1 derivation's block quantities at a setting.

Reconstruction (this package's own derivation; the paper's exact statement is not
available). :mod:`theory.stage1.velocity` takes the expectation of each coincidence pattern
symbolically in block-level quantities (each token block's mean coefficient
:math:`\bar c`, noise-score coefficients :math:`a, b`, signal coordinates, group
indicators; each target's :math:`m_D`; globals). A :class:`Setting` gives the model
quantities, as SymPy symbols (:func:`symbolic_setting`) or as the numbers of a data model
(:func:`numeric_setting`), and :func:`assignment_values` gives every block quantity for
each assignment of categories and groups of a pattern, with its count.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import sympy as sp

from theory.foundation.data_model import DataModel, TokenGroup, Training
from theory.foundation.losses import weight
from theory.foundation.symbols import d, eta, gamma0, mu_norm, n, sigma_eps
from theory.foundation.validation import InvalidParameter
from theory.stage1 import rates
from theory.stage1.velocity import ROLES, Category, Pattern, assignments, block_ring, chi0

#: The loss slopes at the mean output, :math:`\ell_{c,n} = 1/(1 + e^{\pm\bar f})`.
ell_clean, ell_noisy = sp.symbols("ell_c ell_n", positive=True)
#: Excess kurtosis of :math:`W_0`'s entries: uniform on (-s, s) and Gaussian.
ENTRY_EXCESS_KURTOSIS = {"uniform": -1.2, "gaussian": 0.0}


@dataclass(frozen=True)
class Setting:
    r"""Values of the model quantities (SymPy expressions or floats): dimension, noise
    variance :math:`\sigma_\epsilon^2`, :math:`\kappa_0`, :math:`\chi`, signal score
    :math:`\gamma_0`, :math:`\|\mu\|`, samples n, noise rate :math:`\eta`, tokens T, the group
    table, and the loss slopes :math:`\ell_c, \ell_n` at the mean output."""

    d: Any
    variance: Any
    kappa: Any
    chi: Any
    gamma0: Any
    mu: Any
    n: Any
    eta: Any
    T: Any
    table: tuple[TokenGroup, ...]
    ell_clean: Any
    ell_noisy: Any

    def category_size(self, category: Category) -> Any:
        r"""Samples per category: :math:`n(1-\eta)/2` clean, :math:`n\eta/2` noisy."""
        return self.n * ((1 - self.eta) if category.vs == 1 else self.eta) / 2

    @property
    def mean_score(self) -> Any:
        r""":math:`\bar s = \frac1T\sum_g n_g (c_g - c'_g)`."""
        return sum(g.count * g.score for g in self.table) / self.T


def split_token(table: Sequence[TokenGroup], group: str) -> tuple[TokenGroup, ...]:
    """The table with one token of ``group`` split off as the group "U" (same signal)."""
    chosen = next(g for g in table if g.name == group)
    rest = tuple(replace(g, count=g.count - 1) if g.name == group else g for g in table)
    return (*rest, TokenGroup("U", 1, chosen.own, chosen.opposite))


def symbolic_setting() -> Setting:
    """Every quantity a symbol (those of :mod:`theory.stage1.rates`), slopes as ``ell_c, ell_n``."""
    return Setting(
        d, sigma_eps**2, rates.kappa0, chi0, gamma0, mu_norm, n, eta, rates.T_tokens,
        rates.paper_groups(), ell_clean, ell_noisy,
    )  # fmt: skip


def check_balanced(model: DataModel) -> None:
    """The counting assumes balanced classes and a fixed number of flipped labels split
    evenly between them (exact flips, n and the flip count even)."""
    if model.flip != "exact":
        raise InvalidParameter("flip", model.flip, "'exact' (a fixed number of flips)")
    if model.n % 2 or model.noisy_count % 2:
        raise InvalidParameter(
            "n", model.n, f"an even n with an even number of flips (here {model.noisy_count})"
        )


def numeric_setting(model: DataModel, training: Training) -> Setting:
    r"""The numbers of a data model and training set-up (uniform or Gaussian init; the loss
    weights of ``training.loss`` at the mean output). The noise rate is the realised fraction
    of flipped labels, ``noisy_count / n`` (equal to :math:`\eta` when :math:`n\eta` is an
    integer, as at the paper's settings)."""
    check_balanced(model)
    mean_output = model.gamma0 * sum(g.count * g.score for g in model.groups) / model.T
    if training.loss == "logistic":
        slopes = 1 / (1 + math.exp(mean_output)), 1 / (1 + math.exp(-mean_output))
    else:
        slopes = weight(mean_output, training.loss), weight(-mean_output, training.loss)
    return Setting(
        float(model.d), model.sigma_eps**2, training.kappa0(model.d),
        ENTRY_EXCESS_KURTOSIS[training.init], model.gamma0, model.mu_norm, float(model.n),
        model.noisy_count / model.n, float(model.T), model.groups, *slopes,
    )  # fmt: skip


# --------------------------------------------------------------------------- block values


def _signal_coordinates(setting: Setting, category: Category, group: TokenGroup) -> tuple:
    r""":math:`c\mu_{y^*} + c'\mu_{-y^*}` in the coordinates :math:`e_1, e_2`."""
    own, opposite = setting.mu * group.own, setting.mu * group.opposite
    return (own, opposite) if category.ystar == 1 else (opposite, own)


def roles(weights: Mapping[str, Any]) -> dict[str, str | None]:
    """The groups of the direction in the roles 1 and 2 (role 2 empty for one group)."""
    if not 1 <= len(weights) <= 2:
        raise InvalidParameter("weights", dict(weights), "one or two groups")
    names = list(weights) + [None]
    return dict(zip(ROLES, names[:2], strict=True))


def token_values(
    setting: Setting, token: str, category: Category, group: TokenGroup, weights: Mapping
) -> dict:
    r"""The block quantities of a token of ``group`` in a sample of ``category``:
    :math:`\bar c = \bar\ell\varsigma\gamma_0\delta/(nT)`, :math:`a = y\bar\ell/(nT)`,
    :math:`b = -(y\bar\ell + \bar\ell(1-\bar\ell)y^*\gamma_0\delta)/(nT)`, the signal
    coordinates and the group indicators (:math:`y = \varsigma y^*`)."""
    ell = setting.ell_clean if category.vs == 1 else setting.ell_noisy
    total = setting.n * setting.T
    deviation = setting.gamma0 * (group.score - setting.mean_score)
    label = category.vs * category.ystar
    m1, m2 = _signal_coordinates(setting, category, group)
    values = {
        f"cbar_{token}": ell * category.vs * deviation / total,
        f"a_{token}": label * ell / total,
        f"b_{token}": -(label * ell + ell * (1 - ell) * category.ystar * deviation) / total,
        f"m1_{token}": m1,
        f"m2_{token}": m2,
    }
    values.update({f"in_{r}_{token}": int(g == group.name) for r, g in roles(weights).items()})
    return values


def global_values(
    setting: Setting, weights: Mapping[str, Any], targets: Mapping[str, Category]
) -> dict:
    r"""Globals (:math:`d, 1/d, \sigma^2, \kappa_0, \chi, \gamma_0/\|\mu\|, 1/T`), the weights
    :math:`w_G` and :math:`1/n_G` of the direction's groups (:func:`roles`), and each target's
    :math:`m_D = \sum_G w_G(c_G\mu_{y^*} + c'_G\mu_{-y^*})`."""
    values = {
        "d": setting.d,
        "inv_d": 1 / setting.d,
        "variance": setting.variance,
        "kappa": setting.kappa,
        "chi": setting.chi,
        "nu": setting.gamma0 / setting.mu,
        "inv_T": 1 / setting.T,
    }
    groups = {g.name: g for g in setting.table}
    for role, name in roles(weights).items():
        values[f"w_{role}"] = 0 if name is None else weights[name]
        values[f"inv_{role}"] = 0 if name is None else 1 / groups[name].count
    for target, category in targets.items():
        for axis in (0, 1):
            values[f"D{axis + 1}_{target}"] = sum(
                w * _signal_coordinates(setting, category, groups[g])[axis]
                for g, w in weights.items()
            )
    return values


def evaluate(polynomial: Any, values: Mapping[str, Any]) -> Any:
    """A block-ring polynomial at the given values (symbols absent from ``values`` must not
    occur); works for SymPy expressions, floats and NumPy arrays alike."""
    names = [str(s) for s in block_ring()[0].symbols]
    total: Any = 0
    for exponents, coefficient in polynomial.terms():
        term: Any = sp.Rational(coefficient.numerator, coefficient.denominator)
        if all(isinstance(v, float | int) for v in values.values()):
            term = float(term)
        for name, power in zip(names, exponents, strict=True):
            if power:
                term = term * values[name] ** power
        total = total + term
    return total


def assignment_values(
    setting: Setting, pattern: Pattern, targets: Mapping[str, Category], weights: Mapping
) -> Iterator[tuple[Any, dict[str, Any]]]:
    """For every assignment of the pattern's new samples and tokens (:func:`assignments`):
    its count and the values of every block quantity it uses."""
    base = global_values(setting, weights, targets)
    for count, categories, token_groups in assignments(
        pattern, targets, setting.table, setting.category_size
    ):
        values = dict(base)
        for token, group in token_groups.items():
            values.update(token_values(setting, token, categories[token], group, weights))
        yield count, values


def loss_slopes() -> dict[sp.Symbol, sp.Expr]:
    r""":math:`\ell_c, \ell_n` as :func:`theory.stage1.rates.loss_weights` defines them."""
    ell_c, ell_n = rates.loss_weights(rates.paper_groups())
    return {ell_clean: ell_c, ell_noisy: ell_n}


__all__ = [
    "ell_clean",
    "ell_noisy",
    "ENTRY_EXCESS_KURTOSIS",
    "Setting",
    "split_token",
    "symbolic_setting",
    "check_balanced",
    "numeric_setting",
    "roles",
    "token_values",
    "global_values",
    "evaluate",
    "assignment_values",
    "loss_slopes",
]
