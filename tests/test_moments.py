"""Streaming moments equal the moments of stored samples, merge exactly, and skip masked draws."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from sgbench.bench.running import run as running
from sgbench.reference.metrics import Moments


def stream(x, keep=None, xp=np):
    """Moments of x (chains, draws, dim) fed one draw at a time."""
    keep = np.ones(x.shape[:2], bool) if keep is None else keep
    moments = Moments.empty((x.shape[0],), x.shape[2], xp)
    for t in range(x.shape[1]):
        moments = moments.update(xp.asarray(x[:, t]), xp.asarray(keep[:, t]))
    return moments


def assert_moments_close(a: Moments, b: Moments, rtol=1e-12):
    for name, u, v in zip(Moments._fields, a, b):
        np.testing.assert_allclose(np.asarray(u), np.asarray(v), rtol=rtol, atol=1e-12, err_msg=name)


@pytest.fixture
def draws():
    return 3.0 + 2.0 * np.random.default_rng(1).standard_normal((4, 500, 3))


def test_streaming_equals_stored(draws):
    streamed = stream(draws)
    assert_moments_close(streamed, Moments.of_samples(draws, axis=1))
    np.testing.assert_allclose(streamed.fourth_moment, (draws**4).mean(axis=1), rtol=1e-12)
    np.testing.assert_allclose(streamed.variance, draws.var(axis=1), rtol=1e-12)


def test_jax_update_equals_numpy_update(draws):
    assert_moments_close(stream(draws, xp=jnp), stream(draws))


def test_merge_equals_concatenation(draws):
    first, second = Moments.of_samples(draws[:, :123], axis=1), Moments.of_samples(draws[:, 123:], axis=1)
    assert_moments_close(first.merge(second), Moments.of_samples(draws, axis=1))


def test_merge_with_empty_is_identity(draws):
    full = Moments.of_samples(draws, axis=1)
    assert_moments_close(full.merge(Moments.empty((4,), 3)), full)
    assert_moments_close(Moments.empty((4,), 3).merge(full), full)


def test_masked_and_nonfinite_draws_are_skipped(draws):
    keep = np.random.default_rng(2).random(draws.shape[:2]) < 0.7
    poisoned = np.where(keep[..., None], draws, np.nan)
    streamed = stream(poisoned, keep)
    for c in range(draws.shape[0]):
        kept = draws[c, keep[c]]
        np.testing.assert_allclose(streamed.count[c], len(kept))
        np.testing.assert_allclose(streamed.mean[c], kept.mean(0), rtol=1e-12)
        np.testing.assert_allclose(streamed.mean_sq[c], (kept**2).mean(0), rtol=1e-12)


@pytest.mark.parametrize("backend, block_size", [("jax", 64), ("jax", 1), ("numpy", 64)])
def test_driver_streaming_moments_equal_its_stored_samples(backend, block_size):
    """At ``block_size=1`` two blocks in three (and the burn-in) keep no step and skip the moments' reduction."""
    result = running.run("sgld", "icg", params={"step_size": 1e-2}, target_params={"noise": "isotropic"},
                         num_chains=3, num_steps=600, num_burnin=50, thin=3, seed=4, backend=backend,
                         keep_samples=True, block_size=block_size)
    assert result.samples.shape == (3, 200, 10)
    assert_moments_close(result.moments, Moments.of_samples(result.samples, axis=1), rtol=1e-10)


def test_float32_chains_keep_float64_statistics():
    result = running.run("sgld", "icg", params={"step_size": 1e-2}, num_chains=2, num_steps=100,
                         dtype="float32", keep_samples=True)
    assert result.samples.dtype == np.float32
    assert result.moments.mean.dtype == np.float64
    assert jax.numpy.zeros(1).dtype == jnp.float64  # the tests run in JAX's 64-bit mode (conftest.py)


@pytest.mark.parametrize("shift", ["zero", "mean", "far"])
def test_shifted_power_sums_equal_two_pass_moments(shift):
    """The optimized driver's one-pass block moments (``of_shifted_sums``) equal ``of_draws``'s two
    passes in float64, for any shift (the running mean in the driver), masked draws included."""
    rng = np.random.default_rng(1)
    x = 3 + 2 * rng.standard_normal((4, 1000, 3))
    keep = rng.random((4, 1000)) < 0.8
    keep[0] = False  # a chain with nothing kept in the block
    c = {"zero": np.zeros((4, 3)), "mean": x.mean(axis=1), "far": np.full((4, 3), 50.0)}[shift]
    assert_moments_close(Moments.of_shifted_sums(x, keep, c), Moments.of_draws(x, keep), rtol=1e-9)

