"""Write a run's results to a directory: config.json, summary.json, history.csv,
attention.csv, gaps.csv, each atomically."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from verify.output.files import atomic_write_csv, atomic_write_json
from verify.output.provenance import provenance
from verify.sim.data import GROUP_NAMES
from verify.sim.simulate import RunResult


def run_record(result: RunResult, data_source: str = "generated") -> dict[str, Any]:
    """Full configuration, seed, data source and versions."""
    return {"config": result.config.to_dict(), "seed": result.config.seed,
            "data_source": data_source, "provenance": provenance()}


def _attention_rows(result: RunResult):
    groups = [GROUP_NAMES[g] for g in result.data.groups]
    for split, arrays in (("train", result.train_probabilities),
                          ("test", result.test_probabilities)):
        for step, probabilities in zip(result.steps, arrays, strict=True):
            for sample, row in enumerate(probabilities):
                for token, probability in enumerate(row):
                    yield (step, split, sample, token, groups[token], probability)


def _gap_rows(result: RunResult):
    groups = [GROUP_NAMES[g] for g in result.data.groups]
    noisy = result.data.noisy
    for step, gaps in zip(result.steps, result.gaps, strict=True):
        for sample, row in enumerate(gaps):
            kind = "noisy" if noisy[sample] else "clean"
            for token, gap in enumerate(row):
                if not np.isnan(gap):
                    yield (step, sample, kind, token, groups[token], gap)


def write_run(result: RunResult, out_dir: str | Path, data_source: str = "generated") -> Path:
    """Write all result files of ``result`` into ``out_dir`` (created if needed)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    atomic_write_json(out / "config.json", run_record(result, data_source))
    atomic_write_json(out / "summary.json", result.summary())
    if result.history:
        header = list(result.history[0])
        atomic_write_csv(out / "history.csv", header,
                         ([row[key] for key in header] for row in result.history))
    atomic_write_csv(out / "attention.csv",
                     ["step", "split", "sample", "token", "group", "probability"],
                     _attention_rows(result))
    atomic_write_csv(out / "gaps.csv", ["step", "sample", "kind", "token", "group", "gap"],
                     _gap_rows(result))
    return out
