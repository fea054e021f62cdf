r"""'Isotropic' noise of appendix C of the SMILE paper: :math:`V = \sigma^2 I`, :math:`\sigma^2 = 256`."""

from __future__ import annotations

import math

import numpy as np

from sgbench.base.arguments import positive_finite
from sgbench.base.variates import Variate
from sgbench.targets.noise import register
from sgbench.targets.noise._base import AdditiveNoise


@register("isotropic")
class IsotropicNoise(AdditiveNoise):
    """``variance`` > 0 (default 256): :math:`\\epsilon = \\sqrt{variance}\\, z`, :math:`z \\sim N(0, I)`."""

    def __init__(self, target, variance=256.0):
        super().__init__(target)
        self.variance = positive_finite("noise_variance", variance)

    def draw_spec(self):
        """One standard normal vector per evaluation.

        Returns:
            ``{"gradient_noise": Variate("normal", (dim,))}``.
        """
        return {"gradient_noise": Variate("normal", (self.dim,))}

    def noise(self, x, draw):
        r""":math:`\epsilon = \sqrt{\text{variance}}\, z` (independent of ``x``).

        Args:
            x: a position (not read).
            draw: this step's draw of :meth:`draw_spec`: ``gradient_noise``, standard normal, shape (dim,).

        Returns:
            the noise, shape (dim,) (the draw's shape).
        """
        return math.sqrt(self.variance) * draw["gradient_noise"]

    def covariance(self, x):
        r""":math:`\sigma^2 I`, the same at every position.

        Args:
            x: a position (not read).

        Returns:
            float64 array of shape (dim, dim).
        """
        return self.variance * np.eye(self.dim)

    def params(self):
        """The model's parameters.

        Returns:
            ``{"variance": ...}``.
        """
        return {"variance": self.variance}
