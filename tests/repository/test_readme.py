"""The README stays true and short: a user guide whose test command is the one CI runs,
whose local links resolve and whose disagreements are the registry's; the module tree (one
line a module, each with the first sentence of its docstring) is the package's, kept on the
documentation's layout page."""

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
START, END = "<!-- module-tree -->", "<!-- /module-tree -->"
#: Where the module tree lives (moved from the README to keep the README a short guide).
TREE_PAGE = ROOT / "docs" / "layout.md"
#: The README is a guide, not the reference: past this it is growing into one again.
README_MAX_LINES = 300


def summary(path: Path) -> str:
    """The docstring's first sentence, on one line, without reStructuredText markup."""
    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    paragraph = " ".join(doc.strip().split("\n\n")[0].split())
    sentence = re.split(r"(?<=[a-z0-9)`])\. ", paragraph)[0].rstrip(".")
    sentence = re.sub(r":\w+:`~?([^`]*)`", r"\1", sentence)
    return sentence.replace("``", "")


def module_tree() -> str:
    lines = []
    for package in ("theory", "verify"):
        for path in sorted((ROOT / package).rglob("*.py")):
            name = path.relative_to(ROOT).as_posix()
            lines.append(f"{name:<34} {summary(path)}")
    return "\n".join(lines)


def test_layout_tree_lists_every_module_with_its_docstring():
    text = TREE_PAGE.read_text(encoding="utf-8")
    block = text.split(START, 1)[1].split(END, 1)[0].strip().strip("`").strip()
    expected = module_tree()
    assert block == expected, "docs/layout.md module tree is stale; it should read:\n" + expected


def test_readme_is_a_short_guide_that_points_to_the_layout():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= README_MAX_LINES
    assert "docs/layout.md" in text and START not in text


def test_readme_test_command_is_the_line_after_its_marker():
    """``.ci/run`` runs the first line after the marker that is neither a fence nor blank;
    it must be the full install-and-test command."""
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    after = lines[lines.index("<!-- test-command -->") + 1 :]
    command = next(line for line in after if line.strip() and not line.startswith("```"))
    assert command == (
        'pip install ".[test,realworld]" && python -m verify realworld fetch && python -m pytest -q'
    )


def local_links(path: Path) -> list[str]:
    """The relative link targets of a Markdown file (no URLs, no in-page anchors)."""
    targets = re.findall(r"\]\(([^)\s]+)\)", path.read_text(encoding="utf-8"))
    return [t.split("#")[0] for t in targets if not re.match(r"[a-z]+:|#", t)]


def test_readme_and_results_links_resolve():
    for page in (ROOT / "README.md", ROOT / "results" / "README.md"):
        missing = [t for t in local_links(page) if not (page.parent / t).exists()]
        assert missing == [], f"{page.relative_to(ROOT)} links to missing files: {missing}"


def test_at_most_six_modules_directly_in_verify():
    assert len(list((ROOT / "verify").glob("*.py"))) <= 6


def test_no_docstring_points_outside_the_repository():
    pattern = re.compile(
        r"\bspec 0\d|\bissue \d+\b|\bspec section|\bsection \d+(\.\d+)? of the spec", re.IGNORECASE
    )
    offenders = [
        str(path.relative_to(ROOT))
        for folder in ("theory", "verify", "tests", "benchmarks")
        for path in (ROOT / folder).rglob("*.py")
        if pattern.search(path.read_text(encoding="utf-8")) and path.name != "test_readme.py"
    ]
    assert offenders == []


def test_readme_lists_the_registered_disagreements_one_for_one():
    """The README's list is the registry's: id, display name and mechanism (no numbers;
    each run computes those into its report)."""
    from verify.checks.catalogue import Claims, disagreement_list
    from verify.checks.suite import FULL, predictions_for

    expected = disagreement_list(Claims(predictions_for(FULL)))
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = text.split("<!-- disagreements -->", 1)[1].split("<!-- /disagreements -->", 1)[0]
    assert block.strip() == expected, "README's disagreements are stale; they read:\n" + expected
