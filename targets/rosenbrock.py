r"""Rosenbrock target: a product of :math:`d/2` banana-shaped pairs, appendix C of the SMILE paper
(after Grumitt et al. 2022):

.. math:: \log p(x) = -\sum_{i=1}^{d/2} \Big[\frac{(x_{2i-1}^2 - x_{2i})^2}{Q} + (x_{2i-1} - 1)^2\Big]
          - \frac d2 \big(\log\pi + \tfrac12 \log Q\big),

with :math:`Q = 0.1` and :math:`d = 10` in the paper (the normaliser is added here).

Derivation of the truth. Each pair :math:`(a, b) = (x_{2i-1}, x_{2i})` is independent of the others,
and its density factorises as :math:`e^{-(a-1)^2} \cdot e^{-(b-a^2)^2/Q}`, i.e.

.. math:: a \sim \mathcal N(1, \tfrac12), \qquad b \mid a \sim \mathcal N(a^2, \sigma^2), \quad \sigma^2 = Q/2,

(the normalisers :math:`\sqrt\pi` and :math:`\sqrt{\pi Q}` give the constant above). Write
:math:`M_n = E[a^n]`, the raw moments of :math:`\mathcal N(1, \tfrac12)` (:mod:`sgbench.targets._moments`):
:math:`M_1 = 1, M_2 = 3/2, M_3 = 5/2, M_4 = 19/4, M_8 = 2025/16`. With :math:`b = a^2 + \sigma\eta`,
:math:`\eta \sim \mathcal N(0, 1)` independent of :math:`a`, odd powers of :math:`\eta` average to zero:

- :math:`E[a] = 1`, :math:`E[a^2] = 3/2`, :math:`\mathrm{Var}[a^2] = M_4 - M_2^2 = 5/2`, :math:`\mathrm{Var}[a] = 1/2`;
- :math:`E[b] = M_2 = 3/2`, :math:`E[b^2] = M_4 + \sigma^2`, :math:`\mathrm{Var}[b] = M_4 - M_2^2 + \sigma^2`;
- :math:`E[b^4] = M_8 + 6 M_4 \sigma^2 + 3\sigma^4`, so :math:`\mathrm{Var}[b^2] = E[b^4] - E[b^2]^2`;
- :math:`\mathrm{Cov}(a, b) = M_3 - M_1 M_2 = 2 m s^2 = 1` (:math:`m = 1, s^2 = 1/2`); other pairs are independent,
  so the covariance is block diagonal.

At :math:`Q = 0.1`: :math:`E[b^2] = 4.8`, :math:`\mathrm{Var}[b] = 2.55`, :math:`\mathrm{Var}[b^2] = 104.955`.
Exact draws: :math:`a = 1 + z_1/\sqrt2`, :math:`b = a^2 + \sigma z_2`. Chains start at the mean (appendix C).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from sgbench import targets
from sgbench.base.arguments import integer_at_least, positive_finite
from sgbench.base.backend import constant, namespace
from sgbench.targets._contract import MAX_DIM, Target
from sgbench.targets._moments import gaussian_raw_moment
from sgbench.targets._truth import Truth
from sgbench.targets.noise import make_noise

A_MEAN, A_VARIANCE = 1.0, 0.5  # a ~ N(1, 1/2) from the factor exp(-(a - 1)^2)


def pair_moments(Q: float) -> dict:
    """E, E[.^2], Var[.^2] of a and b, Var of a and b, and Cov(a, b) for one pair (derivation above).

    Args:
        Q: the curvature parameter, > 0.

    Returns:
        dict with ``mean``, ``second_moment``, ``second_moment_var``, ``variance`` (each a pair, a then b) and
        ``covariance`` (a number).
    """
    m = {n: float(gaussian_raw_moment(n, A_MEAN, A_VARIANCE)) for n in (1, 2, 3, 4, 8)}
    noise = Q / 2  # Var[b | a]
    b_second = m[4] + noise
    b_fourth = m[8] + 6 * m[4] * noise + 3 * noise**2
    return dict(
        mean=(m[1], m[2]),
        second_moment=(m[2], b_second),
        second_moment_var=(m[4] - m[2] ** 2, b_fourth - b_second**2),
        variance=(m[2] - m[1] ** 2, b_second - m[2] ** 2),
        covariance=m[3] - m[1] * m[2],
    )


MIN_Q, MAX_Q = 1e-100, 1e100


@targets.register("rosenbrock")
class Rosenbrock(Target):
    """``dim`` (even, >= 2; default 10) coordinates in ``dim/2`` banana pairs with curvature
    parameter ``Q`` (in [``MIN_Q``, ``MAX_Q``]; default 0.1)."""

    name = "rosenbrock"

    def __init__(self, dim=10, Q=0.1, noise="none", **noise_params):
        dim = integer_at_least("dim", dim, 2, MAX_DIM)
        if dim % 2:
            raise ValueError(f"dim must be an even integer >= 2 for rosenbrock, got {dim!r}")
        self.dim = dim
        self.Q = positive_finite("Q", Q)
        if not MIN_Q <= self.Q <= MAX_Q:
            raise ValueError(f"Q must be a number in [{MIN_Q:g}, {MAX_Q:g}] (the truth holds Q^2, the gradient 1/Q), "
                             f"got {Q!r}")
        self._log_normaliser = -(dim / 2) * (np.log(np.pi) + 0.5 * np.log(self.Q))
        pair = pair_moments(self.Q)
        block = np.array([[pair["variance"][0], pair["covariance"]], [pair["covariance"], pair["variance"][1]]])
        pairs = dim // 2
        self.truth = Truth.analytic(np.tile(pair["mean"], pairs), np.tile(pair["second_moment"], pairs),
                                    np.tile(pair["second_moment_var"], pairs), np.kron(np.eye(pairs), block))
        self.noise = make_noise(noise, self, **noise_params)
        self.params = dict(dim=dim, Q=self.Q, **self.noise_params())

    def logdensity(self, x):
        r""":math:`\log p(x)` of the module docstring, with its normaliser.

        Args:
            x: a position, shape (dim,), or positions with leading batch axes, (..., dim).

        Returns:
            the log density, shape ``x.shape[:-1]``.
        """
        xp = namespace(x)
        a, b = x[..., 0::2], x[..., 1::2]
        energy = (a**2 - b) ** 2 / constant(self.Q, x) + (a - 1) ** 2
        return -xp.sum(energy, axis=-1) + constant(self._log_normaliser, x)

    def grad_logdensity(self, x):
        r"""Per pair :math:`(a, b)`: :math:`\partial_a = -2(a - 1) - 4a(a^2 - b)/Q`, :math:`\partial_b = 2(a^2 - b)/Q`.

        Args:
            x: a position, shape (dim,), or positions with leading batch axes, (..., dim).

        Returns:
            the gradient, shape of ``x``.
        """
        xp = namespace(x)
        a, b = x[..., 0::2], x[..., 1::2]
        bend = (a**2 - b) / constant(self.Q, x)
        return xp.stack([-2 * (a - 1) - 4 * a * bend, 2 * bend], axis=-1).reshape(x.shape)

    def sample(self, key, n: int):
        r"""``n`` exact draws: per pair :math:`a = 1 + z_1/\sqrt2`, :math:`b = a^2 + \sqrt{Q/2}\,z_2`.

        Args:
            key: a JAX PRNG key.
            n: the number of draws, >= 1.

        Returns:
            float64 array of shape (n, dim).

        Raises:
            ValueError: ``n`` < 1.
        """
        integer_at_least("n", n, 1)
        z = jax.random.normal(key, (n, self.dim // 2, 2), dtype=jnp.float64)
        a = A_MEAN + np.sqrt(A_VARIANCE) * z[..., 0]
        b = a**2 + np.sqrt(self.Q / 2) * z[..., 1]
        return jnp.stack([a, b], axis=-1).reshape(n, self.dim)

    def initial_position(self) -> np.ndarray:
        """The mean of the truth (appendix C): (1, 3/2) in each pair.

        Returns:
            float64 array of shape (dim,).
        """
        return self.truth.mean.copy()
