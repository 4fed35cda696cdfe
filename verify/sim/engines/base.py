r"""The engine interface, the one step loop, and the reduced set-up of a dataset.

An engine owns the trained state and answers a few questions: the training logits, the
query's moments :math:`(\|q\|^2, E^\top q)`, the query vector itself (where the engine
has it), the parameter norms and the test logits. Time advances through
:meth:`Engine.advance_to`, the single loop that drives every engine: it calls
:meth:`Engine.step` (one GD step, or one adaptive step of the flow solver) until the
requested step is reached, under a BLAS limit of one thread (the matrices of a step are
small; several BLAS threads only contend for the cores).
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from verify.runtime.threads import available_cores, single_blas_thread
from verify.sim.config import RunConfig
from verify.sim.data import Dataset, generate, initial_weight_blocks
from verify.sim.gradient import Kernel
from verify.sim.kernels import FLOAT64, Arithmetic, score_differences
from verify.sim.statistics import ReducedSetup

if TYPE_CHECKING:
    from verify.sim.dfree_data import ReducedData
    from verify.sim.engines.traits import EngineTraits


@dataclass
class Event:
    """The first time a scalar function of the training logits (n, T) turns positive,
    located at full resolution: the GD step, or the flow time (in GD steps) found by
    root-finding on the solver's dense output. ``at`` stays ``None`` until it happens."""

    name: str
    function: Callable[[np.ndarray], float]
    at: float | None = None


class NonFiniteError(FloatingPointError):
    """A simulation produced a non-finite number; the run stops instead of going on."""


def non_finite_message(what: str, step: float) -> str:
    """Why a run stopped: ``what`` was not finite at ``step``, and what to do."""
    return (
        f"non-finite {what} at step {step:g}: the run was stopped. Lower alpha; if the "
        "head, noise or signal scale (nu_scale, sigma_eps, mu_norm) is far from the "
        "paper's, bring it back; engine='mp' or 'flow' take very large attention gaps."
    )


#: The scales a run's numbers grow with, and their values in the paper's settings.
PAPER_SCALES = {"nu_scale": 1.0, "sigma_eps": 1.0, "mu_norm": 20.0, "alpha": 5e-3}
#: How far (a factor either way) a scale may be from the paper's before it is named.
FAR = 1e3


def far_scales(config: RunConfig) -> str:
    """The scales of ``config`` at least :data:`FAR` times away from the paper's, as a
    sentence to add to a non-finite run's message (``""`` when none is)."""
    values = config.flat()
    far = [
        f"{name}={values[name]:g} ({values[name] / paper:.3g} x the paper's {paper:g})"
        for name, paper in PAPER_SCALES.items()
        if not 1 / FAR <= values[name] / paper <= FAR
    ]
    return f" Far from the paper's here: {', '.join(far)}." if far else ""


def ensure_finite(values: np.ndarray, what: str, step: float) -> None:
    """Raise :class:`NonFiniteError` naming ``what`` and ``step`` if any value is not finite."""
    if values.dtype != object and not np.all(np.isfinite(values)):
        raise NonFiniteError(non_finite_message(what, step))


class Engine(ABC):
    """One way of running full-batch GD (or its flow) on a dataset."""

    #: What the engine is: its entry in :mod:`verify.sim.engines.registry`, bound by each
    #: registered class.
    traits: ClassVar[EngineTraits]
    #: :math:`\|W_0 W_0^\top\|_F` (see :func:`verify.sim.statistics.conserved_scale`).
    invariant_scale: float = 1.0

    def __init__(self, config: RunConfig, data: Dataset, arithmetic: Arithmetic = FLOAT64):
        self.config = config
        self.data = data
        self.arithmetic = arithmetic
        self.steps_done: float = 0
        self.labels = arithmetic.asarray(data.y_train)
        self.scores = arithmetic.asarray(data.train_scores)
        self.differences = score_differences(self.scores)
        self.gradient = Kernel.of_run(config, data, arithmetic)
        #: Whether the head is trained with (W, p) (its state is the engine's).
        self.trained_head = config.training.head == "trained"
        self.events: list[Event] = []

    @property
    def name(self) -> str:
        return self.traits.name

    @classmethod
    def draw_data(cls, config: RunConfig) -> Dataset | ReducedData:
        """The data this engine runs on, drawn from ``config``'s seed (here: tokens)."""
        return generate(config)

    def watch(self, name: str, function: Callable[[np.ndarray], float]) -> Event:
        """Locate the first time ``function(training logits) > 0`` (see :class:`Event`)."""
        event = Event(name, function)
        self.events.append(event)
        return event

    def _check_events(self, logits: np.ndarray, step: float) -> None:
        for event in self.events:
            if event.at is None and event.function(logits) > 0:
                event.at = step

    def kernel(self, logits: np.ndarray, scores: Any = None) -> Any:
        """The kernel output at ``logits`` (:class:`verify.sim.gradient.Kernel`; ``scores``: a
        trained head's current scores)."""
        return self.gradient(logits, scores)

    def head(self) -> np.ndarray | None:
        r"""A trained head's current :math:`\nu` (d,), or ``None``: the data's fixed head."""
        return None

    def token_scores(self) -> np.ndarray:
        r"""The training tokens' current scores :math:`\gamma_{i,t} = \langle x_{i,t},
        \nu\rangle` (n, T), float64."""
        return np.asarray(self.data.train_scores, dtype=np.float64)

    def noisy_gradient_ratio(self) -> float:
        r""":math:`\|G_N\|_F/\|G_C\|_F`: the noisy samples' summed gradient with respect to
        :math:`(W, p)` over the clean samples' (NaN where the engine cannot compute it)."""
        return math.nan

    def advance_to(self, step: float) -> None:
        """Run until ``step`` GD steps (flow time :math:`\\alpha\\,` ``step``) are done."""
        if step < self.steps_done:
            raise ValueError(
                f"step={step:g} is invalid: the engine is at step "
                f"{self.steps_done:g} and cannot go back"
            )
        with single_blas_thread():
            while self.steps_done < step:
                self.step(step)

    @abstractmethod
    def step(self, until: float) -> None:
        """Advance by one step, ending at or before step ``until``."""

    @abstractmethod
    def train_logits(self) -> np.ndarray:
        """Logits :math:`a_{i,t} = x_{i,t}^\\top W^\\top p`, shape (n, T)."""

    @abstractmethod
    def query_moments(self) -> tuple[float, np.ndarray]:
        r""":math:`\|q\|^2` and the signal coordinates :math:`(q_1, q_2)` of
        :math:`q = W^\top p`."""

    @abstractmethod
    def query(self) -> np.ndarray:
        """The effective query :math:`q = W^\\top p` (float64, shape (d,))."""

    @abstractmethod
    def parameter_norms(self) -> dict[str, float]:
        """``p_norm`` :math:`\\|p\\|`, ``weight_change_norm`` :math:`\\|W - W_0\\|_F`
        and ``invariant_drift`` :math:`\\|(WW^\\top - pp^\\top) - W_0W_0^\\top\\|_F` (zero
        under gradient flow; :math:`O(\\alpha^2)` a GD step)."""

    def test_logits(self) -> np.ndarray:
        return self.data.X_test @ self.query()

    def snapshot(self) -> Any:
        """What :meth:`evaluate` needs of the current state (here: its evaluation)."""
        return self.test_logits(), self.parameter_norms()

    def evaluate(self, snapshots: list[Any]) -> list[tuple[np.ndarray, dict[str, float]]]:
        """``(test logits, parameter norms)`` of each snapshot (engines that snapshot their
        state evaluate many at once here)."""
        return list(snapshots)


def reduced_setup(
    config: RunConfig, data: Dataset, W0: np.ndarray | None = None, block_rows: int = 512
) -> ReducedSetup:
    r"""The :class:`~verify.sim.statistics.ReducedSetup` of ``data``'s training tokens (all of
    each token as the noise part, no separate signal) with :math:`W_0` given or drawn from
    the seed in row blocks, :data:`SETUP_WORKERS` blocks at a time (the products under
    the caller's BLAS thread limit: :func:`verify.sim.simulate.simulate` runs with one)."""
    Z = np.ascontiguousarray(data.X_train.reshape(-1, data.d).T)
    if W0 is not None:
        blocks: Any = (W0[r : r + block_rows] for r in range(0, data.d, block_rows))
    else:
        blocks = (block for _, block in initial_weight_blocks(config, block_rows))
    return ReducedSetup.build(Z, blocks, workers=SETUP_WORKERS)


#: Row blocks of :math:`W_0` whose products the set-up computes at once, each in a thread
#: of its own (two where there are two cores: the same numbers, in about half the time).
SETUP_WORKERS = min(2, available_cores())
