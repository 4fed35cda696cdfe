"""An encoder run's files: ``config.json``, ``summary.json``, ``history.csv``,
``attention.csv`` and the figures ``attention.png`` and ``accuracy.png``.

As for ``verify run``: each history row is appended to ``history.partial.csv`` (flushed)
while the run goes on, and when it ends (completed, interrupted or failed) every file is
written atomically and the partial file removed. ``attention.csv`` is tidy, one row per
log point and sequence: ``step, split, sample, noisy, p_cls, p_t0_R, ...`` with ``p_cls``
the [CLS] token's attention to itself and ``p_t<t>_<group>`` to data token t; training
sequences at every log point, then the first ``attention_test_samples`` test sequences.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from theory.foundation.data_model import GROUP_NAMES
from verify.encoder.train import EncoderResult
from verify.output.files import atomic_write_json, atomic_write_text, numeric_csv
from verify.output.provenance import provenance
from verify.sim.history import History
from verify.sim.run_files import PARTIAL_HISTORY, RunWriter

ENCODER_FILES = ("config.json", "summary.json", "history.csv", "attention.csv")


def encoder_record(result: EncoderResult) -> dict[str, Any]:
    """Configuration (run and encoder settings), seed, data source, test set, provenance."""
    return {
        "config": result.config.to_dict(),
        "seed": result.config.run.seed,
        "data_source": result.data.source,
        "test_set": result.summary()["test_set"],
        "provenance": provenance(),
    }


def attention_header(groups: np.ndarray) -> list[str]:
    tokens = [f"p_t{t}_{GROUP_NAMES[g]}" for t, g in enumerate(groups)]
    return ["step", "split", "sample", "noisy", "p_cls", *tokens]


def attention_table(result: EncoderResult) -> str:
    """The tidy attention table of the module docstring."""
    noisy = result.data.noisy.astype(int)
    blocks, prefixes = [], []
    for split, arrays in (("train", result.train_attention), ("test", result.test_attention)):
        for step, probabilities in zip(result.steps, arrays, strict=True):
            blocks.append(probabilities)
            flags = noisy if split == "train" else np.zeros(probabilities.shape[0], dtype=int)
            prefixes += [f"{step},{split},{i},{flags[i]}," for i in range(probabilities.shape[0])]
    header = attention_header(result.data.groups)
    values = np.concatenate(blocks) if blocks else np.zeros((0, len(header) - 4))
    return numeric_csv(header, prefixes, values)


def history_table(history: History) -> str:
    if not len(history):
        return ""
    return numeric_csv(list(history.names), [""] * len(history), history.values)


class EncoderWriter(RunWriter):
    """Streams the history into ``out`` and writes every file at the end (figures too,
    drawn from the written tables)."""

    def finish(self, result: EncoderResult, figures: bool = True) -> Path:  # type: ignore[override]
        self.close()
        atomic_write_json(self.out / "config.json", encoder_record(result))
        atomic_write_json(self.out / "summary.json", result.summary())
        atomic_write_text(self.out / "history.csv", history_table(result.history))
        atomic_write_text(self.out / "attention.csv", attention_table(result))
        (self.out / PARTIAL_HISTORY).unlink(missing_ok=True)
        if figures and len(result.history):
            from verify.encoder.figures import plot_run

            plot_run(self.out)
        return self.out


def write_encoder_run(result: EncoderResult, out: str | Path, figures: bool = True) -> Path:
    """Write all files of a finished ``result`` into ``out`` (created if needed)."""
    return EncoderWriter(out).finish(result, figures=figures)


__all__ = [
    "ENCODER_FILES",
    "EncoderWriter",
    "write_encoder_run",
    "encoder_record",
    "attention_table",
    "history_table",
]
