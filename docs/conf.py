"""Sphinx configuration: the user guide, the theory page, the notebooks with their outputs,
the ledger, the column dictionary and the API reference, built offline.

Generated at build time (``docs/_generated/``, never committed): the theory and ledger
pages (``_ext/pages.py``) and the executed notebooks (``_ext/notebooks.py``, quick mode).
Nothing is downloaded: MathJax is the only remote asset, loaded by the reader's browser.
"""

import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
sys.path.insert(0, str(DOCS.parent))
sys.path.insert(0, str(DOCS / "_ext"))

from verify.output.provenance import package_version  # noqa: E402

project = "benign-attention"
author = "The benign-attention authors"
release = package_version()
version = release
extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.napoleon",
    "sphinx.ext.mathjax",
    "sphinx.ext.viewcode",
    "myst_nb",
    "pages",
    "notebooks",
]
autosummary_generate = True  # every module's page, generated at build time (no stale lists)
autodoc_default_options = {
    "members": True,
    "undoc-members": False,
    "show-inheritance": True,
    "ignore-module-all": True,
}  # packages re-export: document once
autosummary_ignore_module_all = True
autodoc_member_order = "bysource"
autodoc_typehints = "description"
autodoc_mock_imports = ["torch", "transformers", "onnx", "onnxruntime", "safetensors", "tokenizers"]
napoleon_google_docstring = False
napoleon_numpy_docstring = True
nitpicky = False
# MyST (Markdown pages and notebooks): $...$ and $$...$$ maths, anchors for ## headings.
myst_enable_extensions = ["dollarmath", "amsmath"]
myst_heading_anchors = 2
# The notebooks arrive executed (_ext/notebooks.py); myst-nb renders them as they are.
nb_execution_mode = "off"
nb_merge_streams = True
exclude_patterns = ["_build", "_ext", "_generated/theory.md", "_generated/ledger.md"]
templates_path: list[str] = []
html_theme = "alabaster"
html_static_path: list[str] = []
html_theme_options = {"page_width": "1100px", "sidebar_width": "230px"}
