r"""Floating-point precision of the per-step update in the saturated regime.

One sequence of ``T`` tokens whose leader leads every other token by ``gap``; the
quantity compared is the leader's update :math:`h_{\text{lead}} \propto
s_{\text{lead}} \sum_u s_u (\gamma_{\text{lead}} - \gamma_u)`, of size
:math:`e^{-\text{gap}}`. The reference is the cancellation-free form in mpmath at
``reference_dps`` digits. Forms compared:

* ``naive_float32`` / ``naive_float64``: :math:`\gamma_t - \sum_u s_u\gamma_u` (public code);
* ``stable_float64``: the package's kernel (:func:`verify.sim.kernels.logit_gradient`);
* ``naive_mp<p>``: the naive form in mpmath at ``p`` digits (fails once gap > ~2.3 p);
* ``stable_mp<p>``: the stable form in mpmath at ``p`` digits.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import mpmath
import numpy as np

from verify.experiments.settings import PrecisionSettings
from verify.output.files import atomic_write_csv
from verify.sim.kernels import MPMATH, logit_gradient, naive_logit_gradient, score_differences

METHODS = ("naive_float32", "naive_float64", "stable_float64", "naive_mp60", "stable_mp30")


#: Default token scores (T = 8): roughly the paper's R, W+, W-, and irrelevant scores.
DEFAULT_SCORES = (0.7071, 0.0707, -0.0707, 0.013, -0.021, 0.034, -0.008, 0.017)


def saturated_logits(gap: float, T: int) -> np.ndarray:
    """Logits (1, T): token 0 at ``gap``, the others spread in [0, 1] below it."""
    logits = np.linspace(0.0, 1.0, T - 1)[::-1].copy()
    return np.concatenate([[gap + 1.0], logits])[None, :]


def _naive_mp(logits, scores, labels, dps):
    with mpmath.workdps(dps):
        a = MPMATH.asarray(logits)
        g = MPMATH.asarray(scores)
        y = MPMATH.asarray(labels)
        w = MPMATH.exp(a - a.max(axis=-1, keepdims=True))
        s = w / w.sum(axis=-1, keepdims=True)
        f = (s * g).sum(axis=-1)
        slope = -MPMATH.expit(-(y * f)) * y / a.shape[0]
        return slope[:, None] * s * (g - f[:, None])


def _stable_mp(logits, scores, labels, dps):
    with mpmath.workdps(dps):
        g = MPMATH.asarray(scores)
        out = logit_gradient(
            MPMATH.asarray(logits), g, score_differences(g), MPMATH.asarray(labels), MPMATH
        )
        return out.logit_gradient


def leader_update(
    gap: float, method: str, T: int = 8, scores=DEFAULT_SCORES, label: int = 1
) -> mpmath.mpf | float:
    """The leader's update ``h[0, 0]`` computed by ``method`` (see module docstring)."""
    logits = saturated_logits(gap, T)
    score_row = np.asarray(scores[:T], dtype=np.float64)[None, :]
    labels = np.array([label], dtype=np.float64)
    if method == "naive_float32":
        return float(naive_logit_gradient(logits, score_row, labels, np.float32)[0, 0])
    if method == "naive_float64":
        return float(naive_logit_gradient(logits, score_row, labels, np.float64)[0, 0])
    if method == "stable_float64":
        out = logit_gradient(logits, score_row, score_differences(score_row), labels)
        return float(out.logit_gradient[0, 0])
    for prefix, function in (("naive_mp", _naive_mp), ("stable_mp", _stable_mp)):
        if method.startswith(prefix):
            return function(logits, score_row, labels, int(method[len(prefix) :]))[0, 0]
    raise ValueError(
        f"method={method!r} is invalid: allowed naive_float32, naive_float64, "
        "stable_float64, naive_mp<digits>, stable_mp<digits>"
    )


@dataclass(frozen=True)
class PrecisionRow:
    gap: float
    method: str
    value: float
    reference: float
    relative_error: float


def precision_table(gaps, methods, T: int = 8, reference_dps: int = 60) -> list[PrecisionRow]:
    """Relative error of each method's leader update against the mpmath reference."""
    rows = []
    for gap in gaps:
        reference = leader_update(gap, f"stable_mp{reference_dps}", T)
        for method in methods:
            value = leader_update(gap, method, T)
            with mpmath.workdps(reference_dps):
                error = abs(mpmath.mpf(value) - reference) / abs(reference)
            rows.append(
                PrecisionRow(float(gap), method, float(value), float(reference), float(error))
            )
    return rows


def breakdown_gap(
    method: str, threshold: float = 1e-2, T: int = 8, gaps=None, reference_dps: int = 60
) -> float:
    """Smallest gap (of ``gaps``, default 1, 2, ..., 800) at which ``method``'s relative
    error exceeds ``threshold`` (inf if none)."""
    gaps = np.arange(1.0, 801.0) if gaps is None else gaps
    for row in precision_table(gaps, [method], T, reference_dps):
        if not row.relative_error <= threshold:
            return row.gap
    return float("inf")


def precision_report(
    settings: PrecisionSettings, methods: tuple[str, ...] = METHODS, out: Path | None = None
) -> str:
    """The relative error of every method at every gap, and where each float form first
    exceeds 1e-2, as text; with ``out``, also ``out/precision.csv`` (atomically)."""
    rows = precision_table(settings.gaps, methods, reference_dps=settings.reference_dps)
    lines = [
        f"relative error of the leader's update vs {settings.reference_dps}-digit mpmath",
        "gap     " + "".join(f"{m:>16}" for m in methods),
    ]
    for gap in settings.gaps:
        errors = {r.method: r.relative_error for r in rows if r.gap == gap}
        lines.append(f"{gap:<8g}" + "".join(f"{errors[m]:>16.2e}" for m in methods))
    for method in methods[:3]:
        gap = breakdown_gap(method, 1e-2, reference_dps=settings.reference_dps)
        lines.append(f"{method}: relative error first exceeds 1e-2 at gap {gap:g}")
    if out is not None:
        atomic_write_csv(
            out / "precision.csv",
            ["gap", "method", "value", "reference", "relative_error"],
            ([r.gap, r.method, r.value, r.reference, r.relative_error] for r in rows),
        )
    return "\n".join(lines)
