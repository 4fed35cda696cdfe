"""The NumPy sampler of the valid space (:mod:`verify.checks.sampler`): what it draws is
valid and of its target, the same seed draws the same configurations, a violation breaks
exactly its assumption, bad requests are refused before any draw, and drawing needs no
Hypothesis."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from theory.foundation.validation import InvalidParameter
from theory.stage1.predictions import stage1_predictions
from verify.checks.sampler import (
    ASSUMPTION_KEYS,
    TARGET_REGIME,
    TARGETS,
    Rejected,
    draw_valid_config,
    draw_violation,
    violate_one,
)
from verify.checks.space import assumption_status

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("target", TARGETS)
def test_every_target_draws_valid_configurations_of_its_regime(target):
    rng = np.random.default_rng(7)
    for _ in range(2):
        config = draw_valid_config(rng, target)
        assert all(assumption_status(config).values()), config.flat()
        regime = stage1_predictions(config.model, config.training).regime
        assert regime == TARGET_REGIME.get(target, regime), config.flat()
        if target == "paper":
            assert regime in ("benign", "not-overfitting")
            assert config.training.alpha == 5e-3


def test_the_same_seed_draws_the_same_configurations_and_another_seed_others():
    def draws(seed: int) -> list[dict]:
        rng = np.random.default_rng(seed)
        return [draw_valid_config(rng).flat() for _ in range(3)]

    assert draws(11) == draws(11)
    assert draws(11) != draws(12)


def test_a_balanced_draw_has_even_samples_and_flips():
    rng = np.random.default_rng(3)
    for target in ("benign", "harmful", "not-overfitting"):
        config = draw_valid_config(rng, target, balanced=True)
        flips = round(config.model.n * config.model.eta)
        assert config.model.n % 2 == 0 and flips % 2 == 0, config.flat()


@pytest.mark.parametrize("key", ASSUMPTION_KEYS)
def test_a_drawn_violation_breaks_exactly_its_assumption(key):
    config = draw_violation(np.random.default_rng(5), key)
    assert [k for k, holds in assumption_status(config).items() if not holds] == [key]


def test_violate_one_refuses_a_move_that_breaks_a_second_assumption():
    """A configuration that already fails A7 (the paper's benign preset): breaking A1 leaves
    two assumptions failing, which is not a single violation."""
    from verify.sim.config import preset

    with pytest.raises(Rejected, match="A1"):
        violate_one(preset("benign"), "A1")


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda rng: draw_valid_config(rng, "sideways"), "target"),
        (lambda rng: draw_valid_config(rng, "benign", attempts=0), "attempts"),
        (lambda rng: draw_violation(rng, "A9"), "key"),
    ],
)
def test_a_bad_request_names_the_parameter(call, name):
    with pytest.raises(InvalidParameter, match=f"^{name}="):
        call(np.random.default_rng(0))


def test_drawing_imports_no_hypothesis():
    code = (
        "import sys, numpy as np, verify\n"
        "verify.draw_valid_config(np.random.default_rng(0), 'benign')\n"
        "assert 'hypothesis' not in sys.modules, 'hypothesis imported'\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
