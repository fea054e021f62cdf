r"""One-dimensional Gaussian mixtures, applied elementwise: density, gradient, moments, sampler.

:math:`p(y) = \sum_k w_k \mathcal N(y; \mu_k, \sigma_k^2)`.

- :math:`\log p(y) = \operatorname{logsumexp}_k t_k(y)` with
  :math:`t_k = \log w_k - \tfrac12 \log(2\pi\sigma_k^2) - (y-\mu_k)^2 / (2\sigma_k^2)`,
  evaluated stably by subtracting :math:`\max_k t_k`;
- :math:`\partial_y \log p(y) = -\sum_k r_k(y) (y - \mu_k) / \sigma_k^2` with the responsibilities
  :math:`r_k = e^{t_k - \log p}`;
- :math:`E[y^n] = \sum_k w_k E[(\mu_k + \sigma_k z)^n]` (see :mod:`sgbench.targets._moments`);
- exact draws: a component :math:`k \sim w` (inverse CDF of a uniform), then :math:`\mu_k + \sigma_k z`.

Used by ``gmm`` (each grid coordinate) and ``multimodal1d``.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np

from sgbench.base.backend import constant, namespace
from sgbench.targets._moments import gaussian_raw_moment


def logsumexp(t, xp):
    """log sum exp over the last axis of ``t``, stable for large |t| (``xp`` is numpy or jax.numpy).

    Args:
        t: an array, shape (..., K).
        xp: ``numpy`` or ``jax.numpy``.

    Returns:
        shape (...).
    """
    top = xp.max(t, axis=-1, keepdims=True)
    return top[..., 0] + xp.log(xp.sum(xp.exp(t - top), axis=-1))


class GaussianMixture1d:
    """Mixture with ``weights`` (> 0, summing to 1), ``means`` and ``scales`` (> 0): one entry per
    component. Methods act elementwise on arrays of any shape, NumPy or JAX."""

    def __init__(self, weights, means, scales):
        self.weights = np.asarray(weights, dtype=np.float64)
        self.means = np.asarray(means, dtype=np.float64)
        self.scales = np.asarray(scales, dtype=np.float64)
        with np.errstate(over="ignore", divide="ignore", under="ignore"):  # checked by truth_moments
            self.precisions = self.scales**-2
            self.log_coefficients = np.log(self.weights) - 0.5 * np.log(2 * np.pi * self.scales**2)

    def _terms(self, y):
        """t_k(y) and y - mu_k, each with the component axis last."""
        offset = y[..., None] - constant(self.means, y)
        return constant(self.log_coefficients, y) - 0.5 * offset**2 * constant(self.precisions, y), offset

    def logdensity(self, y):
        r""":math:`\log p(y) = \operatorname{logsumexp}_k t_k(y)`, elementwise.

        Args:
            y: an array of any shape, NumPy or JAX.

        Returns:
            the log density of each element, shape of ``y``.
        """
        t, _ = self._terms(y)
        return logsumexp(t, namespace(y))

    def grad_logdensity(self, y):
        r""":math:`\partial_y \log p(y) = -\sum_k r_k(y) (y - \mu_k) / \sigma_k^2`, elementwise.

        Args:
            y: an array of any shape, NumPy or JAX.

        Returns:
            the derivative at each element, shape of ``y``.
        """
        xp = namespace(y)
        t, offset = self._terms(y)
        responsibilities = xp.exp(t - logsumexp(t, xp)[..., None])
        return -xp.sum(responsibilities * offset * constant(self.precisions, y), axis=-1)

    def truth_moments(self, names: str) -> tuple[float, float, float]:
        """E[y], E[y^2] and E[y^4], the moments a target's truth is made of; ValueError naming ``names``
        (the target's parameters behind the components) where they, Var[y^2] or a precision
        overflow float64.

        Args:
            names: the parameters that set the components, for the message.

        Returns:
            (E[y], E[y^2], E[y^4]).

        Raises:
            ValueError: a moment, Var[y^2] or a precision is not finite in float64.
        """
        with np.errstate(over="ignore", invalid="ignore"):
            try:
                moments = tuple(self.raw_moment(n) for n in (1, 2, 4))
                finite = all(math.isfinite(m) for m in (*moments, moments[2] - moments[1] ** 2))
            except (OverflowError, ValueError):  # math.fsum's intermediate overflow, inf - inf
                finite = False
        if not (finite and np.all(np.isfinite(self.precisions)) and np.all(np.isfinite(self.log_coefficients))):
            raise ValueError(f"{names} make the truth's moments (up to E[y^4]) or the components' precisions "
                             "overflow float64 (component means and standard deviations must lie within about "
                             "1e-150 to 1e75 in size)")
        return moments

    def raw_moment(self, order: int) -> float:
        """E[y^order].

        Args:
            order: the moment's order n >= 0.

        Returns:
            float.
        """
        return math.fsum(self.weights * gaussian_raw_moment(order, self.means, self.scales**2))

    def sample(self, key, shape):
        """Exact float64 draws of the given shape from a JAX key.

        Args:
            key: a JAX PRNG key.
            shape: the shape of the draws.

        Returns:
            float64 JAX array of ``shape``.
        """
        component_key, normal_key = jax.random.split(key)
        u = jax.random.uniform(component_key, shape, dtype=jnp.float64)
        k = jnp.sum(u[..., None] >= jnp.asarray(np.cumsum(self.weights)[:-1]), axis=-1)  # P(k) = w_k
        z = jax.random.normal(normal_key, shape, dtype=jnp.float64)
        return jnp.asarray(self.means)[k] + jnp.asarray(self.scales)[k] * z
