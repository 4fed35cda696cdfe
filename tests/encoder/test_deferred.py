"""Deferred low-rank updates give the products and the matrix of eager updates."""

import numpy as np

from verify.encoder.deferred import DeferredMatrix, DenseMatrix


def test_deferred_updates_equal_eager_updates():
    rng = np.random.default_rng(0)
    base = rng.standard_normal((7, 5))
    deferred, eager = DeferredMatrix(base.copy(), capacity=6), DenseMatrix(base.copy())
    X, Y = rng.standard_normal((3, 5)), rng.standard_normal((4, 7))
    for rank in (2, 3, 1, 4, 9, 2):  # crosses the capacity, and one update exceeds it
        left, right = rng.standard_normal((rank, 7)), rng.standard_normal((rank, 5))
        deferred.subtract(left, right, 0.1)
        eager.subtract(left, right, 0.1)
        assert np.allclose(deferred.right_product(X), eager.right_product(X), rtol=0, atol=1e-13)
        assert np.allclose(deferred.left_product(Y), eager.left_product(Y), rtol=0, atol=1e-13)
    assert deferred.count > 0  # something is still pending
    assert not np.allclose(deferred.base, eager.base)
    deferred.flush()
    assert deferred.count == 0
    assert np.allclose(deferred.base, eager.base, rtol=0, atol=1e-13)
    assert not np.allclose(eager.base, base)  # the updates did something
