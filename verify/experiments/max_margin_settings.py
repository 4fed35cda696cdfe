"""The settings of the max-margin experiment, as validated data.

Kept apart from the experiment so that reading them (``--help``) imports no numerical
library.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from theory.foundation.validation import Integer, Options, Real, Validated, parameter, require
from theory.foundation.validation import Sequence as SequenceOf
from verify.sim.config import PRESETS, RunConfig, preset

#: Milestones (log10 steps) of the summary table.
MILESTONES = (3, 6, 9, 12, 20, 30, 40)


@dataclass(frozen=True)
class MaxMarginSettings(Validated):
    """Gradient-flow runs of the paper's presets followed to ``10**log10_horizon`` steps,
    compared with the max-margin token-selection SVMs of their late selections."""

    presets: tuple[str, ...] = parameter(
        tuple(PRESETS),
        SequenceOf(Options(tuple(PRESETS)), unique=True),
        "the paper's presets to run",
    )
    seeds: int = parameter(5, Integer(1, 10_000), "seeds per preset (0..K-1)")
    d_factor: float = parameter(
        1.0,
        Real(0.0, 1.0, closed="right"),
        "scale each preset's d by this factor and its ||mu|| by the square root (n SNR^2 kept)",
    )
    init_factor: float = parameter(
        1.0,
        Real(0.0, 100.0, closed="right"),
        "scale W(0) by this factor (init_scale = factor/sqrt d; the predicted c_init "
        "scales with its square)",
    )
    log10_horizon: int = parameter(
        40, Integer(4, 100), "the flow runs to 10**log10_horizon GD-equivalent steps"
    )
    points_per_decade: int = parameter(4, Integer(1, 100), "log-spaced points per decade")
    first_log10_step: int = parameter(1, Integer(0, 99), "the first point is 10**this steps")
    fit_from_log10: float = parameter(
        10.0, Real(0.0, 100.0, closed="left"), "rate fits use the points from 10**this steps"
    )
    stable_decades: float = parameter(
        10.0, Real(0.0, 100.0), "the selection counts as stable if constant over these last decades"
    )
    milestones: tuple[int, ...] = parameter(
        MILESTONES,
        SequenceOf(Integer(0, 100), unique=True),
        "log10 steps of the summary table (those within the horizon are used)",
    )
    family_points: int = parameter(
        41, Integer(2, 1000), "values of c of the SVMs in the metric (A + cI)^-1, log-spaced"
    )
    family_range: tuple[float, ...] = parameter(
        (1e-2, 1e4),
        SequenceOf(Real(0.0, 1e12), min_length=2),
        "smallest and largest c of that family (low,high)",
    )

    def check_relations(self) -> None:
        require(
            self.first_log10_step < self.log10_horizon,
            "first_log10_step",
            self.first_log10_step,
            f"an integer below log10_horizon = {self.log10_horizon}",
        )
        require(
            self.fit_from_log10 < self.log10_horizon - 1,
            "fit_from_log10",
            self.fit_from_log10,
            f"a value below log10_horizon - 1 = {self.log10_horizon - 1}",
        )
        low, high = self.family_range[:2]
        require(low < high, "family_range", self.family_range, "two values low,high, low < high")
        for name in self.presets:
            config = self.config(name, 0)
            d, tokens = config.model.d, config.model.n * config.model.T
            require(
                d >= tokens,
                "d_factor",
                self.d_factor,
                f"a factor keeping d >= nT = {tokens} (linearly independent training tokens; "
                f"preset {name!r} gets d = {d})",
            )

    @classmethod
    def quick(cls) -> MaxMarginSettings:
        """One benign run at d = 200 to 1e12 steps (for tests)."""
        return cls(
            presets=("benign",),
            seeds=1,
            d_factor=0.1,
            log10_horizon=12,
            points_per_decade=2,
            fit_from_log10=6.0,
            stable_decades=4.0,
            family_points=9,
        )

    def steps(self) -> list[float]:
        """The log-spaced points :math:`10^{k/\\text{points per decade}}`."""
        per = self.points_per_decade
        return [
            10.0 ** (k / per)
            for k in range(self.first_log10_step * per, self.log10_horizon * per + 1)
        ]

    def used_milestones(self) -> tuple[int, ...]:
        return tuple(m for m in self.milestones if self.first_log10_step <= m <= self.log10_horizon)

    def config(self, name: str, seed: int) -> RunConfig:
        """Preset ``name`` with d scaled by ``d_factor`` and ||mu|| by its square root,
        W(0) scaled by ``init_factor``, on the flow engine with the horizon as its planned
        length and no test set."""
        base = preset(name)
        d = max(2, round(base.model.d * self.d_factor))
        mu = base.model.mu_norm * math.sqrt(d / base.model.d)
        steps = 10**self.log10_horizon
        scale = None if self.init_factor == 1.0 else self.init_factor / math.sqrt(d)
        return preset(
            name,
            d=d,
            mu_norm=mu,
            init_scale=scale,
            seed=seed,
            engine="flow",
            steps=steps,
            test_size=0,
            log_every=steps,
            log_geometric=0,
        )


__all__ = ["MaxMarginSettings", "MILESTONES"]
