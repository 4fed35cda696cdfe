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


def test_a_git_repository_around_an_installed_copy_lends_no_commit(tmp_path):
    """site-packages inside a git checkout (an interpreter installed from one) is not this
    package's source tree: its commit is not recorded; this package's tree's is."""
    import subprocess

    from verify.output.provenance import source_commit

    def git(*arguments: str) -> None:
        subprocess.run(["git", "-C", str(tmp_path), *arguments], check=True, capture_output=True)

    git("init", "-q")
    (tmp_path / "file").write_text("x", encoding="utf-8")
    git("add", "file")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "m")
    assert source_commit(tmp_path) == {"commit": None, "dirty": None}
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "benign-attention"\nversion = "9.9"\n', encoding="utf-8"
    )
    found = source_commit(tmp_path)
    assert len(found["commit"]) == 40 and found["dirty"] is False
