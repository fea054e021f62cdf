r"""Gaussian moment fits :math:`N(m, S)` of samples, streamed moments or a target's truth: the
objects the Gaussian-fit KL, the covariance errors and :math:`\xi(\sigma)` compare.

Of samples: :math:`m` the mean and :math:`S = \frac{1}{N-1}\sum_n (x_n - m)(x_n - m)^\top` the
unbiased covariance of all :math:`N` draws **pooled over chains** (the chains' draws
concatenated), as the SGLRW paper (section 5.2, appendix A.5) fits
"the estimated mean and covariance" of its particles. Of streamed per-chain moments: the same
pooled mean and the diagonal of :math:`S` only (the moments hold no cross products). Of a
:class:`~sgbench.targets._truth.Truth`: its exact mean and covariance.

``covariance`` is a (dim, dim) matrix, or a (dim,) vector of variances for a diagonal fit.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from sgbench.reference.metrics._chains import chain_draws, chain_moments, pooled_moments
from sgbench.reference.metrics.moments import Moments
from sgbench.targets._truth import Truth


class GaussianFit(NamedTuple):
    """Mean (dim,) and covariance (dim, dim), or variances (dim,) when ``diagonal``."""

    mean: np.ndarray
    covariance: np.ndarray

    @property
    def dim(self) -> int:
        """The dimension, the length of ``mean``."""
        return self.mean.shape[0]

    @property
    def diagonal(self) -> bool:
        """Whether ``covariance`` holds only the variances (a (dim,) vector)."""
        return self.covariance.ndim == 1

    @property
    def variance(self) -> np.ndarray:
        """Per-dimension variances (dim,)."""
        return self.covariance if self.diagonal else np.diag(self.covariance).copy()

    def to_diagonal(self) -> GaussianFit:
        """The fit with the same mean and marginal variances and no correlations.

        Returns:
            a diagonal GaussianFit (covariance the variances, shape (dim,)).
        """
        return GaussianFit(self.mean, self.variance)

    @classmethod
    def of_samples(cls, samples, name: str = "samples") -> GaussianFit:
        """Pooled mean and unbiased covariance of draws (draws, dim) or (chains, draws, dim).

        Args:
            samples: draws, shape (draws, dim) or (chains, draws, dim), finite, at least 2 in all.
            name: the argument's name, for the message.

        Returns:
            the full GaussianFit (covariance (dim, dim)).

        Raises:
            ValueError: another shape, a non-finite value, or fewer than 2 draws.
        """
        x = chain_draws(samples, name, min_draws=1, allow_single_chain=True)
        flat = x.reshape(-1, x.shape[-1])
        if flat.shape[0] < 2:
            raise ValueError(f"{name} must hold at least 2 draws in all to fit a covariance, got {flat.shape[0]}")
        centred = flat - flat.mean(axis=0)
        return cls(flat.mean(axis=0), centred.T @ centred / (flat.shape[0] - 1))

    @classmethod
    def of_moments(cls, moments: Moments, name: str = "moments") -> GaussianFit:
        """Diagonal fit of per-chain streamed moments: pooled mean, unbiased pooled variances.

        Args:
            moments: per-chain Moments, counting at least 2 draws in all.
            name: the argument's name, for the message.

        Returns:
            a diagonal GaussianFit (covariance the variances, shape (dim,)).

        Raises:
            TypeError: ``moments`` is not a Moments.
            ValueError: not per chain, a non-finite value, a chain with no draw, or fewer than 2 draws in all.
        """
        pooled = pooled_moments(chain_moments(moments, name, min_count=1))
        if pooled.count < 2:
            raise ValueError(f"{name} must count at least 2 draws in all to fit a variance, got {pooled.count:g}")
        return cls(pooled.mean, pooled.m2 / (pooled.count - 1))

    @classmethod
    def of_truth(cls, truth: Truth) -> GaussianFit:
        """The exact mean and covariance of a target.

        Args:
            truth: the target's Truth.

        Returns:
            the full GaussianFit, float64.
        """
        return cls(np.asarray(truth.mean, dtype=np.float64), np.asarray(truth.covariance, dtype=np.float64))

    @classmethod
    def of(cls, source, name: str) -> GaussianFit:
        """A fit of ``source``: a GaussianFit, a Truth, per-chain Moments (diagonal) or draws.

        Args:
            source: a GaussianFit (returned as it is), a Truth, per-chain Moments, or draws (draws, dim) or
                (chains, draws, dim).
            name: the argument's name, for the messages.

        Returns:
            the GaussianFit (diagonal for Moments).

        Raises:
            ValueError: as :meth:`of_moments` or :meth:`of_samples`.
        """
        if isinstance(source, GaussianFit):
            return source
        if isinstance(source, Truth):
            return cls.of_truth(source)
        if isinstance(source, Moments):
            return cls.of_moments(source, name)
        return cls.of_samples(source, name)

