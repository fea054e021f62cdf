r"""A per-datum likelihood written in JAX (``sgbench.targets._per_datum``), its gradients by ``jax.grad``.

``log_prior(u)`` is the log prior on the target's position (the log Jacobian of an unconstrained
parameterisation included) and ``log_term(u, datum)`` the log likelihood of one datum, ``datum`` a dict of one
row of each array of ``data`` (arrays with a leading data axis of length N). Floating data take the position's
dtype (a float32 chain stays float32); integer data (indices into parameters) are int32, JAX's integer in either
precision mode. The methods take one
position (dim,) and data ``indices`` (an integer array, repeats counted; None: all N data), as
``PerDatumTarget``'s do, and return NumPy float64 for NumPy input (``sgbench.targets._jax_density.evaluate``).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from sgbench.targets._jax_density import evaluate
from sgbench.targets._per_datum import PerDatumTarget


class JaxPerDatumTarget(PerDatumTarget):
    """A target whose model may split its likelihood per datum (:meth:`split_likelihood`); without a split,
    ``num_data`` is 0 and the minibatch noise refuses it."""

    _split: dict | None = None

    def split_likelihood(self, log_prior, log_term, data: dict) -> None:
        """Compile the split (module docstring).

        Args:
            log_prior: ``u -> log prior``.
            log_term: ``(u, datum) -> log likelihood of one datum``.
            data: name -> array with a leading data axis.
        """
        data = {key: jnp.asarray(value, dtype=jnp.int32) if np.issubdtype(np.asarray(value).dtype, np.integer)
                else jnp.asarray(value) for key, value in data.items()}  # indices: int32 in either mode
        size = int(next(iter(data.values())).shape[0])

        def rows(u, indices):
            return {key: (value.astype(u.dtype) if jnp.issubdtype(value.dtype, jnp.floating) else value)[indices]
                    for key, value in data.items()}

        def terms(u, indices):
            return jax.vmap(log_term, in_axes=(None, 0))(u, rows(u, indices))

        self._split = {"num_data": size, "log_prior": jax.jit(log_prior),
                       "grad_log_prior": jax.jit(jax.grad(log_prior)), "terms": jax.jit(terms),
                       "grad_sum": jax.jit(jax.grad(lambda u, indices: jnp.sum(terms(u, indices)))),
                       "grad_terms": jax.jit(lambda u, indices: jax.vmap(jax.grad(log_term), in_axes=(None, 0))(
                           u, rows(u, indices)))}

    @property
    def num_data(self) -> int:
        """N, or 0 without a split."""
        return 0 if self._split is None else self._split["num_data"]

    def _part(self, name: str, x, indices=None, with_indices: bool = False):
        if self._split is None:
            raise ValueError(f"target {self.name!r} with {self.params!r} has no per-datum likelihood")
        function = self._split[name]
        if not with_indices:
            return evaluate(function, x)
        chosen = np.arange(self._split["num_data"]) if indices is None else indices
        return evaluate(lambda u: function(u, chosen), x)

    def log_prior(self, x):
        """``log_prior`` of the split.

        Args:
            x: one position, shape (dim,).

        Returns:
            a number.
        """
        return self._part("log_prior", x)

    def grad_log_prior(self, x):
        """Its gradient.

        Args:
            x: one position, shape (dim,).

        Returns:
            shape (dim,).
        """
        return self._part("grad_log_prior", x)

    def log_likelihood_terms(self, x, indices=None):
        """``log_term`` of each datum at ``indices``.

        Args:
            x: one position, shape (dim,).
            indices: data indices, or None for all N.

        Returns:
            shape (len(indices),), or (N,).
        """
        return self._part("terms", x, indices, with_indices=True)

    def grad_log_likelihood(self, x, indices=None):
        """The gradient of their sum.

        Args:
            x: one position, shape (dim,).
            indices: data indices, or None for all N.

        Returns:
            shape (dim,).
        """
        return self._part("grad_sum", x, indices, with_indices=True)

    def grad_log_likelihood_terms(self, x, indices=None):
        """Each one's gradient.

        Args:
            x: one position, shape (dim,).
            indices: data indices, or None for all N.

        Returns:
            shape (len(indices), dim), or (N, dim).
        """
        return self._part("grad_terms", x, indices, with_indices=True)
