r"""'Spatially-varied' noise of appendix C of the SMILE paper (eq. 24).

:math:`V_{\text{spa}}(x) = V_{\text{corr}} \exp(-x_2 / \sigma(x_2))`, :math:`x_2` the second
coordinate and :math:`\sigma(x_2)` its marginal standard deviation under the target (from the
target's truth); :math:`\epsilon = \exp(-x_2 / (2\sigma)) L z` with :math:`L L^\top = V_{\text{corr}}`.
"""

from __future__ import annotations

import math

import numpy as np

from sgbench.base.backend import constant, namespace
from sgbench.targets.noise import register
from sgbench.targets.noise.correlated import CorrelatedNoise


@register("spatial")
class SpatialNoise(CorrelatedNoise):
    """The 'correlated' model scaled by :math:`\\exp(-x_2/\\sigma)`; needs a target of dimension >= 2
    with truth (``truth.covariance[1, 1]`` is :math:`\\sigma^2`). ``x`` may be batched, (..., dim)."""

    def __init__(self, target, variance=256.0, condition_number=1e4, rotation_seed=1):
        if target.dim < 2:
            raise ValueError(f"noise='spatial' scales by the second coordinate x_2 and needs a target of "
                             f"dim >= 2, got dim={target.dim}")
        if target.truth is None:
            raise ValueError("noise='spatial' divides x_2 by its standard deviation under the target and needs "
                             f"a target with truth; {type(target).__name__} has none")
        super().__init__(target, variance, condition_number, rotation_seed)
        self.sigma = math.sqrt(float(target.truth.covariance[1, 1]))

    def noise(self, x, draw):
        r""":math:`\epsilon = \exp(-x_2 / (2\sigma)) L z`: the 'correlated' noise scaled at ``x``.

        Args:
            x: a position, shape (dim,), or positions with leading batch axes, (..., dim).
            draw: this step's draw of :meth:`draw_spec`: ``gradient_noise``, standard normal, shape (dim,).

        Returns:
            the noise, shape of ``x`` (broadcast with the draw's).
        """
        factor = namespace(x).exp(x[..., 1:2] * constant(-0.5 / self.sigma, x))
        return factor * super().noise(x, draw)

    def covariance(self, x):
        r""":math:`V_{\text{spa}}(x) = V_{\text{corr}} \exp(-x_2 / \sigma)`.

        Args:
            x: a position, shape (dim,), or positions with leading batch axes, (..., dim).

        Returns:
            float64 array of shape (..., dim, dim).
        """
        x = np.asarray(x, dtype=np.float64)
        return np.exp(-x[..., 1] / self.sigma)[..., None, None] * self.matrix
