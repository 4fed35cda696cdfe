"""``report.html``: the report a researcher reads first, in one self-contained file.

On top the claim ledger (each claim of the paper and the rebuttal, its status and what
decides it); then every check with its prediction and its measurement drawn (inline SVG:
:mod:`verify.checks.report_svg`); the registered disagreements with their mechanisms and
the numbers this run filled in; the experiments' figures the ledger rests on (inline PNG);
and the provenance. Nothing is fetched: no script, no stylesheet or image from elsewhere.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping, Sequence
from html import escape
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
from verify.checks.report_svg import interval_svg

STYLE = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 2em auto; max-width: 1100px; color: #222; }
table { border-collapse: collapse; width: 100%; margin: 0.5em 0 1.5em; }
th, td { border-bottom: 1px solid #ddd; padding: 4px 6px; text-align: left; vertical-align: top; }
th { background: #f3f3f3; }
.status { font-weight: 600; white-space: nowrap; }
.holds { color: #1b7f3b; } .holds-corrected { color: #8a6d00; } .contradicted { color: #b3261e; }
.unexpected { color: #fff; background: #c0162b; padding: 0 4px; }
.defined, .not-testable, .not-run { color: #555; }
figure.check { margin: 0.6em 0 1.2em; border-left: 4px solid #ddd; padding-left: 10px; }
figure.check figcaption { font-size: 13px; }
figure.experiment img { max-width: 100%; border: 1px solid #ddd; }
code { font-size: 12px; }
"""


def e(text: Any) -> str:
    return escape(str(text))


def ledger_section(ledger: Mapping[str, Any]) -> str:
    """The claim ledger: counts, then one row a claim."""
    labels = {s["key"]: s["label"] for s in ledger["statuses"]}
    counts = "; ".join(f"{n} {labels[k]}" for k, n in ledger["counts"].items() if n)
    rows = []
    for claim in ledger["claims"]:
        checks = ", ".join(
            f'<a href="#check-{e(c["id"])}">{e(c["id"])}</a>' if c["verdict"] else e(c["id"])
            for c in claim["checks"]
        )
        results = "; ".join(e(r["experiment"]) for r in claim["results"])
        why = "<br>".join(e(w) for w in claim["why"][:2])
        rows.append(
            f'<tr id="claim-{e(claim["id"])}"><td><code>{e(claim["id"])}</code><br>'
            f"{e(claim['ref'])}</td>"
            f'<td class="status {e(claim["status"])}">{e(claim["status_label"])}</td>'
            f"<td>{why}</td><td>{checks}{'<br>' if checks and results else ''}{results}</td></tr>"
        )
    return (
        '<section id="ledger"><h2>The paper\'s claims</h2>'
        f"<p>{len(ledger['claims'])} claims: {e(counts)}. Check verdicts: "
        f"{e(ledger['verdicts_from'])}. The full ledger, with every file's SHA-256 and the "
        "command that regenerates it, is in <code>ledger.md</code> and "
        "<code>ledger.json</code>.</p>"
        '<table id="ledger-table"><thead><tr><th>claim</th><th>status</th><th>why</th>'
        "<th>decided by</th></tr></thead><tbody>" + "".join(rows) + "</tbody></table></section>"
    )


def optional_fields(result: CheckResult) -> str:
    """Where the tolerance came from and the check's power, where recorded, as
    ``; label: value``."""
    found = []
    if result.measurement.tolerance_source:
        found.append(f"; tolerance from: {e(result.measurement.tolerance_source)}")
    if result.power is not None:
        found.append(f"; power: {e(result.power.describe())}")
    return "".join(found)


def check_figure(result: CheckResult) -> str:
    """One check: its drawing and what it compares."""
    m = result.measurement
    caption = (
        f"<strong>{e(result.name)}</strong> <code>{e(result.check.id)}</code> &mdash; "
        f"{e(result.check.paper)}; {e(result.check.horizon)}<br>"
        f"predicted: {e(predicted_cell(m))}; measured: {e(measured_cell(m))}; "
        f"tolerance: {e(tolerance_cell(m))}{optional_fields(result)}; {e(m.samples)}; "
        f"<strong>{e(result.verdict.value)}</strong><br><small>{e(m.estimator)}</small>"
    )
    return (
        f'<figure class="check" id="check-{e(result.check.id)}">{interval_svg(result)}'
        f"<figcaption>{caption}</figcaption></figure>"
    )


def checks_section(results: Sequence[CheckResult]) -> str:
    parts = [
        '<section id="checks"><h2>Checks</h2><p>Each check: the prediction (a diamond with '
        "its model-error band, or a dashed one-sided bound with its direction), the "
        "estimate (a dot) and its 95% interval, coloured by verdict.</p>"
    ]
    for title, members in grouped(results):
        parts.append(f"<h3>{e(title)} ({len(members)})</h3>")
        parts += [check_figure(result) for result in members] or ["<p>None.</p>"]
    return "".join(parts) + "</section>"


def disagreements_section(results: Sequence[CheckResult]) -> str:
    """Each registered disagreement: its mechanism with this run's numbers."""
    items = []
    for result in results:
        if result.check.expected.agree:
            continue
        numbers = ", ".join(
            f"{e(k)} = {e(number(v) if isinstance(v, float) else v)}"
            for k, v in result.numbers.items()
        )
        items.append(
            f'<li><a href="#check-{e(result.check.id)}">{e(result.name)}</a> '
            f"(<em>{e(result.verdict.value)}</em>): {e(result.reason)}"
            + (f"<br><small>numbers: {numbers}</small>" if numbers else "")
            + "</li>"
        )
    body = "<ul>" + "".join(items) + "</ul>" if items else "<p>None in this run.</p>"
    return f'<section id="disagreements"><h2>Registered disagreements</h2>{body}</section>'


def figures_section(figures: Sequence[tuple[str, bytes]]) -> str:
    """The experiments' figures the ledger rests on, as inline PNG."""
    if not figures:
        return ""
    items = "".join(
        f'<figure class="experiment"><img alt="{e(caption)}" '
        f'src="data:image/png;base64,{base64.b64encode(png).decode("ascii")}">'
        f"<figcaption>{e(caption)}</figcaption></figure>"
        for caption, png in figures
    )
    return f'<section id="figures"><h2>Experiments\' figures</h2>{items}</section>'


def provenance_section(meta: Mapping[str, Any]) -> str:
    rows = "".join(
        f"<tr><th>{e(key)}</th><td><code>{e(value)}</code></td></tr>"
        for key, value in meta["provenance"].items()
    )
    return (
        f'<section id="provenance"><h2>Provenance</h2><p>mode: {e(meta["mode"])}; wall time '
        f"{meta['wall_seconds']:.1f} s.</p><table>{rows}</table></section>"
    )


def html(
    results: Sequence[CheckResult],
    meta: Mapping[str, Any],
    ledger: Mapping[str, Any] | None = None,
    figures: Sequence[tuple[str, bytes]] = (),
) -> str:
    """The whole page (see the module docstring)."""
    provenance = meta["provenance"]
    head = (
        f"<header><h1>Verification report</h1><p>{e(summary_line(results))}</p><p>Package "
        f"version {e(provenance.get('package_version'))}, commit "
        f"<code>{e(provenance.get('commit'))}</code>. Every prediction is this package's own "
        "reconstruction of the paper result it names; every check was registered before "
        "the run as an expected agreement or an expected disagreement with its reason.</p>"
        "</header>"
    )
    body = (
        head
        + (ledger_section(ledger) if ledger else "")
        + checks_section(results)
        + disagreements_section(results)
        + figures_section(figures)
        + provenance_section(meta)
    )
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        "<title>Verification report</title>"
        f"<style>{STYLE}</style></head><body>{body}</body></html>\n"
    )


__all__ = ["html", "ledger_section", "checks_section", "check_figure"]
