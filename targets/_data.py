r"""Posteriors over features and labels with an isotropic Gaussian prior :math:`p(x) = \mathcal N(0, v I)`: the base
class of the data targets (a per-datum likelihood, ``sgbench.targets._per_datum``).

Positions of data targets are single vectors of shape (dim,) (analytic targets also accept
leading batch axes; here the data axis takes that place); ``jax.vmap`` maps over chains.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.optimize

from sgbench.base.backend import constant, namespace
from sgbench.targets._contract import NoExactSamplerError
from sgbench.targets._per_datum import PerDatumTarget
from sgbench.targets.noise import make_noise


class DataTarget(PerDatumTarget):
    """A posterior over ``features`` (N, p) and ``labels`` (N,), the data its likelihood reads.

    Subclasses set ``dim`` and ``truth``, call ``__init__`` (which makes the noise model; the default
    ``"minibatch"`` draws indices of data), then set ``params``; they implement the per-datum log
    likelihood and its analytic gradients (``sgbench.targets._per_datum``).

    Args:
        features: the data's features, shape (N, p).
        labels: the data's labels, shape (N,).
        prior_variance: v, the variance of the isotropic Gaussian prior.
        noise: the name of the gradient-noise model (default ``"minibatch"``).
        **noise_params: its parameters.
    """

    def __init__(self, features, labels, prior_variance: float, noise="minibatch", **noise_params):
        self.features = np.asarray(features, dtype=np.float64)
        self.labels = np.asarray(labels, dtype=np.float64)
        self.prior_variance = float(prior_variance)
        self.noise = make_noise(noise, self, **noise_params)

    @property
    def num_data(self) -> int:
        """N, the number of data the likelihood sums over."""
        return self.features.shape[0]

    def rows(self, array: np.ndarray, indices, like):
        """``array`` (a data array) as a constant of ``like``'s namespace and dtype, at ``indices``.

        Args:
            array: a data array, shape (N, ...).
            indices: data indices, or None for all rows.
            like: the array whose namespace and dtype to use.

        Returns:
            the rows of ``array`` at ``indices``.
        """
        value = constant(array, like)
        return value if indices is None else value[indices]

    def log_prior(self, x):
        r""":math:`\log \mathcal N(x; 0, v I) = -\lVert x\rVert^2 / (2v) - \tfrac d2 \log(2\pi v)`.

        Args:
            x: a position, shape (dim,) (or (..., dim)).

        Returns:
            the log prior density, shape ``x.shape[:-1]``.
        """
        xp = namespace(x)
        return -0.5 * xp.sum(x * x, axis=-1) / self.prior_variance - 0.5 * self.dim * math.log(
            2 * math.pi * self.prior_variance)

    def grad_log_prior(self, x):
        """:math:`-x / v`.

        Args:
            x: a position, shape (dim,) (or (..., dim)).

        Returns:
            the gradient, shape of ``x``.
        """
        return -x / self.prior_variance

    def logdensity(self, x):
        """The log posterior density: log prior + log likelihood of all N data - ``log_evidence`` (0 where unknown).

        Args:
            x: one position, shape (dim,).

        Returns:
            the log density, a number.

        Raises:
            ValueError: ``x`` does not have shape (dim,).
        """
        self.check_position(x)
        return self.log_prior(x) + self.log_likelihood(x) - self.log_evidence

    def grad_logdensity(self, x):
        """The exact (full-data) gradient of :meth:`logdensity`: ``grad_log_prior`` + ``grad_log_likelihood``.

        Args:
            x: one position, shape (dim,).

        Returns:
            the gradient, shape (dim,).

        Raises:
            ValueError: ``x`` does not have shape (dim,).
        """
        self.check_position(x)
        return self.grad_log_prior(x) + self.grad_log_likelihood(x)

    def stochastic_grad(self, x, draw: dict):
        """The gradient as a sampler sees it, from this step's ``draw`` (the minibatch gradient by default).

        Args:
            x: one position, shape (dim,).
            draw: this step's draw of ``draw_spec``, a dict keyed like it.

        Returns:
            the stochastic gradient, shape (dim,).

        Raises:
            ValueError: ``x`` does not have shape (dim,).
        """
        self.check_position(x)
        return super().stochastic_grad(x, draw)

    def stochastic_logdensity(self, x, draw: dict):
        """The log density whose gradient is :meth:`stochastic_grad`, from the same ``draw``.

        Args:
            x: one position, shape (dim,).
            draw: this step's draw of ``draw_spec``, a dict keyed like it.

        Returns:
            the log density, a number.

        Raises:
            ValueError: ``x`` does not have shape (dim,).
        """
        self.check_position(x)
        return super().stochastic_logdensity(x, draw)

    def check_position(self, x) -> None:
        """ValueError unless ``x`` is one position of shape (dim,).

        Args:
            x: the position given.

        Raises:
            ValueError: ``x`` does not have shape (dim,).
        """
        if np.shape(x) != (self.dim,):
            raise ValueError(f"positions of data target {self.name!r} are single vectors of shape ({self.dim},), "
                             f"got shape {np.shape(x)}; use jax.vmap (or a loop) over chains")

    def mode(self, start: np.ndarray) -> np.ndarray:
        """The posterior mode: L-BFGS (scipy) on the full-data log density from ``start``.

        Args:
            start: the optimiser's starting point, shape (dim,).

        Returns:
            the mode, a float64 array of shape (dim,).
        """
        result = scipy.optimize.minimize(
            lambda x: -float(self.logdensity(x)), np.asarray(start, dtype=np.float64),
            jac=lambda x: -self.grad_logdensity(x), method="L-BFGS-B", options={"maxiter": 1000})
        return result.x

    def sample(self, key, n: int):
        """Data targets have no exact sampler: this always raises.

        Args:
            key: a JAX PRNG key (not read).
            n: the number of draws (not read).

        Raises:
            NoExactSamplerError: always (the reference draws of a data target come from a gold standard).
        """
        raise NoExactSamplerError(
            f"target {self.name!r} has no exact sampler (no analytic truth: its reference draws come from a "
            "gold standard)")
