r"""The vocabulary of a check: what it expects, what it measured, and the verdict.

Every check is registered with its expectation before any run: it either **agrees** with
the simulation, or it **disagrees**, with the reason: the mechanism in words, and the
numbers that show it, computed from the evidence and the theory when the check runs. A
measurement carries the prediction, the estimate with its confidence interval and the
samples it rests on, and the tolerance fixed in code before the run: the prediction's
stated model error plus the interval's half-width. The verdict compares
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

from collections.abc import Callable, Mapping
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
class PaperResult:
    """The paper results a check stands for (``results``, e.g. ``("Theorem 4.1", "Lemma
    4.6")``) and free text qualifying them (``note``); shown as ``results (note)``."""

    results: tuple[str, ...]
    note: str = ""

    def __str__(self) -> str:
        head = ", ".join(self.results)
        if not self.note:
            return head
        return f"{head} ({self.note})" if head else self.note


#: A disagreement's numbers: a function of the evidence and the check's measurement.
Numbers = Callable[[Any, "Measurement"], Mapping[str, Any]]


@dataclass(frozen=True)
class Expected:
    """What a check is registered to find: agreement, or a disagreement and its reason.

    A disagreement's ``reason`` is its mechanism in words; ``numbers`` computes the numbers
    that show it (from the evidence and the measurement, when the check runs) and
    ``template`` says how they read (``str.format`` fields named as ``numbers``' keys)."""

    agree: bool = True
    reason: str = ""
    numbers: Numbers | None = None
    template: str = ""

    @classmethod
    def disagreement(
        cls, reason: str, numbers: Numbers | None = None, template: str = ""
    ) -> Expected:
        return cls(agree=False, reason=reason, numbers=numbers, template=template)

    def explain(self, evidence: Any, measurement: Measurement) -> tuple[str, dict[str, Any]]:
        """The reason with its numbers filled in (``reason; in numbers: ...``), and the
        numbers."""
        if self.numbers is None:
            return self.reason, {}
        values = dict(self.numbers(evidence, measurement))
        return f"{self.reason}; in numbers: {self.template.format(**values)}", values


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
    at_least: bool = False  # one-sided: within when the interval lies above the prediction


def compare(
    predicted: float,
    measured: float,
    interval: tuple[float, float],
    samples: str,
    model_error: float,
    estimator: str,
    detail: str = "",
    unit: str = "",
) -> Measurement:
    """A two-sided comparison with tolerance ``model_error`` + the interval's half-width:
    within when the interval, widened by ``model_error`` on each side, holds the prediction
    (for a symmetric interval: ``|measured - predicted| <= tolerance``; an asymmetric one,
    such as a ratio's or a median's, is used as it is)."""
    half = 0.5 * (interval[1] - interval[0])
    tolerance = model_error + half
    return Measurement(
        predicted=predicted,
        measured=measured,
        interval=interval,
        samples=samples,
        model_error=model_error,
        tolerance=tolerance,
        estimator=estimator,
        within=interval[0] - model_error <= predicted <= interval[1] + model_error,
        detail=detail,
        unit=unit,
    )


@dataclass(frozen=True)
class Check:
    """A registered check: its stable ``id``, its display name, the paper result it stands
    for, its horizon, its expectation, and how to measure it: ``measure(evidence,
    claim=None)``, where ``claim`` replaces the value the check compares with (to show that
    the check can fail). ``holds_untrained`` says why the check holds for an untrained
    model too (a conditional statement), or is empty."""

    id: str
    name: str
    paper: PaperResult
    horizon: str
    expected: Expected
    measure: Callable[..., Measurement]
    holds_untrained: str = ""

    def run(self, evidence: Any, claim: float | None = None) -> CheckResult:
        measurement = self.measure(evidence, claim)
        reason, numbers = self.expected.explain(evidence, measurement)
        return CheckResult(
            check=self,
            measurement=measurement,
            verdict=verdict_of(self.expected, measurement.within),
            reason=reason,
            numbers=numbers,
        )


def wrong_claims(measurement: Measurement) -> tuple[float, float]:
    """A claim the check must accept (the measured value itself, or below the interval for a
    one-sided check) and one it must reject (far outside the tolerance)."""
    m = measurement
    if m.at_least:
        return m.interval[0] / 10, max(m.interval[1], m.measured) * 10
    return m.measured, m.measured + 3 * (m.tolerance + 0.05 * abs(m.measured) + 1e-9)


def can_fail(check: Check, evidence: Any) -> dict[str, Any]:
    """The check run on a claim it must accept and on one it must reject (a wrong
    prediction): both must come out as they should, or the check cannot fail."""
    right, wrong = wrong_claims(check.measure(evidence, None))
    accepted = check.measure(evidence, right).within
    rejected = not check.measure(evidence, wrong).within
    return {
        "id": check.id,
        "name": check.name,
        "right_claim": right,
        "accepted": accepted,
        "wrong_claim": wrong,
        "rejected": rejected,
        "ok": accepted and rejected,
    }


def verdict_of(expected: Expected, within: bool) -> Verdict:
    if expected.agree:
        return Verdict.AGREES if within else Verdict.NEW_FAILURE
    return Verdict.NOW_AGREES if within else Verdict.DISAGREES_AS_REGISTERED


@dataclass(frozen=True)
class CheckResult:
    """A check's measurement and verdict, with its reason as shown (a disagreement's
    mechanism with the numbers of this run filled in) and those numbers."""

    check: Check
    measurement: Measurement
    verdict: Verdict
    reason: str = ""
    numbers: dict[str, Any] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.check.name

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.check.id,
            "name": self.check.name,
            "paper": str(self.check.paper),
            "horizon": self.check.horizon,
            "expected": "agree" if self.check.expected.agree else "disagree",
            "reason": self.reason,
            "numbers": self.numbers,
            "verdict": self.verdict.value,
        }
        out.update(asdict(self.measurement))
        out["interval"] = list(self.measurement.interval)
        return out


__all__ = [
    "Verdict",
    "PaperResult",
    "Expected",
    "AGREE",
    "Measurement",
    "compare",
    "Check",
    "CheckResult",
    "verdict_of",
    "wrong_claims",
    "can_fail",
]
