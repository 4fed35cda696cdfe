"""The check report: a console table, ``report.md`` and ``report.json`` (written atomically)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from verify.checks.suite import CheckResult
from verify.output.files import atomic_write_json, atomic_write_text
from verify.output.provenance import provenance

COLUMNS = ("check", "paper reference", "predicted", "measured", "verdict")


def _rows(results: Sequence[CheckResult]) -> list[tuple[str, ...]]:
    return [(r.name, r.reference, r.predicted, r.measured, r.verdict.upper()) for r in results]


def console_table(results: Sequence[CheckResult], max_width: int = 48) -> str:
    def clip(text: str) -> str:
        return text if len(text) <= max_width else text[: max_width - 1] + "~"

    rows = [tuple(clip(cell) for cell in row) for row in _rows(results)]
    widths = [max(len(COLUMNS[i]), *(len(row[i]) for row in rows)) for i in range(len(COLUMNS))]
    line = "  ".join(name.ljust(width) for name, width in zip(COLUMNS, widths, strict=True))
    out = [line, "  ".join("-" * width for width in widths)]
    out += ["  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True))
            for row in rows]
    passed = sum(r.verdict == "pass" for r in results)
    out.append(f"\n{passed} passed, {len(results) - passed} failed")
    return "\n".join(out)


def markdown(results: Sequence[CheckResult], meta: dict[str, Any]) -> str:
    def cell(text: str) -> str:
        return text.replace("|", "\\|")

    lines = ["# Verification report", "",
             f"Package version {meta['provenance']['package_version']}; mode: {meta['mode']}; "
             f"seeds {meta['seeds']}; wall time {meta['wall_seconds']:.1f} s.", "",
             "Every prediction is this package's own reconstruction of the paper result named "
             "(the paper's exact statements are not available). A failing check is a "
             "documented disagreement between that reconstruction and the simulation.", "",
             "| check | paper reference | predicted | measured | tolerance | verdict |",
             "|---|---|---|---|---|---|"]
    for r in results:
        lines.append("| " + " | ".join(cell(v) for v in (r.name, r.reference, r.predicted,
                                                           r.measured, r.tolerance,
                                                           f"**{r.verdict.upper()}**")) + " |")
    lines += ["", "## Notes", ""]
    lines += [f"- **{r.name}**: {r.note}" for r in results if r.note]
    passed = sum(r.verdict == "pass" for r in results)
    lines += ["", f"{passed} passed, {len(results) - passed} failed.", ""]
    return "\n".join(lines)


def write_report(results: Sequence[CheckResult], out_dir: str | Path,
                 meta: dict[str, Any]) -> None:
    out = Path(out_dir)
    meta = {**meta, "provenance": provenance()}
    atomic_write_text(out / "report.md", markdown(results, meta))
    atomic_write_json(out / "report.json", {**meta, "checks": [r.as_dict() for r in results]})
