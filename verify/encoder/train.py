r"""Train the encoder on the paper's data and record it at the log points.

Full-batch gradient descent (PyTorch's SGD without momentum, as the authors' code) on the
mean logistic loss, every parameter trained, float64. The data are
:func:`verify.sim.data.generate`'s for the run configuration (the tokens ``verify run``
trains the bare model on for the same seed; its test set is an independent clean draw,
where the authors' code reuses the training seed for its test set), or external data.
The parameters start from PyTorch's default initialisation drawn from the seed's ``init``
stream (:func:`verify.encoder.parameters.initial_parameters`).

A run ends ``completed``, ``interrupted`` (Ctrl-C or SIGTERM: the finished log points are
kept) or ``failed`` (a non-finite output, with the step named).
"""

from __future__ import annotations

import contextlib
import math
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from verify.encoder.config import EncoderConfig
from verify.encoder.models import make_model
from verify.encoder.observables import ENCODER_BY_NAME, ENCODER_COLUMN_NAMES, log_row
from verify.encoder.parameters import EncoderParameters, initial_parameters
from verify.runtime.interrupts import exit_status, reason
from verify.sim.data import Dataset, generate, random_streams
from verify.sim.history import History, Row
from verify.sim.simulate import RunStatus

#: Summary keys taken from the last history row.
SUMMARY_KEYS = (
    "train_accuracy",
    "test_accuracy",
    "train_loss",
    "test_loss",
    "clean_fitted",
    "noisy_fitted",
    "test_selects_relevant",
)
TEST_SET_NOTE = (
    "independent clean draw from the seed's test stream (the authors' code draws its test "
    "set with the training seed, so its first sequences repeat training noise)"
)


@dataclass
class EncoderResult:
    """The log points of an encoder run (attention arrays are (sequences, T + 1), column 0
    the [CLS] token) and how it ended."""

    config: EncoderConfig
    data: Dataset
    steps: list[int] = field(default_factory=list)
    history: History = field(
        default_factory=lambda: History(ENCODER_COLUMN_NAMES, columns=ENCODER_BY_NAME)
    )
    train_attention: list[np.ndarray] = field(default_factory=list)
    test_attention: list[np.ndarray] = field(default_factory=list)
    parameters: EncoderParameters | None = None
    status: RunStatus = RunStatus.COMPLETED
    message: str = ""
    signal: int | None = None
    wall_seconds: float = 0.0

    @property
    def final(self) -> Row:
        return self.history.final

    def summary(self) -> dict[str, Any]:
        from verify.measures.regimes import regimes_of

        last = self.final
        out: dict[str, Any] = {key: last.get(key, math.nan) for key in SUMMARY_KEYS}
        out.update({k: v for k, v in last.items() if k.startswith(("attention_", "select_"))})
        out.update(regimes_of(last) if len(last) else {"regime": "unknown"})
        settings = self.config.settings
        out.update(
            steps=int(last.get("step", 0)),
            residual=settings.residual,
            mlp_dim=settings.mlp_dim,
            model=settings.model,
            noisy_count=int(self.data.noisy.sum()),
            n=self.data.n,
            test_set=TEST_SET_NOTE if self.data.source == "generated" else self.data.source,
            wall_seconds=self.wall_seconds,
            status=self.status.value,
            message=self.message,
            seed=self.config.run.seed,
        )
        return out


def encoder_parameters(config: EncoderConfig) -> EncoderParameters:
    """The initial parameters of ``config`` (its seed's ``init`` stream)."""
    rng = random_streams(config.run.seed)["init"]
    return initial_parameters(config.run.model.d, config.settings.mlp_dim, rng)


def record(result: EncoderResult, model: Any, step: int, train: tuple) -> Row:
    """Append the log point ``step`` (``train``: the training pass's outputs and
    attention); the test set is evaluated at the configuration's test steps."""
    data, config = result.data, result.config
    if step in config.test_steps():
        test = model.test_pass()
    else:
        test = (None, model.test_attention())
    row = log_row(step, train, test, (data.y_train, data.y_test), data.noisy, data.groups)
    outputs = [train[0]] if test[0] is None else [train[0], test[0]]
    if not all(np.all(np.isfinite(values)) for values in outputs):
        raise FloatingPointError(f"a non-finite encoder output at step {step}")
    shown = result.config.run.recording.attention_test_samples
    result.steps.append(step)
    recorded = result.history.append(row)
    result.train_attention.append(train[1])
    result.test_attention.append(test[1][:shown])
    return recorded


@contextlib.contextmanager
def blas_threads(count: int) -> Iterator[None]:
    """Within the block, BLAS uses ``count`` threads (threadpoolctl)."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=count, user_api="blas"):
        yield


def _progress_bar(total: int, enabled: bool) -> Any:
    if not enabled:
        return None
    from tqdm.auto import tqdm

    return tqdm(total=total, unit="step", desc="encoder", dynamic_ncols=True)


def train_encoder(
    config: EncoderConfig,
    data: Dataset | None = None,
    parameters: EncoderParameters | None = None,
    progress: bool = False,
    on_record: Callable[[dict[str, float]], None] | None = None,
) -> EncoderResult:
    """Train the encoder of ``config`` (on ``data`` if given, else the seed's data; from
    ``parameters`` if given, else the seed's initialisation) and record every log point.
    ``on_record(row)`` receives each history row as it is recorded."""
    started = time.perf_counter()
    data = generate(config.run) if data is None else data
    result = EncoderResult(config=config, data=data)
    initial = encoder_parameters(config) if parameters is None else parameters.copy()
    model = make_model(config.settings.model, initial, data, config.settings.residual)
    steps, alpha = config.run.training.steps, config.run.training.alpha
    logged, bar = set(config.log_steps()), _progress_bar(steps, progress)
    try:
        with blas_threads(config.settings.blas_threads):
            for step in range(steps + 1):
                if step in logged:
                    row = record(result, model, step, model.train_pass())
                    if on_record:
                        on_record(row)
                if step < steps:
                    model.step(alpha)
                    if bar is not None:
                        bar.update(1)
    except KeyboardInterrupt as interrupt:
        result.status, result.message = RunStatus.INTERRUPTED, reason(interrupt)
        result.signal = exit_status(interrupt) - 128
    except FloatingPointError as error:
        result.status, result.message = RunStatus.FAILED, str(error)
    finally:
        if bar is not None:
            bar.close()
    result.parameters = model.parameters
    result.wall_seconds = time.perf_counter() - started
    return result


__all__ = ["EncoderResult", "train_encoder", "encoder_parameters", "SUMMARY_KEYS", "TEST_SET_NOTE"]
