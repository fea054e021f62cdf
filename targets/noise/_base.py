"""The gradient-noise model contract."""

from __future__ import annotations

import abc

import numpy as np

from sgbench.base.variates import Variate


class NoiseModel(abc.ABC):
    """How a sampler sees the gradient of ``target``: :meth:`stochastic_grad` from this step's draw.

    Built by ``sgbench.targets.noise.make_noise`` once the target's dimension and truth (and, for data
    targets, its data) are set; models that scale with the target read them from ``target``
    (``spatial`` uses the marginal standard deviation of :math:`x_2`, ``minibatch`` the data).
    Subclasses take their parameters as keyword arguments, validate them, and report them in
    :meth:`params`.
    """

    name: str

    def __init__(self, target):
        self.target = target
        self.dim = target.dim

    @abc.abstractmethod
    def draw_spec(self) -> dict[str, Variate]:
        """The random variates one stochastic gradient consumes.

        Returns:
            dict of variate name to :class:`Variate` (shape and law of each).
        """

    @abc.abstractmethod
    def stochastic_grad(self, x, draw):
        """The gradient of the log density at ``x`` as a sampler sees it, given this draw.

        Args:
            x: a position, shape (dim,) (analytic targets also accept leading batch axes, (..., dim)).
            draw: this step's draw of :meth:`draw_spec`, a dict keyed like it.

        Returns:
            the stochastic gradient, shape of ``x``.
        """

    @abc.abstractmethod
    def stochastic_logdensity(self, x, draw):
        """The log density at ``x`` whose gradient is :meth:`stochastic_grad` (for additive noise,
        with the noise held fixed), from the same draw: what a sampler that monitors an energy
        (the microcanonical family) sees.

        Args:
            x: a position, shape (dim,) (analytic targets also accept leading batch axes, (..., dim)).
            draw: this step's draw of :meth:`draw_spec`, a dict keyed like it.

        Returns:
            the log density, shape ``x.shape[:-1]``.
        """

    @abc.abstractmethod
    def covariance(self, x) -> np.ndarray | None:
        """The covariance V(x) of the stochastic gradient at ``x``, (dim, dim); None where
        second moments do not exist.

        Args:
            x: one position, shape (dim,).

        Returns:
            float64 array of shape (dim, dim), or None.
        """

    def params(self) -> dict:
        """The model's parameters, as given to targets (without the ``noise_`` prefix).

        Returns:
            dict of parameter name to value (empty for a model without parameters).
        """
        return {}


class AdditiveNoise(NoiseModel):
    r"""Noise added to the exact gradient, eq. (24) of the SMILE paper:
    :math:`\log p(x) + \epsilon^\top x` with gradient :math:`\nabla \log p(x) + \epsilon(x, \text{draw})`
    (:math:`\epsilon` held fixed where it depends on :math:`x`)."""

    @abc.abstractmethod
    def noise(self, x, draw):
        r""":math:`\epsilon` at ``x`` for this draw (same shape as ``x``).

        Args:
            x: a position, shape (dim,) (analytic targets also accept leading batch axes, (..., dim)).
            draw: this step's draw of :meth:`draw_spec`, a dict keyed like it.

        Returns:
            the noise, shape of ``x``.
        """

    def stochastic_grad(self, x, draw):
        r""":math:`\nabla \log p(x) + \epsilon(x, \text{draw})`: the target's exact gradient plus :meth:`noise`.

        Args:
            x: a position, shape (dim,) (analytic targets also accept leading batch axes, (..., dim)).
            draw: this step's draw of :meth:`draw_spec`, a dict keyed like it.

        Returns:
            the stochastic gradient, shape of ``x``.
        """
        return self.target.grad_logdensity(x) + self.noise(x, draw)

    def stochastic_logdensity(self, x, draw):
        r""":math:`\log p(x) + \epsilon^\top x` with :math:`\epsilon` = :meth:`noise` at ``x`` for this draw.

        Args:
            x: a position, shape (dim,) (analytic targets also accept leading batch axes, (..., dim)).
            draw: this step's draw of :meth:`draw_spec`, a dict keyed like it.

        Returns:
            the log density, shape ``x.shape[:-1]``.
        """
        return self.target.logdensity(x) + (self.noise(x, draw) * x).sum(axis=-1)
