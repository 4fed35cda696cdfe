"""The model variants in the simulator: base values give the base numbers bit for bit, refusals
name the engine, the variant and the engines that take it, and the new observables (the head's
alignment and scale, the noisy-gradient ratio) mean what their documentation says.

``data/base_numbers.npz`` holds the numbers of :func:`base_numbers` computed by the code before
the variants were wired in (main at commit 75f0c3b, the same machine): each variant at its base
value must give them exactly (maximum difference 0). The batched runs' entries were computed
again when their compiled step began to take runs two at a time on their matrices' common part
(a change of rounding only: ``tests/sim/test_batch.py`` holds batched runs to the same runs
alone)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from theory.foundation.validation import InvalidParameter
from verify.sim.batch import simulate_group
from verify.sim.config import RunConfig
from verify.sim.data import generate, initial_weights
from verify.sim.engines import DenseEngine, ReducedEngine
from verify.sim.gradient import noisy_gradient_ratio_dense
from verify.sim.simulate import simulate

DATA = Path(__file__).parent / "data" / "base_numbers.npz"
SMALL = {
    "d": 40,
    "n": 4,
    "T": 4,
    "mu_norm": 6.0,
    "rho": 0.25,
    "alpha": 0.05,
    "steps": 8,
    "log_every": 1,
    "log_geometric": 0,
    "test_size": 10,
    "population": "final",
    "mp_dps": 30,
    "mp_flow_tol": 1e-15,
}
#: The configurations of the stored numbers (flat fields), by name.
CASES = {
    "dense": {**SMALL, "engine": "dense"},
    "reduced": {**SMALL, "engine": "reduced"},
    "mp": {**SMALL, "engine": "mp"},
    "flow": {**SMALL, "engine": "flow"},
    "mp-flow": {**SMALL, "engine": "mp-flow"},
    "dfree": {**SMALL, "engine": "dfree", "init": "gaussian", "test_size": 0},
    "dfree-flow": {**SMALL, "engine": "dfree-flow", "init": "gaussian", "test_size": 0},
    "reduced-benign-shape": {
        "d": 300,
        "n": 20,
        "T": 8,
        "mu_norm": 8.0,
        "steps": 300,
        "test_size": 50,
        "log_geometric": 10,
        "engine": "reduced",
    },
    "flow-long": {
        "d": 300,
        "n": 20,
        "T": 8,
        "mu_norm": 8.0,
        "steps": 10**8,
        "test_size": 50,
        "log_geometric": 12,
        "log_every": 10**8,
        "engine": "flow",
    },
}
#: Every variant field at its base value, given explicitly.
BASE_VALUES = {
    "loss": "logistic",
    "head": "fixed",
    "rho_spread": 0.0,
    "readout": "linear",
    "head_n": 0,
}
BATCHED = [
    {
        "d": 200,
        "n": 12,
        "T": 6,
        "mu_norm": mu,
        "steps": 50,
        "test_size": 0,
        "log_every": 10,
        "log_geometric": 0,
        "population": "final",
    }
    for mu in (4.0, 9.0)
]


def base_numbers() -> dict[str, np.ndarray]:
    """The recorded training logits, history and final test logits of :data:`CASES` and of
    two batched runs (:data:`BATCHED`), each variant field at its base value."""
    out: dict[str, np.ndarray] = {}
    for name, values in CASES.items():
        run = simulate(RunConfig.build(**values, **BASE_VALUES))
        assert run.status == "completed", (name, run.message)
        out[f"{name}/train_logits"] = np.stack(run.train_logits)
        out[f"{name}/history"] = run.history.values
        if run.final_test_logits is not None and run.final_test_logits.size:
            out[f"{name}/test_logits"] = run.final_test_logits
    configs = [RunConfig.build(**values, **BASE_VALUES) for values in BATCHED]
    for k, run in enumerate(simulate_group(configs)):
        out[f"batched-{k}/train_logits"] = np.stack(run.train_logits)
        out[f"batched-{k}/history"] = run.history.values
    return out


def test_base_values_give_the_stored_base_numbers_exactly():
    stored = np.load(DATA)
    columns = list(stored["columns"])
    from verify.sim.history import COLUMN_NAMES

    index = [COLUMN_NAMES.index(name) for name in columns]
    now = base_numbers()
    assert set(now) == set(stored.files) - {"columns"}
    for key, values in now.items():
        if key.endswith("/history"):
            values = values[:, index]
        assert np.array_equal(values, stored[key], equal_nan=True), key


def test_variants_leave_the_base_draws_and_draw_only_when_on():
    base = generate(RunConfig.build(**SMALL))
    for changes in ({"rho_spread": 0.2}, {"head": "one-step"}, {"readout": "ffn"}):
        data = generate(RunConfig.build(**SMALL, **changes))
        assert np.array_equal(data.y_train, base.y_train)
        assert np.array_equal(data.X_train[..., 2:], base.X_train[..., 2:])
    assert base.rho_train is None and base.nu_start is None and base.readout is None
    spread = generate(RunConfig.build(**SMALL, rho_spread=0.2))
    assert spread.rho_train is not None and np.all(np.abs(spread.rho_train - 0.25) <= 0.2)
    assert not np.array_equal(spread.X_train[..., :2], base.X_train[..., :2])
    one_step = generate(RunConfig.build(**SMALL, head="one-step"))
    assert one_step.nu_start is not None and not np.array_equal(one_step.nu, base.nu)


@pytest.mark.parametrize(
    ("changes", "parameter", "words"),
    [
        ({"engine": "mp-flow", "head": "trained"}, "head", "dense, reduced, mp or flow"),
        (
            {"engine": "dfree", "init": "gaussian", "readout": "ffn"},
            "readout",
            "dense, reduced, mp, flow or mp-flow",
        ),
        (
            {"engine": "dfree-flow", "init": "gaussian", "rho_spread": 0.1},
            "rho_spread",
            "dense, reduced, mp, flow or mp-flow",
        ),
    ],
)
def test_a_refused_variant_names_the_engine_the_variant_and_the_engines_that_take_it(
    changes, parameter, words
):
    with pytest.raises(InvalidParameter) as info:
        RunConfig.build(**changes)
    assert info.value.name == parameter
    assert f"with engine {changes['engine']}" in info.value.allowed
    assert words in info.value.allowed


def test_batched_runs_take_only_the_variants_of_the_data():
    configs = [RunConfig.build(**BATCHED[0], rho_spread=0.05, head="one-step")]
    assert simulate_group(configs)[0].status == "completed"
    with pytest.raises(InvalidParameter, match="loss='exponential' is invalid"):
        simulate_group([RunConfig.build(**BATCHED[0], loss="exponential")])


def test_head_summary_is_the_fixed_head_or_the_trained_head_at_both_ends():
    fixed = simulate(RunConfig.build(**SMALL)).summary()
    assert fixed["head_alignment"] == pytest.approx(1.0, abs=1e-15)
    assert fixed["head_scale"] == pytest.approx(1.0, rel=1e-14)  # s_nu
    assert fixed["head_alignment_start"] == fixed["head_alignment"]
    trained = simulate(RunConfig.build(**SMALL, head="trained", head_step=0.5)).summary()
    assert trained["head_alignment_start"] == pytest.approx(1.0, abs=1e-15)
    assert trained["head_alignment"] < 0.999  # the head memorises training noise
    one_step = generate(RunConfig.build(**SMALL, head="one-step"))
    run = simulate(RunConfig.build(**SMALL, head="one-step"), data=one_step).summary()
    cosine = (one_step.nu[0] - one_step.nu[1]) / (np.sqrt(2) * np.linalg.norm(one_step.nu))
    assert run["head_alignment"] == pytest.approx(cosine, rel=1e-13)
    assert run["head_scale"] == pytest.approx(np.linalg.norm(one_step.nu) * 6.0, rel=1e-13)


def subset_loss_gradient_norm(config, data, W, p, subset, step=1e-6):
    """||d L_S / d(W, p)|| by central differences of the loss of the samples in ``subset``
    (each sample's logistic loss over n), at d small enough to perturb every entry."""
    from verify.sim.kernels import logistic_loss, softmax

    tokens = data.X_train

    def loss(W_, p_):
        s = softmax(tokens @ (W_.T @ p_))
        f = (s * data.train_scores).sum(axis=-1)
        return float(logistic_loss(data.y_train * f)[subset].sum() / data.n)

    total = 0.0
    for array in (W, p):
        for index in np.ndindex(array.shape):
            keep = array[index]
            array[index] = keep + step
            up = loss(W, p)
            array[index] = keep - step
            down = loss(W, p)
            array[index] = keep
            total += ((up - down) / (2 * step)) ** 2
    return np.sqrt(total)


def test_noisy_gradient_ratio_is_the_ratio_of_the_subsets_loss_gradients():
    """The recorded ratio against central differences of the noisy and clean samples' summed
    losses in W and p (d = 8), after a few steps; reduced and dense record the same."""
    config = RunConfig.build(d=8, n=6, T=3, eta=0.34, mu_norm=3.0, alpha=0.5, steps=5, test_size=0)
    data = generate(config)
    dense = DenseEngine(config, data, initial_weights(config))
    reduced = ReducedEngine(config, data, initial_weights(config))
    dense.advance_to(5)
    reduced.advance_to(5)
    noisy = data.noisy
    assert noisy.sum() == 2
    W, p = dense.W.copy(), dense.p.copy()
    numerator = subset_loss_gradient_norm(config, data, W, p, noisy)
    denominator = subset_loss_gradient_norm(config, data, W, p, ~noisy)
    assert dense.noisy_gradient_ratio() == pytest.approx(numerator / denominator, rel=1e-6)
    assert reduced.noisy_gradient_ratio() == pytest.approx(dense.noisy_gradient_ratio(), rel=1e-10)
    h = np.zeros((data.n, data.T))
    assert noisy_gradient_ratio_dense(dense.tokens, W, p, h + 1.0, noisy) > 0


def test_population_metrics_are_left_out_where_their_formulas_do_not_hold():
    base = simulate(RunConfig.build(**SMALL)).final
    assert np.isfinite(base["population_test_accuracy"])
    for changes in ({"head": "one-step"}, {"readout": "ffn"}, {"head": "trained"}):
        row = simulate(RunConfig.build(**SMALL, **changes)).final
        assert np.isnan(row["population_test_accuracy"]), changes
        assert np.isfinite(row["test_accuracy"])
    row = simulate(RunConfig.build(**SMALL, loss="squared")).final
    assert np.isfinite(row["population_test_accuracy"]) and np.isnan(row["population_test_loss"])


def test_a_spread_of_rho_averages_the_population_over_the_factor():
    """The 6-node average against the 3-node one (the quadrature's error) and against the
    mean over test sets drawn from the spread model (the law)."""
    from verify.sim.population_spread import spread_population_columns

    model = RunConfig.build(d=200, mu_norm=4.0, rho=0.3, rho_spread=0.3).model
    q_signal = np.array([0.5, -0.2])
    six = spread_population_columns(model, 0.8, q_signal)
    three = spread_population_columns(model, 0.8, q_signal, nodes=3)
    for key in ("population_test_accuracy", "population_test_selects_relevant"):
        assert abs(six[key] - three[key]) <= max(six[f"{key}_error"], 1e-4), key
    base = spread_population_columns(model.replace(rho_spread=0.0), 0.8, q_signal)
    assert six["population_test_selects_relevant"] != base["population_test_selects_relevant"]


def test_ffn_outputs_and_losses_are_the_readouts_and_the_runs_loss():
    config = RunConfig.build(**SMALL, readout="ffn", loss="exponential")
    data = generate(config)
    run = simulate(config, data=data)
    logits = run.train_logits[-1]
    s = np.exp(logits - logits.max(axis=-1, keepdims=True))
    s /= s.sum(axis=-1, keepdims=True)
    z = np.einsum("it,itd->id", s, data.X_train)
    outputs = data.readout(z)
    expected = np.mean(np.exp(-data.y_train * outputs))
    assert run.final["train_loss"] == pytest.approx(expected, rel=1e-12)
