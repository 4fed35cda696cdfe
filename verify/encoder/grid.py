r"""The encoder's regimes on a (d, ||mu||) grid, against the bare model's at the same
settings and seeds.

Each point is one training run, either the encoder (every parameter trained,
:func:`verify.encoder.train.train_encoder`) or the bare one-layer attention model of the
paper (fixed head, :func:`verify.sim.simulate.simulate` with the reduced engine), on the
same data (same seed, same generator). Both are classified by the same mechanism rule
(:func:`verify.measures.regimes.classify_regime`): not overfitting when fewer than half of
the noisy training labels are fitted; otherwise benign when at least half of the test
sequences put their largest attention on the relevant token (the [CLS] row's argmax over
the T data tokens for the encoder), harmful when not. The points run through the
resumable sweep (:func:`verify.experiments.sweep.run_sweep`): a rerun with the same
store computes only what is missing.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from theory.foundation.validation import Integer, Options, Real, Validated, parameter
from theory.foundation.validation import Sequence as SequenceOf
from verify.encoder.config import EncoderConfig, EncoderSettings
from verify.sim.config import PRESETS, RunConfig

RESIDUALS = {"on": (True,), "off": (False,), "both": (True, False)}


@dataclass(frozen=True)
class GridSettings(Validated):
    """Which settings, seeds and architectures the grid trains."""

    points: str = parameter(
        "grid",
        Options(("grid", "paper")),
        "grid: every (d, ||mu||) pair of --d-values x --mu-values; paper: the paper's three "
        "settings (5000, 5), (2000, 20), (1000, 100)",
    )
    d_values: tuple[int, ...] = parameter(
        (500, 1000, 2000),
        SequenceOf(Integer(2, 100_000), unique=True),
        "token dimensions d (a run's cost grows faster than d; the paper's harmful setting "
        "d = 5000 is in --points paper)",
    )
    mu_values: tuple[float, ...] = parameter(
        (5.0, 20.0, 100.0), SequenceOf(Real(0.0, 1e6), unique=True), "signal norms ||mu||"
    )
    seeds: int = parameter(3, Integer(1, 100_000), "seeds 0..K-1 at every setting")
    residual: str = parameter(
        "on", Options(tuple(RESIDUALS)), "encoder with residual connections, without, or both"
    )
    steps: int = parameter(1000, Integer(1, 10**7), "GD steps of every run (both models)")
    mlp_dim: int = parameter(2000, Integer(1, 10**6), "the encoder's feed-forward width")

    def settings(self) -> list[tuple[int, float]]:
        """The (d, ||mu||) pairs: on a grid the paper's own settings last (a grid run after
        ``--points paper`` can reuse those runs from its store), then largest d first (the
        longest runs start first)."""
        paper = [(int(p["d"]), float(p["mu_norm"])) for p in PRESETS.values()]
        if self.points == "paper":
            return sorted(paper, key=lambda pair: (-pair[0], pair[1]))
        pairs = [(d, mu) for d in self.d_values for mu in self.mu_values]
        return sorted(pairs, key=lambda pair: (pair in paper, -pair[0], pair[1]))


def encoder_point(settings: GridSettings, d: int, mu: float, seed: int, residual: bool) -> dict:
    """A grid point training the encoder (the test set is evaluated at the end only)."""
    run = RunConfig.build(d=d, mu_norm=mu, seed=seed, steps=settings.steps)
    encoder = EncoderSettings(
        mlp_dim=settings.mlp_dim,
        residual=residual,
        log_every=max(1, settings.steps // 10),
        test_every=settings.steps,
    )
    return {"kind": "encoder", "config": EncoderConfig(run, encoder).to_dict()}


def bare_point(settings: GridSettings, d: int, mu: float, seed: int) -> dict:
    """A grid point training the bare model (reduced engine, final metrics only)."""
    run = RunConfig.build(
        d=d,
        mu_norm=mu,
        seed=seed,
        steps=settings.steps,
        engine="reduced",
        log_every=settings.steps,
        log_geometric=0,
        population="final",
    )
    return {"kind": "bare", "config": run.to_dict()}


def grid_points(settings: GridSettings) -> list[dict]:
    """Every run of the grid: the encoder at each residual choice, then the bare model."""
    points = []
    for d, mu in settings.settings():
        for seed in range(settings.seeds):
            for residual in RESIDUALS[settings.residual]:
                points.append(encoder_point(settings, d, mu, seed, residual))
            points.append(bare_point(settings, d, mu, seed))
    return points


def grid_point(point: Mapping[str, Any]) -> dict[str, Any]:
    """The sweep's worker: one run's final measurements (JSON-able)."""
    if point["kind"] == "bare":
        from verify.experiments.workers import final_state

        return final_state(point)
    from verify.encoder.diagnostics import diagnostics
    from verify.encoder.train import train_encoder

    config = EncoderConfig.from_dict(dict(point["config"]))
    result = train_encoder(config)
    out = result.summary()
    if result.parameters is not None and len(result.history):
        out.update(diagnostics(result.parameters, result.data, config.settings.residual))
    out["history"] = {
        key: column.tolist()
        for key, column in result.history.items()
        if key == "step" or key == "train_accuracy" or key.startswith("attention_")
    }
    return out


__all__ = ["GridSettings", "grid_points", "grid_point", "encoder_point", "bare_point", "RESIDUALS"]
