"""The check report: a console table, ``report.md``, ``report.json`` and ``report.html``
(written atomically; the HTML page is :mod:`verify.checks.report_html`), each with the
checks in three groups: agreements, disagreements as registered, and the unexpected (a new
failure, or a registered disagreement that now agrees). A one-sided check's row says what
it tests (a threshold, a bound and its direction); an interval is shown clipped to the
estimate's possible range, and says so."""

from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from verify.checks.registry import CheckResult
from verify.checks.report_cells import (
    grouped,
    measured_cell,
    number,
    predicted_cell,
    summary_line,
    tolerance_cell,
)
from verify.checks.report_html import html
from verify.output.files import atomic_write_json, atomic_write_text
from verify.output.provenance import provenance

COLUMNS = ("check", "paper", "predicted", "measured [95% CI]", "tolerance", "verdict")
#: Console column widths (sum + separators = 120 characters).
CONSOLE_WIDTHS = (30, 14, 15, 27, 10, 14)


def cells(result: CheckResult) -> tuple[str, ...]:
    m = result.measurement
    return (
        result.name,
        str(result.check.paper),
        predicted_cell(m),
        measured_cell(m),
        tolerance_cell(m),
        result.verdict.value,
    )


def console_table(results: Sequence[CheckResult], widths: Sequence[int] = CONSOLE_WIDTHS) -> str:
    """The results in three groups, fitting a 120-column terminal (long cells wrap); the
    summary line is the caller's to print, once, last."""

    def line(row: Sequence[str]) -> list[str]:
        wrapped = [
            textwrap.wrap(cell, width) or [""] for cell, width in zip(row, widths, strict=True)
        ]
        height = max(len(parts) for parts in wrapped)
        return [
            "  ".join(
                (parts[k] if k < len(parts) else "").ljust(width)
                for parts, width in zip(wrapped, widths, strict=True)
            ).rstrip()
            for k in range(height)
        ]

    out: list[str] = []
    for title, members in grouped(results):
        if not members:
            continue
        out += [
            "",
            f"{title} ({len(members)})",
            *line(COLUMNS),
            "  ".join("-" * width for width in widths),
        ]
        for result in members:
            out += line(cells(result))
    return "\n".join(out)


def mutation_table(rows: Sequence[dict[str, Any]]) -> str:
    """Each check on its wrong inputs: the prediction it must accept (the measured value),
    the wrong one it must reject, and whether an untrained simulation is rejected."""
    from verify.checks.suite import mutations_ok

    head = ("check", "accepts", "rejects wrong claim", "rejects untrained", "fails on wrong")
    widths = (52, 16, 22, 18, 14)
    out = [
        "",
        "Mutations: each check on wrong inputs",
        "  ".join(h.ljust(w) for h, w in zip(head, widths, strict=True)).rstrip(),
        "  ".join("-" * w for w in widths),
    ]
    for row in rows:
        untrained = (
            ("yes" if row["untrained_rejected"] else "NO")
            if row["untrained_applies"]
            else "n/a (conditional)"
        )
        cells = (
            row["name"][: widths[0]],
            f"{number(row['right_claim'])} {'yes' if row['accepted'] else 'NO'}",
            f"{number(row['wrong_claim'])} {'yes' if row['rejected'] else 'NO'}",
            untrained,
            "yes" if mutations_ok(row) else "NO",
        )
        out.append("  ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)).rstrip())
    return "\n".join(out)


def markdown_row(result: CheckResult) -> str:
    """One check as a row of the Markdown table."""
    m = result.measurement
    row = (
        *cells(result)[:2],
        result.check.horizon,
        predicted_cell(m),
        measured_cell(m),
        m.samples,
        "n/a" if m.at_least else number(m.model_error),
        tolerance_cell(m),
        m.estimator,
        f"**{result.verdict.value}**",
    )
    return "| " + " | ".join(str(v).replace("|", "\\|").replace("\n", " ") for v in row) + " |"


def markdown_note(result: CheckResult) -> str:
    """A check's registered disagreement (with this run's numbers) and its detail, or
    nothing."""
    parts = (
        result.reason and f"registered disagreement: {result.reason}",
        result.measurement.detail,
    )
    text = "; ".join(filter(None, parts))
    return text and f"- **{result.name}**: {text}"


def markdown(results: Sequence[CheckResult], meta: dict[str, Any]) -> str:
    lines = [
        "# Verification report",
        "",
        f"Package version {meta['provenance']['package_version']} (commit "
        f"{meta['provenance'].get('commit')}); mode: {meta['mode']}; wall time "
        f"{meta['wall_seconds']:.1f} s.",
        "",
        "Every prediction is this package's own reconstruction of the paper result "
        "named (the paper's exact statements are not available). Every check is "
        "registered before the run as an expected agreement or an expected "
        "disagreement with its reason; tolerances are the prediction's stated model "
        "error plus the 95% interval of the estimate.",
        "",
    ]
    for title, members in grouped(results):
        lines += [f"## {title} ({len(members)})", ""]
        if not members:
            lines += ["None.", ""]
            continue
        lines += [
            "| check | paper | horizon | predicted | measured [95% CI] | samples | "
            "model error | tolerance | estimator | verdict |",
            "|---|---|---|---|---|---|---|---|---|---|",
            *(markdown_row(r) for r in members),
            "",
            *filter(None, (markdown_note(r) for r in members)),
            "",
        ]
    from verify.checks.catalogue import SPECS

    lines += ["## Checks left out", ""]
    lines += [f"- **{spec.title}**: {spec.dropped}" for spec in SPECS if spec.dropped]
    lines += ["", summary_line(results), ""]
    return "\n".join(lines)


def write_report(
    results: Sequence[CheckResult],
    out_dir: str | Path,
    meta: dict[str, Any],
    ledger: Mapping[str, Any] | None = None,
    figures: Sequence[tuple[str, bytes]] = (),
) -> None:
    """``report.md``, ``report.json`` and ``report.html`` (with the claim ledger on top when
    given, and the experiments' ``figures``, each a caption and PNG bytes)."""
    out = Path(out_dir)
    meta = {**meta, "provenance": provenance()}
    atomic_write_text(out / "report.md", markdown(results, meta))
    atomic_write_json(
        out / "report.json",
        {
            **meta,
            "summary": summary_line(results),
            "unexpected": sum(r.verdict.unexpected for r in results),
            "checks": [r.as_dict() for r in results],
        },
    )
    atomic_write_text(out / "report.html", html(results, meta, ledger, figures))


__all__ = ["console_table", "mutation_table", "markdown", "write_report", "summary_line", "grouped"]
