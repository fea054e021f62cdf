r"""One-dimensional multimodal Gaussian mixture, the toy target of section 4.2 (Figures 2 and 8) of
the SGLRW paper, where its exact gradient is corrupted by
alpha-stable or Gaussian noise.

.. math:: p(x) = \sum_k w_k \mathcal N(x; \mu_k, \sigma_k^2).

The paper does not give the mixture's parameters; the defaults here are our choice: three
components at :math:`\mu = (-4, 0, 4)` with unit scales and unequal weights :math:`(0.2, 0.5, 0.3)`,
so the modes are four standard deviations apart (the density at the two saddles, x = -2.31 and
2.17, is 0.41 and 0.35 times that of the lower neighbouring peak) and the mean, :math:`0.4`, is not
a symmetry point. Density, gradient
(responsibilities), exact moments :math:`E[x^n] = \sum_k w_k E[(\mu_k + \sigma_k z)^n]` and exact
draws are those of :mod:`sgbench.targets._mixture`. Chains start at the mean.
"""

from __future__ import annotations

import math

import numpy as np

from sgbench import targets
from sgbench.base.arguments import finite, integer_at_least, positive_finite
from sgbench.targets._contract import Target
from sgbench.targets._mixture import GaussianMixture1d
from sgbench.targets._truth import Truth
from sgbench.targets.noise import make_noise


def per_component(name: str, values, check, size: int | None = None) -> tuple[float, ...]:
    """``values`` as a tuple of floats, each passed through ``check``; ValueError unless ``values``
    is a non-empty sequence (of length ``size`` where given).

    Args:
        name: the parameter's name, for the message.
        values: the sequence given.
        check: validates one entry, ``check(name, value) -> float`` (e.g. ``positive_finite``).
        size: the required length, or None.

    Returns:
        tuple of float.

    Raises:
        ValueError: ``values`` is not a non-empty sequence of that length, or an entry fails ``check``.
    """
    if isinstance(values, str) or np.ndim(values) != 1 or len(values) == 0:
        raise ValueError(f"{name} must be a non-empty sequence of numbers (one per component), got {values!r}")
    if size is not None and len(values) != size:
        raise ValueError(f"{name} must have one entry per component ({size}, as weights), got {len(values)}")
    return tuple(check(f"{name}[{i}]", v) for i, v in enumerate(values))


@targets.register("multimodal1d")
class Multimodal1d(Target):
    """Mixture with ``weights`` (> 0, normalised to sum 1; default (0.2, 0.5, 0.3)), ``means``
    (finite; default (-4, 0, 4)) and ``scales`` (standard deviations > 0; default (1, 1, 1))."""

    name = "multimodal1d"

    def __init__(self, weights=(0.2, 0.5, 0.3), means=(-4.0, 0.0, 4.0), scales=(1.0, 1.0, 1.0), noise="none",
                 **noise_params):
        weights = per_component("weights", weights, positive_finite)
        means = per_component("means", means, finite, len(weights))
        scales = per_component("scales", scales, positive_finite, len(weights))
        self.mixture = GaussianMixture1d(np.array(weights) / math.fsum(weights), means, scales)
        self.dim = 1
        first, second, fourth = self.mixture.truth_moments("means and scales")
        self.truth = Truth.analytic([first], [second], [fourth - second**2], [[second - first**2]])
        self.noise = make_noise(noise, self, **noise_params)
        self.params = dict(weights=weights, means=means, scales=scales, **self.noise_params())

    def logdensity(self, x):
        r""":math:`\log \sum_k w_k \mathcal N(x; \mu_k, \sigma_k^2)`.

        Args:
            x: a position, shape (1,), or positions with leading batch axes, (..., 1).

        Returns:
            the log density, shape ``x.shape[:-1]``.
        """
        return self.mixture.logdensity(x[..., 0])

    def grad_logdensity(self, x):
        r"""The mixture's derivative (responsibilities), :math:`-\sum_k r_k(x) (x - \mu_k) / \sigma_k^2`.

        Args:
            x: a position, shape (1,), or positions with leading batch axes, (..., 1).

        Returns:
            the gradient, shape of ``x``.
        """
        return self.mixture.grad_logdensity(x[..., 0])[..., None]

    def sample(self, key, n: int):
        """``n`` exact draws: a component by its weight, then Gaussian noise.

        Args:
            key: a JAX PRNG key.
            n: the number of draws, >= 1.

        Returns:
            float64 array of shape (n, 1).

        Raises:
            ValueError: ``n`` < 1.
        """
        integer_at_least("n", n, 1)
        return self.mixture.sample(key, (n, 1))

    def initial_position(self) -> np.ndarray:
        """The mixture's mean.

        Returns:
            float64 array of shape (1,).
        """
        return self.truth.mean.copy()
