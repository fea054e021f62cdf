r"""A vector target seen as one matrix layer without bias: the setting of PX-SGMCMC's section 5.1
(Kim et al. 2025, PX-SGMCMC paper), :math:`x = \mathbf W_3 \mathbf W_2 \mathbf W_1 x`.

The adapter declares the capability the parameter-expanded samplers ask for, ``matrix_layers``
(``((n_in, n_out, has_bias), ...)``: here one 1 x n layer, so the left expanded matrices are n x n
and the right ones 1 x 1), and ``prior_scale``, the default scale of the Gaussian the expansion puts
on every expanded parameter. As a target it is the wrapped one: the same density, gradients, noise,
truth and start, and no prior of its own (``prior_variance`` infinite, ``grad_log_prior`` 0), so
base samplers run on it exactly as on the wrapped target.
"""

from __future__ import annotations

import math

from sgbench.base.arguments import one_of, positive_finite
from sgbench.targets._contract import Target


class SingleLayerTarget(Target):
    """``inner`` as one matrix layer without bias (module docstring).

    Args:
        inner: a registered vector target (not already wrapped).
        prior_scale: the standard deviation of the Gaussian on the expanded parameters, > 0.
    """

    prior_variance = math.inf  # no prior of its own: the whole density is the "likelihood"

    def __init__(self, inner, prior_scale=1.0):
        if isinstance(inner, SingleLayerTarget) or not isinstance(inner, Target):
            raise TypeError(f"single_layer wraps a targets Target (not already wrapped), got {inner!r}")
        self.inner = inner
        self.prior_scale = positive_finite("prior_scale", prior_scale)
        self.name = f"{inner.name}_single_layer"
        self.dim = inner.dim
        self.truth = inner.truth
        self.noise = inner.noise
        self.matrix_layers = ((1, inner.dim, False),)
        self.params = {**inner.params, "single_layer_prior_scale": self.prior_scale}

    def logdensity(self, x):
        """The wrapped target's log density.

        Args:
            x: a position, shape (dim,) (the wrapped target's accepted shapes).

        Returns:
            the log density, shape ``x.shape[:-1]``.
        """
        return self.inner.logdensity(x)

    def grad_logdensity(self, x):
        """The wrapped target's exact gradient.

        Args:
            x: a position, shape (dim,) (the wrapped target's accepted shapes).

        Returns:
            the gradient, shape of ``x``.
        """
        return self.inner.grad_logdensity(x)

    def stochastic_grad(self, x, draw):
        """The wrapped target's stochastic gradient from this step's ``draw``.

        Args:
            x: a position, shape (dim,) (the wrapped target's accepted shapes).
            draw: this step's draw of ``draw_spec``, a dict keyed like it.

        Returns:
            the stochastic gradient, shape of ``x``.
        """
        return self.inner.stochastic_grad(x, draw)

    @property
    def draw_spec(self):
        """The wrapped target's ``draw_spec``: the variates one stochastic-gradient evaluation consumes."""
        return self.inner.draw_spec

    def grad_log_prior(self, x):
        """0: the adapter has no prior of its own (its density is the whole target's).

        Args:
            x: a position, shape (dim,).

        Returns:
            zeros of the shape of ``x``.
        """
        return 0 * x

    def sample(self, key, n):
        """The wrapped target's exact draws.

        Args:
            key: a JAX PRNG key.
            n: the number of draws, >= 1.

        Returns:
            float64 array of shape (n, dim).

        Raises:
            NoExactSamplerError: the wrapped target has no exact sampler.
        """
        return self.inner.sample(key, n)

    def initial_position(self):
        """The wrapped target's starting point.

        Returns:
            float64 array of shape (dim,).
        """
        return self.inner.initial_position()

    def __repr__(self):
        return f"sgbench.targets.single_layer({self.inner!r}, prior_scale={self.prior_scale!r})"


def single_layer(target, prior_scale=1.0) -> SingleLayerTarget:
    """``target`` (any vector target of dimension n) as one 1 x n matrix layer (module docstring).
    ``truth`` is the target's: exact for base samplers, not for PX chains, whose marginal law
    carries the Gaussian prior on the factors.

    Args:
        target: a vector target.
        prior_scale: the expansion's prior standard deviation, > 0.

    Returns:
        the adapter.
    """
    return SingleLayerTarget(target, prior_scale)


# Target adapters by the name a sampler's benchmark settings give (``BenchmarkSettings.wrapper``).
ADAPTERS = {"single_layer": single_layer}


def adapted(target, wrapper: str | None):
    """``target`` as a sampler that declares ``wrapper`` sees it.

    Args:
        target: a target.
        wrapper: a key of ``ADAPTERS``, or None for the target itself.

    Returns:
        the adapted target (``target`` itself for None).
    """
    return target if wrapper is None else ADAPTERS[one_of("wrapper", wrapper, tuple(ADAPTERS))](target)
