r"""Errors of the estimated posterior covariance, as in the SGLRW paper:
the covariance difference matrix :math:`D = \Sigma_{est} - \Sigma_{true}` (Figure 4, which also
reports its Frobenius norm :math:`\lVert D\rVert_F`), and the "mean-squared error of the posterior
covariance" (section 4.3, Figures 3 and 7).

The paper writes no formula for the covariance MSE (its numbered equations 121-122 are the NLL and
ECE of appendix A.6); we take the mean of the squared entries,

.. math:: \mathrm{MSE}(\Sigma_{est}) = \frac{1}{d^2}\sum_{i,j=1}^d (\Sigma_{est} - \Sigma_{true})_{ij}^2
          = \lVert D\rVert_F^2 / d^2 .

:math:`\Sigma_{est}` is the unbiased covariance of the draws pooled over chains
(``GaussianFit.of_samples``); :math:`\Sigma_{true}` the truth's covariance or that of reference
draws.
"""

from __future__ import annotations

import numpy as np

from sgbench.reference.metrics import register
from sgbench.reference.metrics._chains import check_dim
from sgbench.reference.metrics.gaussian_fit import GaussianFit


def _full_covariance(source, name: str) -> np.ndarray:
    fit = GaussianFit.of(source, name)
    if fit.diagonal:
        raise ValueError(f"{name} gives only variances (a diagonal fit: streamed Moments hold no cross "
                         "products); the covariance error needs the full covariance")
    return fit.covariance


@register("covariance_difference")
def covariance_difference(samples, reference) -> np.ndarray:
    """D = Sigma_est - Sigma_true (dim, dim) of ``samples`` (draws, dim) or (chains, draws, dim),
    pooled over chains, against ``reference`` (a Truth, reference draws or a GaussianFit).

    Args:
        samples: draws, shape (draws, dim) or (chains, draws, dim) (or a GaussianFit with a full covariance).
        reference: a Truth, reference draws or a full-covariance GaussianFit, of the same dimension.

    Returns:
        float64 array of shape (dim, dim).

    Raises:
        ValueError: a source gives only variances (streamed Moments, a diagonal fit), the dimensions differ, or
            invalid draws.
    """
    estimate = _full_covariance(samples, "samples")
    true = _full_covariance(reference, "reference")
    check_dim("samples", estimate.shape[0], true.shape[0], "reference")
    return estimate - true


@register("covariance_mse")
def covariance_mse(samples, reference) -> float:
    """Mean squared entry of the covariance difference matrix, ||D||_F^2 / dim^2.

    Args:
        samples: draws, shape (draws, dim) or (chains, draws, dim) (or a GaussianFit with a full covariance).
        reference: a Truth, reference draws or a full-covariance GaussianFit, of the same dimension.

    Returns:
        float: the MSE, >= 0.

    Raises:
        ValueError: as :func:`covariance_difference`.
    """
    return float(np.mean(covariance_difference(samples, reference) ** 2))


@register("covariance_frobenius_error")
def covariance_frobenius_error(samples, reference) -> float:
    """Frobenius norm ||D||_F of the covariance difference matrix (SGLRW Figure 4, "Frob").

    Args:
        samples: draws, shape (draws, dim) or (chains, draws, dim) (or a GaussianFit with a full covariance).
        reference: a Truth, reference draws or a full-covariance GaussianFit, of the same dimension.

    Returns:
        float: the Frobenius norm, >= 0.

    Raises:
        ValueError: as :func:`covariance_difference`.
    """
    return float(np.linalg.norm(covariance_difference(samples, reference), "fro"))
