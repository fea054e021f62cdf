r"""Diversity of posterior samples in parameter space, as the PX-SGMCMC paper measures it (section 5.2.3, Figure 2
(i), and section 5.3.1, Table 5 (a)): the Euclidean distance between consecutive samples, plain and normalised by
the norm of the earlier sample (the paper's :math:`\bar d`, which removes the scale invariance of normalisation
layers). Larger means the chain moves further between samples.

The samples are one chain's, in order (draws, dim), or several chains' (chains, draws, dim): distances are taken
along the draws axis within each chain.
"""

from __future__ import annotations

import numpy as np

from sgbench.reference.metrics import register


@register("consecutive_distances")
def consecutive_distances(samples, normalise: bool = False) -> np.ndarray:
    r"""The distances between consecutive samples :math:`\theta_m, \theta_{m+1}` (PX-SGMCMC, section 5.2.3):

    .. math:: d(\theta_m, \theta_{m+1}) = \lVert \theta_{m+1} - \theta_m \rVert_2, \qquad
              \bar d(\theta_m, \theta_{m+1}) = \lVert \theta_{m+1} - \theta_m \rVert_2 / \lVert \theta_m \rVert_2 .

    Args:
        samples: the samples in order along the draws axis, shape (..., draws, dim).
        normalise: whether to divide by :math:`\lVert \theta_m \rVert_2` (:math:`\bar d`).

    Returns:
        the distances, shape (..., draws - 1); NaN where either sample is not finite, and, normalised, where
        :math:`\theta_m = 0`.

    Raises:
        TypeError: ``normalise`` is not a bool.
        ValueError: ``samples`` has fewer than 2 axes.
    """
    if not isinstance(normalise, bool):
        raise TypeError(f"normalise must be True or False, got {normalise!r}")
    samples = np.asarray(samples, dtype=np.float64)
    if samples.ndim < 2:
        raise ValueError(f"samples must have shape (..., draws, dim), got shape {samples.shape}")
    distances = np.linalg.norm(np.diff(samples, axis=-2), axis=-1)
    if not normalise:
        return distances
    norms = np.linalg.norm(samples[..., :-1, :], axis=-1)
    return np.divide(distances, norms, out=np.full_like(distances, np.nan), where=norms > 0)
