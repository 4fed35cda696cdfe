"""Tables, figures, ``realworld.json`` and the report, rebuilt from every stored group.

Tables (CSV, and Parquet when available) under ``DIR/tables``:

* ``realworld_runs``: one row per run (protocol label, data set, n, eta, seed);
* ``realworld_summary``: mean and sd over seeds per cell, the paired changes against
  eta = 0 and the verdicts, final and early-stopped;
* ``realworld_history``: per run and evaluated epoch;
* ``realworld_protocols`` / ``realworld_protocols_early``: data set x n x eta with each
  protocol's change and verdict;
* ``realworld_factors``: the one-factor-at-a-time rows.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

from verify.experiments.sweep import ResultStore, canonical
from verify.output.files import atomic_write_text
from verify.output.tables import write_experiment_record, write_table
from verify.realworld.table import (
    history_rows,
    protocol_table,
    run_rows,
    summary_rows,
)
from verify.realworld.variants import FACTORS, GRID_VARIANTS, TARGET, variant

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
    changed_label = {(base, factor): label_of(variant(f"{base}+{factor}").to_dict())
                     for base in TARGET for factor in FACTORS}
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
    row = {"dataset": dataset, "n": n, "eta": eta, "base": base, "factor": factor,
           "changed_protocol": entry["protocol"], "target": TARGET[base]}
    for readout in ("final", "early"):
        for prefix, source in (("base", reference), ("changed", entry), ("target", target)):
            row[f"{prefix}_{readout}_change"] = source.get(f"{readout}_change")
            row[f"{prefix}_{readout}_verdict"] = source.get(f"{readout}_verdict", "not run")
    row["changed_test_accuracy"] = entry["test_accuracy"]
    row["changed_noisy_fitted"] = entry["noisy_fitted"]
    return row


def span_seconds(records: list[dict[str, Any]]) -> float:
    """Wall time from the first group's start to the last group's end, from the records."""
    if not records:
        return 0.0
    ends = [datetime.fromisoformat(r["finished_at"]).timestamp() for r in records]
    starts = [end - r["wall_seconds"] for end, r in zip(ends, records, strict=True)]
    return max(ends) - min(starts)


def write_results(out: Path, call: dict[str, Any]) -> dict[str, Any]:
    from verify.realworld.figures import draw_realworld_figures
    from verify.realworld.protocol import library_versions
    from verify.realworld.report import SUBSTITUTES, report_markdown

    store = ResultStore(out / "runs")
    records = [store.load(key) for key in sorted(store.keys())]
    labels = {r["key"]: label_of(r["config"]["protocol"]) for r in records}
    runs = run_rows(records, labels)
    summary = summary_rows(runs)
    tables = out / "tables"
    written = (write_table(tables / "realworld_runs", runs)
               + write_table(tables / "realworld_summary", summary)
               + write_table(tables / "realworld_history", history_rows(records, labels)))
    for readout, suffix in (("final", ""), ("early", "_early")):
        written += write_table(tables / f"realworld_protocols{suffix}",
                               protocol_table(summary, PROTOCOL_COLUMNS, readout))
    factors = factor_rows(summary)
    if factors:
        written += write_table(tables / "realworld_factors", factors)
    record = {**call, "groups": len(records), "runs": len(runs),
              "grid_span_seconds": span_seconds(records),
              "compute_seconds_summed_over_groups": sum(r["wall_seconds"] for r in records),
              "group_seconds": [{"protocol": labels[r["key"]], "dataset": r["config"]["dataset"],
                                 "n": r["config"]["n"], "members": len(r["result"]["members"]),
                                 "seconds": r["wall_seconds"],
                                 "commit": r["provenance"].get("commit")} for r in records],
              "substitutes": SUBSTITUTES, "libraries": library_versions()}
    record = write_experiment_record(out, "realworld.json", record, written,
                                     draw_realworld_figures)
    atomic_write_text(out / "realworld_report.md", report_markdown(summary, factors, record))
    return record
