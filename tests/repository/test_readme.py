"""The README stays true: its module tree is the package's, one line a module, each with
the first line of the module's docstring; its test command is the one CI runs."""

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
START, END = "<!-- module-tree -->", "<!-- /module-tree -->"


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


def test_readme_tree_lists_every_module_with_its_docstring():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = text.split(START, 1)[1].split(END, 1)[0].strip().strip("`").strip()
    expected = module_tree()
    assert block == expected, "README module tree is stale; it should read:\n" + expected


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
