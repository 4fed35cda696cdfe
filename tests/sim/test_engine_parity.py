r"""Every registered engine against ``reduced``, chosen by its traits alone (a new engine is
tested by being registered), and every engine on every model variant it takes against
literal GD (``dense``) on the same variant.

At a small setting (d = 40, n = 4, T = 4, 8 log points one step apart, the engine's own
initialisation), each engine's run is compared with reduced GD on the same draw:

* the reference: for an engine exact per draw, ``reduced`` on the same tokens and
  :math:`W_0`; for one exact in law, ``reduced`` stepping on the same sampled statistics
  (the engine must then reproduce its dynamics; that those statistics have the law of the
  d-dimensional ones is :func:`test_in_law_statistics_have_the_moments_of_drawn_ones`);
* GD engines (``integrates == "gd"``): the training logits at every log point within
  :data:`ROUNDING` of their size (float64 rounding of the reference; an mpmath engine's
  error is the reference's), the final test logits likewise when the engine has a test
  set, and the recorded loss and norms within :data:`RECORDED`;
* flow engines: gradient flow is the :math:`\alpha \to 0` limit of GD with an
  :math:`O(\alpha)` error, so the flow must sit within :data:`FLOW_FACTOR` times the
  distance between GD at :math:`\alpha` and at :math:`\alpha/2` (about half GD's own
  error) of GD at :math:`\alpha`, and closer to GD at :math:`\alpha/2` than to GD at
  :math:`\alpha`.

On a variant (:data:`VARIANT_SETTINGS`, the engines that take it by their traits) the
reference is ``dense`` for an engine on tokens (``reduced`` on the sampled statistics for one
exact in law), with the same two comparisons, and the recorded noisy-gradient ratio joins
the compared columns.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

from theory.foundation.validation import InvalidParameter
from verify.sim.config import RunConfig
from verify.sim.data import Dataset, generate
from verify.sim.dfree_data import ReducedData
from verify.sim.engines import draw_data, engine_names, engine_traits
from verify.sim.engines.base import reduced_setup
from verify.sim.engines.reduced import ReducedEngine
from verify.sim.engines.traits import VARIANT_NAMES
from verify.sim.simulate import RunResult, simulate

ROUNDING = 1e-12
RECORDED = 1e-9
FLOW_FACTOR = 3.0
COLUMNS = ("train_loss", "q_norm", "p_norm", "clean_gap_mean", "noisy_gap_mean")
#: Each variant's fields at the parity setting (a small FFN: the mpmath GELU is slow).
VARIANT_SETTINGS: dict[str, dict[str, Any]] = {
    "loss": {"loss": "exponential"},
    "rho spread": {"rho_spread": 0.2},
    "one-step head": {"head": "one-step", "head_n": 30},
    "trained head": {"head": "trained", "head_step": 0.2},
    "FFN readout": {"readout": "ffn", "ffn_width": 4},
}


def small(name: str, **changes: Any) -> RunConfig:
    """The parity setting on engine ``name``: its first initialisation when it does not take
    the uniform one, no test set when it has none."""
    traits = engine_traits(name)
    values: dict[str, Any] = {
        "d": 40,
        "n": 4,
        "T": 4,
        "mu_norm": 6.0,
        "rho": 0.25,
        "alpha": 0.05,
        "steps": 8,
        "log_every": 1,
        "log_geometric": 0,
        "test_size": 10 if traits.test_set else 0,
        "population": "final",
        "mp_dps": 30,
        "mp_flow_tol": 1e-15,
        "engine": name,
    }
    if "uniform" not in traits.inits:
        values["init"] = traits.inits[0]
    return RunConfig.build(**{**values, **changes})


def reference(config: RunConfig, data: Dataset | ReducedData, refine: int = 1) -> RunResult:
    """GD on ``data`` at step size alpha / ``refine``, recorded at the same flow times as
    ``config``: reduced on the tokens and the seed's W0 or on the sampled statistics; dense
    when ``config`` turns a variant on and the data has tokens (a trained head's step is
    refined with alpha: the flow moves it at the rate alpha_nu / alpha)."""
    steps = config.training.steps
    varied = any(changed for changed in variant_changes(config).values())
    trained = config.training.head == "trained" and config.training.head_step is not None
    gd = config.replace(
        engine="dense" if varied and isinstance(data, Dataset) else "reduced",
        alpha=config.training.alpha / refine,
        steps=steps * refine,
        log_every=refine,
        **({"head_step": config.training.head_step / refine} if trained else {}),
    )
    if isinstance(data, ReducedData):
        engine = ReducedEngine(gd, data, statistics=data.statistics)  # type: ignore[arg-type]
        return simulate(gd, data=data, engine=engine)
    return simulate(gd, data=data)


def largest(values: list[np.ndarray]) -> float:
    return float(np.max(np.abs(np.stack(values))))


def difference(run: RunResult, other: RunResult) -> float:
    """The largest difference of the training logits over the log points."""
    return largest([a - b for a, b in zip(run.train_logits, other.train_logits, strict=True)])


@dataclass(frozen=True)
class Parity:
    difference: float
    tolerance: float
    compared: str


def variant_changes(config: RunConfig) -> dict[str, bool]:
    """Which variants ``config`` turns on."""
    from verify.sim.engines.traits import VARIANTS

    return {variant.name: variant.active(config) for variant in VARIANTS}


def gd_parity(run: RunResult, data: Dataset | ReducedData) -> Parity:
    ref = reference(run.config, data)
    assert run.steps == ref.steps
    columns = (*COLUMNS, "noisy_gradient_ratio")
    for column in columns:
        np.testing.assert_allclose(
            run.history[column], ref.history[column], rtol=RECORDED, atol=0, err_msg=column
        )
    if engine_traits(run.config.solver.engine).test_set:
        scale = np.abs(ref.final_test_logits).max()
        assert np.abs(run.final_test_logits - ref.final_test_logits).max() <= ROUNDING * scale
    return Parity(difference(run, ref), ROUNDING * largest(ref.train_logits), "GD, rounding")


def flow_parity(run: RunResult, data: Dataset | ReducedData) -> Parity:
    gd, finer = reference(run.config, data), reference(run.config, data, refine=2)
    assert run.steps == gd.steps and finer.steps == [2 * step for step in gd.steps]
    gd_error = difference(gd, finer)
    assert difference(run, finer) < difference(run, gd), "the flow is not GD's alpha -> 0 limit"
    return Parity(difference(run, gd), FLOW_FACTOR * gd_error, "flow vs GD, O(alpha)")


def parity(name: str, variant: str | None = None) -> Parity:
    """Engine ``name``'s run (on ``variant``) against its reference (module docstring)."""
    config = small(name, **(VARIANT_SETTINGS[variant] if variant else {}))
    traits = engine_traits(name)
    data = draw_data(config)
    assert isinstance(data, Dataset) == traits.tokens
    run = simulate(config, data=data)
    assert run.status == "completed", run.message
    if traits.integrates == "flow":
        return flow_parity(run, data)
    return gd_parity(run, data)


@pytest.mark.parametrize("name", engine_names())
def test_engine_agrees_with_reduced(name):
    result = parity(name)
    assert 0 <= result.difference <= result.tolerance, result


@pytest.mark.parametrize(
    ("name", "variant"),
    [
        (name, variant)
        for name in engine_names()
        for variant in VARIANT_NAMES
        if variant in engine_traits(name).variants and name != "dense"
    ],
)
def test_engine_agrees_with_dense_on_each_variant_it_takes(name, variant):
    result = parity(name, variant)
    assert 0 <= result.difference <= result.tolerance, result


def test_every_variant_is_compared_and_every_engine_takes_or_refuses_it():
    """The parity settings cover the variants; an engine refuses what its traits leave out."""
    assert set(VARIANT_SETTINGS) == set(VARIANT_NAMES)
    for name in engine_names():
        for variant in VARIANT_NAMES:
            values = {**small(name).flat(), **VARIANT_SETTINGS[variant]}
            values.pop("seed")
            if variant in engine_traits(name).variants:
                RunConfig.build(**values)
                continue
            with pytest.raises(InvalidParameter, match=f"with engine {name}"):
                RunConfig.build(**values)


# -- in law: the statistics' moments -------------------------------------------------------
SEEDS = 200
#: |z| bound of each mean (Bonferroni over the functionals at a family rate of 1e-3).
Z_BOUND = 4.0


def functionals(statistics: Any) -> np.ndarray:
    """Scalar summaries of one draw's statistics, compared in mean."""
    K, gram, Q = statistics.K, statistics.gram, statistics.Q
    return np.array(
        [
            np.trace(K),
            np.trace(gram),
            np.trace(Q),
            K[0, 1] + K[4, 5],
            np.abs(statistics.signal_B).sum(),
            np.abs(statistics.signal_AB).sum(),
        ]
    )


def drawn_functionals(config: RunConfig, seeds: range) -> np.ndarray:
    """The functionals of d-dimensional draws: tokens and W0 with the same law."""
    rows = []
    for seed in seeds:
        tokens = config.replace(engine="reduced", seed=seed)
        rows.append(functionals(reduced_setup(tokens, generate(tokens)).statistics()))
    return np.array(rows)


@pytest.mark.parametrize(
    "name", [name for name in engine_names() if engine_traits(name).exact == "in law"]
)
def test_in_law_statistics_have_the_moments_of_drawn_ones(name):
    config = small(name, d=60)
    sampled = np.array(
        [functionals(draw_data(config.replace(seed=seed)).statistics) for seed in range(SEEDS)]
    )
    drawn = drawn_functionals(config, range(SEEDS, 2 * SEEDS))
    error = np.sqrt(sampled.var(axis=0, ddof=1) / SEEDS + drawn.var(axis=0, ddof=1) / SEEDS)
    z = (sampled.mean(axis=0) - drawn.mean(axis=0)) / error
    assert np.abs(z).max() < Z_BOUND, z
