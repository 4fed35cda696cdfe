r"""The vocabulary of a check: what it expects, what it measured, and the verdict.

Every check is registered with its expectation before any run: it either **agrees** with
the simulation, or it **disagrees**, with the reason (the mechanism and the numbers that
show it). A measurement carries the prediction, the estimate with its confidence
interval and the samples it rests on, and the tolerance fixed in code before the run:
the prediction's stated model error plus the interval's half-width. The verdict compares
the outcome with the expectation:

==================================  =======================================  ============
outcome                             expected                                 verdict
==================================  =======================================  ============
within tolerance                    agree                                    agrees
outside tolerance                   disagree (registered, with its reason)   disagrees as registered
outside tolerance                   agree                                    unexpected: new failure
within tolerance                    disagree                                 unexpected: now agrees
==================================  =======================================  ============

``python -m verify check`` exits 0 exactly when nothing is unexpected.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import Any


class Verdict(StrEnum):
    AGREES = "agrees"
    DISAGREES_AS_REGISTERED = "disagrees as registered"
    NEW_FAILURE = "unexpected: new failure"
    NOW_AGREES = "unexpected: now agrees"

    @property
    def unexpected(self) -> bool:
        return self in (Verdict.NEW_FAILURE, Verdict.NOW_AGREES)


@dataclass(frozen=True)
class Expected:
    """What a check is registered to find: agreement, or a disagreement and its reason."""

    agree: bool = True
    reason: str = ""

    @classmethod
    def disagreement(cls, reason: str) -> Expected:
        return cls(agree=False, reason=reason)


AGREE = Expected()


@dataclass(frozen=True)
class Measurement:
    r"""One prediction against one estimate.

    ``within`` is :math:`|\text{measured} - \text{predicted}| \le \text{tolerance}` unless a
    check decides it otherwise (e.g. a one-sided bound); ``interval`` is the estimate's 95%
    confidence interval; ``samples`` what it rests on (seeds, samples, points);
    ``tolerance = model_error + half-width of the interval``, fixed before the run."""

    predicted: float
    measured: float
    interval: tuple[float, float]
    samples: str
    model_error: float
    tolerance: float
    estimator: str
    within: bool
    detail: str = ""
    unit: str = ""


def compare(predicted: float, measured: float, interval: tuple[float, float], samples: str,
            model_error: float, estimator: str, detail: str = "",
            unit: str = "") -> Measurement:
    """A two-sided comparison with tolerance ``model_error`` + the interval's half-width."""
    half = 0.5 * (interval[1] - interval[0])
    tolerance = model_error + half
    return Measurement(predicted=predicted, measured=measured, interval=interval,
                       samples=samples, model_error=model_error, tolerance=tolerance,
                       estimator=estimator, within=abs(measured - predicted) <= tolerance,
                       detail=detail, unit=unit)


@dataclass(frozen=True)
class Check:
    """A registered check: its name, the paper result it stands for, its horizon, its
    expectation, and how to measure it (a function of the evidence)."""

    name: str
    paper: str
    horizon: str
    expected: Expected
    measure: Callable[[Any], Measurement]
    needs: tuple[str, ...] = field(default=())

    def run(self, evidence: Any) -> CheckResult:
        measurement = self.measure(evidence)
        return CheckResult(check=self, measurement=measurement,
                           verdict=verdict_of(self.expected, measurement.within))


def verdict_of(expected: Expected, within: bool) -> Verdict:
    if expected.agree:
        return Verdict.AGREES if within else Verdict.NEW_FAILURE
    return Verdict.NOW_AGREES if within else Verdict.DISAGREES_AS_REGISTERED


@dataclass(frozen=True)
class CheckResult:
    check: Check
    measurement: Measurement
    verdict: Verdict

    @property
    def name(self) -> str:
        return self.check.name

    def as_dict(self) -> dict[str, Any]:
        out = {"name": self.check.name, "paper": self.check.paper,
               "horizon": self.check.horizon, "expected": "agree" if self.check.expected.agree
               else "disagree", "reason": self.check.expected.reason,
               "verdict": self.verdict.value}
        out.update(asdict(self.measurement))
        out["interval"] = list(self.measurement.interval)
        return out


__all__ = ["Verdict", "Expected", "AGREE", "Measurement", "compare", "Check", "CheckResult",
           "verdict_of"]
