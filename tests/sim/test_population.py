"""Population test metrics against explicit test sets of 1e6 sequences, and the parts they
are built from (Sobol' points, Gauss-Hermite orders, selection integrals, degenerate queries).

Every comparison with sampled data allows the population's stated error plus
``SAMPLE_SE_FACTOR`` standard errors of the sample, fixed here before any run."""

import dataclasses
import math
import warnings

import numpy as np
import pytest
from scipy.integrate import quad
from scipy.special import ndtr

from theory.foundation.data_model import DataModel
from theory.foundation.validation import InvalidParameter
from verify.sim import population
from verify.sim.config import RunConfig
from verify.sim.data import head_vector, signal_vectors
from verify.sim.population import (
    HERMITE_ORDERS,
    HERMITE_TABLE_ERROR,
    group_selection,
    hermite_rule,
    integrate,
    population_metrics,
    sequence_law,
)
from verify.sim.simulate import simulate
from verify.sim.sobol import direction_integers, scrambled_sobol, sobol_integers

#: Standard errors of an explicit sample allowed on top of the stated error.
SAMPLE_SE_FACTOR = 4.0
EXPLICIT_SEQUENCES = 1_000_000
EXPLICIT_D = 20
CHUNK = 20_000

#: name: (model, ||q||^2, (q.e1, q.e2)); the orthogonal part of q is spread over e3..ed.
SETTINGS = {
    # The paper's harmful regime after 1000 steps (accuracy near 0.87).
    "harmful": (DataModel(d=EXPLICIT_D, mu_norm=5.0), 0.5269**2, (0.0405, 0.0313)),
    # The benign regime after 1000 steps (accuracy near 1).
    "benign": (DataModel(d=EXPLICIT_D, mu_norm=20.0), 0.594**2, (0.1913, 0.1738)),
    # q.e1 != q.e2 and q.nu / (|q| |nu|) = 0.88: classes differ, scores track logits.
    "unequal": (DataModel(d=EXPLICIT_D, mu_norm=5.0), 4.0, (1.5, -1.0)),
    # q = 0: uniform attention.
    "uniform": (DataModel(d=EXPLICIT_D, mu_norm=5.0), 0.0, (0.0, 0.0)),
}


def query_vector(d: int, q_sq: float, q_signal: tuple[float, float]) -> np.ndarray:
    """A query with the given moments, its orthogonal part along a fixed random direction."""
    q = np.zeros(d)
    q[:2] = q_signal
    rest = np.random.default_rng(99).standard_normal(d - 2)
    q[2:] = rest / np.linalg.norm(rest) * math.sqrt(max(q_sq - q[0] ** 2 - q[1] ** 2, 0.0))
    return q


def explicit_sample(count: int, seed: int) -> dict[str, dict[str, tuple[float, float]]]:
    """Every setting on one explicit test set of ``count`` sequences (half of each class)
    of d-dimensional tokens x_t = c mu_{y*} + c' mu_{-y*} + sigma eps_t, eps_t ~ N(0, I_d):
    per setting and quantity, the class-balanced mean and its standard error (at least one
    sequence's worth: variance >= 1 / count per class). Logits and scores are the tokens'
    dot products with q and nu, taken as <signal, .> + sigma <eps, .> (one matrix product
    for all settings)."""
    rng = np.random.default_rng(seed)
    directions = np.stack(
        [
            vector
            for model, q_sq, q_signal in SETTINGS.values()
            for vector in (query_vector(model.d, q_sq, q_signal), head_vector(model))
        ],
        axis=1,
    )  # (d, 2 settings)
    sums = {name: np.zeros((2, 3, 2)) for name in SETTINGS}  # class, quantity, (sum, sum sq)
    for start in range(0, count, CHUNK):
        noise = rng.standard_normal((min(CHUNK, count - start), 8, EXPLICIT_D))
        projections = noise @ directions  # (m, T, 2 settings)
        labels = np.where(np.arange(len(noise)) % 2 == 0, 1.0, -1.0)
        for index, name in enumerate(SETTINGS):
            values = sequence_values(
                SETTINGS[name][0],
                directions[:, 2 * index : 2 * index + 2],
                projections[..., 2 * index : 2 * index + 2],
                labels,
            )
            for row, label in enumerate((1.0, -1.0)):
                chosen = values[:, labels == label]
                sums[name][row, :, 0] += chosen.sum(axis=1)
                sums[name][row, :, 1] += (chosen**2).sum(axis=1)
    per_class = count / 2
    out = {}
    for name, table in sums.items():
        means = table[..., 0] / per_class
        variances = np.maximum(table[..., 1] / per_class - means**2, 1.0 / per_class)
        mean = means.mean(axis=0)
        se = 0.5 * np.sqrt(variances.sum(axis=0) / per_class)
        out[name] = {
            key: (float(mean[i]), float(se[i]))
            for i, key in enumerate(("accuracy", "loss", "selects_relevant"))
        }
    return out


def sequence_values(
    model: DataModel, directions: np.ndarray, noise_projections: np.ndarray, labels: np.ndarray
) -> np.ndarray:
    """Correct (y* f > 0), loss log(1 + e^{-y* f}) and relevant argmax for each sequence,
    from the noise's projections on (q, nu) (shape (m, T, 2)) and the tokens' signals
    c mu_{y*} + c' mu_{-y*}: shape (3, sequences)."""
    mu_plus, mu_minus = signal_vectors(model)
    groups = np.array(model.position_groups)
    own = np.array([group.own for group in model.groups])[groups]
    opposite = np.array([group.opposite for group in model.groups])[groups]
    positive = (own[:, None] * mu_plus + opposite[:, None] * mu_minus) @ directions  # (T, 2)
    negative = (own[:, None] * mu_minus + opposite[:, None] * mu_plus) @ directions
    signal = np.where(labels[:, None, None] > 0, positive, negative)  # (m, T, 2)
    projected = signal + model.sigma_eps * noise_projections
    logits, scores = projected[..., 0], projected[..., 1]
    weights = np.exp(logits - logits.max(axis=1, keepdims=True))
    outputs = (weights * scores).sum(axis=1) / weights.sum(axis=1)
    margins = labels * outputs
    relevant = groups[np.argmax(logits, axis=1)] == 0
    return np.stack([margins > 0, np.logaddexp(0.0, -margins), relevant]).astype(np.float64)


def gaussian_softplus(mean: float, sd: float) -> float:
    """E[log(1 + exp(-(mean + sd Z)))], Z ~ N(0, 1), by adaptive quadrature (split where
    the argument crosses 0)."""
    return quad(
        lambda x: np.logaddexp(0, -(mean + sd * x)) * math.exp(-x * x / 2) / math.sqrt(2 * math.pi),
        -40,
        40,
        points=[-mean / sd],
        epsabs=1e-14,
        limit=200,
    )[0]


@pytest.fixture(scope="module")
def explicit():
    return explicit_sample(EXPLICIT_SEQUENCES, seed=2025)


def assert_agrees(name, key, predicted, stated_error, sample):
    mean, se = sample
    allowed = stated_error + SAMPLE_SE_FACTOR * se
    assert abs(predicted - mean) <= allowed, (
        f"{name} {key}: population {predicted:.6f} (stated error {stated_error:.1e}) vs "
        f"1e6 sequences {mean:.6f} (se {se:.1e}): |difference| "
        f"{abs(predicted - mean):.1e} > allowed {allowed:.1e}"
    )


@pytest.mark.parametrize("name", list(SETTINGS))
def test_population_agrees_with_one_million_explicit_sequences(name, explicit):
    model, q_sq, q_signal = SETTINGS[name]
    metrics = population_metrics(model, q_sq, np.array(q_signal))
    assert metrics.accuracy_error <= 1e-4 and metrics.loss_error <= 1e-4
    sample = explicit[name]
    assert_agrees(name, "accuracy", metrics.accuracy, metrics.accuracy_error, sample["accuracy"])
    assert_agrees(name, "loss", metrics.loss, metrics.loss_error, sample["loss"])
    if name != "uniform":  # q = 0: every logit ties (see the tie test below)
        assert_agrees(
            name,
            "selects_relevant",
            metrics.selects_relevant,
            metrics.selects_relevant_error,
            sample["selects_relevant"],
        )


def test_wrong_formulas_fail_the_same_comparison(explicit):
    """Ignoring the correlation q.nu of logit and score noise, or integrating one class
    only, gives numbers that the explicit test set rejects."""
    model, q_sq, q_signal = SETTINGS["unequal"]
    law = sequence_law(model, q_sq, np.array(q_signal))
    independent = integrate(dataclasses.replace(law, score_slope=0.0, score_residual=law.score_sd))
    mean, se = explicit["unequal"]["accuracy"]
    assert abs(independent.accuracy - mean) > independent.accuracy_error + SAMPLE_SE_FACTOR * se
    model, q_sq, q_signal = SETTINGS["harmful"]
    law = sequence_law(model, q_sq, np.array(q_signal))
    for row in (0, 1):
        one_class = integrate(
            dataclasses.replace(
                law, labels=law.labels[row : row + 1], logit_means=law.logit_means[row : row + 1]
            )
        )
        mean, se = explicit["harmful"]["accuracy"]
        assert abs(one_class.accuracy - mean) > one_class.accuracy_error + SAMPLE_SE_FACTOR * se


def test_a_runs_population_accuracy_matches_its_large_test_set():
    config = RunConfig.build(
        d=60,
        n=20,
        T=8,
        mu_norm=4.0,
        alpha=0.5,
        steps=200,
        test_size=20_000,
        log_every=200,
        log_geometric=0,
    )
    result = simulate(config)
    assert result.status == "completed"
    final = result.final
    count = config.recording.test_size
    accuracy = final["test_accuracy"]
    se = math.sqrt(max(accuracy * (1 - accuracy), 1.0 / count) / count)
    allowed = final["population_test_accuracy_error"] + SAMPLE_SE_FACTOR * se
    assert abs(final["population_test_accuracy"] - accuracy) <= allowed
    relevant = final["test_selects_relevant"]
    se = math.sqrt(max(relevant * (1 - relevant), 1.0 / count) / count)
    allowed = final["population_test_selects_relevant_error"] + SAMPLE_SE_FACTOR * se
    assert abs(final["population_test_selects_relevant"] - relevant) <= allowed
    summary = result.summary()
    assert summary["population_test_accuracy"] == final["population_test_accuracy"]
    assert summary["population_test_loss"] == final["population_test_loss"]


def test_external_data_without_signal_directions_record_nan():
    config = RunConfig.build(d=30, n=6, T=4, steps=3, test_size=5, log_geometric=0)
    run = simulate(config)
    assert math.isfinite(run.final["population_test_accuracy"])
    data = dataclasses.replace(run.data, mu_plus=None, mu_minus=None)
    external = simulate(config, data=data)
    assert external.status == "completed"
    for row in external.history:
        assert math.isnan(row["population_test_accuracy"])
        assert math.isnan(row["population_test_loss_error"])


def test_uniform_attention_has_the_closed_form():
    r"""q = 0: s = 1/T, y* f ~ N(gamma0 mean(k), sigma^2 |nu|^2 / T), and a tie between all
    tokens broken uniformly selects R with probability n_R / T."""
    model = DataModel(d=50, mu_norm=3.0, T=6, n_relevant=2, rho=0.3)
    metrics = population_metrics(model, 0.0, np.zeros(2))
    k = np.array([group.score for group in model.groups for _ in range(group.count)])
    mean, sd = model.gamma0 * k.mean(), model.score_noise / math.sqrt(model.T)
    assert metrics.accuracy == pytest.approx(ndtr(mean / sd), abs=1e-14)
    assert metrics.loss == pytest.approx(gaussian_softplus(mean, sd), abs=1e-9)
    assert metrics.selects_relevant == pytest.approx(2 / 6, abs=1e-15)
    assert metrics.accuracy_error == 0.0 and metrics.loss_error <= 1e-9


def test_huge_query_tends_to_the_argmax_limit_without_warnings():
    r"""With q.e1 = q.e2 (scores independent of logits) and |q| -> infinity the output is
    the argmax token's score: accuracy sum_g P_g Phi(gamma0 k_g / (sigma |nu|))."""
    model = DataModel(d=30, mu_norm=5.0)
    direction = np.array([0.3, 0.3])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        large = population_metrics(model, 1e12, direction * 1e6)
        capped = population_metrics(model, 1e300, direction * 1e150)
    law = sequence_law(model, 1e12, direction * 1e6)
    groups = group_selection(law)[0].mean(axis=0)
    k = np.array([group.score for group in model.groups])
    limit = float(groups @ ndtr(model.gamma0 * k / model.score_noise))
    for metrics in (large, capped):
        assert all(math.isfinite(value) for value in dataclasses.astuple(metrics))
        assert abs(metrics.accuracy - limit) <= metrics.accuracy_error + 1e-4
    assert capped.selects_relevant == pytest.approx(large.selects_relevant, abs=1e-6)


def test_classes_swap_when_the_signal_coordinates_swap():
    model = DataModel(d=30, mu_norm=5.0)
    one = population_metrics(model, 2.0, np.array([0.6, -0.2]))
    other = population_metrics(model, 2.0, np.array([-0.2, 0.6]))
    for key in ("accuracy", "loss", "selects_relevant"):
        assert getattr(one, key) == pytest.approx(getattr(other, key), abs=1e-12)


def test_same_inputs_give_the_same_numbers_and_the_tolerance_is_met():
    model, q_sq, q_signal = SETTINGS["harmful"]
    first = population_metrics(model, q_sq, np.array(q_signal))
    assert first == population_metrics(model, q_sq, np.array(q_signal))
    assert max(first.accuracy_error, first.loss_error, first.selects_relevant_error) <= 1e-4
    coarse = population_metrics(model, q_sq, np.array(q_signal), tolerance=1e-3)
    assert coarse.points < first.points and coarse.accuracy_error <= 1e-3


def test_stated_error_covers_other_scramblings(monkeypatch):
    """Twelve other scrambling seeds land within their stated errors of a reference with
    16 times the points (the reference's own error is added)."""
    model, q_sq, q_signal = SETTINGS["harmful"]
    reference = population_metrics(
        model, q_sq, np.array(q_signal), tolerance=1e-9, max_points=16 * 2**15
    )
    misses = 0
    for seed in range(100, 112):
        monkeypatch.setattr(population, "SCRAMBLE_SEED", seed)
        population.normal_block.cache_clear()
        metrics = population_metrics(model, q_sq, np.array(q_signal))
        allowed = metrics.accuracy_error + reference.accuracy_error
        misses += abs(metrics.accuracy - reference.accuracy) > allowed
    population.normal_block.cache_clear()
    assert misses <= 1


def test_selection_probabilities_sum_to_one():
    for q_sq, q_signal in ((0.3, (0.1, 0.2)), (50.0, (3.0, -4.0)), (1e-30, (1e-16, 0.0))):
        law = sequence_law(DataModel(d=30, mu_norm=2.0), q_sq, np.array(q_signal))
        fine, coarse = group_selection(law)
        np.testing.assert_allclose(fine.sum(axis=1), 1.0, atol=1e-12)
        np.testing.assert_allclose(coarse.sum(axis=1), 1.0, atol=1e-12)


@pytest.mark.parametrize(("largest_sd", "order"), HERMITE_ORDERS)
def test_hermite_orders_meet_their_table_error(largest_sd, order):
    nodes, weights = hermite_rule(order)
    worst = 0.0
    for sd in (largest_sd, largest_sd / 3):
        for mean in np.linspace(-12, 12, 25):
            exact = gaussian_softplus(mean, sd)
            rule = float(np.logaddexp(0, -(mean + sd * nodes)) @ weights)
            worst = max(worst, abs(rule - exact))
    assert worst <= HERMITE_TABLE_ERROR


def test_hermite_order_too_low_misses_the_table_error():
    """The table's orders are needed: one order less fails at the largest S."""
    largest_sd, order = HERMITE_ORDERS[4]
    nodes, weights = hermite_rule(order - 2)
    mean, sd = 0.3, largest_sd
    rule = float(np.logaddexp(0, -(mean + sd * nodes)) @ weights)
    assert abs(rule - gaussian_softplus(mean, sd)) > 1e-9


def test_sobol_points_equal_scipys_and_stay_equidistributed_when_scrambled():
    from scipy.stats import qmc

    for dimension in (1, 3, 9):
        reference = qmc.Sobol(dimension, scramble=False).random(2048)
        directions = direction_integers(dimension)
        mine = sobol_integers(directions, 0, 2048).astype(np.float64) / 2.0**32
        np.testing.assert_array_equal(mine, reference)
        np.testing.assert_array_equal(
            sobol_integers(directions, 1024, 1024), sobol_integers(directions, 0, 2048)[1024:]
        )
    points = scrambled_sobol(7, 0, 1024, np.random.default_rng(5))
    assert 0.0 < points.min() and points.max() < 1.0
    for column in points.T:
        assert len(np.unique(np.floor(column * 1024))) == 1024
    for split in range(11):  # dimensions 1 and 2 form a (0, 2)-sequence
        cells = np.floor(points[:, 0] * 2**split) * 2 ** (10 - split) + np.floor(
            points[:, 1] * 2 ** (10 - split)
        )
        assert len(np.unique(cells)) == 1024
    later = scrambled_sobol(7, 512, 512, np.random.default_rng(5))
    np.testing.assert_array_equal(later, points[512:])


@pytest.mark.parametrize(
    ("q_sq", "q_signal", "tolerance", "name"),
    [
        (-1.0, (0.0, 0.0), 1e-4, "q_sq"),
        (math.nan, (0.0, 0.0), 1e-4, "q_sq"),
        (1.0, (1.0, 1.0), 1e-4, "q_signal"),
        (1.0, (0.1, math.inf), 1e-4, "q_signal"),
        (1.0, (0.1, 0.1), 0.0, "tolerance"),
    ],
)
def test_bad_input_names_the_parameter(q_sq, q_signal, tolerance, name):
    with pytest.raises(InvalidParameter) as error:
        population_metrics(DataModel(d=30), q_sq, np.array(q_signal), tolerance=tolerance)
    assert error.value.name == name
