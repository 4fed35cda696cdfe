"""The documentation's generated pages (``docs/_ext``), without building the site (CI
builds it with warnings as errors): the theory page has one section per derivation record,
its statement typeset and its links; the notebooks page takes every notebook; the conf
loads nothing from the network."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import sympy as sp

from theory.derivations import all_derivations

ROOT = Path(__file__).resolve().parents[2]


def extension(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "docs" / "_ext" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_theory_page_has_every_record_with_its_statement_and_links():
    page = extension("pages").theory_page()
    records = all_derivations()
    titles = re.findall(r"^## (\d+)\. (.+)$", page, re.MULTILINE)
    assert [title for _, title in titles] == [item.title for item in records]
    for item in records:
        assert f"$$\n{sp.latex(item.statement)}\n$$" in page
        if item.twin:
            assert f"{{py:obj}}`{item.twin}`" in page
        if item.test:
            assert f"`{item.test}`" in page
    assert page.startswith(f"{len(records)} records by kind of proof")


def test_the_docs_list_their_pages_and_every_notebook():
    index = (ROOT / "docs" / "index.rst").read_text(encoding="utf-8")
    pages = "getting-started theory notebooks ledger columns speed layout api".split()
    for page in pages:
        assert f"\n   {page}\n" in index, page
        assert list((ROOT / "docs").glob(f"{page}.*")), page
    assert "_generated/notebooks/*" in (ROOT / "docs" / "notebooks.md").read_text()
    assert extension("notebooks").NOTEBOOKS == ROOT / "notebooks"


def test_the_docs_build_loads_nothing_from_the_network():
    conf = (ROOT / "docs" / "conf.py").read_text(encoding="utf-8")
    assert "intersphinx" not in conf
    assert 'nb_execution_mode = "off"' in conf  # the notebooks arrive executed
