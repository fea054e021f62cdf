r"""The energy-error model of SMILE's Algorithm 1 (SMILE paper, section 4.2, appendix F.3): moving
averages of :math:`|\Delta E|`, a Gamma fit by moment matching, Wilson-Hilferty quantiles, and the
decisions they drive. One formula for NumPy and JAX arrays (``xp`` is ``numpy`` or ``jax.numpy``).

.. math::
    \mu^{(t+1)} = (1-\beta)\mu^{(t)} + \beta|\Delta E|, \qquad
    (\sigma^{(t+1)})^2 = (1-\beta)(\sigma^{(t)})^2 + \beta(|\Delta E| - \mu^{(t+1)})^2 \quad\text{(eq. 4)},

    k = \mu^2/\sigma^2, \quad \theta = \sigma^2/\mu \quad\text{(eq. 5)}, \qquad
    Ga^{-1}(p; k, \theta) = k\theta\,\big(1 - \tfrac{1}{9k} + \tfrac{z}{3\sqrt k}\big)^3 \quad\text{(F.3)},

with smoothing :math:`\beta` (0.01) from :math:`\mu^{(0)} = \sigma^{(0)} = 0`, both moments read with the
bias correction :math:`1/(1 - (1-\beta)^t)` after :math:`t` observations, :math:`z = \Phi^{-1}(p)`, and the
quantile clamped at 0. The paper prints eq. 5 with :math:`k` and :math:`\theta` swapped: a typo, corrected
here.

Derivation and notes: docs/derivations.md, section sgbench.samplers._energy_tuning.
"""

from __future__ import annotations

import jax.scipy.special
import numpy as np
import scipy.special


def _normal_quantile(p, xp):
    return scipy.special.ndtri(p) if xp is np else jax.scipy.special.ndtri(p)


def update_moments(mean, variance, value, smoothing):
    """Eq. 4: the moving averages after one more observation ``value``.

    Args:
        mean: the moving mean.
        variance: the moving variance.
        value: the new observation (|dE|; pSMILE's preconditioner passes a gradient, elementwise).
        smoothing: the smoothing factor, in (0, 1].

    Returns:
        (mean, variance) after the observation.
    """
    mean = (1 - smoothing) * mean + smoothing * value
    variance = (1 - smoothing) * variance + smoothing * (value - mean) ** 2
    return mean, variance


def gamma_fit(mean, variance, count, smoothing, xp):
    """(shape, scale, usable) of the Gamma law matching the bias-corrected moving moments after
    ``count`` observations (eq. 5, corrected); ``usable`` is False before any spread is seen.

    Args:
        mean: the moving mean of |dE|, not bias-corrected.
        variance: its moving variance, not bias-corrected.
        count: the observations so far.
        smoothing: the smoothing factor beta.
        xp: ``numpy`` or ``jax.numpy``.

    Returns:
        (shape, scale, usable); shape and scale are 1 where ``usable`` is False.
    """
    correction = 1 - (1 - smoothing) ** count
    safe = xp.where(correction > 0, correction, 1.0)
    mean, variance = mean / safe, variance / safe
    usable = (count > 0) & (mean > 0) & (variance > 0)
    mean, variance = xp.where(usable, mean, 1.0), xp.where(usable, variance, 1.0)
    return mean**2 / variance, variance / mean, usable


def wilson_hilferty(p, shape, scale, xp):
    """Appendix F.3: the approximate ``p`` quantile of Gamma(``shape``, ``scale``), clamped at 0.

    Args:
        p: the probability, in (0, 1).
        shape: the Gamma shape k > 0.
        scale: the Gamma scale > 0.
        xp: ``numpy`` or ``jax.numpy``.

    Returns:
        the quantile, >= 0.
    """
    z = _normal_quantile(p, xp)
    bracket = 1 - 1 / (9 * shape) + z / (3 * xp.sqrt(shape))
    return shape * scale * xp.maximum(bracket, 0.0) ** 3

