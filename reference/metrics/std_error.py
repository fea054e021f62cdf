r"""Relative error of the posterior standard deviations, MAMBA paper
(section 4.1 and Tables 1, 2, 5, 7):

.. math:: \xi(\hat\sigma) = \lVert \hat\sigma - \sigma_{ref}\rVert_2 / \lVert \sigma_{ref}\rVert_2,

with :math:`\hat\sigma_i` the standard deviation of coordinate :math:`i` of the sampler's draws and
:math:`\sigma_{ref}` that of the reference (NUTS draws in MAMBA; the truth's
:math:`\sqrt{\Sigma_{ii}}` where it is known). Both are computed **pooled over chains** with the
unbiased variance (``GaussianFit``), from stored draws or from streamed per-chain ``Moments``,
which give the same number.
"""

from __future__ import annotations

import numpy as np

from sgbench.reference.metrics import register
from sgbench.reference.metrics._chains import check_dim
from sgbench.reference.metrics.gaussian_fit import GaussianFit


@register("std_relative_error")
def std_relative_error(samples, reference) -> float:
    """xi(sigma) of ``samples`` (draws (draws, dim) or (chains, draws, dim), per-chain Moments or a
    GaussianFit) against ``reference`` (a Truth, reference draws, Moments or a GaussianFit).

    Args:
        samples: draws, shape (draws, dim) or (chains, draws, dim), per-chain Moments, or a GaussianFit.
        reference: a Truth, reference draws, Moments or a GaussianFit, of the same dimension.

    Returns:
        float: xi(sigma), >= 0.

    Raises:
        ValueError: invalid draws or moments, the dimensions differ, or every reference standard deviation is 0.
    """
    estimate = GaussianFit.of(samples, "samples")
    ref = GaussianFit.of(reference, "reference")
    check_dim("samples", estimate.dim, ref.dim, "reference")
    sigma_ref = np.sqrt(ref.variance)
    norm_ref = np.linalg.norm(sigma_ref)
    if norm_ref == 0:
        raise ValueError("reference has all standard deviations 0; xi(sigma) divides by their norm")
    return float(np.linalg.norm(np.sqrt(estimate.variance) - sigma_ref) / norm_ref)
