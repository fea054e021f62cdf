r"""Raw moments of a normal law, the building block of the analytic truths of non-Gaussian targets.

For :math:`y \sim \mathcal N(m, s^2)`, expanding :math:`y = m + s z` binomially and using
:math:`E[z^{2k}] = (2k-1)!!` (odd moments vanish):

.. math:: E[y^n] = \sum_{k=0}^{\lfloor n/2 \rfloor} \binom{n}{2k} m^{n-2k} s^{2k} (2k-1)!!,

e.g. :math:`E[y^4] = m^4 + 6 m^2 s^2 + 3 s^4`.
"""

from __future__ import annotations

import math

import numpy as np


def double_factorial(n: int) -> int:
    """n!! for n >= -1 (with (-1)!! = 0!! = 1).

    Args:
        n: an integer >= -1.

    Returns:
        int.
    """
    return math.prod(range(n, 0, -2)) if n > 0 else 1


def gaussian_raw_moment(order: int, mean, variance):
    """E[y^order] for y ~ N(mean, variance), elementwise over array-like ``mean`` and ``variance``.

    Args:
        order: the moment's order n >= 0.
        mean: the normal law's mean, a number or an array.
        variance: its variance, a number or an array.

    Returns:
        float64 array of the broadcast shape of ``mean`` and ``variance``.
    """
    mean = np.asarray(mean, dtype=np.float64)
    variance = np.asarray(variance, dtype=np.float64)
    return sum(math.comb(order, 2 * k) * mean ** (order - 2 * k) * variance**k * double_factorial(2 * k - 1)
               for k in range(order // 2 + 1))
