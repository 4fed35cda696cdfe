r"""The vocabulary of a check: what it expects, what it measured, and the verdict.

Every check is registered with its expectation: it either **agrees** with the simulation,
or it **disagrees**, with the reason: the mechanism in words, and the numbers that show
it, computed from the evidence and the theory when the check runs. A disagreement is
registered after it was first measured (its record names the commit and the run
that measured it), and every run re-tests it: if the check comes to agree, the run says so. A
measurement carries the prediction, the estimate with its confidence interval and the
samples it rests on, and the tolerance: the prediction's model error (derived for the
setting from what its derivation drops, or stated with its reason) plus the interval's
half-width, and where it came from (``tolerance_source``). A check's ``power`` is how far
the prediction must move for the verdict to flip, at this run's statistics. The verdict
compares the outcome with the expectation:

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

import math
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
    ``template`` says how they read (``str.format`` fields named as ``numbers``' keys);
    ``record`` is its registration (commit, date, the measurement that led to it)."""

    agree: bool = True
    reason: str = ""
    numbers: Numbers | None = None
    template: str = ""
    record: str = ""

    @classmethod
    def disagreement(
        cls, reason: str, numbers: Numbers | None = None, template: str = "", record: str = ""
    ) -> Expected:
        """A registered disagreement; ``record`` says where and on what it was registered."""
        return cls(agree=False, reason=reason, numbers=numbers, template=template, record=record)

    def explain(self, evidence: Any, measurement: Measurement) -> tuple[str, dict[str, Any]]:
        """The reason with its numbers filled in (``reason; in numbers: ...``), and the
        numbers."""
        if self.numbers is None:
            return self.reason, {}
        values = dict(self.numbers(evidence, measurement))
        return f"{self.reason}; in numbers: {self.template.format(**values)}", values


AGREE = Expected()

#: The possible range of an accuracy or a share (a report clips intervals to it).
PROBABILITY = (0.0, 1.0)


@dataclass(frozen=True)
class Measurement:
    r"""One prediction against one estimate.

    ``within`` is :math:`|\text{measured} - \text{predicted}| \le \text{tolerance}` unless a
    check decides it otherwise (e.g. a one-sided bound); ``interval`` is the estimate's 95%
    confidence interval; ``samples`` what it rests on (seeds, samples, points);
    ``tolerance = model_error + half-width of the interval``, fixed before the run.

    A one-sided check (``at_least``: within when the interval lies above the prediction)
    says what its prediction is in ``bound`` (e.g. ``"threshold: most seeds (> 1/2)"``);
    ``support`` is the range the estimate can take (``(0, 1)`` for an accuracy or a
    share), to which a report clips the interval it shows and within which a power
    computation moves the claim."""

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
    bound: str = ""  # a one-sided check's prediction in words
    support: tuple[float, float] | None = None  # the estimate's possible range
    tolerance_source: str = ""

    @property
    def half_width(self) -> float:
        return 0.5 * (self.interval[1] - self.interval[0])


def interval_source(model_error_source: str, measurement_half: float) -> str:
    """The tolerance's source: the model error's, plus the interval's half width."""
    return f"{model_error_source}; + the estimate's 95% interval half width {measurement_half:.3g}"


def compare(
    predicted: float,
    measured: float,
    interval: tuple[float, float],
    samples: str,
    model_error: float,
    estimator: str,
    detail: str = "",
    unit: str = "",
    support: tuple[float, float] | None = None,
    model_error_source: str = "",
) -> Measurement:
    """A two-sided comparison with tolerance ``model_error`` + the interval's half-width:
    within when the interval, widened by ``model_error`` on each side, holds the prediction
    (for a symmetric interval: ``|measured - predicted| <= tolerance``; an asymmetric one,
    such as a ratio's or a median's, is used as it is). ``support``: the estimate's
    possible range (see :class:`Measurement`); ``model_error_source`` says where the model
    error came from."""
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
        support=support,
        tolerance_source=interval_source(model_error_source or "no model error stated", half),
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
            power=power_of(self, evidence, measurement),
        )


@dataclass(frozen=True)
class Power:
    r"""How far the prediction must move for the check's verdict to flip at this run's
    statistics (moving the claim until ``within`` changes, bisection): ``down`` and ``up``
    are the smallest shifts below and above the prediction that flip it (nan where no
    claim in the support flips it: that side cannot fail), absolute and relative to
    :math:`|\text{predicted}|`; ``flips_to`` is the verdict's side after the flip."""

    down: float
    up: float
    relative_down: float
    relative_up: float
    flips_to: str

    def as_dict(self) -> dict[str, Any]:
        return {
            key: (None if isinstance(v, float) and not math.isfinite(v) else v)
            for key, v in asdict(self).items()
        }

    def describe(self) -> str:
        """In words: the shifts that flip the verdict (``cannot flip`` for a side that
        cannot)."""
        sides = [
            f"{sign}{abs(shift):.3g}" if math.isfinite(shift) else f"{sign}: cannot flip"
            for sign, shift in (("-", self.down), ("+", self.up))
        ]
        return f"verdict flips ({self.flips_to}) at a prediction moved by {' or '.join(sides)}"


#: Doublings of the first trial shift and bisection steps of :func:`flip_shift`.
EXPANSIONS, BISECTIONS = 40, 24


def _clipped(claim: float, support: tuple[float, float] | None) -> float:
    """The claim held inside the estimate's possible range (unbounded without one)."""
    if support is None:
        return claim
    return min(max(claim, support[0]), support[1])


def flip_shift(check: Check, evidence: Any, m: Measurement, direction: int) -> float:
    """The smallest shift (signed by ``direction``) of the claim away from the prediction
    that changes ``within``, to 0.1% by bisection; nan if none in the domain does."""
    start = max(m.tolerance, m.half_width, 1e-6 * abs(m.predicted), 1e-12)
    low, high = 0.0, start
    for _ in range(EXPANSIONS):
        claim = _clipped(m.predicted + direction * high, m.support)
        if check.measure(evidence, claim).within != m.within:
            break
        if claim == _clipped(m.predicted + direction * 2 * high, m.support):
            return math.nan  # at the domain's edge: this side cannot flip
        low, high = high, 2 * high
    else:
        return math.nan
    high = abs(claim - m.predicted)
    for _ in range(BISECTIONS):
        if high - low <= 1e-3 * high:
            break
        middle = 0.5 * (low + high)
        if check.measure(evidence, m.predicted + direction * middle).within != m.within:
            high = middle
        else:
            low = middle
    return direction * high


def power_of(check: Check, evidence: Any, m: Measurement) -> Power:
    """Both flip shifts of ``check`` at the measurement ``m`` (:func:`flip_shift`)."""
    down, up = (flip_shift(check, evidence, m, sign) for sign in (-1, 1))
    scale = abs(m.predicted) if m.predicted else math.nan
    return Power(down, up, down / scale, up / scale, "rejected" if m.within else "accepted")


def mutation_claims(m: Measurement, agree: bool) -> tuple[float, tuple[float | None, float | None]]:
    """The claim the check must accept (the prediction of a registered agreement; the
    estimate of a registered disagreement, or a one-sided one's interval end) and the claims
    it must reject: that claim moved down and up by twice the tolerance (the model error
    plus the wider side of the interval: a share's interval is not symmetric near 0 or 1;
    a one-sided check moved past its estimate by twice the interval's half width, on the
    side that can fail). ``None`` for a side the domain leaves no room for such a shift
    (or a one-sided check's other side)."""
    if m.at_least:
        center = m.predicted if agree else m.interval[0]
        beyond = m.measured + 2 * max(m.half_width, 1e-3 * abs(m.measured))
        clipped = _clipped(beyond, m.support)
        return center, (None, clipped if clipped > m.interval[0] else None)
    center = m.predicted if agree else m.measured
    wider = max(m.measured - m.interval[0], m.interval[1] - m.measured)
    scale = (m.model_error + wider) or 1e-3 * max(abs(center), 1.0)
    sides = []
    for sign in (-1, 1):
        claim = center + 2 * sign * scale
        sides.append(claim if _clipped(claim, m.support) == claim else None)
    return center, (sides[0], sides[1])


def can_fail(check: Check, evidence: Any) -> dict[str, Any]:
    """The check on the claim it must accept and on the claims twice the tolerance away it
    must reject (:func:`mutation_claims`): ``ok`` when it accepts the first and rejects
    every applicable shifted claim (at least one applies: a check whose tolerance spans
    the domain on both sides cannot fail)."""
    m = check.measure(evidence, None)
    center, (low, high) = mutation_claims(m, check.expected.agree)
    accepted = check.measure(evidence, center).within
    verdicts = {
        side: (None if claim is None else not check.measure(evidence, claim).within)
        for side, claim in (("low", low), ("high", high))
    }
    applicable = [v for v in verdicts.values() if v is not None]
    return {
        "id": check.id,
        "name": check.name,
        "right_claim": center,
        "accepted": accepted,
        "low_claim": low,
        "low_rejected": verdicts["low"],
        "high_claim": high,
        "high_rejected": verdicts["high"],
        "wrong_claim": high if high is not None else low,
        "rejected": bool(applicable) and all(applicable),
        "ok": accepted and bool(applicable) and all(applicable),
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
    power: Power | None = None

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
            "registered": self.check.expected.record,
            "numbers": self.numbers,
            "verdict": self.verdict.value,
        }
        out.update(asdict(self.measurement))
        out["interval"] = list(self.measurement.interval)
        if self.measurement.support is not None:
            out["support"] = list(self.measurement.support)
        out["power"] = self.power.as_dict() if self.power else None
        return out


__all__ = [
    "Verdict",
    "PaperResult",
    "Expected",
    "AGREE",
    "PROBABILITY",
    "Measurement",
    "compare",
    "Check",
    "CheckResult",
    "verdict_of",
    "interval_source",
    "Power",
    "power_of",
    "flip_shift",
    "mutation_claims",
    "can_fail",
]
