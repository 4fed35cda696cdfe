"""The stage-1 rates in closed form: the overfitting ratio and the first-order sketch of the
signal rate."""

import sympy as sp

from theory.foundation.symbols import d, eta, gamma0, mu_norm, n, rho, sigma_eps
from theory.stage1 import rates

ONE_PER_GROUP = {rates.n_R: 1, rates.n_A: 1, rates.n_O: 1}


def test_overfitting_ratio_closed_form():
    ell_c, ell_n = rates.loss_weights(rates.paper_groups())
    w = (1 - eta) * ell_c - eta * ell_n
    T = rates.T_tokens
    closed = (
        2
        * ell_n
        * (1 + rho)
        / (w * (1 - rho) * (1 - (1 + 2 * rho) / T))
        * sigma_eps**2
        * d
        / (n * mu_norm**2)
    )
    assert sp.simplify((rates.overfitting_ratio() - closed).subs(ONE_PER_GROUP)) == 0


def test_signal_rate_matches_first_order_sketch_when_loss_weights_are_one_half():
    """The first-order sketch (l' = -1/2, rho/T terms dropped):
    S = k0 mu^2 (1-2eta)(1-1/T)/(4 sqrt2 T)."""
    S = rates.signal_rate().subs(ONE_PER_GROUP).subs(gamma0, 1 / sp.sqrt(2))
    f0 = rates.mean_score(rates.paper_groups()).subs(ONE_PER_GROUP)
    # Replace both loss weights by 1/2 (f0 -> 0 inside the exponentials) and rho/T -> 0.
    S_half = S.subs(sp.exp(f0.subs(gamma0, 1 / sp.sqrt(2))), 1)
    sketch = (
        rates.kappa0
        * mu_norm**2
        * (1 - 2 * eta)
        * (1 - 1 / rates.T_tokens)
        / (4 * sp.sqrt(2) * rates.T_tokens)
    )
    difference = sp.simplify((S_half - sketch).subs(rho, 0))
    assert difference == 0
