import os

import pytest
from hypothesis import settings

# The suite is reproducible: Hypothesis draws a fixed sequence (derandomize). To explore
# new draws, run with HYPOTHESIS_PROFILE=explore.
settings.register_profile("ci", deadline=None, print_blob=True, derandomize=True)
settings.register_profile("explore", deadline=None, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture(scope="session")
def quick_evidence():
    """The quick check's evidence (the benign preset's seeds), collected once per session
    for the verdict tests and the check command's test."""
    from verify.checks.suite import QUICK, collect

    return collect(QUICK)
