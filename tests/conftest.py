import os

import pytest
from hypothesis import settings

settings.register_profile("default", deadline=None, print_blob=True)
settings.register_profile("ci", deadline=None, print_blob=True, derandomize=True)
settings.load_profile("ci" if os.environ.get("CI") else "default")


@pytest.fixture(scope="session")
def quick_evidence():
    """The quick check's evidence (the benign preset's seeds), collected once per session
    for the verdict tests and the check command's test."""
    from verify.checks.suite import QUICK, collect

    return collect(QUICK)
