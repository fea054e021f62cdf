r"""Neal's funnel, appendix C of the SMILE paper.

The paper writes ":math:`\theta_1 \sim \mathcal N(0, 3)` and :math:`\theta_i \sim \mathcal N(0, e^{\theta/2})`,
:math:`i \in [2, \dots, 10]`". We read it as Neal's (2003) standard funnel, with scales as standard
deviations: :math:`v = x_1 \sim \mathcal N(0, s^2)` with :math:`s = 3`, and
:math:`x_i \mid v \sim \mathcal N(0, e^{v})` (standard deviation :math:`e^{v/2}`), :math:`i = 2..d`, :math:`d = 10`:

.. math:: \log p(x) = -\frac{v^2}{2s^2} - \tfrac12\log(2\pi s^2)
          - \frac{d-1}{2}\big(\log 2\pi + v\big) - \tfrac12 e^{-v} \sum_{i\ge2} x_i^2,

.. math:: \partial_v \log p = -\frac{v}{s^2} - \frac{d-1}{2} + \tfrac12 e^{-v}\sum_{i\ge2} x_i^2, \qquad
          \partial_{x_i} \log p = -e^{-v} x_i.

Truth, from :math:`E[e^{tv}] = e^{t^2 s^2/2}`: :math:`E[v] = 0`, :math:`E[v^2] = s^2`, :math:`\mathrm{Var}[v^2] = 2s^4`;
:math:`E[x_i] = 0`, :math:`E[x_i^2] = E[e^v] = e^{s^2/2}`, :math:`E[x_i^4] = 3E[e^{2v}] = 3e^{2s^2}`, so
:math:`\mathrm{Var}[x_i^2] = 3e^{2s^2} - e^{s^2}`; the covariance is diagonal (every off-diagonal product is
odd in some :math:`x_i` given :math:`v`). Exact draws: :math:`v = s z_1`, :math:`x_i = e^{v/2} z_i`.
Chains start at the mean, 0 (appendix C).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from sgbench import targets
from sgbench.base.arguments import integer_at_least, positive_finite
from sgbench.base.backend import constant, namespace
from sgbench.targets._contract import MAX_DIM, Target
from sgbench.targets._truth import Truth
from sgbench.targets.noise import make_noise

MAX_SCALE = 18.0  # the truth's Var[x_i^2] = 3 exp(2 scale^2) - exp(scale^2) overflows float64 beyond ~18.8


@targets.register("funnel")
class Funnel(Target):
    """``dim`` (2 to ``MAX_DIM``; default 10) coordinates: the log-scale ``v = x[0]`` with standard deviation
    ``scale`` (in (0, ``MAX_SCALE``]; default 3) and ``dim - 1`` coordinates of variance ``exp(v)``."""

    name = "funnel"

    def __init__(self, dim=10, scale=3.0, noise="none", **noise_params):
        self.dim = integer_at_least("dim", dim, 2, MAX_DIM)
        self.scale = positive_finite("scale", scale)
        if self.scale > MAX_SCALE:
            raise ValueError(f"scale must be a number in (0, {MAX_SCALE:g}] (the truth's Var[x_i^2] = "
                             f"3 exp(2 scale^2) - exp(scale^2) must be finite), got {scale!r}")
        s2 = self.scale**2
        self._log_normaliser = -0.5 * np.log(2 * np.pi * s2) - 0.5 * (self.dim - 1) * np.log(2 * np.pi)
        rest = np.ones(self.dim - 1)
        second_moment = np.array([s2, *np.exp(s2 / 2) * rest])
        self.truth = Truth.analytic(np.zeros(self.dim), second_moment,
                                    np.array([2 * s2**2, *(3 * np.exp(2 * s2) - np.exp(s2)) * rest]),
                                    np.diag(second_moment))
        self.noise = make_noise(noise, self, **noise_params)
        self.params = dict(dim=self.dim, scale=self.scale, **self.noise_params())

    def logdensity(self, x):
        r""":math:`\log p(x)` of the module docstring, with :math:`v = x_1`.

        Args:
            x: a position, shape (dim,), or positions with leading batch axes, (..., dim).

        Returns:
            the log density, shape ``x.shape[:-1]``.
        """
        xp = namespace(x)
        v, rest = x[..., 0], x[..., 1:]
        return (-0.5 * v**2 / constant(self.scale**2, x) - 0.5 * (self.dim - 1) * v
                - 0.5 * xp.exp(-v) * xp.sum(rest**2, axis=-1) + constant(self._log_normaliser, x))

    def grad_logdensity(self, x):
        r""":math:`(\partial_v \log p, \partial_{x_2} \log p, \dots)` of the module docstring.

        Args:
            x: a position, shape (dim,), or positions with leading batch axes, (..., dim).

        Returns:
            the gradient, shape of ``x``.
        """
        xp = namespace(x)
        v, rest = x[..., 0], x[..., 1:]
        precision = xp.exp(-v)
        grad_v = -v / constant(self.scale**2, x) - 0.5 * (self.dim - 1) + 0.5 * precision * xp.sum(rest**2, axis=-1)
        return xp.concatenate([grad_v[..., None], -precision[..., None] * rest], axis=-1)

    def sample(self, key, n: int):
        r"""``n`` exact draws: :math:`v = s z_1`, :math:`x_i = e^{v/2} z_i`, :math:`z \sim \mathcal N(0, I)`.

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
        v = self.scale * z[:, :1]
        return jnp.concatenate([v, jnp.exp(v / 2) * z[:, 1:]], axis=-1)

    def initial_position(self) -> np.ndarray:
        """The mean, 0 (appendix C).

        Returns:
            float64 array of zeros, shape (dim,).
        """
        return np.zeros(self.dim)
