r"""The reduced set-up a seed's runs read, and no more.

Every run on a seed's draw reads :math:`K = B^\top W_0^\top W_0 B` and
:math:`\mathrm{Gram} = B^\top B` of its training tokens :math:`B` (:math:`d \times N`);
only a run that records its query (the population metrics, the query's norm and signal
coordinates) also reads :math:`AB` and :math:`B^\top A^2 B` (:math:`A = W_0^\top W_0`), a
second :math:`O(d^2 N)` product, and the conserved scale, a pass over the squares of
:math:`W_0`. A seed whose only run watches when its noisy samples are fitted needs
:func:`kernel_statistics`: the same row blocks of :math:`W_0` and the same products, in
the same order, as :meth:`verify.sim.statistics.ReducedSetup.build` computes
:math:`K = \sum_{\text{blocks}} V_0^\top V_0` (:math:`V_0` = block :math:`\times B`), so
:math:`K` and Gram are bit for bit the full set-up's.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from verify.sim.config import RunConfig
from verify.sim.data import initial_weight_blocks
from verify.sim.statistics import Statistics


def kernel_statistics(config: RunConfig, data: Any) -> Statistics:
    r""":math:`K = \sum_b (W_{0,b} B)^\top (W_{0,b} B)` over the row blocks :math:`b` of
    :math:`W_0` drawn from ``config``'s seed, and :math:`\mathrm{Gram} = B^\top B`, of
    ``data``'s training tokens :math:`B`; what only the query reads (:math:`Q`, the
    signal coordinates of :math:`AB`, the conserved scale) is NaN, so that a run that
    reads it records NaN instead of a number."""
    Z = np.ascontiguousarray(data.X_train.reshape(-1, data.d).T)
    N = Z.shape[1]
    K = np.zeros((N, N))
    for _, block in initial_weight_blocks(config):
        V0 = block @ Z
        K += V0.T @ V0
    return Statistics(
        K=K,
        gram=Z.T @ Z,
        Q=np.full((N, N), np.nan),
        signal_AB=np.full((2, N), np.nan),
        signal_B=Z[:2].copy(),
        invariant_scale=float("nan"),
    )


__all__ = ["kernel_statistics"]
