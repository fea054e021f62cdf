r"""Gaussian mixture on a grid: two coordinates follow an equal-weight mixture of 25 Gaussians with
means on :math:`\{-4,-2,0,2,4\}^2` and covariance :math:`\sigma^2 I_2`, the rest are standard normal.

.. math:: p(x) = \frac1{25}\sum_{i,j=1}^{5} \mathcal N\big((x_1, x_2); (\mu_i, \mu_j), \sigma^2 I_2\big)
          \prod_{k\ge3} \mathcal N(x_k; 0, 1).

Presets:

- ``targets.get("gmm")``: the 10-d target of appendix D, eq. (25), of the SMILE paper:
  :math:`\sigma^2 = 0.3`, 8 extra standard-normal coordinates;
- ``targets.get("gmm", extra_dims=0, component_variance=0.03)``: the 2-d mixture of 25 Gaussians of
  section 5.1 of the PX-SGMCMC paper, which follows Zhang et al.
  (2020, cyclical SG-MCMC) and so uses their component variance 0.03.

The grid is ``spacing * (k - (grid_points - 1)/2)``, k = 0..grid_points-1 (default spacing 2, 5 points).
An equal-weight mixture over a product grid with isotropic components factorises:
:math:`p(x_1, x_2) = q(x_1) q(x_2)` with :math:`q = \frac15\sum_i \mathcal N(\mu_i, \sigma^2)`, so the
log density, the gradient (:math:`-(x_j - \sum_i r_{ji}\mu_i)/\sigma^2` with the per-coordinate
responsibilities :math:`r_{ji}`) and the moments are those of the 1-d mixture :math:`q`
(:mod:`sgbench.targets._mixture`): :math:`E[x_j] = \overline{\mu}`, :math:`E[x_j^2] = \overline{\mu^2} + \sigma^2`,
:math:`E[x_j^4] = \overline{\mu^4 + 6\mu^2\sigma^2 + 3\sigma^4}` (bars: averages over the grid), and the
covariance is diagonal. Exact draws: a grid point per coordinate, then Gaussian noise. Chains start
at the mean, 0.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from sgbench import targets
from sgbench.base.arguments import integer_at_least, positive_finite
from sgbench.base.backend import constant, namespace
from sgbench.targets._contract import MAX_DIM, Target
from sgbench.targets._mixture import GaussianMixture1d
from sgbench.targets._truth import Truth
from sgbench.targets.noise import make_noise

MIXTURE_DIMS = 2
MAX_GRID_POINTS = 1000  # components per axis: every density evaluation sums over them


@targets.register("gmm")
class GridMixture(Target):
    """``extra_dims`` (>= 0; default 8) standard-normal coordinates after the two mixture ones;
    ``component_variance`` (> 0; default 0.3); grid ``spacing`` (> 0; default 2) and
    ``grid_points`` per axis (>= 1; default 5)."""

    name = "gmm"

    def __init__(self, extra_dims=8, component_variance=0.3, spacing=2.0, grid_points=5, noise="none",
                 **noise_params):
        self.extra_dims = integer_at_least("extra_dims", extra_dims, 0, MAX_DIM - MIXTURE_DIMS)
        self.component_variance = positive_finite("component_variance", component_variance)
        self.spacing = positive_finite("spacing", spacing)
        self.grid_points = integer_at_least("grid_points", grid_points, 1, MAX_GRID_POINTS)
        self.grid = self.spacing * (np.arange(self.grid_points) - (self.grid_points - 1) / 2)
        self.mixture = GaussianMixture1d(np.full(self.grid_points, 1 / self.grid_points), self.grid,
                                         np.full(self.grid_points, np.sqrt(self.component_variance)))
        self.dim = MIXTURE_DIMS + self.extra_dims
        self._extra_log_normaliser = -0.5 * self.extra_dims * np.log(2 * np.pi)
        first, second, fourth = self.mixture.truth_moments("spacing, grid_points and component_variance")
        mixed, extra = np.ones(MIXTURE_DIMS), np.ones(self.extra_dims)
        mean = np.concatenate([first * mixed, 0 * extra])
        second_moment = np.concatenate([second * mixed, extra])
        self.truth = Truth.analytic(mean, second_moment,
                                    np.concatenate([(fourth - second**2) * mixed, 2 * extra]),
                                    np.diag(second_moment - mean**2))
        self.noise = make_noise(noise, self, **noise_params)
        self.params = dict(extra_dims=self.extra_dims, component_variance=self.component_variance,
                           spacing=self.spacing, grid_points=self.grid_points, **self.noise_params())

    def logdensity(self, x):
        r""":math:`\log q(x_1) + \log q(x_2) + \sum_{k\ge3} \log \mathcal N(x_k; 0, 1)`.

        Args:
            x: a position, shape (dim,), or positions with leading batch axes, (..., dim).

        Returns:
            the log density, shape ``x.shape[:-1]``.
        """
        xp = namespace(x)
        mixed, extra = x[..., :MIXTURE_DIMS], x[..., MIXTURE_DIMS:]
        return (xp.sum(self.mixture.logdensity(mixed), axis=-1) - 0.5 * xp.sum(extra**2, axis=-1)
                + constant(self._extra_log_normaliser, x))

    def grad_logdensity(self, x):
        """The 1-d mixture's derivative in the two mixture coordinates, :math:`-x_k` in the others.

        Args:
            x: a position, shape (dim,), or positions with leading batch axes, (..., dim).

        Returns:
            the gradient, shape of ``x``.
        """
        xp = namespace(x)
        return xp.concatenate([self.mixture.grad_logdensity(x[..., :MIXTURE_DIMS]), -x[..., MIXTURE_DIMS:]], axis=-1)

    def sample(self, key, n: int):
        """``n`` exact draws: a grid point and Gaussian noise per mixture coordinate, standard normals for the rest.

        Args:
            key: a JAX PRNG key.
            n: the number of draws, >= 1.

        Returns:
            float64 array of shape (n, dim).

        Raises:
            ValueError: ``n`` < 1.
        """
        integer_at_least("n", n, 1)
        mixture_key, normal_key = jax.random.split(key)
        extra = jax.random.normal(normal_key, (n, self.extra_dims), dtype=jnp.float64)
        return jnp.concatenate([self.mixture.sample(mixture_key, (n, MIXTURE_DIMS)), extra], axis=-1)

    def initial_position(self) -> np.ndarray:
        """The mean of the truth (0 for the symmetric default grid).

        Returns:
            float64 array of shape (dim,).
        """
        return self.truth.mean.copy()
