"""Run one configuration and record its trajectory (spec 02, "What the simulator records")."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from verify.sim.config import RunConfig
from verify.sim.data import Dataset, generate
from verify.sim.engines import Engine, NonFiniteError, make_engine
from verify.sim.observables import (
    attention_gaps,
    evaluate,
    query_components,
    relevant_saturation,
)


def logging_steps(config: RunConfig) -> np.ndarray:
    """Sorted unique steps to record: 0, every ``linear_log_interval`` steps,
    ``log_geometric`` geometrically spaced steps, and the last step."""
    steps = float(config.steps)
    interval = float(config.linear_log_interval)
    linear = interval * np.arange(0, math.floor(steps / interval) + 1, dtype=np.float64)
    geometric = np.unique(np.floor(np.geomspace(1.0, max(steps, 1.0), config.log_geometric))) \
        if config.log_geometric and steps >= 1 else np.zeros(0)
    return np.unique(np.concatenate([[0.0, steps], linear, geometric]))


@dataclass
class RunResult:
    """Everything recorded at the logged steps, plus a summary.

    Arrays are indexed [log point, sample, token]. ``status`` is ``completed``,
    ``interrupted`` or ``failed``; a run that did not complete keeps what it recorded.
    """

    config: RunConfig
    data: Dataset
    steps: list[float] = field(default_factory=list)
    history: list[dict[str, float]] = field(default_factory=list)
    train_logits: list[np.ndarray] = field(default_factory=list)
    train_probabilities: list[np.ndarray] = field(default_factory=list)
    test_probabilities: list[np.ndarray] = field(default_factory=list)
    gaps: list[np.ndarray] = field(default_factory=list)
    final_test_logits: np.ndarray | None = None
    status: str = "completed"
    message: str = ""
    wall_seconds: float = 0.0
    solver_steps: int | None = None

    @property
    def final(self) -> dict[str, float]:
        return self.history[-1] if self.history else {}

    def summary(self) -> dict[str, Any]:
        last = self.final
        keys = ("train_accuracy", "test_accuracy", "train_loss", "test_loss",
                "clean_fitted", "noisy_fitted", "p_norm", "invariant_drift")
        out: dict[str, Any] = {key: last.get(key, math.nan) for key in keys}
        out.update({"steps": last.get("step", 0), "engine": self.config.engine,
                    "wall_seconds": self.wall_seconds, "status": self.status,
                    "message": self.message, "seed": self.config.seed})
        if self.solver_steps is not None:
            out["solver_steps"] = self.solver_steps
        return out


def record(result: RunResult, engine: Engine) -> None:
    """Append one log point's observables to ``result``."""
    data, config = result.data, result.config
    logits = np.asarray(engine.train_logits(), dtype=np.float64)
    train = evaluate(logits, data.train_scores, data.y_train)
    q = engine.query()
    test_logits = engine.test_logits()
    test = evaluate(test_logits, data.test_scores, data.y_test)
    noisy = data.noisy
    gaps = attention_gaps(logits, data.groups, noisy)
    sample_gap = np.nanmin(np.where(np.isnan(gaps), np.inf, gaps), axis=1)
    margins = data.y_train * train.outputs
    saturation = relevant_saturation(logits, data.groups)

    def mean(values: np.ndarray) -> float:
        return float(np.mean(values)) if values.size else math.nan

    def minimum(values: np.ndarray) -> float:
        return float(np.min(values)) if values.size else math.nan

    row = {"step": float(engine.steps_done), "time": config.alpha * float(engine.steps_done),
           "train_loss": train.loss, "train_accuracy": train.accuracy,
           "test_loss": test.loss, "test_accuracy": test.accuracy,
           "clean_fitted": mean(margins[~noisy] > 0), "noisy_fitted": mean(margins[noisy] > 0),
           "clean_gap_min": minimum(sample_gap[~noisy]), "clean_gap_mean": mean(sample_gap[~noisy]),
           "noisy_gap_min": minimum(sample_gap[noisy]), "noisy_gap_mean": mean(sample_gap[noisy]),
           "saturation_clean_mean": mean(saturation[~noisy]),
           "saturation_noisy_mean": mean(saturation[noisy]),
           "test_selects_relevant": mean(data.groups[test.selected] == 0)}
    row.update(engine.parameter_norms())
    row.update(query_components(q, data.mu_plus, data.mu_minus))
    result.steps.append(float(engine.steps_done))
    result.history.append(row)
    result.train_logits.append(logits)
    result.train_probabilities.append(train.probabilities)
    result.test_probabilities.append(test.probabilities[: config.attention_test_samples])
    result.gaps.append(gaps)
    result.final_test_logits = test_logits


def simulate(config: RunConfig, data: Dataset | None = None, W0: np.ndarray | None = None,
             progress: bool = False, engine: Engine | None = None) -> RunResult:
    """Train ``config`` (on ``data`` if given, else generated from the seed), recording
    at :func:`logging_steps`. Ctrl-C or a non-finite value ends the run early; the
    result then keeps every finished log point and says why it stopped."""
    started = time.perf_counter()
    data = generate(config) if data is None else data
    result = RunResult(config=config, data=data)
    bar = None
    try:
        engine = make_engine(config, data, W0) if engine is None else engine
        if progress:
            from tqdm.auto import tqdm
            bar = tqdm(total=config.steps, unit="step", unit_scale=True, desc=config.engine,
                       dynamic_ncols=True)
        for step in logging_steps(config):
            engine.advance_to(step)
            record(result, engine)
            if bar is not None:
                bar.update(step - bar.n)
    except KeyboardInterrupt:
        result.status, result.message = "interrupted", "stopped by the user (Ctrl-C)"
    except NonFiniteError as error:
        result.status, result.message = "failed", str(error)
    finally:
        if bar is not None:
            bar.close()
    if engine is not None and hasattr(engine, "solver_steps"):
        result.solver_steps = engine.solver_steps
    result.wall_seconds = time.perf_counter() - started
    return result
