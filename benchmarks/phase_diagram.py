"""One phase-diagram column: its runs trained together on shared draws against the same
runs one by one.

A column is one d and one seed with the 39 values of ||mu|| of the paper's grid, 1000
GD steps each. Batched (what ``verify phase-diagram`` runs): W0 and the noise tokens
drawn once, their products with W0 formed once, every ||mu|| adding its signal in
O(N^2), the runs advanced two at a time on the shared part of their matrices by one
compiled loop and recorded at the last step. One by one (the baseline): each cell
draws its data, forms its reduced statistics (O(d^2 N)) and trains alone on the reduced
engine. Both record the same final population metrics; CPU seconds of each in this one
process, their ratio, and the largest difference of the final metrics.

    python benchmarks/phase_diagram.py [--d 2000] [--steps 1000]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from verify.experiments.phase_diagram import CELL_QUANTITIES, column_points, phase_column
from verify.experiments.settings import PhaseDiagramSettings
from verify.output.files import atomic_write_json
from verify.output.provenance import provenance
from verify.sim.simulate import simulate


def one_by_one(settings: PhaseDiagramSettings, d: int) -> list[dict[str, float]]:
    return [simulate(settings.config(d, mu, 0)).final for mu in settings.mu_values]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--d", type=int, default=2000)
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--out", default="benchmarks/results")
    args = parser.parse_args()
    settings = PhaseDiagramSettings(d_values=(args.d,), steps=args.steps)
    phase_column(column_points(PhaseDiagramSettings(d_values=(50,), steps=2))[0])  # imports
    started = time.process_time()
    together = phase_column(column_points(settings)[0])["cells"]
    batched = time.process_time() - started
    started = time.process_time()
    alone = one_by_one(settings, args.d)
    single = time.process_time() - started
    difference = max(
        abs(cell[key] - row[key])
        for cell, row in zip(together, alone, strict=True)
        for key in CELL_QUANTITIES
    )
    record = {
        "settings": settings.to_dict(),
        "provenance": provenance(),
        "cells": len(together),
        "batched_cpu_seconds": batched,
        "one_by_one_cpu_seconds": single,
        "ratio": single / batched,
        "largest_final_metric_difference": difference,
    }
    for key, value in record.items():
        if key not in ("settings", "provenance"):
            print(f"{key:34s} {value:.4g}")
    atomic_write_json(Path(args.out) / f"phase_column_d{args.d}.json", record)


if __name__ == "__main__":
    main()
