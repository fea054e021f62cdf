r"""Philox4x32-10, the counter-based generator of Salmon, Moraes, Dror & Shaw (2011), "Parallel
random numbers: as easy as 1, 2, 3" (SC'11), written in ``jax.numpy`` so that XLA fuses a whole
block of draws (counters, ten rounds, conversion to floats) into one loop.

One round maps the counter :math:`(c_0, c_1, c_2, c_3)` under the key :math:`(k_0, k_1)` to

.. math:: (\mathrm{hi}(M_1 c_2) \oplus c_1 \oplus k_0,\; \mathrm{lo}(M_1 c_2),\;
          \mathrm{hi}(M_0 c_0) \oplus c_3 \oplus k_1,\; \mathrm{lo}(M_0 c_0)),

with :math:`M_0` = 0xD2511F53, :math:`M_1` = 0xCD9E8D57 and the key bumped by the Weyl constants
(0x9E3779B9, 0xBB67AE85) before every round but the first; ten rounds.

Why not ``jax.random`` on a CPU: its threefry keys run the hash's rounds in a rolled loop that
copies the whole counter arrays every round, and its threefry and philox keys xor their output
words into one 32-bit number per hash. Here every hash yields four numbers (all its output
words, as the paper's generator does) and the rounds are unrolled; the stream is Philox4x32-10's,
bit for bit (``tests/test_philox.py`` checks it against the paper's known-answer vectors and
against JAX's own Philox primitive).
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

ROUNDS = 10
MULTIPLIERS = (np.uint32(0xD2511F53), np.uint32(0xCD9E8D57))
WEYL = (np.uint32(0x9E3779B9), np.uint32(0xBB67AE85))
MAX_WORDS = 4 * 2**32  # one key's counter space: (i, 0, 0, 0) for i < 2^32


def _mulhi(a, b):
    """The high 32 bits of the 64-bit product of uint32 arrays ``a`` and ``b``, through a uint64 product: XLA's
    SPMD partitioner cannot convert ``lax.mulhi`` (chains sharded over devices, ``sgbench.bench.running.sharding``), and
    on a CPU both take the same time. Without 64-bit types enabled (outside the suite's scope, ``sgbench.base.float64``)
    ``lax.mulhi``, which gives the same words."""
    if not jax.config.read("jax_enable_x64"):
        return lax.mulhi(a, b)
    return ((a.astype(jnp.uint64) * b.astype(jnp.uint64)) >> jnp.uint64(32)).astype(jnp.uint32)


def philox4x32(key, counter):
    """The Philox4x32-10 hash of ``counter`` (four uint32 arrays) under ``key`` (two uint32 words).

    Args:
        key: (k0, k1), two uint32 words.
        counter: (c0, c1, c2, c3), four uint32 arrays of one shape.

    Returns:
        four uint32 arrays of the counters' shape: the output words.
    """
    k0, k1 = (jnp.asarray(k, jnp.uint32) for k in key)
    c0, c1, c2, c3 = (jnp.asarray(c, jnp.uint32) for c in counter)
    m0 = jnp.full(c0.shape, MULTIPLIERS[0], jnp.uint32)
    m1 = jnp.full(c2.shape, MULTIPLIERS[1], jnp.uint32)
    for round_index in range(ROUNDS):
        if round_index:
            k0, k1 = k0 + WEYL[0], k1 + WEYL[1]
        hi0, lo0 = _mulhi(m0, c0), m0 * c0
        hi1, lo1 = _mulhi(m1, c2), m1 * c2
        c0, c1, c2, c3 = hi1 ^ c1 ^ k0, lo1, hi0 ^ c3 ^ k1, lo0
    return c0, c1, c2, c3


def key_words(key):
    """The two uint32 words of a JAX key (typed ``jax.random.key`` or raw uint32 pair).

    Args:
        key: a typed JAX key, or a raw key of two uint32 words.

    Returns:
        (k0, k1): two uint32 scalars.

    Raises:
        ValueError: the key does not carry two words.
    """
    data = jax.random.key_data(key) if jnp.issubdtype(key.dtype, jax.dtypes.prng_key) else key
    data = jnp.asarray(data)
    if data.shape != (2,):
        raise ValueError(f"key must carry two uint32 words (a threefry2x32 or philox key), got shape {data.shape}")
    data = data.astype(jnp.uint32)
    return data[0], data[1]


def random_words(key, count: int):
    """``count`` uint32 words: the four output words of the hashes of counters (i, 0, 0, 0),
    i = 0, 1, ..., laid out word-major (all first words, then all second words, ...).

    Args:
        key: a JAX key of two uint32 words.
        count: the number of words, in [0, 4 * 2**32].

    Returns:
        uint32 array of shape (count,).

    Raises:
        ValueError: ``count`` outside [0, 4 * 2**32].
    """
    if not 0 <= count <= MAX_WORDS:
        raise ValueError(f"count must be in [0, {MAX_WORDS}] words per key, got {count}")
    hashes = -(-count // 4)
    index = lax.iota(jnp.uint32, hashes)
    zero = jnp.zeros_like(index)
    return jnp.concatenate(philox4x32(key_words(key), (index, zero, zero, zero)))[:count]


def uniform(key, shape, dtype="float32"):
    """Uniform on [0, 1): 23 random mantissa bits per float32 (one word), 52 per float64 (two words).

    Args:
        key: a JAX key of two uint32 words.
        shape: the shape of the draws.
        dtype: ``"float32"`` or ``"float64"``.

    Returns:
        array of ``shape`` and ``dtype``.

    Raises:
        ValueError: ``dtype`` is neither float32 nor float64.
    """
    dtype = jnp.dtype(dtype)
    size = math.prod(shape)
    if dtype == jnp.float32:
        words = random_words(key, size)
        ones = lax.bitcast_convert_type((words >> 9) | np.uint32(0x3F800000), jnp.float32)
    elif dtype == jnp.float64:
        words = random_words(key, 2 * size).astype(jnp.uint64)
        mantissa = (words[:size] << 20) | (words[size:] >> 12)
        ones = lax.bitcast_convert_type(mantissa | np.uint64(0x3FF0000000000000), jnp.float64)
    else:
        raise ValueError(f"dtype must be 'float32' or 'float64', got {dtype.name!r}")
    return (ones - 1).reshape(shape)


def normal(key, shape, dtype="float32"):
    r""":math:`\sqrt 2\,\mathrm{erf}^{-1}(u)`, :math:`u` uniform on (-1, 1): standard normal.


    Arguments, result and errors: those of :func:`uniform`.
    """
    u = 2 * uniform(key, shape, dtype) - 1
    u = jnp.maximum(u, np.nextafter(np.array(-1, u.dtype), np.array(0, u.dtype)))
    return np.sqrt(2).astype(u.dtype) * lax.erf_inv(u)


def exponential(key, shape, dtype="float32"):
    r""":math:`-\log(1 - u)`, :math:`u` uniform on [0, 1): standard exponential.


    Arguments, result and errors: those of :func:`uniform`.
    """
    return -jnp.log1p(-uniform(key, shape, dtype))
