"""Pick the array namespace of an input, so one formula serves the NumPy reference and JAX."""

import jax
import jax.numpy as jnp
import numpy as np


def namespace(x):
    """``jax.numpy`` for JAX arrays and tracers, ``numpy`` otherwise.

    Args:
        x: an array, a tracer, or any other value.

    Returns:
        the module ``jax.numpy`` or ``numpy``.
    """
    return jnp if isinstance(x, jax.Array) else np


def constant(value: np.ndarray, like):
    """``value`` in the namespace and float dtype of ``like`` (keeps float32 chains float32).

    Args:
        value: an array-like.
        like: the array whose namespace and dtype to use.

    Returns:
        ``value`` as an array of ``like``'s namespace and dtype.
    """
    return namespace(like).asarray(value, dtype=like.dtype)
