r"""The ill-conditioned Gaussian without its rotation: :math:`\mathcal N(0, \Lambda)`, the eigenvalues of
``targets.get("icg")`` (log-spaced from :math:`\kappa^{-1/2}` to :math:`\kappa^{1/2}`) on the diagonal.

Used by the timing benchmarks where the icg itself cannot be built: ``targets/icg.py`` draws a dense
Haar rotation and stores the dense covariance, its inverse and Cholesky factor (4 x 80 GB at
d = 10^5). Here density, gradient and noise cost O(d) and nothing is d x d. It is not registered
in ``targets`` (timing only). ``truth`` is None: its dense covariance is what cannot be stored.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from sgbench.base.arguments import integer_at_least, positive_finite
from sgbench.base.backend import constant, namespace
from sgbench.targets._contract import Target
from sgbench.targets.icg import log_spaced_eigenvalues
from sgbench.targets.noise import make_noise


class DiagonalICG(Target):
    r""":math:`\log p(x) = -\tfrac12 \sum_i x_i^2/\lambda_i - \tfrac12 \sum_i \log(2\pi\lambda_i)` in ``dim``
    (>= 1) dimensions with condition number ``condition_number`` (>= 1), and a gradient-noise model
    (``noise``, ``noise_*``) as ``targets.get("icg")`` takes them."""

    name = "icg_diagonal"

    def __init__(self, dim=10, condition_number=1e4, noise="none", **noise_params):
        dim = integer_at_least("dim", dim, 1)
        condition_number = positive_finite("condition_number", condition_number)
        if condition_number < 1:
            raise ValueError(f"condition_number must be a finite number >= 1, got {condition_number!r}")
        self.dim = dim
        self.variances = log_spaced_eigenvalues(dim, condition_number)
        self.precisions = 1.0 / self.variances
        self._log_normaliser = -0.5 * float(np.sum(np.log(2 * np.pi * self.variances)))
        self.truth = None
        self.noise = make_noise(noise, self, **noise_params)
        self.params = dict(dim=dim, condition_number=condition_number, **self.noise_params())

    def logdensity(self, x):
        xp = namespace(x)
        return -0.5 * xp.sum(x * x * constant(self.precisions, x), axis=-1) + constant(self._log_normaliser, x)

    def grad_logdensity(self, x):
        return -x * constant(self.precisions, x)

    def sample(self, key, n: int):
        integer_at_least("n", n, 1)
        return jax.random.normal(key, (n, self.dim), dtype=jnp.float64) * jnp.sqrt(jnp.asarray(self.variances))

    def initial_position(self) -> np.ndarray:
        return np.zeros(self.dim)
