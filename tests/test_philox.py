"""``sgbench.base.philox``: the Philox4x32-10 stream, bit for bit, and the laws of its floats.

Bits: the known-answer vectors of Salmon et al.'s Random123 distribution (``kat_vectors``,
philox4x32 with 10 rounds) and JAX's own Philox4x32 primitive on random keys and counters.

Laws: a Kolmogorov-Smirnov test of 10^5 draws of each law in each dtype against its CDF at rate
1e-6 per test (9 tests: a correct generator fails one with probability < 1e-5). With n = 10^5 the
test detects, with probability 0.9, a sup-distance between CDFs of about
sqrt(-log(1e-6 / 2) / 2) / sqrt(n) + 1.3 / sqrt(n) = 0.013 (e.g. a mean shift of 0.033 sd).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import stats

from sgbench.base import philox as _philox

KAT = [  # (key, counter, output) of Random123's kat_vectors, philox4x32 10 rounds
    ((0x00000000, 0x00000000), (0x00000000, 0x00000000, 0x00000000, 0x00000000),
     (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
    ((0xFFFFFFFF, 0xFFFFFFFF), (0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF),
     (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
    ((0xA4093822, 0x299F31D0), (0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344),
     (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1)),
]
N = 100_000
RATE = 1e-6
CDFS = {"normal": stats.norm.cdf, "uniform": stats.uniform.cdf, "exponential": stats.expon.cdf}


@pytest.mark.parametrize("key, counter, expected", KAT)
def test_known_answer_vectors(key, counter, expected):
    out = _philox.philox4x32([np.uint32(k) for k in key], [np.uint32(c) for c in counter])
    assert [int(o) for o in out] == list(expected)


def test_equals_jax_philox_primitive():
    from jax._src.random.philox4x32 import philox4x32_p

    rng = np.random.default_rng(0)
    for _ in range(5):
        key = rng.integers(0, 2**32, 2, dtype=np.uint64).astype(np.uint32)
        counter = rng.integers(0, 2**32, (4, 257), dtype=np.uint64).astype(np.uint32)
        ours = _philox.philox4x32(key, counter)
        theirs = philox4x32_p.bind(*(jnp.full(257, k, jnp.uint32) for k in key), *map(jnp.asarray, counter))
        for a, b in zip(ours, theirs):
            np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def test_words_are_the_hashes_of_successive_counters():
    key = jax.random.key(3)
    words = np.asarray(_philox.random_words(key, 10))
    k0, k1 = _philox.key_words(key)
    first = [int(w) for w in _philox.philox4x32((k0, k1), [np.uint32(0)] * 4)]
    second = [int(w) for w in _philox.philox4x32((k0, k1), [np.uint32(1)] + [np.uint32(0)] * 3)]
    # word-major layout over ceil(10 / 4) = 3 hashes, truncated to 10 words
    assert words[[0, 3, 6, 9]].tolist() == first
    assert words[[1, 4, 7]].tolist() == second[:3]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("law", sorted(CDFS))
def test_law(law, dtype):
    x = np.asarray(getattr(_philox, law)(jax.random.key(11), (N,), dtype))
    assert x.dtype == np.dtype(dtype) and x.shape == (N,)
    assert np.isfinite(x).all()
    assert stats.kstest(x.astype(np.float64), CDFS[law]).pvalue > RATE


def test_uniform_range_and_resolution():
    u32 = np.asarray(_philox.uniform(jax.random.key(1), (N,), "float32"))
    u64 = np.asarray(_philox.uniform(jax.random.key(1), (N,), "float64"))
    assert u32.min() >= 0 and u32.max() < 1 and u64.min() >= 0 and u64.max() < 1
    # float32: 23 mantissa bits, multiples of 2^-23; float64 carries 52 bits, so almost never such a multiple
    assert np.all(u32 * 2**23 == np.round(u32 * 2**23))
    assert np.mean(u64 * 2**23 == np.round(u64 * 2**23)) < 1e-3


def test_keys_give_independent_streams():
    """Pearson correlation of two keys' normals: |r| sqrt(N) is N(0, 1); the bound 5.3 is rate 1e-7."""
    a = np.asarray(_philox.normal(jax.random.key(0), (N,), "float64"))
    b = np.asarray(_philox.normal(jax.random.fold_in(jax.random.key(0), 1), (N,), "float64"))
    assert abs(np.corrcoef(a, b)[0, 1]) * np.sqrt(N) < 5.3
    assert not np.array_equal(a[:10], b[:10])


def test_bad_input():
    with pytest.raises(ValueError, match="dtype must be 'float32' or 'float64'"):
        _philox.uniform(jax.random.key(0), (3,), "float16")
    with pytest.raises(ValueError, match="count must be in"):
        _philox.random_words(jax.random.key(0), -1)
    with pytest.raises(ValueError, match="two uint32 words"):
        _philox.key_words(jnp.zeros(3, jnp.uint32))
