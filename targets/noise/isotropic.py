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
        return {"gradient_noise": Variate("normal", (self.dim,))}

    def noise(self, x, draw):
        return math.sqrt(self.variance) * draw["gradient_noise"]

    def covariance(self, x):
        return self.variance * np.eye(self.dim)

    def params(self):
        return {"variance": self.variance}
