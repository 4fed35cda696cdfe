r"""The d-free engines: statistics sampled in law have the law of the d-dimensional ones.

Every tolerance is fixed before the draws. Moments: each sampled mean is compared with its
exact value (or with an explicit d-dimensional construction's mean) in units of its
standard error, and the largest :math:`|z|` must stay below the Bonferroni bound of a
family error rate of :data:`FAMILY_ALPHA` over all the comparisons of the test. Whole runs:
two-sample Kolmogorov-Smirnov tests over :data:`KS_SEEDS` seeds per engine (disjoint seed
ranges, so the samples are independent) at level :data:`KS_ALPHA` per statistic. Each
check is shown to fail on a wrong construction (one step of the sampler replaced).
"""

from __future__ import annotations

import functools
import tracemalloc

import numpy as np
import pytest
from scipy import stats

from theory.foundation.data_model import DataModel
from theory.foundation.validation import InvalidParameter
from verify.runtime.threads import single_blas_thread
from verify.sim import dfree_law
from verify.sim.config import RunConfig
from verify.sim.data import balanced_labels, generate, signal_part
from verify.sim.dfree_data import ReducedData, draw_reduced_data
from verify.sim.engines import make_engine
from verify.sim.engines.base import reduced_setup
from verify.sim.engines.dfree import DfreeEngine, DfreeFlowEngine
from verify.sim.engines.independent import IndependentGD
from verify.sim.engines.reduced import ReducedEngine
from verify.sim.observables import split_metrics
from verify.sim.resources import check_memory
from verify.sim.simulate import RunResult, record, simulate

FAMILY_ALPHA = 1e-3
NAMES = ("K", "gram", "Q", "signal_AB", "signal_B")

# -- wrong constructions: one step of the sampler replaced ------------------------------


def _noise_with_d_degrees(d, N, rng, size=()):
    """Wishart_N(d) instead of Wishart_N(d - 2) for the noise off the signal plane."""
    return dfree_law.bartlett_factor(d, N, rng, size)


def _without_YtY(rank, d, rng, size=()):
    """Q^T A^2 Q = (Z^T Z)^2 without the Y^T Y term."""
    return dfree_law.bartlett_factor(d, rank, rng, size), np.zeros((*size, 0, rank))


def _without_plane_noise(signal, sigma, rng, size=()):
    """Tokens without the noise's components on span(e1, e2) (so noise-free scores)."""
    return np.broadcast_to(signal.T, (*size, *signal.T.shape)).copy()


WRONG = {
    "noise Wishart with d, not d - 2": ("noise_factor", _noise_with_d_degrees),
    "no Y^T Y term": ("weight_factors", _without_YtY),
    "no noise on the signal plane": ("signal_coordinates", _without_plane_noise),
}


def use_wrong(monkeypatch, name):
    attribute, replacement = WRONG[name]
    monkeypatch.setattr(dfree_law, attribute, replacement)


# -- moments -----------------------------------------------------------------------------

SIGMA, SCALE, DRAWS = 1.3, 0.7, 20_000
MOMENT_MODEL = DataModel(n=2, T=3, rho=0.5, mu_norm=2.0)
SIGNAL = signal_part(balanced_labels(2), MOMENT_MODEL).reshape(-1, 2)  # (N, 2), N = 6
N = SIGNAL.shape[0]


def sampled(d: int, draws: int = DRAWS, seed: int = 0) -> dict[str, np.ndarray]:
    """``draws`` independent draws of the statistics sampled in law (stacked)."""
    token_rng, weight_rng = (
        np.random.default_rng(child) for child in np.random.SeedSequence([seed, d]).spawn(2)
    )
    statistics = dfree_law.sample_statistics(
        SIGNAL, SIGMA, SCALE, d, token_rng, weight_rng, size=(draws,)
    )
    return {name: getattr(statistics, name) for name in NAMES}


@functools.cache
def explicit(d: int, draws: int = DRAWS, seed: int = 1, chunk: int = 500) -> dict[str, np.ndarray]:
    r"""The d-dimensional construction, literally: :math:`B = E S^\top + \sigma G`,
    :math:`W_0` with :math:`N(0, s^2)` entries, :math:`A = W_0^\top W_0`, and the five
    products (in chunks of draws)."""
    rng = np.random.default_rng([seed, d])
    parts: dict[str, list[np.ndarray]] = {name: [] for name in NAMES}
    for _ in range(0, draws, chunk):
        B = SIGMA * rng.standard_normal((chunk, d, N))
        B[:, :2] += SIGNAL.T
        W0 = SCALE * rng.standard_normal((chunk, d, d))
        A = np.swapaxes(W0, 1, 2) @ W0
        AB = A @ B
        Bt = np.swapaxes(B, 1, 2)
        for name, value in zip(
            NAMES, (Bt @ AB, Bt @ B, np.swapaxes(AB, 1, 2) @ AB, AB[:, :2], B[:, :2]), strict=True
        ):
            parts[name].append(value)
    return {name: np.concatenate(values) for name, values in parts.items()}


def wishart_fourth_moment(d: int) -> float:
    r""":math:`E[(e^\top A^2 e)^2]/s^8` for a unit :math:`e`: with :math:`X = |W e|^2 \sim
    s^2\chi^2_d` and :math:`C \sim \chi^2_{d-1}` independent, :math:`e^\top A^2 e = X^2 +
    s^2 X C`."""
    return (
        d * (d + 2) * (d + 4) * (d + 6)
        + 2 * (d - 1) * d * (d + 2) * (d + 4)
        + (d - 1) * (d + 1) * d * (d + 2)
    )


def exact_moments(d: int) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    r"""First moments of the five statistics and second moments (of every entry; of the
    diagonal for :math:`Q`), for tokens :math:`b_i = m_i + \sigma g_i` and
    :math:`A = W_0^\top W_0`, :math:`E A = s^2 d I`, :math:`E A^2 = s^4 d (2d + 1) I`, and
    :math:`E[(u^\top A v)^2 \mid u, v] = s^4[(d^2 + d)(u \cdot v)^2 + d |u|^2 |v|^2]`."""
    S, var, s2 = SIGNAL, SIGMA**2, SCALE**2
    signal_gram = S @ S.T
    norms = np.diag(signal_gram)
    mean_gram = signal_gram + var * d * np.eye(N)
    fourth = (norms + var * d) ** 2 + 2 * var**2 * d + 4 * var * norms  # E |b_i|^4
    gram_sq = signal_gram**2 + var * (norms[:, None] + norms[None, :]) + var**2 * d
    np.fill_diagonal(gram_sq, fourth)
    diagonal_products = np.outer(np.diag(mean_gram), np.diag(mean_gram))
    np.fill_diagonal(diagonal_products, fourth)
    first = {
        "gram": mean_gram,
        "K": s2 * d * mean_gram,
        "Q": s2**2 * d * (2 * d + 1) * mean_gram,
        "signal_B": S.T,
        "signal_AB": s2 * d * S.T,
    }
    second = {
        "gram": gram_sq,
        "K": s2**2 * ((d * d + d) * gram_sq + d * diagonal_products),
        "Q": s2**4 * wishart_fourth_moment(d) * fourth,
        "signal_B": S.T**2 + var,
        "signal_AB": s2**2 * ((d * d + d) * (S.T**2 + var) + d * (norms + var * d)[None, :]),
    }
    return first, second


def z_scores(samples: np.ndarray, exact: np.ndarray) -> np.ndarray:
    """(sample mean - exact) / standard error, entrywise."""
    error = samples.std(axis=0, ddof=1) / np.sqrt(samples.shape[0])
    return (samples.mean(axis=0) - exact) / error


def exact_moment_z(d: int) -> np.ndarray:
    """Every |z| of the draws' first and second moments against :func:`exact_moments`."""
    draws = sampled(d)
    first, second = exact_moments(d)
    out = [z_scores(draws[name], first[name]).ravel() for name in NAMES]
    for name in NAMES:
        values = draws[name]
        if name == "Q":
            values = np.diagonal(values, axis1=1, axis2=2)
        out.append(z_scores(values**2, second[name]).ravel())
    return np.abs(np.concatenate(out))


def two_sample_z(left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """Welch's z of the means of two independent samples, entrywise."""
    spread = np.sqrt(
        left.var(axis=0, ddof=1) / left.shape[0] + right.var(axis=0, ddof=1) / right.shape[0]
    )
    return (left.mean(axis=0) - right.mean(axis=0)) / spread


def moment_functionals(draws: dict[str, np.ndarray]) -> list[np.ndarray]:
    """Entries, squared entries, and the joint products K*Gram, Q*K, signal_AB*signal_B."""
    out = [draws[name] for name in NAMES] + [draws[name] ** 2 for name in NAMES]
    out += [draws["K"] * draws["gram"], draws["Q"] * draws["K"]]
    out.append(draws["signal_AB"] * draws["signal_B"])
    return [values.reshape(values.shape[0], -1) for values in out]


def explicit_moment_z(d: int) -> np.ndarray:
    """Every |z| of the first two moments, sampled in law vs the explicit construction."""
    pairs = zip(moment_functionals(sampled(d)), moment_functionals(explicit(d)), strict=True)
    return np.abs(np.concatenate([two_sample_z(a, b) for a, b in pairs]))


def bonferroni(count: int) -> float:
    return float(stats.norm.isf(FAMILY_ALPHA / (2 * count)))


MOMENT_DIMENSIONS = (2, 5, 11, 40)  # d = 2: no noise off the plane; 5: d < N + 2; 11: d - r < r
EXPLICIT_DIMENSIONS = (6, 40)  # below and above N + 2 = 8
#: check -> (|z| of its comparisons at d, the dimensions it runs at, the d of its
#: wrong-construction test)
MOMENT_CHECKS = {
    "exact": (exact_moment_z, MOMENT_DIMENSIONS, 11),
    "explicit": (explicit_moment_z, EXPLICIT_DIMENSIONS, 40),
}


@pytest.mark.parametrize("check", MOMENT_CHECKS)
def test_sampled_moments_match_exact_ones_and_an_explicit_construction(check):
    """Exact moments at d = 2, 5, 11, 40; the explicit d-dimensional construction's first
    two moments at d = 6 and 40 (all within the Bonferroni bound of the test)."""
    z_of, dimensions, _ = MOMENT_CHECKS[check]
    z = [z_of(d) for d in dimensions]
    bound = bonferroni(sum(values.size for values in z))
    worst = dict(zip(dimensions, (round(float(v.max()), 2) for v in z), strict=True))
    assert max(worst.values()) < bound, (worst, bound)


@pytest.mark.parametrize("check", MOMENT_CHECKS)
@pytest.mark.parametrize("wrong", ["noise Wishart with d, not d - 2", "no Y^T Y term"])
def test_moment_checks_reject_a_wrong_construction(monkeypatch, check, wrong):
    use_wrong(monkeypatch, wrong)
    z_of, _, d = MOMENT_CHECKS[check]
    z = z_of(d)
    assert z.max() > bonferroni(z.size)


# -- whole runs: Kolmogorov-Smirnov against the reduced engine ------------------------------

KS_SEEDS = 200
KS_ALPHA = 1e-3
#: T = 3 (tokens R, W+, W-): with an irrelevant token (T = 4) the noisy-fitted fraction did
#: not tell apart even tokens without noise on the signal plane (KS p = 1), so that check
#: could not fail; at T = 3 it does.
KS_SETTINGS = {
    "n": 8,
    "T": 3,
    "eta": 0.25,
    "mu_norm": 5.0,
    "alpha": 5e-3,
    "steps": 1000,
    "init": "gaussian",
    "test_size": 0,  # the reduced engine's finite test set is drawn after training
    "population": "final",
}
#: Final-step statistics compared by the default test. Test accuracy has its own tests:
#: population accuracy (the same function of the query's moments for both engines), and
#: the reduced engine's accuracy on a finite clean test set of TEST_SIZE sequences per seed
#: against the d-free population accuracy plus the finite set's own sampling noise (the
#: d-free engine has no query vector, hence no finite test set). Without that noise the
#: two differ in law: measured at d = 2000, KS p = 4.6e-7 with equal means (0.9521 vs
#: 0.9515): the binomial noise of 1000 sequences (sd 0.0068) is twice the seeds' spread of
#: the population accuracy (sd 0.0033), and the finite-set accuracies spread as both
#: together (sd 0.0071).
KS_KEYS = ("noisy_fitted", "clean_gap_mean", "q_norm")
TEST_SIZE = 1000
DFREE_SEEDS = 10**6  # the d-free seeds start here: disjoint from the reduced engine's


def ks_config(d: int, seed: int, engine: str) -> RunConfig:
    return RunConfig.build(d=d, seed=seed, engine=engine, **KS_SETTINGS)


def trained(configs, datas, statistics) -> tuple[IndependentGD, list[dict[str, float]]]:
    """The runs advanced together to their last step, and each run's recorded row there."""
    runs = IndependentGD(
        statistics,
        np.stack([data.train_scores for data in datas]),
        np.stack([data.y_train for data in datas]),
        np.array([config.training.alpha for config in configs]),
    )
    runs.advance_to(configs[0].training.steps)
    rows = [
        record(RunResult(config=config, data=data), runs.view(index))
        for index, (config, data) in enumerate(zip(configs, datas, strict=True))
    ]
    return runs, rows


def columns(rows: list[dict[str, float]]) -> dict[str, np.ndarray]:
    """The compared columns of the rows."""
    keys = (*KS_KEYS, "population_test_accuracy")
    return {key: np.array([row[key] for row in rows]) for key in keys}


def finite_test_accuracy(config: RunConfig, setup, runs: IndependentGD, run: int) -> float:
    r"""Accuracy on the seed's clean test set of :data:`TEST_SIZE` sequences (its own
    stream: the training data are the same), with the query
    :math:`q = C_0 a + Z M^\top K a` of the trained state."""
    data = generate(config.replace(test_size=TEST_SIZE))
    a, M = runs.a[run], runs.M[run]
    query = setup.C0 @ a + setup.Z @ (M.T @ (runs.K[run] @ a))
    return split_metrics(data.X_test @ query, data.test_scores, data.y_test).accuracy


@functools.cache
def reduced_finals(d: int) -> dict[str, np.ndarray]:
    configs = [ks_config(d, seed, "reduced") for seed in range(KS_SEEDS)]
    with single_blas_thread():
        datas = [generate(config) for config in configs]
        setups = [reduced_setup(c, data) for c, data in zip(configs, datas, strict=True)]
        runs, rows = trained(configs, datas, [setup.statistics() for setup in setups])
        out = columns(rows)
        out["test_accuracy"] = np.array(
            [finite_test_accuracy(c, setups[i], runs, i) for i, c in enumerate(configs)]
        )
    return out


def dfree_finals(d: int) -> dict[str, np.ndarray]:
    """The d-free runs' final statistics, with the sampler's steps as they are now (a wrong
    construction put in place by a test gets its own runs)."""
    steps = tuple(getattr(dfree_law, name) for name, _ in WRONG.values())
    return _dfree_finals(d, steps)


@functools.cache
def _dfree_finals(d: int, sampler_steps: tuple) -> dict[str, np.ndarray]:
    configs = [ks_config(d, DFREE_SEEDS + seed, "dfree") for seed in range(KS_SEEDS)]
    datas = [draw_reduced_data(config) for config in configs]
    return columns(trained(configs, datas, [data.statistics for data in datas])[1])


def with_finite_set_noise(accuracy: np.ndarray, seed: int) -> np.ndarray:
    r"""Accuracy on TEST_SIZE fresh test sequences given the population accuracy :math:`p`:
    :math:`\mathrm{Binomial}(m, p)/m` (the sequences are independent given the trained
    query; the two classes' accuracies are averaged, which overstates the variance by
    :math:`(p_+ - p_-)^2/4m`, negligible here)."""
    rng = np.random.default_rng(seed)
    return rng.binomial(TEST_SIZE, accuracy) / TEST_SIZE


def ks_p_values(d: int) -> dict[str, float]:
    """KS p-values of the final statistics and of the accuracies (population vs population;
    finite set vs population with the finite set's noise)."""
    reference, law = reduced_finals(d), dfree_finals(d)
    pairs = {key: (reference[key], law[key]) for key in KS_KEYS}
    population = law["population_test_accuracy"]
    pairs["population_test_accuracy"] = (reference["population_test_accuracy"], population)
    pairs["test_accuracy"] = (reference["test_accuracy"], with_finite_set_noise(population, d))
    return {key: float(stats.ks_2samp(*pair).pvalue) for key, pair in pairs.items()}


@pytest.mark.parametrize("d", [200, pytest.param(2000, marks=pytest.mark.slow)])
def test_dfree_runs_have_the_law_of_reduced_runs(d):
    p_values = ks_p_values(d)
    assert min(p_values.values()) > KS_ALPHA, p_values


@pytest.mark.parametrize(
    ("wrong", "keys"),
    [
        ("no noise on the signal plane", ("noisy_fitted", "clean_gap_mean")),
        ("no Y^T Y term", ("q_norm",)),
    ],
)
def test_kolmogorov_smirnov_rejects_a_wrong_construction(monkeypatch, wrong, keys):
    reduced_finals(200)  # the reference, drawn with the true construction
    use_wrong(monkeypatch, wrong)
    p_values = ks_p_values(200)
    assert all(p_values[key] < KS_ALPHA for key in keys), p_values


ACCURACY_KEYS = ("population_test_accuracy", "test_accuracy")


@pytest.mark.parametrize("d", [200, pytest.param(2000, marks=pytest.mark.slow)])
def test_dfree_test_accuracy_has_the_law_of_reduced_test_accuracy(d):
    p_values = ks_p_values(d)
    assert min(p_values[key] for key in ACCURACY_KEYS) > KS_ALPHA, p_values


def test_test_accuracy_comparisons_reject_a_wrong_construction(monkeypatch):
    reduced_finals(200)
    use_wrong(monkeypatch, "no Y^T Y term")
    p_values = ks_p_values(200)
    assert max(p_values[key] for key in ACCURACY_KEYS) < KS_ALPHA, p_values


# -- the engines ---------------------------------------------------------------------------


def small(d=30, **changes) -> RunConfig:
    values = {"n": 4, "T": 3, "mu_norm": 4.0, "alpha": 0.05, "steps": 300, "init": "gaussian"}
    return RunConfig.build(d=d, **{**values, **changes})


def test_independent_runs_equal_the_single_engines_to_rounding():
    reduced_config = small(test_size=0)
    reduced = ReducedEngine(reduced_config, generate(reduced_config))
    dfree_config = small(engine="dfree", seed=3)
    dfree_data = draw_reduced_data(dfree_config)
    dfree = DfreeEngine(dfree_config, dfree_data)
    engines = (reduced, dfree)
    runs = IndependentGD(
        [engine.statistics for engine in engines],
        np.stack([engine.data.train_scores for engine in engines]),
        np.stack([engine.data.y_train for engine in engines]),
        np.full(2, 0.05),
    )
    for step in (1, 40, 300):
        runs.advance_to(step)
        for index, engine in enumerate(engines):
            engine.advance_to(step)
            view = runs.view(index)
            scale = np.abs(engine.train_logits()).max()
            assert np.abs(view.train_logits() - engine.train_logits()).max() <= 1e-12 * scale
            q_sq, q_signal = engine.query_moments()
            assert view.query_moments()[0] == pytest.approx(q_sq, rel=1e-12)
            np.testing.assert_allclose(view.query_moments()[1], q_signal, rtol=1e-12)


def test_same_seed_same_numbers_and_no_d_dimensional_array():
    config = small(d=10**9, engine="dfree", steps=50, log_every=25, log_geometric=5)
    first, second = simulate(config), simulate(config)
    assert first.status == "completed", first.message
    np.testing.assert_equal(first.history, second.history)  # NaN (no test set) equal to NaN
    assert isinstance(first.data, ReducedData) and first.data.d == 10**9
    assert all(
        np.asarray(value).size < 10**4
        for value in vars(first.data.statistics).values()
        if isinstance(value, np.ndarray)
    )
    other = simulate(config.replace(seed=1)).final
    assert other["clean_gap_mean"] != first.final["clean_gap_mean"]


def test_a_dfree_run_at_d_1e9_is_light():
    """Paper-sized (n = 20, T = 8) at d = 1e9: the draw, 1000 steps and the recording hold a
    few N x N arrays at a time (bound fixed in advance: 32 N^2 floats, 6.25 MiB at
    N = 160), and the records are finite."""
    config = RunConfig.build(
        d=10**9,
        engine="dfree",
        init="gaussian",
        mu_norm=2000.0,
        alpha=2e-7,
        log_every=100,
        log_geometric=10,
    )
    check_memory(config, available=2**30)  # a reduced run at this d would need ~1e8 GiB
    with pytest.raises(InvalidParameter):
        check_memory(config.replace(engine="reduced", init="uniform"), available=2**30)
    simulate(config.replace(d=50, steps=2))  # imports and caches outside the measurement
    tracemalloc.start()
    result = simulate(config)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    N = config.model.n_tokens
    assert peak < 32 * N * N * 8, f"peak {peak / 2**20:.2f} MiB"
    assert result.status == "completed", result.message
    assert np.isfinite(result.final["clean_gap_mean"]) and np.isfinite(result.final["q_norm"])


def _flow_gd_distance(config, data, steps):
    gd, flow = DfreeEngine(config, data), DfreeFlowEngine(config, data)
    worst = 0.0
    for step in np.linspace(0, steps, 11)[1:]:
        gd.advance_to(step)
        flow.advance_to(step)
        worst = max(worst, np.abs(gd.train_logits() - flow.train_logits()).max())
    return worst


def test_dfree_flow_tracks_dfree_gd_with_error_linear_in_alpha():
    config = small(engine="dfree", alpha=0.02)
    data = draw_reduced_data(config)
    horizon = config.training.alpha * 2000
    errors = [
        _flow_gd_distance(config.replace(alpha=alpha), data, round(horizon / alpha))
        for alpha in (0.02, 0.01)
    ]
    assert 1.6 < errors[0] / errors[1] < 2.5, errors


def test_dfree_flow_reaches_1e12_steps_at_d_1e9():
    config = RunConfig.build(
        d=10**9,
        engine="dfree-flow",
        init="gaussian",
        mu_norm=2000.0,
        alpha=2e-7,
        steps=10**12,
        log_geometric=30,
    )
    result = simulate(config)
    assert result.status == "completed", result.message
    assert result.steps[-1] == 1e12
    assert np.all(np.isfinite([row["clean_gap_min"] for row in result.history]))
    assert result.history[-1]["train_loss"] < result.history[10]["train_loss"]
    assert result.warnings == []


def test_dfree_engines_refuse_other_inits_data_and_W0():
    with pytest.raises(InvalidParameter, match=r"^init='uniform' is invalid: allowed gaussian"):
        RunConfig.build(engine="dfree")
    with pytest.raises(InvalidParameter, match=r"^init="):
        RunConfig.build(engine="dfree-flow", init="uniform")
    with pytest.raises(InvalidParameter, match=r"^init="):
        draw_reduced_data(small(init="uniform"))  # no Gaussian law drawn for another init
    config = small(engine="dfree", test_size=4)
    tokens = generate(config)
    with pytest.raises(InvalidParameter, match=r"^engine='dfree' is invalid"):
        make_engine(config, tokens)
    with pytest.raises(InvalidParameter, match=r"^engine='dfree' is invalid"):
        make_engine(config, draw_reduced_data(config), np.eye(config.model.d))
