"""Validated run configuration (a plain dataclass, checked on construction).

Every field is checked when a :class:`RunConfig` is built; invalid values raise
:class:`ConfigError` naming the parameter, the value and the allowed range, in
the spirit of scikit-learn's parameter validation.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, fields
from typing import Any

ENGINES = ("dense", "reduced", "mp", "flow")
FLIP_MODES = ("exact", "bernoulli")
INIT_KINDS = ("uniform", "gaussian")


class ConfigError(ValueError):
    """A configuration value is outside its allowed range."""


def _fail(name: str, value: Any, allowed: str) -> None:
    raise ConfigError(f"{name}={value!r} is invalid: allowed {allowed}")


def _check_int(name: str, value: Any, minimum: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        _fail(name, value, f"an integer >= {minimum}")
    if value < minimum:
        _fail(name, value, f"an integer >= {minimum}")


def _check_real(name: str, value: Any, low: float, high: float,
                low_open: bool = True, high_open: bool = True) -> None:
    lo = "(" if low_open else "["
    hi = ")" if high_open else "]"
    allowed = f"a finite real number in {lo}{low}, {high}{hi}"
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        _fail(name, value, allowed)
    if not math.isfinite(value):
        _fail(name, value, allowed)
    below = value <= low if low_open else value < low
    above = value >= high if high_open else value > high
    if below or above:
        _fail(name, value, allowed)


@dataclass(frozen=True)
class RunConfig:
    """One training run of the one-layer attention model on the paper's data model.

    Data (spec 01, section 2): each of ``n`` training sequences has ``T`` tokens;
    ``n_relevant`` tokens carry :math:`\\mu_{y^*} + \\epsilon`, ``n_weak_aligned`` carry
    :math:`\\rho\\mu_{y^*} + \\epsilon`, ``n_weak_opposite`` carry
    :math:`\\rho\\mu_{-y^*} + \\epsilon`, the remaining ``T - (...)`` are pure noise
    :math:`\\epsilon \\sim N(0, \\sigma_\\epsilon^2 I_d)`. Signals
    :math:`\\mu_{\\pm1} = \\|\\mu\\| e_{1,2}`. A fraction ``eta`` of labels is flipped.

    Model: :math:`f(X) = \\nu^\\top X^\\top \\mathrm{softmax}(X W^\\top p)`, with
    :math:`\\nu = \\nu_{\\text{scale}} (\\mu_{+1} - \\mu_{-1}) / (\\sqrt2 \\|\\mu\\|^2)`, so that
    :math:`\\langle \\mu_{\\pm1}, \\nu \\rangle = \\pm \\nu_{\\text{scale}}/\\sqrt2`.

    Training: full-batch GD with step ``alpha`` for ``steps`` steps from
    :math:`p(0) = 0` and :math:`W(0)` iid uniform on :math:`(-s, s)` (``init="uniform"``)
    or :math:`N(0, s^2)` (``init="gaussian"``), :math:`s` = ``init_scale`` (default
    :math:`1/\\sqrt d`, the public code's choice).
    """

    d: int = 2000
    n: int = 20
    T: int = 8
    n_relevant: int = 1
    n_weak_aligned: int = 1
    n_weak_opposite: int = 1
    rho: float = 0.1
    eta: float = 0.2
    flip: str = "exact"
    sigma_eps: float = 1.0
    mu_norm: float = 20.0
    nu_scale: float = 1.0
    alpha: float = 5e-3
    steps: int = 1000
    init: str = "uniform"
    init_scale: float | None = None
    seed: int = 0
    test_size: int = 1000
    engine: str = "reduced"
    mp_dps: int = 50
    log_every: int = 0
    log_geometric: int = 60
    attention_test_samples: int = 20
    flow_rtol: float = 1e-10
    flow_atol: float = 1e-12

    def __post_init__(self) -> None:
        _check_int("d", self.d, 2)
        _check_int("n", self.n, 1)
        _check_int("T", self.T, 2)
        _check_int("n_relevant", self.n_relevant, 1)
        _check_int("n_weak_aligned", self.n_weak_aligned, 0)
        _check_int("n_weak_opposite", self.n_weak_opposite, 0)
        need = self.n_relevant + self.n_weak_aligned + self.n_weak_opposite
        if self.T < need:
            _fail("T", self.T, f"an integer >= n_relevant + n_weak_aligned + "
                  f"n_weak_opposite = {need}")
        _check_real("rho", self.rho, 0.0, 1.0)
        _check_real("eta", self.eta, 0.0, 0.5, low_open=False)
        if self.flip not in FLIP_MODES:
            _fail("flip", self.flip, f"one of {FLIP_MODES}")
        _check_real("sigma_eps", self.sigma_eps, 0.0, math.inf)
        _check_real("mu_norm", self.mu_norm, 0.0, math.inf)
        _check_real("nu_scale", self.nu_scale, 0.0, math.inf)
        _check_real("alpha", self.alpha, 0.0, math.inf)
        _check_int("steps", self.steps, 0)
        if self.init not in INIT_KINDS:
            _fail("init", self.init, f"one of {INIT_KINDS}")
        if self.init_scale is not None:
            _check_real("init_scale", self.init_scale, 0.0, math.inf, low_open=False)
        _check_int("seed", self.seed, 0)
        _check_int("test_size", self.test_size, 0)
        if self.engine not in ENGINES:
            _fail("engine", self.engine, f"one of {ENGINES}")
        _check_int("mp_dps", self.mp_dps, 15)
        _check_int("log_every", self.log_every, 0)
        _check_int("log_geometric", self.log_geometric, 0)
        if self.log_every and self.steps // self.log_every > 100_000:
            _fail("log_every", self.log_every,
                  f"an integer >= steps / 100000 = {-(-self.steps // 100_000)} "
                  "(at most 1e5 linear log points), or 0 for about 100 points")
        _check_int("attention_test_samples", self.attention_test_samples, 0)
        _check_real("flow_rtol", self.flow_rtol, 0.0, 1.0)
        _check_real("flow_atol", self.flow_atol, 0.0, 1.0)

    # -- derived quantities -------------------------------------------------
    @property
    def n_irrelevant(self) -> int:
        return self.T - self.n_relevant - self.n_weak_aligned - self.n_weak_opposite

    @property
    def init_half_width(self) -> float:
        """The initialisation scale :math:`s` (default :math:`1/\\sqrt d`)."""
        return self.init_scale if self.init_scale is not None else 1.0 / math.sqrt(self.d)

    @property
    def snr(self) -> float:
        r"""Signal-to-noise ratio :math:`\mathrm{SNR} = \|\mu\| / (\sigma_\epsilon \sqrt d)`."""
        return self.mu_norm / (self.sigma_eps * math.sqrt(self.d))

    @property
    def linear_log_interval(self) -> int:
        """Steps between linear log points (``log_every``; 0 means about 100 points)."""
        if self.log_every:
            return self.log_every
        return max(1, -(-self.steps // 100))

    @property
    def n_tokens(self) -> int:
        """Number of training tokens :math:`N = nT` (the reduced engine's dimension)."""
        return self.n * self.T

    def replace(self, **changes: Any) -> RunConfig:
        """A copy with some fields changed (validated again)."""
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> RunConfig:
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(values) - known)
        if unknown:
            raise ConfigError(f"unknown configuration field(s) {unknown}: allowed {sorted(known)}")
        return cls(**values)


#: The paper's three synthetic settings (Figures 3-5): n = 20, T = 8, rho = 0.1,
#: eta = 0.2, sigma_eps = 1, alpha = 5e-3, 1000 steps, 1000 test samples.
PRESETS: dict[str, dict[str, Any]] = {
    "harmful": {"d": 5000, "mu_norm": 5.0},
    "benign": {"d": 2000, "mu_norm": 20.0},
    "not-overfitting": {"d": 1000, "mu_norm": 100.0},
}

#: The paper's reported (train accuracy, test accuracy) for each preset.
PAPER_ACCURACY: dict[str, tuple[float, float]] = {
    "harmful": (1.0, 0.87),
    "benign": (1.0, 1.0),
    "not-overfitting": (0.8, 1.0),
}


def preset(name: str, **overrides: Any) -> RunConfig:
    """The paper's setting ``name`` (one of :data:`PRESETS`), with overrides."""
    if name not in PRESETS:
        _fail("preset", name, f"one of {tuple(PRESETS)}")
    return RunConfig(**{**PRESETS[name], **overrides})


def config_fields() -> list[dataclasses.Field]:
    """The dataclass fields, for building command-line flags."""
    return list(fields(RunConfig))


__all__ = [
    "ConfigError", "RunConfig", "PRESETS", "PAPER_ACCURACY", "preset", "config_fields",
    "ENGINES", "FLIP_MODES", "INIT_KINDS",
]
