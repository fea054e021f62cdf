r"""Multivariate normal targets :math:`\mathcal N(m, \Sigma)`: density, gradient, truth, sampler."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from sgbench.base.arguments import integer_at_least
from sgbench.base.backend import constant, matvec, namespace
from sgbench.targets._contract import Target
from sgbench.targets._truth import Truth
from sgbench.targets.noise import make_noise


class GaussianTarget(Target):
    r""":math:`\log p(x) = -\tfrac12 (x-m)^\top \Sigma^{-1} (x-m) - \tfrac12 \log\det(2\pi\Sigma)`,
    :math:`\nabla \log p(x) = -\Sigma^{-1}(x-m)`; exact draws :math:`m + L z`, :math:`LL^\top = \Sigma`.

    Args:
        mean: m, shape (dim,).
        covariance: Sigma, symmetric positive definite, shape (dim, dim).
        noise: the name of the gradient-noise model (default ``"none"``).
        **noise_params: its parameters.
    """

    def __init__(self, mean, covariance, noise="none", **noise_params):
        self.mean = np.asarray(mean, dtype=np.float64)
        self.covariance = np.asarray(covariance, dtype=np.float64)
        self.dim = self.mean.shape[0]
        self.precision = np.linalg.inv(self.covariance)
        self.precision = (self.precision + self.precision.T) / 2
        self.cholesky = np.linalg.cholesky(self.covariance)
        self._log_normaliser = np.asarray(-0.5 * np.linalg.slogdet(2 * np.pi * self.covariance)[1])
        self.truth = Truth.of_gaussian(self.mean, self.covariance)
        self.noise = make_noise(noise, self, **noise_params)

    def logdensity(self, x):
        r""":math:`-\tfrac12 (x-m)^\top \Sigma^{-1} (x-m) - \tfrac12 \log\det(2\pi\Sigma)`.

        Args:
            x: a position, shape (dim,), or positions with leading batch axes, (..., dim).

        Returns:
            the log density, shape ``x.shape[:-1]``.
        """
        xp = namespace(x)
        r = x - constant(self.mean, x)
        return -0.5 * xp.sum(matvec(r, self.precision) * r, axis=-1) + constant(self._log_normaliser, x)

    def grad_logdensity(self, x):
        r""":math:`-\Sigma^{-1}(x-m)`.

        Args:
            x: a position, shape (dim,), or positions with leading batch axes, (..., dim).

        Returns:
            the gradient, shape of ``x``.
        """
        return -matvec(x - constant(self.mean, x), self.precision)  # the logdensity's product: shared when traced

    def sample(self, key, n: int):
        r"""``n`` exact draws :math:`m + L z`, :math:`z \sim \mathcal N(0, I)`, :math:`LL^\top = \Sigma`.

        Args:
            key: a JAX PRNG key.
            n: the number of draws, >= 1.

        Returns:
            float64 array of shape (n, dim).

        Raises:
            ValueError: ``n`` < 1.
        """
        integer_at_least("n", n, 1)
        z = jax.random.normal(key, (n, self.dim), dtype=jnp.float64)
        return jnp.asarray(self.mean) + z @ jnp.asarray(self.cholesky).T

    def initial_position(self) -> np.ndarray:
        """The mean m (a copy): the chains start at the mode.

        Returns:
            float64 array of shape (dim,).
        """
        return self.mean.copy()
