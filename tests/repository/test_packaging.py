"""The package is citable and versioned, and its runtime needs no test tool: CITATION.cff
holds the Citation File Format's required fields, the package's version and the paper as
its reference (the same paper as the README's BibTeX); the changelog's newest entry is the
version; ``verify --version`` prints it with the git commit; Hypothesis is a test
dependency only. (``.ci/run`` also validates CITATION.cff against the format's schema with
``cffconvert``.)"""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

import pytest

yaml = pytest.importorskip("yaml", reason="the CITATION.cff test needs PyYAML (test extra)")

ROOT = Path(__file__).resolve().parents[2]
PAPER_TITLE = "Benign Overfitting in Token Selection of Attention Mechanism"
ARXIV = "2409.17625"


def project() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def citation() -> dict:
    return yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))


def test_citation_has_the_required_fields_and_the_package_version():
    cff = citation()
    assert cff["cff-version"] == "1.2.0"
    assert cff["type"] == "software"
    for key in ("message", "title", "authors"):
        assert cff[key], key
    assert all("name" in a or "family-names" in a for a in cff["authors"])
    assert str(cff["version"]) == project()["version"]
    assert cff["license"] == project()["license"]["text"]


def test_citation_references_the_paper_as_the_readme_cites_it():
    (paper,) = [r for r in citation()["references"] if r["title"] == PAPER_TITLE]
    assert paper["type"] == "conference-paper" and paper["year"] == 2025
    assert [a["family-names"] for a in paper["authors"]] == ["Sakamoto", "Sato"]
    assert ARXIV in paper["url"] and ARXIV in paper["doi"]
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    bibtex = readme.split("```bibtex", 1)[1].split("```", 1)[0]
    assert f"title         = {{{PAPER_TITLE}}}" in bibtex
    assert "author        = {Sakamoto, Keitaro and Sato, Issei}" in bibtex
    assert f"eprint        = {{{ARXIV}}}" in bibtex


def test_changelog_starts_at_this_version():
    text = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    first = re.search(r"^## \[([^\]]+)\]", text, re.MULTILINE)
    assert first is not None and first.group(1) == project()["version"]


def test_version_flag_prints_the_version_and_the_commit(capsys):
    from verify.cli import main

    assert main(["--version"]) == 0
    line = capsys.readouterr().out.strip()
    assert re.fullmatch(
        rf"benign-attention {re.escape(project()['version'])} "
        r"\(commit ([0-9a-f]{40}( with uncommitted changes)?|no git checkout)\)",
        line,
    ), line


def requirement_names(requirements: list[str]) -> set[str]:
    return {re.split(r"[<>=!\[; ]", r, maxsplit=1)[0].lower() for r in requirements}


def test_hypothesis_is_a_test_dependency_only():
    assert "hypothesis" not in requirement_names(project()["dependencies"])
    assert "hypothesis" in requirement_names(project()["optional-dependencies"]["test"])
    importers = []
    for path in [*(ROOT / "theory").rglob("*.py"), *(ROOT / "verify").rglob("*.py")]:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else []
            )
            if any(name.split(".")[0] == "hypothesis" for name in names):
                importers.append(str(path.relative_to(ROOT)))
    assert importers == []
