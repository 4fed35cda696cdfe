"""Records name the version of the code that ran: the source tree's, not an installed copy's."""

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_package_version_is_the_source_trees():
    from verify.output.provenance import package_version

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert package_version() == project["version"]


def test_source_version_reads_only_this_package(tmp_path):
    from verify.output.provenance import source_version

    assert source_version(tmp_path / "pyproject.toml") is None  # absent
    other = tmp_path / "pyproject.toml"
    other.write_text('[project]\nname = "other"\nversion = "9.9"\n', encoding="utf-8")
    assert source_version(other) is None
    other.write_text('[project]\nname = "benign-attention"\nversion = "9.9"\n', encoding="utf-8")
    assert source_version(other) == "9.9"


def test_library_versions_are_read_without_importing_the_library(monkeypatch):
    import sys

    import scipy

    from verify.output.provenance import library_version

    assert library_version("scipy") == scipy.__version__  # loaded: the module's own
    monkeypatch.delitem(sys.modules, "scipy")
    assert library_version("scipy") == scipy.__version__  # not loaded: the distribution's
    assert "scipy" not in sys.modules
