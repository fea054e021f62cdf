r"""'Diagonal' noise of appendix C of the SMILE paper (eq. 24).

:math:`V_{\text{diag}} = V_{\text{iso}} \Lambda`: ``variance`` (256) times the ICG eigenvalues
:math:`\Lambda`, log-spaced from :math:`\kappa^{-1/2}` to :math:`\kappa^{1/2}` (1/100 to 100 for
the paper's :math:`\kappa = 10^4`); :math:`\epsilon = V_{\text{diag}}^{1/2} z`, :math:`z \sim N(0, I)`.
"""

from __future__ import annotations

import numpy as np

from sgbench.base.arguments import positive_finite
from sgbench.base.backend import constant
from sgbench.base.variates import Variate
from sgbench.targets.icg import log_spaced_eigenvalues
from sgbench.targets.noise import register
from sgbench.targets.noise._base import AdditiveNoise


@register("diagonal")
class DiagonalNoise(AdditiveNoise):
    """``variance`` > 0 (default 256) times the eigenvalues of an ICG of condition number
    ``condition_number`` >= 1 (default 1e4). ``self.diagonal`` holds the variances, ``self.std``
    their square roots."""

    def __init__(self, target, variance=256.0, condition_number=1e4):
        super().__init__(target)
        self.variance = positive_finite("noise_variance", variance)
        self.condition_number = positive_finite("noise_condition_number", condition_number)
        if self.condition_number < 1:
            raise ValueError(f"noise_condition_number must be a finite number >= 1, got {condition_number!r}")
        self.diagonal = self.variance * log_spaced_eigenvalues(self.dim, self.condition_number)
        self.std = np.sqrt(self.diagonal)

    def draw_spec(self):
        """One standard normal vector per evaluation.

        Returns:
            ``{"gradient_noise": Variate("normal", (dim,))}``.
        """
        return {"gradient_noise": Variate("normal", (self.dim,))}

    def noise(self, x, draw):
        r""":math:`\epsilon = V_{\text{diag}}^{1/2} z` (independent of ``x``).

        Args:
            x: a position (its namespace and dtype are used).
            draw: this step's draw of :meth:`draw_spec`: ``gradient_noise``, standard normal, shape (dim,).

        Returns:
            the noise, shape (dim,) (the draw's shape).
        """
        z = draw["gradient_noise"]
        return constant(self.std, x) * z

    def covariance(self, x):
        r""":math:`V_{\text{diag}}`, the same at every position.

        Args:
            x: a position (not read).

        Returns:
            float64 array of shape (dim, dim).
        """
        return np.diag(self.diagonal)

    def params(self):
        """The model's parameters.

        Returns:
            ``{"variance": ..., "condition_number": ...}``.
        """
        return {"variance": self.variance, "condition_number": self.condition_number}
