"""Hypothesis strategies over the valid space of A1-A8, for the property tests.

The construction is the package's (:mod:`verify.checks.sampler`, which draws from a NumPy
generator for the notebooks and users); here Hypothesis supplies its random numbers through
the same :class:`~verify.checks.sampler.Draws` interface, so that the property tests keep
Hypothesis's replay, shrinking and derandomized profile while the package needs no
Hypothesis at run time.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NoReturn, TypeVar

from hypothesis import assume
from hypothesis import strategies as st

from verify.checks.sampler import (
    DEFAULT_RANGES,
    Ranges,
    Rejected,
    construct_valid_config,
    violate_one,
)
from verify.sim.config import RunConfig

Option = TypeVar("Option")


@dataclass(frozen=True)
class HypothesisDraws:
    """:class:`~verify.checks.sampler.Draws` read from a Hypothesis ``draw``."""

    draw: Any

    def integer(self, low: int, high: int) -> int:
        return self.draw(st.integers(low, high))

    def real(self, low: float, high: float) -> float:
        return self.draw(st.floats(low, high))

    def choice(self, options: Sequence[Option]) -> Option:
        return self.draw(st.sampled_from(options))

    def reject(self, reason: str) -> NoReturn:
        assume(False)
        raise AssertionError(f"unreachable: {reason}")


@st.composite
def valid_configs(
    draw, target: str | None = None, ranges: Ranges = DEFAULT_RANGES, balanced: bool = False
) -> RunConfig:
    """:func:`verify.checks.sampler.construct_valid_config`, drawn by Hypothesis."""
    return construct_valid_config(HypothesisDraws(draw), target, ranges, balanced)


@st.composite
def single_violation(draw, key: str, base: st.SearchStrategy[RunConfig] | None = None):
    """A valid configuration (from ``base``, default :func:`valid_configs`) changed so that
    exactly assumption ``key`` fails (:func:`verify.checks.sampler.violate_one`); draws
    where another assumption breaks too are rejected."""
    config = draw(base or valid_configs())
    try:
        return violate_one(config, key)
    except Rejected:
        assume(False)
