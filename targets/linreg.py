r"""Bayesian linear regression, section 5.2 of the SGLRW paper.

Eq. (19)-(20): :math:`y = X\theta + \varepsilon`, :math:`\varepsilon \sim \mathcal N(0, \sigma^2 I)`,
prior :math:`\mathcal N(0, \tau^{-1} I)`; the posterior is :math:`\mathcal N(\mu, \Sigma)` with

.. math:: \Sigma^{-1} = \frac{1}{\sigma^2} X^\top X + \tau I, \qquad \mu = \frac{1}{\sigma^2} \Sigma X^\top y.

The paper's setting is the default: N = 1000, d = 20, :math:`\sigma^2 = 1.5`, :math:`\tau = 10^{-2}`,
:math:`\theta^* \sim \mathcal N(0, I)`; the design matrix, whose law the paper does not state, has
standard normal entries (:func:`sgbench.targets.datasets.linear_regression_data`). The truth is the closed
form, the exact sampler draws from it, and ``logdensity`` is the normalised posterior (the log
evidence is subtracted). Chains start at the posterior mean (as for the ICG). Minibatch gradients
(the default noise) come from the data, scaled by N/B.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.linalg

from sgbench import targets
from sgbench.base.arguments import integer_at_least, positive_finite
from sgbench.targets._contract import MAX_DIM
from sgbench.targets._gaussian import GaussianTarget
from sgbench.targets._linear_model import LinearModelTarget
from sgbench.targets.datasets import linear_regression_data

MAX_NUM_DATA = 1_000_000
MAX_DESIGN_SIZE = 10**8  # entries of the design matrix (0.8 GB)


@targets.register("linreg")
class LinearRegression(LinearModelTarget):
    """``num_data`` N >= 1, ``dim`` d >= 1, likelihood variance ``sigma2`` > 0, prior precision
    ``tau`` > 0, data from ``data_seed``; ``noise`` (default "minibatch") and its ``noise_*``."""

    name = "linreg"

    def __init__(self, num_data=1000, dim=20, sigma2=1.5, tau=1e-2, data_seed=0, noise="minibatch",
                 **noise_params):
        num_data = integer_at_least("num_data", num_data, 1, MAX_NUM_DATA)
        self.dim = integer_at_least("dim", dim, 1, MAX_DIM)
        if num_data * self.dim > MAX_DESIGN_SIZE:
            raise ValueError(f"num_data x dim must be at most {MAX_DESIGN_SIZE:.0e} (the design matrix holds them), "
                             f"got {num_data} x {self.dim}")
        self.sigma2 = positive_finite("sigma2", sigma2)
        self.tau = positive_finite("tau", tau)
        data_seed = integer_at_least("data_seed", data_seed, 0)
        features, labels, self.theta_star = linear_regression_data(num_data, self.dim, self.sigma2, data_seed)
        precision = features.T @ features / self.sigma2 + self.tau * np.eye(self.dim)
        factor = scipy.linalg.cho_factor(precision, lower=True)
        covariance = scipy.linalg.cho_solve(factor, np.eye(self.dim))
        mean = scipy.linalg.cho_solve(factor, features.T @ labels / self.sigma2)
        self.posterior = GaussianTarget(mean, (covariance + covariance.T) / 2)
        self.truth = self.posterior.truth
        super().__init__(features, labels, 1 / self.tau, noise, **noise_params)
        # log p(D) = log p(theta) + log p(D | theta) - log p(theta | D), at any theta (here the mean)
        self.log_evidence = float(self.log_prior(mean) + self.log_likelihood(mean) - self.posterior.logdensity(mean))
        self.params = dict(num_data=num_data, dim=self.dim, sigma2=self.sigma2, tau=self.tau, data_seed=data_seed,
                           **self.noise_params())

    def link_log_likelihood(self, eta, y):
        r""":math:`-\tfrac12 \log(2\pi\sigma^2) - (y - \eta)^2 / (2\sigma^2)`.

        Args:
            eta: the linear predictors, shape (n,).
            y: the labels, shape (n,).

        Returns:
            shape (n,).
        """
        return -0.5 * math.log(2 * math.pi * self.sigma2) - 0.5 * (y - eta) ** 2 / self.sigma2

    def link_slope(self, eta, y):
        r""":math:`(y - \eta) / \sigma^2`.

        Args:
            eta: the linear predictors, shape (n,).
            y: the labels, shape (n,).

        Returns:
            shape (n,).
        """
        return (y - eta) / self.sigma2

    def sample(self, key, n: int):
        r"""``n`` exact draws from the closed-form Gaussian posterior :math:`\mathcal N(\mu, \Sigma)`.

        Args:
            key: a JAX PRNG key.
            n: the number of draws, >= 1.

        Returns:
            float64 array of shape (n, dim).

        Raises:
            ValueError: ``n`` < 1.
        """
        return self.posterior.sample(key, n)

    def initial_position(self) -> np.ndarray:
        r"""The posterior mean :math:`\mu` (a copy).

        Returns:
            float64 array of shape (dim,).
        """
        return self.posterior.mean.copy()
