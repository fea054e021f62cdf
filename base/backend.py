"""Pick the array namespace of an input, so one formula serves the NumPy reference and JAX, and the form of
products with small matrices in a traced program (:func:`matvec`, :func:`fused_products`)."""

import contextlib
import contextvars

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


SMALL_MATRIX_ENTRIES = 400  # 20 x 20
_fused_products = contextvars.ContextVar("fused_products", default=False)


@contextlib.contextmanager
def fused_products(enabled: bool):
    """While tracing under this context, :func:`matvec` writes products with small matrices as fused
    broadcast-sums (``enabled``) or as ``dot`` (not). The JAX driver enables it for programs that run few chains
    at once (``sgbench.bench.running.jax_driver.FEW_PARALLEL_CHAINS``, grid points x chains): measured on a 2-core CPU
    (docs/performance.md), the fused form makes SGLD, SMILE-naive and MCLMC about 20 % faster at 10 chains
    on the 10-d icg, and the ``dot`` is up to 30 % faster at 150.

    Args:
        enabled: whether products with at most ``SMALL_MATRIX_ENTRIES`` entries are fused.
    """
    token = _fused_products.set(enabled)
    try:
        yield
    finally:
        _fused_products.reset(token)


def matvec(x, matrix: np.ndarray):
    r"""``x @ matrix`` (over the last axis of ``x``) in the namespace and float dtype of ``x``.

    Inside :func:`fused_products` (True), a JAX ``x`` times a matrix of at most ``SMALL_MATRIX_ENTRIES``
    entries is :math:`\sum_i x_i M_{ij}` (broadcast and sum), which XLA fuses into the surrounding update; a
    ``dot`` is a separate library call per step, about half of SGLD's step when 10 chains share it.

    Args:
        x: shape (..., n), NumPy or JAX.
        matrix: shape (n, m).

    Returns:
        shape (..., m).
    """
    matrix = constant(matrix, x)
    if namespace(x) is jnp and matrix.size <= SMALL_MATRIX_ENTRIES and _fused_products.get():
        return jnp.sum(x[..., :, None] * matrix, axis=-2)
    return x @ matrix
