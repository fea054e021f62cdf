"""No noise: the exact gradient (V = 0)."""

from __future__ import annotations

import numpy as np

from sgbench.targets.noise import register
from sgbench.targets.noise._base import NoiseModel


@register("none")
class NoNoise(NoiseModel):
    """Exact gradients."""

    def draw_spec(self):
        """No variates: the exact gradient consumes none.

        Returns:
            ``{}``.
        """
        return {}

    def stochastic_grad(self, x, draw):
        """The target's exact gradient.

        Args:
            x: a position, shape (dim,) (analytic targets also accept leading batch axes, (..., dim)).
            draw: this step's draw, ``{}`` (not read).

        Returns:
            the gradient, shape of ``x``.
        """
        return self.target.grad_logdensity(x)

    def stochastic_logdensity(self, x, draw):
        """The target's exact log density.

        Args:
            x: a position, shape (dim,) (analytic targets also accept leading batch axes, (..., dim)).
            draw: this step's draw, ``{}`` (not read).

        Returns:
            the log density, shape ``x.shape[:-1]``.
        """
        return self.target.logdensity(x)

    def covariance(self, x):
        """V = 0.

        Args:
            x: a position (not read).

        Returns:
            float64 array of zeros, shape (dim, dim).
        """
        return np.zeros((self.dim, self.dim))
