"""Truth about a target: exact moments, each with its standard error (0 when analytic)."""

from __future__ import annotations

import dataclasses

import numpy as np


@dataclasses.dataclass(frozen=True)
class Truth:
    """E[x], E[x^2], Var[x^2] (per dimension), the covariance, and their standard errors.

    ``source`` says where they come from ("analytic", or a stored reference's provenance). An entry the source does
    not state is NaN (an external truth that gives means and standard deviations only, or no truth for a
    coordinate); a consumer compares the entries that are stated.
    """

    mean: np.ndarray
    second_moment: np.ndarray
    second_moment_var: np.ndarray
    covariance: np.ndarray
    mean_se: np.ndarray
    second_moment_se: np.ndarray
    second_moment_var_se: np.ndarray
    covariance_se: np.ndarray
    source: str

    @property
    def dim(self) -> int:
        """The dimension, the length of ``mean``."""
        return self.mean.shape[0]

    @classmethod
    def analytic(cls, mean, second_moment, second_moment_var, covariance) -> Truth:
        """Exact moments (float64 copies), with zero standard errors and source "analytic".

        Args:
            mean: E[x], shape (dim,).
            second_moment: E[x^2], shape (dim,).
            second_moment_var: Var[x^2], shape (dim,).
            covariance: the covariance, shape (dim, dim).

        Returns:
            the Truth.
        """
        mean, second_moment, second_moment_var, covariance = (
            np.array(v, dtype=np.float64) for v in (mean, second_moment, second_moment_var, covariance))
        zero_d, zero_dd = np.zeros_like(mean), np.zeros_like(covariance)
        return cls(
            mean=mean,
            second_moment=second_moment,
            second_moment_var=second_moment_var,
            covariance=covariance,
            mean_se=zero_d,
            second_moment_se=zero_d,
            second_moment_var_se=zero_d,
            covariance_se=zero_dd,
            source="analytic",
        )

    @classmethod
    def of_gaussian(cls, mean, covariance) -> Truth:
        """Analytic truth of N(mean, covariance): E[x^2] = m^2 + s^2, Var[x^2] = 2 s^4 + 4 m^2 s^2.

        Args:
            mean: the mean, shape (dim,).
            covariance: the covariance, shape (dim, dim).

        Returns:
            the Truth.
        """
        mean = np.asarray(mean, dtype=np.float64)
        covariance = np.asarray(covariance, dtype=np.float64)
        var = np.diag(covariance)
        return cls.analytic(mean, mean**2 + var, 2 * var**2 + 4 * mean**2 * var, covariance)
