"""Sphinx configuration: the API reference, built from the docstrings, offline."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

project = "benign-attention"
author = "benign-attention developers"
extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.napoleon",
    "sphinx.ext.mathjax",
    "sphinx.ext.viewcode",
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
exclude_patterns = ["_build"]
templates_path: list[str] = []
html_theme = "alabaster"
html_static_path: list[str] = []
