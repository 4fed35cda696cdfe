r"""Run one configuration and record its trajectory at the log points.

A run ends in one of three states (:class:`RunStatus`): ``completed``; ``interrupted``
(Ctrl-C or SIGTERM), keeping every finished log point; or ``failed``, when a logit or a
recorded quantity turns non-finite, with the step and the quantity named. A run that
completes but leaves the regime the theory describes carries warnings: an invariant
:math:`WW^\top - pp^\top` that drifted by more than 1% of :math:`\|W_0W_0^\top\|_F`
(GD far from gradient flow), or a step size above assumption A5's bound.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from theory.foundation.stability import max_stable_step
from verify.runtime.interrupts import exit_status, reason
from verify.runtime.progress import progress as progress_stage
from verify.runtime.threads import Job, single_blas_thread
from verify.sim.config import RunConfig
from verify.sim.data import Dataset
from verify.sim.engines import draw_data, engine_traits, make_engine
from verify.sim.engines.base import Engine, NonFiniteError, far_scales, non_finite_message
from verify.sim.history import History, Row
from verify.sim.observables import (
    POPULATION_COLUMNS,
    SplitMetrics,
    attention_gaps,
    head_metrics,
    query_components,
    relevant_saturation,
    split_metrics,
)

if TYPE_CHECKING:
    from verify.sim.dfree_data import ReducedData

#: Invariant drift :math:`\|(WW^\top - pp^\top) - W_0W_0^\top\|_F`, relative to
#: :math:`\|W_0W_0^\top\|_F`, above which a GD run is flagged as far from gradient flow.
DRIFT_WARNING = 1e-2


class RunStatus(StrEnum):
    COMPLETED = "completed"
    INTERRUPTED = "interrupted"
    FAILED = "failed"


def logging_steps(config: RunConfig) -> np.ndarray:
    """Sorted unique steps to record: 0, every ``linear_log_interval`` steps,
    ``log_geometric`` geometrically spaced steps, and the last step."""
    steps = float(config.training.steps)
    interval = float(config.linear_log_interval)
    linear = interval * np.arange(0, math.floor(steps / interval) + 1, dtype=np.float64)
    count = config.recording.log_geometric
    geometric = (
        np.floor(np.geomspace(1.0, max(steps, 1.0), count)) if count and steps >= 1 else np.zeros(0)
    )
    return sorted_unique(np.concatenate([[0.0, steps], linear, geometric]))


def sorted_unique(values: np.ndarray) -> np.ndarray:
    """``numpy.unique`` of finite floats, without the masked-array module it imports."""
    ordered = np.sort(values)
    keep = np.ones(ordered.shape, dtype=bool)
    keep[1:] = ordered[1:] != ordered[:-1]
    return ordered[keep]


@dataclass
class RunResult:
    """Everything recorded at the log points, plus how the run ended.

    Per-point arrays are indexed [log point, sample, token]; the recorded quantities are
    the columns of ``history``.
    """

    config: RunConfig
    data: Dataset | ReducedData
    steps: list[float] = field(default_factory=list)
    history: History = field(default_factory=History)
    train_logits: list[np.ndarray] = field(default_factory=list)
    train_probabilities: list[np.ndarray] = field(default_factory=list)
    test_probabilities: list[np.ndarray] = field(default_factory=list)
    gaps: list[np.ndarray] = field(default_factory=list)
    final_test_logits: np.ndarray | None = None
    status: RunStatus = RunStatus.COMPLETED
    message: str = ""
    warnings: list[str] = field(default_factory=list)
    signal: int | None = None  # the signal that interrupted the run (2 SIGINT, 15 SIGTERM)
    wall_seconds: float = 0.0
    solver_steps: int | None = None
    #: A trained head at the end of the run (``None``: the head did not move).
    final_head: np.ndarray | None = None

    @property
    def final(self) -> Row:
        """The last log point (empty when nothing was recorded)."""
        return self.history.final

    def summary(self) -> dict[str, Any]:
        last = self.final
        keys = (
            "train_accuracy",
            "test_accuracy",
            "population_test_accuracy",
            "train_loss",
            "test_loss",
            "population_test_loss",
            "clean_fitted",
            "noisy_fitted",
            "test_selects_relevant",
            "population_test_selects_relevant",
            "p_norm",
            "invariant_drift",
            "invariant_drift_relative",
        )
        out: dict[str, Any] = {key: last.get(key, math.nan) for key in keys}
        out.update(
            {
                "steps": last.get("step", 0),
                "engine": self.config.solver.engine,
                "noisy_count": int(self.data.noisy.sum()),
                "n": self.data.n,
                "wall_seconds": self.wall_seconds,
                "status": self.status.value,
                "message": self.message,
                "warnings": list(self.warnings),
                "seed": self.config.seed,
            }
        )
        if self.solver_steps is not None:
            out["solver_steps"] = self.solver_steps
        out.update(self.head_summary())
        return out

    def head_summary(self) -> dict[str, float]:
        """The head's alignment and scale at the end and at the start (equal unless the head
        is trained; :func:`verify.sim.observables.head_metrics`)."""
        start = head_metrics(getattr(self.data, "nu", None), self.data)
        end = start if self.final_head is None else head_metrics(self.final_head, self.data)
        return {**end, **{f"{key}_start": value for key, value in start.items()}}


def _mean(values: np.ndarray) -> float:
    return float(np.mean(values)) if values.size else math.nan


def _minimum(values: np.ndarray) -> float:
    return float(np.min(values)) if values.size else math.nan


class Observable(Protocol):
    """What :func:`record` reads of an engine (a single engine, or one run of a batch)."""

    @property
    def steps_done(self) -> float: ...

    @property
    def invariant_scale(self) -> float: ...

    def train_logits(self) -> np.ndarray: ...

    def test_logits(self) -> np.ndarray: ...

    def query_moments(self) -> tuple[float, np.ndarray]: ...

    def token_scores(self) -> np.ndarray: ...

    def head(self) -> np.ndarray | None: ...

    def noisy_gradient_ratio(self) -> float: ...

    def snapshot(self) -> Any: ...

    def evaluate(self, snapshots: list[Any]) -> list[tuple[np.ndarray, dict[str, float]]]: ...


@dataclass
class Capture:
    """One log point as captured during the run: the training-side row, the per-sample
    arrays, and the engine's snapshot from which the test logits and the parameter norms
    are evaluated later, many points at a time (see :meth:`Observable.evaluate`)."""

    row: dict[str, float]
    logits: np.ndarray
    probabilities: np.ndarray
    gaps: np.ndarray
    snapshot: Any
    #: A trained head at this point (its test scores are computed with the test logits).
    head: np.ndarray | None = None


def population_row(
    config: RunConfig, step: float, moments: tuple[float, np.ndarray], has_signal: bool
) -> dict[str, float]:
    """The population test metrics at this log point (``recording.population``: at every
    point, at the final step only, or never; NaN where not computed, and where the head is
    not the population formulas' fixed head or the readout not linear). A spread of rho is
    averaged over (:mod:`verify.sim.population_spread`); the loss column is the logistic
    loss, NaN under another training loss."""
    when = config.recording.population
    model, training = config.model, config.training
    fixed_head = training.head == "fixed" and model.readout == "linear"
    if (
        not has_signal
        or not fixed_head
        or when == "none"
        or (when == "final" and step != training.steps)
    ):
        return dict.fromkeys(POPULATION_COLUMNS, math.nan)
    from verify.sim.population_spread import spread_population_columns  # SciPy

    columns = spread_population_columns(model, *moments)
    if training.loss != "logistic":
        columns.update(population_test_loss=math.nan, population_test_loss_error=math.nan)
    return columns


def capture(result: RunResult, engine: Observable) -> Capture:
    """The training-side observables of the engine's current state, and its snapshot."""
    data, config = result.data, result.config
    step = float(engine.steps_done)
    logits = np.asarray(engine.train_logits(), dtype=np.float64)
    readout = getattr(data, "readout", None)
    projections = getattr(data, "train_projections", None)
    train = split_metrics(
        logits, engine.token_scores(), data.y_train, config.training.loss, readout, projections
    )
    noisy = data.noisy
    gaps = attention_gaps(logits, data.groups, noisy)
    sample_gap = np.min(np.where(np.isnan(gaps), np.inf, gaps), axis=1)
    margins = data.y_train * train.outputs
    saturation = relevant_saturation(train.probabilities, data.groups)
    nan = math.nan
    row = {
        "step": step,
        "time": result.config.training.alpha * step,
        "train_loss": train.loss,
        "train_accuracy": train.accuracy,
        "test_loss": nan,
        "test_accuracy": nan,
        "clean_fitted": _mean(margins[~noisy] > 0),
        "noisy_fitted": _mean(margins[noisy] > 0),
        "clean_gap_min": _minimum(sample_gap[~noisy]),
        "clean_gap_mean": _mean(sample_gap[~noisy]),
        "noisy_gap_min": _minimum(sample_gap[noisy]),
        "noisy_gap_mean": _mean(sample_gap[noisy]),
        "saturation_clean_mean": _mean(saturation[~noisy]),
        "saturation_noisy_mean": _mean(saturation[noisy]),
        "test_selects_relevant": nan,
        "p_norm": nan,
        "weight_change_norm": nan,
        "invariant_drift": nan,
        "invariant_drift_relative": nan,
    }
    moments = engine.query_moments()
    has_signal = data.mu_plus is not None
    row.update(query_components(*moments, has_signal=has_signal))
    row.update(population_row(config, step, moments, has_signal))
    row["noisy_gradient_ratio"] = engine.noisy_gradient_ratio()
    return Capture(row, logits, train.probabilities, gaps, engine.snapshot(), engine.head())


def complete(result: RunResult, captured: list[Capture], engine: Observable) -> list[Row]:
    """Evaluate the captured points' test logits and parameter norms (all at once), append
    the points to ``result`` and return their completed rows."""
    return complete_rows(result, captured, evaluate(result, captured, engine), engine)


#: One point's evaluation: its test logits, parameter norms and test-split metrics.
Evaluated = tuple[np.ndarray, dict[str, float], SplitMetrics]


def evaluate(result: RunResult, captured: list[Capture], engine: Observable) -> list[Evaluated]:
    """The captured points' test logits and parameter norms (:meth:`Observable.evaluate`,
    all at once) and their test-split metrics (:func:`test_metrics`)."""
    evaluated = engine.evaluate([point.snapshot for point in captured])
    return [
        (logits, norms, test_metrics(result, logits, point.head))
        for point, (logits, norms) in zip(captured, evaluated, strict=True)
    ]


def complete_rows(
    result: RunResult, captured: list[Capture], evaluated: list[Evaluated], engine: Observable
) -> list[Row]:
    """Append the captured points to ``result`` with their evaluation; returns their
    completed rows."""
    data = result.data
    rows = []
    for point, (test_logits, norms, test) in zip(captured, evaluated, strict=True):
        row = point.row
        row.update(
            test_loss=test.loss,
            test_accuracy=test.accuracy,
            test_selects_relevant=_mean(data.groups[test.selected] == 0),
            **norms,
        )
        row["invariant_drift_relative"] = norms["invariant_drift"] / engine.invariant_scale
        result.steps.append(row["step"])
        rows.append(result.history.append(row))
        result.train_logits.append(point.logits)
        result.train_probabilities.append(point.probabilities)
        result.test_probabilities.append(
            test.probabilities[: result.config.recording.attention_test_samples]
        )
        result.gaps.append(point.gaps)
        result.final_test_logits = test_logits
    return rows


def test_metrics(result: RunResult, logits: np.ndarray, head: np.ndarray | None) -> Any:
    """The test split's metrics: the scores of the data's head, or of a trained ``head``;
    the run's loss and readout."""
    data, config = result.data, result.config
    scores = data.test_scores if head is None else data.X_test @ head
    readout = getattr(data, "readout", None)
    projections = getattr(data, "test_projections", None)
    return split_metrics(logits, scores, data.y_test, config.training.loss, readout, projections)


def record(result: RunResult, engine: Observable) -> Row:
    """Append one log point's observables to ``result``; returns the history row."""
    return complete(result, [capture(result, engine)], engine)[0]


#: Ratios that may be undefined at a finite state (0/0 once the softmax saturates in float64):
#: they are recorded as they are and never stop a run.
UNCHECKED_COLUMNS = frozenset({"noisy_gradient_ratio"})


def check_row(row: Mapping[str, float], first: Mapping[str, float]) -> None:
    """:class:`NonFiniteError` naming the first quantity that was finite at the first log
    point and is not any more (quantities undefined from the start, such as the noisy
    samples' gaps when no label is flipped, stay NaN without failing the run; the ratios of
    :data:`UNCHECKED_COLUMNS` are not checked)."""
    for key, value in row.items():
        if key in UNCHECKED_COLUMNS:
            continue
        if not math.isfinite(value) and math.isfinite(first[key]):
            raise NonFiniteError(non_finite_message(f"{key} ({value}) recorded", row["step"]))


def health_warnings(config: RunConfig, row: Mapping[str, float], warned: set[str]) -> list[str]:
    """New warnings for a recorded row: invariant drift above :data:`DRIFT_WARNING`
    (GD engines) and, once, a step size above A5's bound."""
    out = []
    flow = engine_traits(config.solver.engine).integrates == "flow"
    if "A5" not in warned:
        warned.add("A5")
        bound = max_stable_step(config.model, config.training)
        if config.training.alpha > bound and not flow:
            out.append(
                f"alpha={config.training.alpha:g} exceeds assumption A5's bound "
                f"{bound:.3g}: GD may not track gradient flow"
            )
    drift = row.get("invariant_drift_relative", 0.0)
    if "drift" not in warned and not flow and drift > DRIFT_WARNING:
        warned.add("drift")
        out.append(
            f"invariant drift reached {drift:.3g} x ||W0 W0^T|| at step {row['step']:g} "
            f"(warning level {DRIFT_WARNING:g}): GD is far from gradient flow"
        )
    return out


#: Captured log points completed together (their test logits and norms in one stacked
#: product). A fixed count, not a time: the rounding of a stacked product depends on how
#: many points it stacks (the traces of the norms, for one, differ in the last digit
#: between a stack of three and one of sixteen), so batches set by the clock would make
#: the same seed give numbers that differ in the last digits on a busy machine. A run
#: killed outright (not by Ctrl-C or SIGTERM, which complete what was captured) loses at
#: most twice this many points (a batch being evaluated and the one being captured).
FLUSH_POINTS = 16


class Evaluation:
    """The evaluation of a batch of captured points (:func:`evaluate`: test logits,
    parameter norms, test-split metrics), computed in a background thread while the run
    goes on: products and array operations that release the interpreter lock, on the
    points' own copies of the state and on arrays the run does not change."""

    def __init__(self, result: RunResult, engine: Observable, captured: list[Capture]):
        self.captured = captured
        self._job = Job(lambda points: evaluate(result, points, engine), captured)

    def values(self) -> list[Evaluated]:
        """Each point's evaluation (waits for the thread)."""
        return self._job.result()


class Recorder:
    """Captures log points as the run reaches them and completes them in batches of
    :data:`FLUSH_POINTS`, in order: a full batch is evaluated in the background
    (:class:`Evaluation`) while the next one is captured, and completed when that one is
    full (at fixed points of the run, so that a failure is found at the same step
    whatever the machine's speed); at the end, and when the run stops early, everything
    captured is completed."""

    def __init__(
        self,
        result: RunResult,
        engine: Observable,
        on_record: Callable[[Row], None] | None,
        on_warning: Callable[[str], None] | None,
    ):
        self.result, self.engine = result, engine
        self.on_record, self.on_warning = on_record, on_warning
        self.pending: list[Capture] = []
        self.evaluating: Evaluation | None = None
        self.warned: set[str] = set()

    def capture(self) -> None:
        self.pending.append(capture(self.result, self.engine))
        if len(self.pending) >= FLUSH_POINTS:
            self._evaluate_pending()

    def flush(self) -> None:
        """Complete every captured point; a non-finite quantity keeps the points up to
        the failing one, drops the rest and raises :class:`NonFiniteError`."""
        if self.pending:
            self._evaluate_pending()
        if self.evaluating is not None:
            self._complete()

    def _evaluate_pending(self) -> None:
        """Start evaluating the pending points (after completing the batch before them)."""
        if self.evaluating is not None:
            self._complete()
        captured, self.pending = self.pending, []
        self.evaluating = Evaluation(self.result, self.engine, captured)

    def _complete(self) -> None:
        """Complete the batch being evaluated: its rows, streamed, checked and warned."""
        assert self.evaluating is not None
        evaluated = self.evaluating.values()
        captured, self.evaluating = self.evaluating.captured, None
        start = len(self.result.history)
        rows = complete_rows(self.result, captured, evaluated, self.engine)
        for index, row in enumerate(rows):
            if self.on_record:
                self.on_record(row)
            try:
                check_row(row, self.result.history[0])
            except NonFiniteError:
                truncate(self.result, start + index + 1)
                self.pending = []  # captured after the failure: dropped
                raise
            for warning in health_warnings(self.result.config, row, self.warned):
                self.result.warnings.append(warning)
                if self.on_warning:
                    self.on_warning(warning)


def truncate(result: RunResult, count: int) -> None:
    """Keep the first ``count`` log points of ``result``."""
    result.history = result.history[:count]
    for name in (
        "steps",
        "train_logits",
        "train_probabilities",
        "test_probabilities",
        "gaps",
    ):
        del getattr(result, name)[count:]


def simulate(
    config: RunConfig,
    data: Dataset | ReducedData | None = None,
    W0: np.ndarray | None = None,
    progress: bool = False,
    engine: Engine | None = None,
    on_record: Callable[[Row], None] | None = None,
    on_warning: Callable[[str], None] | None = None,
) -> RunResult:
    """Train ``config`` (on ``data`` if given, else generated from the seed), recording at
    :func:`logging_steps`. ``on_record(row)`` is called for each completed log point (to
    stream the history), ``on_warning(text)`` for each warning. Ctrl-C, SIGTERM and a
    non-finite value end the run early; the result keeps every finished log point and
    says why. The run uses one BLAS thread throughout (set-up, steps and recording), so
    that its numbers do not depend on the number of cores: a product split over threads
    rounds differently."""
    with single_blas_thread():
        return _simulate(config, data, W0, progress, engine, on_record, on_warning)


def _simulate(
    config: RunConfig,
    data: Dataset | ReducedData | None,
    W0: np.ndarray | None,
    progress: bool,
    engine: Engine | None,
    on_record: Callable[[Row], None] | None,
    on_warning: Callable[[str], None] | None,
) -> RunResult:
    started = time.perf_counter()
    data = draw_data(config) if data is None else data
    result = RunResult(config=config, data=data)
    recorder: Recorder | None = None
    bar = None
    try:
        engine = make_engine(config, data, W0) if engine is None else engine
        recorder = Recorder(result, engine, on_record, on_warning)
        if progress:
            bar = progress_stage(config.training.steps, config.solver.engine, "step", scale=True)
        for step in logging_steps(config):
            engine.advance_to(step)
            recorder.capture()
            if bar is not None:
                bar.update(step - bar.n)
        recorder.flush()
    except KeyboardInterrupt as interrupt:
        result.status, result.message = RunStatus.INTERRUPTED, reason(interrupt)
        result.signal = exit_status(interrupt) - 128
        _flush_quietly(recorder, result)
    except NonFiniteError as error:
        result.status, result.message = RunStatus.FAILED, str(error) + far_scales(config)
        _flush_quietly(recorder, result)
    finally:
        if bar is not None:
            bar.close()
    if engine is not None and hasattr(engine, "solver_steps"):
        result.solver_steps = engine.solver_steps
    if engine is not None:
        result.final_head = engine.head()
    result.wall_seconds = time.perf_counter() - started
    return result


def _flush_quietly(recorder: Recorder | None, result: RunResult) -> None:
    """After an early stop: complete what was captured (a second stop, or a non-finite
    value in it, keeps what is complete)."""
    if recorder is None or not (recorder.pending or recorder.evaluating):
        return
    try:
        recorder.flush()
    except (KeyboardInterrupt, NonFiniteError) as error:
        if result.status is RunStatus.COMPLETED:
            result.status, result.message = RunStatus.FAILED, str(error)


__all__ = ["RunStatus", "RunResult", "simulate", "record", "logging_steps", "DRIFT_WARNING"]
