"""Hypothesis strategies that BUILD configurations (no filtering of most draws away).

:func:`valid_configs` constructs a configuration satisfying A1-A8 in a target regime
by solving the assumptions for the free parameters: it draws (n, T, rho, eta), sets
||mu|| just above A7's and A1's lower bounds, picks n SNR^2 inside the target
regime, solves for d, and takes alpha from A5. :func:`single_violation` starts from
such a configuration and moves one parameter until exactly one assumption fails.
"""

from __future__ import annotations

import math

from hypothesis import assume
from hypothesis import strategies as st

from theory.assumptions import ASSUMPTION_CONSTANTS, CALIBRATION, assess, symbol_values_for
from theory.predictions import overfitting_threshold, rate
from theory.stability import max_stable_step
from verify.sim.config import RunConfig

DELTA = 0.05


def assumption_status(config: RunConfig, delta: float = DELTA) -> dict[str, bool]:
    """Which of A1-A8 hold for ``config``."""
    values = symbol_values_for(config.model, config.training, delta)
    return {status.key: status.holds for status in assess(values)}


def _step_bound(config: RunConfig) -> float:
    """The largest alpha A5 allows."""
    return max_stable_step(config.model, config.training)


@st.composite
def valid_configs(draw, regime: str = "benign", steps: int = 1000, test_size: int = 200):
    """A configuration satisfying A1-A8 whose n SNR^2 lies in ``regime``
    (``benign``: between 1/6 and 1/2 of the stage-1 threshold; ``not-overfitting``:
    2 to 4 times the calibrated 1000-step constant)."""
    n = draw(st.sampled_from([8, 10, 12]))
    T = draw(st.integers(4, 6))
    rho = draw(st.floats(0.3, 0.45))
    eta = draw(st.sampled_from([0.125, 0.2, 0.25]))
    seed = draw(st.integers(0, 2**31 - 1))
    log_term = math.log((n * T) ** 2 / DELTA)
    mu_a7 = (
        ASSUMPTION_CONSTANTS["C_7"] * math.sqrt(2) * math.sqrt(2 * math.log(n * T / DELTA)) / rho
    )
    probe = RunConfig.build(d=1000, n=n, T=T, rho=rho, eta=eta, mu_norm=20.0)
    threshold = overfitting_threshold(probe.model, probe.training)
    if regime == "benign":
        target = draw(st.floats(threshold / 6, threshold / 2))
    elif regime == "not-overfitting":
        c_no = CALIBRATION["C_no_1000_steps"]
        target = draw(st.floats(2 * c_no, 4 * c_no))
    else:
        raise ValueError(f"regime={regime!r} is invalid: allowed 'benign', 'not-overfitting'")
    mu_a1 = math.sqrt(1.2 * target * ASSUMPTION_CONSTANTS["C_1"] * log_term)
    mu = max(mu_a7, mu_a1) * draw(st.floats(1.05, 1.3))

    def build(mu: float) -> RunConfig:
        return RunConfig.build(
            d=max(int(round(n * mu**2 / target)), 2),
            n=n,
            T=T,
            rho=rho,
            eta=eta,
            mu_norm=mu,
            steps=steps,
            seed=seed,
            test_size=test_size,
            log_every=10,
            log_geometric=0,
        )

    # A2 with margin 1.5: at fixed n SNR^2, z grows like ||mu|| (d grows like ||mu||^2).
    z = _test_z(build(mu))
    config = build(mu * max(1.0, 1.5 * ASSUMPTION_CONSTANTS["C_2"] / z))
    config = config.replace(alpha=min(5e-3, 0.5 * _step_bound(config)))
    assume(all(assumption_status(config).values()))
    return config


def _test_z(config: RunConfig) -> float:
    return rate(config.model, config.training, "test_signal_to_noise")


def _violate_a2(config: RunConfig) -> RunConfig:
    """Test z below C2 (z ~ ||mu||^2 / sqrt(d) at fixed n): raise d until z = C2 / 1.5."""
    factor = (1.5 * _test_z(config) / ASSUMPTION_CONSTANTS["C_2"]) ** 2
    changed = config.replace(d=int(config.model.d * factor))
    return changed.replace(alpha=min(5e-3, 0.5 * _step_bound(changed)))


#: How each assumption is broken while the others keep holding.
_VIOLATIONS = {
    "A1": lambda c: c.replace(d=max(c.model.d // 4, 16)),
    "A2": _violate_a2,
    "A3": lambda c: c.replace(n=4, eta=0.125),
    "A4": lambda c: c.replace(eta=0.27),
    "A5": lambda c: c.replace(alpha=8 * _step_bound(c)),
    "A6": lambda c: c.replace(init_scale=3.0 / math.sqrt(c.model.d)),
    "A7": lambda c: c.replace(rho=0.04),
    "A8": lambda c: c.replace(nu_scale=4.0),
}


@st.composite
def single_violation(draw, key: str):
    """A valid benign configuration changed so that exactly assumption ``key`` fails."""
    config = _VIOLATIONS[key](draw(valid_configs("benign")))
    status = assumption_status(config)
    assume(not status[key] and all(v for k, v in status.items() if k != key))
    return config


ASSUMPTION_KEYS = tuple(_VIOLATIONS)
