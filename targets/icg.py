r"""Ill-conditioned Gaussian (ICG), appendix C of the SMILE paper.

:math:`\mathcal N(0, \Sigma)` with :math:`\Sigma = R^\top \Lambda R`: :math:`\Lambda` diagonal with
eigenvalues equally spaced in log space from :math:`\kappa^{-1/2}` to :math:`\kappa^{1/2}` (the
paper: 1/100 to 100, condition number :math:`\kappa = 10^4`, dimension 10) and :math:`R` a
Haar-random rotation drawn from ``rotation_seed``. Chains start at the mean (appendix C).
"""

from __future__ import annotations

import numpy as np

from sgbench import targets
from sgbench.base.arguments import in_interval, integer_at_least
from sgbench.targets._contract import MAX_DIM
from sgbench.targets._gaussian import GaussianTarget

MAX_CONDITION_NUMBER = 1e12  # beyond ~1e16 the covariance is singular in float64


def random_rotation(dim: int, seed: int) -> np.ndarray:
    """A Haar-distributed rotation (det +1): QR of a Gaussian matrix with the signs of diag(R) fixed.

    Args:
        dim: the dimension.
        seed: the NumPy seed.

    Returns:
        shape (dim, dim), orthogonal with determinant +1.
    """
    rng = np.random.default_rng(seed)
    q, r = np.linalg.qr(rng.standard_normal((dim, dim)))
    q = q * np.sign(np.diag(r))
    if np.linalg.det(q) < 0:
        q[:, 0] = -q[:, 0]
    return q


def log_spaced_eigenvalues(dim: int, condition_number: float) -> np.ndarray:
    """``dim`` eigenvalues log-spaced from condition_number**-1/2 to condition_number**1/2.

    Args:
        dim: the number of eigenvalues.
        condition_number: the ratio of the largest to the smallest, >= 1.

    Returns:
        shape (dim,), increasing.
    """
    half = 0.5 * np.log10(condition_number)
    return np.logspace(-half, half, dim)


@targets.register("icg")
class IllConditionedGaussian(GaussianTarget):
    """ICG in ``dim`` dimensions (1 to ``MAX_DIM``) with condition number ``condition_number`` (1 to
    ``MAX_CONDITION_NUMBER``)."""

    name = "icg"

    def __init__(self, dim=10, condition_number=1e4, rotation_seed=0, noise="none", **noise_params):
        dim = integer_at_least("dim", dim, 1, MAX_DIM)
        condition_number = in_interval("condition_number", condition_number, 1.0, MAX_CONDITION_NUMBER)  # float64 PD
        rotation_seed = integer_at_least("rotation_seed", rotation_seed, 0)
        self.eigenvalues = log_spaced_eigenvalues(dim, condition_number)
        self.rotation = random_rotation(dim, rotation_seed)
        covariance = self.rotation.T @ np.diag(self.eigenvalues) @ self.rotation
        super().__init__(np.zeros(dim), (covariance + covariance.T) / 2, noise, **noise_params)
        self.params = dict(dim=dim, condition_number=condition_number, rotation_seed=rotation_seed,
                           **self.noise_params())
