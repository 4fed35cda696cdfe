"""Sweep workers: module-level functions ``point -> dict`` (picklable by reference).

Every point carries ``point["config"]``, a :meth:`RunConfig.to_dict`; the worker
rebuilds the configuration (validated again), runs :func:`verify.sim.simulate.simulate`
and returns plain JSON-able numbers.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from verify.sim.config import RunConfig
from verify.sim.data import GROUP_NAMES, RELEVANT, generate
from verify.sim.engines.registry import engine_traits
from verify.sim.simulate import RunResult, simulate


def config_of(point: Mapping[str, Any]) -> RunConfig:
    return RunConfig.from_dict(dict(point["config"]))


def final_state(point: Mapping[str, Any]) -> dict[str, Any]:
    """The last logged row of the run (final train/test loss and accuracy, fitted
    fractions, gaps, ...) plus status and wall time. The noise is drawn once per
    (d, n, T, seed) in a worker and reused across ||mu|| (the same numbers as a fresh draw);
    the d-free engines sample their statistics in law from the seed."""
    config = config_of(point)
    tokens = engine_traits(config.solver.engine).tokens
    data = generate(config, reuse_noise=True) if tokens else None
    result = simulate(config, data=data)
    out = dict(result.final)
    out.update(status=result.status.value, message=result.message, run_seconds=result.wall_seconds)
    return out


def per_sample_saturation(result: RunResult) -> np.ndarray:
    r""":math:`s_R(1 - s_R)` per training sample and log point, shape (n, log points),
    with :math:`1 - s_R` summed over the other tokens (no cancellation)."""
    relevant = result.data.groups == RELEVANT
    probabilities = np.stack(result.train_probabilities)  # (L, n, T)
    s_relevant = probabilities[..., relevant].sum(axis=-1)
    rest = probabilities[..., ~relevant].sum(axis=-1)
    return (s_relevant * rest).T


def per_sample_margins(result: RunResult) -> np.ndarray:
    r"""Training margins :math:`y_i f_i = y_i \sum_t s_{i,t}\gamma_{i,t}`, shape (n, L)."""
    probabilities = np.stack(result.train_probabilities)
    outputs = (probabilities * result.data.train_scores[None]).sum(axis=-1)
    return (outputs * result.data.y_train[None]).T


def selection_projection(tokens: np.ndarray, logits: np.ndarray, mu_norm: float) -> dict[str, list]:
    r"""For each sequence, the token of largest attention logit (the selected token)
    and its projections :math:`\langle x, \mu_{\pm1}\rangle / \|\mu\|^2` (the signals are
    :math:`\|\mu\| e_{1,2}`, so these are :math:`x_1/\|\mu\|` and :math:`x_2/\|\mu\|`)."""
    selected = np.argmax(logits, axis=-1)
    chosen = tokens[np.arange(tokens.shape[0]), selected]
    return {
        "selected": selected.tolist(),
        "proj_plus": (chosen[:, 0] / mu_norm).tolist(),
        "proj_minus": (chosen[:, 1] / mu_norm).tolist(),
    }


def trajectory(point: Mapping[str, Any]) -> dict[str, Any]:
    """Everything Figures 1-5 need from one run: the history, the attention of the
    first clean and the first noisy sample over time, per-sample :math:`s_R(1-s_R)`, and
    the selected tokens' projections at the end of training (train and test)."""
    config = config_of(point)
    result = simulate(config)
    data = result.data
    noisy = data.noisy
    clean_sample = int(np.flatnonzero(~noisy)[0])
    noisy_sample = int(np.flatnonzero(noisy)[0]) if noisy.any() else None
    probabilities = np.stack(result.train_probabilities)
    test_logits = result.final_test_logits
    return {
        "summary": result.summary(),
        "steps": result.steps,
        "history": result.history.rows(),
        "groups": [GROUP_NAMES[g] for g in data.groups],
        "noisy": noisy.astype(int).tolist(),
        "y_train": data.y_train.tolist(),
        "y_clean": data.y_clean.tolist(),
        "y_test": data.y_test.tolist(),
        "clean_sample": clean_sample,
        "noisy_sample": noisy_sample,
        "attention_clean": probabilities[:, clean_sample].tolist(),
        "attention_noisy": (
            probabilities[:, noisy_sample].tolist() if noisy_sample is not None else []
        ),
        "saturation": per_sample_saturation(result).tolist(),
        "train_selection": selection_projection(
            data.X_train, result.train_logits[-1], config.model.mu_norm
        ),
        "test_selection": selection_projection(data.X_test, test_logits, config.model.mu_norm),
    }


#: History columns kept by :func:`long_trajectory`.
LONG_KEYS = (
    "step",
    "time",
    "train_loss",
    "train_accuracy",
    "test_loss",
    "test_accuracy",
    "clean_fitted",
    "noisy_fitted",
    "clean_gap_min",
    "clean_gap_mean",
    "noisy_gap_min",
    "noisy_gap_mean",
    "test_selects_relevant",
    "p_norm",
    "saturation_clean_mean",
    "saturation_noisy_mean",
)


def long_trajectory(point: Mapping[str, Any]) -> dict[str, Any]:
    """A (flow) run's history on its log-spaced points, plus per-sample training
    margins (to time when each noisy sample becomes fitted) and the group of the token
    each training sample selects at the end."""
    result = simulate(config_of(point))
    groups = result.data.groups
    selected = np.argmax(result.train_logits[-1], axis=-1)
    return {
        "summary": result.summary(),
        "steps": result.steps,
        "history": result.history.select(LONG_KEYS).rows(),
        "noisy": result.data.noisy.astype(int).tolist(),
        "margins": per_sample_margins(result).tolist(),
        "selected_group_final": [GROUP_NAMES[groups[t]] for t in selected],
    }


__all__ = [
    "final_state",
    "trajectory",
    "long_trajectory",
    "per_sample_saturation",
    "per_sample_margins",
    "selection_projection",
    "config_of",
    "LONG_KEYS",
]
