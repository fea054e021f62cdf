"""No noise: the exact gradient (V = 0)."""

from __future__ import annotations

import numpy as np

from sgbench.targets.noise import register
from sgbench.targets.noise._base import NoiseModel


@register("none")
class NoNoise(NoiseModel):
    """Exact gradients."""

    def draw_spec(self):
        return {}

    def stochastic_grad(self, x, draw):
        return self.target.grad_logdensity(x)

    def stochastic_logdensity(self, x, draw):
        return self.target.logdensity(x)

    def covariance(self, x):
        return np.zeros((self.dim, self.dim))
