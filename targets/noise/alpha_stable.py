r"""Symmetric :math:`\alpha`-stable gradient noise: heavy-tailed, with no second moments for
:math:`\alpha < 2` (Simsekli et al. 2019), as in section 4.2 of the SGLRW paper
(:math:`\alpha = 1.5`).

Each coordinate of :math:`\epsilon` is i.i.d. ``scale`` times a standard symmetric stable variate,
drawn by the Chambers-Mallows-Stuck algorithm (Chambers, Mallows & Stuck 1976; Weron 1996, eq. 3.1)
from :math:`U` uniform on :math:`(-\pi/2, \pi/2)` and :math:`W` exponential with rate 1:

.. math:: X = \frac{\sin(\alpha U)}{\cos(U)^{1/\alpha}}
          \left(\frac{\cos((1-\alpha) U)}{W}\right)^{(1-\alpha)/\alpha},

with characteristic function :math:`E e^{itX} = e^{-|t|^\alpha}`: scipy's ``levy_stable(alpha, 0)``
(parametrisations S0 and S1 coincide when :math:`\beta = 0`). :math:`\alpha = 1` gives
:math:`\tan U`, the standard Cauchy law; :math:`\alpha = 2` gives :math:`2\sqrt W \sin U`, the
normal law of variance 2.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from sgbench.base.arguments import positive_finite
from sgbench.base.backend import constant, namespace
from sgbench.base.variates import Variate
from sgbench.targets.noise import register
from sgbench.targets.noise._base import AdditiveNoise


def symmetric_stable(uniform, exponential, alpha: float):
    r"""Standard symmetric ``alpha``-stable variates from ``uniform`` on [0, 1) and ``exponential``
    (rate 1) draws of one shape, by the formula of the module docstring; NumPy or JAX arrays.

    :math:`U = \pi(u - 1/2)` with :math:`u` clipped to :math:`[\varepsilon, 1 - \varepsilon]`,
    :math:`\varepsilon` the machine epsilon of the dtype (the spacing of JAX's float32 uniform grid,
    coarser than the float64 grids): the endpoint :math:`u = 0` would give :math:`U = -\pi/2`, where
    :math:`\cos U` rounds to 0 or, in float32, to a negative number (an infinity or a NaN); after
    the clip :math:`|U| < \pi/2` still holds after rounding in both dtypes, so :math:`\cos U > 0`
    and :math:`\cos((1-\alpha)U) > 0`. Likewise :math:`W` is floored at :math:`\varepsilon`, which
    moves only draws below one grid step (:math:`W = 0` has probability :math:`2^{-23}` per float32
    JAX draw). Each changes the law by at most :math:`\varepsilon` in probability; an infinity can
    then only come from overflow of a variate beyond the dtype's range (:math:`\alpha` well below 1).

    Args:
        uniform: uniform draws on [0, 1), any shape (NumPy or JAX, float32 or float64).
        exponential: exponential draws of rate 1, the shape of ``uniform``.
        alpha: the stability index, in (0, 2].

    Returns:
        the standard symmetric stable variates, the shape and dtype of ``uniform``.
    """
    xp = namespace(uniform)
    info = xp.finfo(uniform.dtype)
    u = xp.clip(uniform, constant(info.eps, uniform), constant(1 - info.eps, uniform))
    angle = constant(math.pi, uniform) * (u - constant(0.5, uniform))
    w = xp.maximum(exponential, constant(info.eps, uniform))
    a = constant(alpha, uniform)
    return xp.sin(a * angle) / xp.cos(angle) ** (1 / a) * (xp.cos((1 - a) * angle) / w) ** ((1 - a) / a)


def _stability_index(value) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not 0 < value <= 2:
        raise ValueError(f"noise_alpha must be a number in (0, 2], got {value!r}")
    return float(value)


@register("alpha_stable")
class AlphaStableNoise(AdditiveNoise):
    """``alpha`` in (0, 2] (default 1.5), ``scale`` > 0 (default 1): :math:`\\epsilon_i = `
    ``scale`` :math:`X_i`, i.i.d. ``scipy.stats.levy_stable(alpha, 0, scale=scale)``. The covariance
    is None for ``alpha`` < 2 and :math:`2\\,\\text{scale}^2 I` for ``alpha`` = 2."""

    def __init__(self, target, alpha=1.5, scale=1.0):
        super().__init__(target)
        self.alpha = _stability_index(alpha)
        self.scale = positive_finite("noise_scale", scale)

    def draw_spec(self):
        """One uniform and one exponential vector per evaluation.

        Returns:
            ``{"stable_uniform": Variate("uniform", (dim,)), "stable_exponential": Variate("exponential", (dim,))}``.
        """
        return {"stable_uniform": Variate("uniform", (self.dim,)),
                "stable_exponential": Variate("exponential", (self.dim,))}

    def noise(self, x, draw):
        """``scale`` times :func:`symmetric_stable` of this draw (independent of ``x``).

        Args:
            x: a position (not read).
            draw: this step's draw of :meth:`draw_spec`.

        Returns:
            the noise, shape (dim,) (the draw's shape).
        """
        u = draw["stable_uniform"]
        return constant(self.scale, u) * symmetric_stable(u, draw["stable_exponential"], self.alpha)

    def covariance(self, x):
        r""":math:`2\,\text{scale}^2 I` for ``alpha`` = 2; None below (no second moments).

        Args:
            x: a position (not read).

        Returns:
            float64 array of shape (dim, dim), or None.
        """
        return 2 * self.scale**2 * np.eye(self.dim) if self.alpha == 2 else None

    def params(self):
        """The model's parameters.

        Returns:
            ``{"alpha": alpha, "scale": scale}``.
        """
        return {"alpha": self.alpha, "scale": self.scale}
