"""The check report: a console table, ``report.md`` and ``report.json`` (written atomically)."""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from verify.checks.suite import CheckResult
from verify.output.files import atomic_write_json, atomic_write_text
from verify.output.provenance import provenance

COLUMNS = ("check", "paper reference", "predicted", "measured", "verdict")


def _rows(results: Sequence[CheckResult]) -> list[tuple[str, ...]]:
    return [(r.name, r.reference, r.predicted, r.measured, r.verdict.upper()) for r in results]


#: Console column widths (sum + separators = 120 characters).
CONSOLE_WIDTHS = (34, 22, 18, 32, 6)


def console_table(results: Sequence[CheckResult], widths: Sequence[int] = CONSOLE_WIDTHS) -> str:
    """The results as a table that fits a 120-column terminal: long cells wrap onto
    continuation lines, nothing is cut."""

    def line(cells: Sequence[str]) -> list[str]:
        wrapped = [
            textwrap.wrap(cell, width) or [""] for cell, width in zip(cells, widths, strict=True)
        ]
        height = max(len(parts) for parts in wrapped)
        return [
            "  ".join(
                (parts[k] if k < len(parts) else "").ljust(width)
                for parts, width in zip(wrapped, widths, strict=True)
            ).rstrip()
            for k in range(height)
        ]

    out = line(COLUMNS) + ["  ".join("-" * width for width in widths)]
    for row in _rows(results):
        out += line(row)
    passed = sum(r.verdict == "pass" for r in results)
    out.append(f"\n{passed} passed, {len(results) - passed} failed")
    return "\n".join(out)


def markdown(results: Sequence[CheckResult], meta: dict[str, Any]) -> str:
    def cell(text: str) -> str:
        return text.replace("|", "\\|")

    lines = [
        "# Verification report",
        "",
        f"Package version {meta['provenance']['package_version']}; mode: {meta['mode']}; "
        f"seeds {meta['seeds']}; wall time {meta['wall_seconds']:.1f} s.",
        "",
        "Every prediction is this package's own reconstruction of the paper result named "
        "(the paper's exact statements are not available). A failing check is a "
        "documented disagreement between that reconstruction and the simulation.",
        "",
        "| check | paper reference | predicted | measured | tolerance | verdict |",
        "|---|---|---|---|---|---|",
    ]
    for r in results:
        lines.append(
            "| "
            + " | ".join(
                cell(v)
                for v in (
                    r.name,
                    r.reference,
                    r.predicted,
                    r.measured,
                    r.tolerance,
                    f"**{r.verdict.upper()}**",
                )
            )
            + " |"
        )
    lines += ["", "## Notes", ""]
    lines += [f"- **{r.name}**: {r.note}" for r in results if r.note]
    passed = sum(r.verdict == "pass" for r in results)
    lines += ["", f"{passed} passed, {len(results) - passed} failed.", ""]
    return "\n".join(lines)


def write_report(results: Sequence[CheckResult], out_dir: str | Path, meta: dict[str, Any]) -> None:
    out = Path(out_dir)
    meta = {**meta, "provenance": provenance()}
    atomic_write_text(out / "report.md", markdown(results, meta))
    atomic_write_json(out / "report.json", {**meta, "checks": [r.as_dict() for r in results]})
