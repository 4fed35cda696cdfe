"""The generated stage-1 kernels (theory.stage1.kernels) are the SymPy rates printed as
Python: the file equals what the generator writes now, and each kernel's value equals the
lambdified expression at settings off the paper's."""

from __future__ import annotations

from pathlib import Path

import pytest
import sympy as sp

from theory.foundation.data_model import DataModel, Training
from theory.stage1 import kernels, rates
from theory.stage1.predictions import _values

ROOT = Path(__file__).resolve().parents[3]


def test_the_generated_file_is_the_generator_s_output():
    """Regenerate with: python -c "from pathlib import Path; from theory.stage1.rates import
    kernels_source, KERNELS_MODULE; Path(KERNELS_MODULE).write_text(kernels_source())"."""
    assert (ROOT / rates.KERNELS_MODULE).read_text() == rates.kernels_source()


@pytest.mark.parametrize(
    "model",
    [DataModel(d=700, n=14, T=6, rho=0.3, eta=0.15, mu_norm=7.5), DataModel(d=2000, T=12)],
)
def test_every_kernel_equals_its_expression(model):
    training = Training(init="gaussian")
    values = _values(model, training)
    for key in rates.KERNELS:
        expected = sp.lambdify(rates.kernel_symbols(), rates.kernel_expression(*key))(*values)
        assert kernels.KERNELS[key](*values) == pytest.approx(float(expected), rel=1e-12), key
    assert set(kernels.KERNELS) == set(rates.KERNELS)
