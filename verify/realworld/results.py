"""Tables, the report and the record of the real-world experiments, from every stored group.

:func:`verify.experiments.driver.run_experiment` writes them: tables as CSV (and Parquet
when available) under ``DIR/tables``, the report as ``DIR/tables/realworld_report.md``, the
record as ``DIR/realworld.json``. The tables:

* ``realworld_runs``: one row per run (protocol label, data set, n, eta, seed);
* ``realworld_summary``: mean and sd over seeds per cell, the paired changes against
  eta = 0 and the verdicts, final and early-stopped;
* ``realworld_history``: per run and evaluated epoch;
* ``realworld_protocols`` / ``realworld_protocols_early``: data set x n x eta with each
  protocol's change and verdict;
* ``realworld_factors``: the one-factor-at-a-time rows;
* ``realworld_not_run``: the cells of the whole grid not (fully) run, with their predicted
  cost.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from verify.experiments.driver import ExperimentOutput
from verify.realworld.report import SUBSTITUTES, report_markdown
from verify.realworld.settings import GridSettings
from verify.realworld.table import (
    history_rows,
    protocol_table,
    run_rows,
    summary_rows,
)
from verify.realworld.variants import FACTORS, GRID_VARIANTS, TARGET, variant
from verify.runtime.store import ResultStore, canonical

PROTOCOL_COLUMNS = GRID_VARIANTS


def candidate_labels() -> list[str]:
    return list(GRID_VARIANTS) + [f"{base}+{factor}" for base in TARGET for factor in FACTORS]


def label_of(protocol: dict[str, Any]) -> str:
    """The first variant label whose protocol is ``protocol``; otherwise the closest named
    protocol with the differing fields, e.g. ``authors[epochs=5]``."""
    recorded = canonical(protocol)
    for label in candidate_labels():
        if canonical(variant(label).to_dict()) == recorded:
            return label
    differences = {}
    for name in TARGET:
        named = canonical(variant(name).to_dict())
        differences[name] = {k: v for k, v in recorded.items() if named.get(k) != v}
    name = min(differences, key=lambda k: len(differences[k]))
    return name + "[" + ",".join(f"{k}={v}" for k, v in sorted(differences[name].items())) + "]"


def factor_rows(summary: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per noisy cell of a base protocol and factor that were both run: the base's and the
    changed protocol's paired accuracy change and verdict, and the target protocol's where it
    was run. (The changed protocol may carry another label: ``fullbatch-adam+optimiser`` is
    ``gd``.)"""
    cells = {(e["protocol"], e["dataset"], e["n"], e["eta"]): e for e in summary}
    changed_label = {
        (base, factor): label_of(variant(f"{base}+{factor}").to_dict())
        for base in TARGET
        for factor in FACTORS
    }
    rows = []
    for (base, dataset, n, eta), reference in sorted(cells.items()):
        for factor in FACTORS if base in TARGET and eta > 0 else ():
            entry = cells.get((changed_label[base, factor], dataset, n, eta))
            if entry is not None and changed_label[base, factor] != base:
                rows.append(_factor_row(reference, entry, cells, base, factor))
    return rows


def _factor_row(reference: dict, entry: dict, cells: dict, base: str, factor: str) -> dict:
    dataset, n, eta = entry["dataset"], entry["n"], entry["eta"]
    target = cells.get((TARGET[base], dataset, n, eta), {})
    row = {
        "dataset": dataset,
        "n": n,
        "eta": eta,
        "base": base,
        "factor": factor,
        "changed_protocol": entry["protocol"],
        "target": TARGET[base],
    }
    for readout in ("final", "early"):
        for prefix, source in (("base", reference), ("changed", entry), ("target", target)):
            row[f"{prefix}_{readout}_change"] = source.get(f"{readout}_change")
            row[f"{prefix}_{readout}_verdict"] = source.get(f"{readout}_verdict", "not run")
    row["changed_test_accuracy"] = entry["test_accuracy"]
    row["changed_noisy_fitted"] = entry["noisy_fitted"]
    return row


def not_run_rows(summary: list[dict[str, Any]], estimate: dict[str, Any] | None) -> list[dict]:
    """The cells of the whole grid (every grid protocol x data set x n x eta, 3 seeds) with
    fewer seeds run than asked, each with the predicted one-thread cost of its missing seeds
    (the group's predicted time over its etas and seeds) when a cost estimate exists."""
    settings = GridSettings()
    seeds_run = {(e["protocol"], e["dataset"], e["n"], e["eta"]): e["seeds"] for e in summary}
    predicted = {
        (r["protocol"], r["dataset"], r["n"]): r["predicted_seconds"]
        for r in (estimate or {}).get("groups", [])
    }
    rows = []
    for group in settings.groups():
        label = label_of(group.protocol.to_dict())
        for eta in group.etas:
            done = seeds_run.get((label, group.dataset, group.n, eta), 0)
            if done < settings.seeds:
                group_seconds = predicted.get((label, group.dataset, group.n), float("nan"))
                rows.append(
                    {
                        "protocol": label,
                        "dataset": group.dataset,
                        "n": group.n,
                        "eta": eta,
                        "seeds_run": done,
                        "seeds_asked": settings.seeds,
                        "predicted_hours": group_seconds
                        * (settings.seeds - done)
                        / (len(group.etas) * settings.seeds * 3600),
                    }
                )
    return rows


def span_seconds(records: list[dict[str, Any]]) -> float:
    """Wall time from the first group's start to the last group's end, from the records."""
    if not records:
        return 0.0
    ends = [datetime.fromisoformat(r["finished_at"]).timestamp() for r in records]
    starts = [end - r["wall_seconds"] for end, r in zip(ends, records, strict=True)]
    return max(ends) - min(starts)


def results_output(store: ResultStore, call: dict[str, Any]) -> ExperimentOutput:
    """Tables, the report and the record fields, from every group stored in ``store``
    (``call``: what this call asked for and did)."""
    from verify.realworld.protocol import library_versions

    records = [store.load(key) for key in sorted(store.keys())]
    labels = {r["key"]: label_of(r["config"]["protocol"]) for r in records}
    runs = run_rows(records, labels)
    summary = summary_rows(runs)
    tables = {
        "realworld_runs": runs,
        "realworld_summary": summary,
        "realworld_history": history_rows(records, labels),
    }
    for readout, suffix in (("final", ""), ("early", "_early")):
        tables[f"realworld_protocols{suffix}"] = protocol_table(summary, PROTOCOL_COLUMNS, readout)
    factors = factor_rows(summary)
    if factors:
        tables["realworld_factors"] = factors
    estimate_path = store.directory.parent / "cost_estimate_table.json"
    estimate = json.loads(estimate_path.read_text()) if estimate_path.is_file() else None
    tables["realworld_not_run"] = not_run_rows(summary, estimate)
    record = {
        **call,
        "groups": len(records),
        "runs": len(runs),
        "grid_span_seconds": span_seconds(records),
        "compute_seconds_summed_over_groups": sum(r["wall_seconds"] for r in records),
        "group_seconds": [
            {
                "protocol": labels[r["key"]],
                "dataset": r["config"]["dataset"],
                "n": r["config"]["n"],
                "members": len(r["result"]["members"]),
                "seconds": r["wall_seconds"],
                "commit": r["provenance"].get("commit"),
            }
            for r in records
        ],
        "substitutes": SUBSTITUTES,
        "libraries": library_versions(),
    }
    return ExperimentOutput(
        tables=tables,
        markdown={
            "realworld_report": report_markdown(
                summary, factors, record, tables["realworld_not_run"]
            )
        },
        record=record,
    )
