"""A target whose log density is a JAX function of one unconstrained position, jitted and vectorised over leading
batch axes, its gradient by ``jax.grad``; NumPy input is evaluated in float64 with a NumPy result, JAX input as given
(traceable)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from sgbench.targets._contract import Target


def evaluate(function, x):
    """``function`` at ``x``: in float64 with a NumPy result for NumPy (or list, or float) input, else as given (a
    JAX array, traceable).

    Args:
        function: a JAX function of one position (or a batch of them).
        x: the position(s).

    Returns:
        ``function(x)``, a NumPy array for NumPy input.
    """
    if isinstance(x, np.ndarray | float | list):
        with jax.enable_x64(True):
            return np.asarray(function(jnp.asarray(x, dtype=jnp.float64)))
    return function(x)


class JaxDensityTarget(Target):
    """Subclasses define ``_unconstrained_log_density(u)`` for one position and call :meth:`compile_density` in their
    ``__init__``."""

    def compile_density(self) -> None:
        """Jit the log density and its gradient, vectorised over leading batch axes."""
        self._log_density = jax.jit(jnp.vectorize(self._unconstrained_log_density, signature="(d)->()"))
        self._grad = jax.jit(jnp.vectorize(jax.grad(self._unconstrained_log_density), signature="(d)->(d)"))

    def logdensity(self, x):
        """The log density on the unconstrained space (up to the model's normaliser).

        Args:
            x: a position, shape (dim,), or positions with leading batch axes, (..., dim).

        Returns:
            shape ``x.shape[:-1]``: a NumPy array for NumPy input, a JAX array (traceable) for JAX input.
        """
        return evaluate(self._log_density, x)

    def grad_logdensity(self, x):
        """``jax.grad`` of :meth:`logdensity`.

        Args:
            x: a position, shape (dim,), or positions with leading batch axes, (..., dim).

        Returns:
            the gradient, shape of ``x`` (NumPy for NumPy input).
        """
        return evaluate(self._grad, x)
