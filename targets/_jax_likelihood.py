r"""A per-datum likelihood written in JAX (``sgbench.targets._per_datum``), its gradients by ``jax.grad``.

``log_prior(u)`` is the log prior on the target's position (the log Jacobian of an unconstrained
parameterisation included) and ``log_term(u, datum)`` the log likelihood of one datum, ``datum`` a dict of one
row of each array of ``data`` (arrays with a leading data axis of length N). Floating data take the position's
dtype (a float32 chain stays float32); integer data (indices into parameters) stay integers.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from sgbench.targets._per_datum import PerDatumTarget


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


class JaxLikelihood:
    """``log_prior``, ``log_term`` and ``data`` as in the module docstring; the methods take one position (dim,)
    and data ``indices`` (an integer array, repeats counted; None: all N data), as ``PerDatumTarget``'s do."""

    def __init__(self, log_prior, log_term, data: dict):
        self.data = {key: jnp.asarray(value) for key, value in data.items()}
        self.num_data = int(next(iter(self.data.values())).shape[0])

        def rows(u, indices):
            return {key: (value.astype(u.dtype) if jnp.issubdtype(value.dtype, jnp.floating) else value)[indices]
                    for key, value in self.data.items()}

        def terms(u, indices):
            return jax.vmap(log_term, in_axes=(None, 0))(u, rows(u, indices))

        self._log_prior = jax.jit(log_prior)
        self._grad_log_prior = jax.jit(jax.grad(log_prior))
        self._terms = jax.jit(terms)
        self._grad_sum = jax.jit(jax.grad(lambda u, indices: jnp.sum(terms(u, indices))))
        self._grad_terms = jax.jit(lambda u, indices: jax.vmap(jax.grad(log_term), in_axes=(None, 0))(
            u, rows(u, indices)))

    def _all(self, indices):
        return np.arange(self.num_data) if indices is None else indices

    def log_prior(self, x):
        """The log prior (with the log Jacobian).

        Args:
            x: one position, shape (dim,).

        Returns:
            a number (NumPy float64 for NumPy input).
        """
        return evaluate(self._log_prior, x)

    def grad_log_prior(self, x):
        """The gradient of :meth:`log_prior`.

        Args:
            x: one position, shape (dim,).

        Returns:
            shape (dim,).
        """
        return evaluate(self._grad_log_prior, x)

    def log_likelihood_terms(self, x, indices=None):
        """The per-datum log likelihoods at ``indices``.

        Args:
            x: one position, shape (dim,).
            indices: data indices, or None for all N data.

        Returns:
            shape (len(indices),), or (N,).
        """
        return evaluate(lambda u: self._terms(u, self._all(indices)), x)

    def grad_log_likelihood(self, x, indices=None):
        """The gradient of the summed log likelihood of the data at ``indices``.

        Args:
            x: one position, shape (dim,).
            indices: data indices, or None for all N data.

        Returns:
            shape (dim,).
        """
        return evaluate(lambda u: self._grad_sum(u, self._all(indices)), x)

    def grad_log_likelihood_terms(self, x, indices=None):
        """The per-datum gradients at ``indices``.

        Args:
            x: one position, shape (dim,).
            indices: data indices, or None for all N data.

        Returns:
            shape (len(indices), dim), or (N, dim).
        """
        return evaluate(lambda u: self._grad_terms(u, self._all(indices)), x)


class JaxPerDatumTarget(PerDatumTarget):
    """A target whose per-datum methods are its ``likelihood`` (a :class:`JaxLikelihood`, or None where its model has
    no per-datum split: ``num_data`` is then 0 and the minibatch noise refuses it)."""

    likelihood: JaxLikelihood | None = None

    @property
    def num_data(self) -> int:
        """N, or 0 without a per-datum likelihood."""
        return 0 if self.likelihood is None else self.likelihood.num_data

    def _split(self) -> JaxLikelihood:
        if self.likelihood is None:
            raise ValueError(f"target {self.name!r} with {self.params!r} has no per-datum likelihood")
        return self.likelihood

    def log_prior(self, x):
        """See :class:`JaxLikelihood`.

        Args:
            x: one position, shape (dim,).

        Returns:
            a number.
        """
        return self._split().log_prior(x)

    def grad_log_prior(self, x):
        """See :class:`JaxLikelihood`.

        Args:
            x: one position, shape (dim,).

        Returns:
            shape (dim,).
        """
        return self._split().grad_log_prior(x)

    def log_likelihood_terms(self, x, indices=None):
        """See :class:`JaxLikelihood`.

        Args:
            x: one position, shape (dim,).
            indices: data indices, or None for all N data.

        Returns:
            shape (len(indices),), or (N,).
        """
        return self._split().log_likelihood_terms(x, indices)

    def grad_log_likelihood(self, x, indices=None):
        """See :class:`JaxLikelihood`.

        Args:
            x: one position, shape (dim,).
            indices: data indices, or None for all N data.

        Returns:
            shape (dim,).
        """
        return self._split().grad_log_likelihood(x, indices)

    def grad_log_likelihood_terms(self, x, indices=None):
        """See :class:`JaxLikelihood`.

        Args:
            x: one position, shape (dim,).
            indices: data indices, or None for all N data.

        Returns:
            shape (len(indices), dim), or (N, dim).
        """
        return self._split().grad_log_likelihood_terms(x, indices)
