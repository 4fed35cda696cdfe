r"""What an encoder run is: the data and training of a :class:`~verify.sim.config.RunConfig`
plus the encoder's own settings.

The data model, the seed, the test set size, the step size ``alpha`` (the authors'
learning rate, 5e-3) and the number of steps come from the run configuration, so that
the encoder trains on exactly the tokens ``verify run`` would train the bare model on for
the same seed; :class:`EncoderSettings` adds the architecture (feed-forward width, the
residual switch), the implementation and the log points.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from theory.foundation.validation import (
    Boolean,
    Integer,
    InvalidParameter,
    Options,
    Validated,
    parameter,
)
from verify.sim.config import RunConfig

MODELS = ("fast", "full")
#: Linear log points a run records when ``log_every`` is 0.
DEFAULT_LOG_POINTS = 50
#: Test-set evaluations a run makes when ``test_every`` is 0.
DEFAULT_TEST_POINTS = 10
FLOAT = 8


@dataclass(frozen=True)
class EncoderSettings(Validated):
    """The encoder's architecture, implementation and log points."""

    mlp_dim: int = parameter(2000, Integer(1, 10**6), "hidden width m of the feed-forward block")
    residual: bool = parameter(
        True,
        Boolean(),
        "residual connections around the attention and the feed-forward block (the "
        "authors' use_skip_connection)",
    )
    model: str = parameter(
        "fast",
        Options(MODELS),
        "fast: the [CLS] row only (NumPy, exact); full: every token through every layer "
        "(PyTorch float64, the realworld extra; slow)",
    )
    log_every: int = parameter(
        0, Integer(0), f"steps between log points (0: about {DEFAULT_LOG_POINTS} points)"
    )
    test_every: int = parameter(
        0,
        Integer(0),
        f"steps between test-set evaluations (0: about {DEFAULT_TEST_POINTS}; the last step "
        "always; a test pass costs a few training steps); the "
        "test sequences' [CLS] attention is recorded at every log point",
    )
    blas_threads: int = parameter(
        1,
        Integer(1, 256),
        "BLAS threads of the fast model (one avoids contention on a shared machine)",
    )


@dataclass(frozen=True)
class EncoderConfig:
    """One encoder run: ``run`` (data, seed, steps, step size, test set) and ``settings``."""

    run: RunConfig = field(default_factory=RunConfig)
    settings: EncoderSettings = field(default_factory=EncoderSettings)

    @property
    def log_interval(self) -> int:
        if self.settings.log_every:
            return self.settings.log_every
        return max(1, math.ceil(self.run.training.steps / DEFAULT_LOG_POINTS))

    @property
    def test_interval(self) -> int:
        if self.settings.test_every:
            return self.settings.test_every
        return max(1, math.ceil(self.run.training.steps / DEFAULT_TEST_POINTS))

    def log_steps(self) -> list[int]:
        """0, every ``log_interval`` steps, every test evaluation, and the last step."""
        steps = self.run.training.steps
        points = {0, steps, *range(0, steps + 1, self.log_interval)}
        return sorted(points | set(self.test_steps()))

    def test_steps(self) -> list[int]:
        """The steps at which the test set is evaluated: 0, every ``test_interval``
        steps, and the last step."""
        steps = self.run.training.steps
        return sorted({0, steps, *range(0, steps + 1, self.test_interval)})

    def to_dict(self) -> dict[str, Any]:
        return {"run": self.run.to_dict(), "encoder": self.settings.to_dict()}

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> EncoderConfig:
        return cls(
            run=RunConfig.from_dict(dict(values["run"])),
            settings=EncoderSettings(**dict(values["encoder"])),
        )


def estimated_bytes(config: EncoderConfig) -> int:
    """Peak memory of a fast run: parameters and their momentary gradients
    (:math:`3d^2 + 2dm`, twice), the data and its normalised copy (:math:`2(n + t)Td`)
    and the test pass (:math:`t(3d + 2m)`), in float64."""
    m, d, width = config.run.model, config.run.model.d, config.settings.mlp_dim
    test = config.run.recording.test_size
    weights = 3 * d * d + 2 * d * width
    data = 2 * (m.n + test) * m.T * d
    return FLOAT * (2 * weights + data + test * (3 * d + 2 * width))


def check_memory(config: EncoderConfig, available: int | None = None) -> None:
    """:class:`InvalidParameter` naming ``d`` when the run would not fit in memory."""
    from verify.sim.resources import available_memory

    need = estimated_bytes(config)
    free = available_memory() if available is None else available
    if need > free:
        raise InvalidParameter(
            "d",
            config.run.model.d,
            f"a value for which the encoder fits in memory (about {need / 2**30:.3g} GiB "
            f"needed; {free / 2**30:.3g} GiB are available)",
        )


__all__ = ["EncoderSettings", "EncoderConfig", "MODELS", "estimated_bytes", "check_memory"]
