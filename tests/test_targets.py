"""Targets: analytic gradients against jax.grad, normalisation, truth against exact draws, noise."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.stats

from sgbench import targets
from sgbench.reference.checks import moment_check

ALPHA = 1e-3


@pytest.fixture(params=[dict(), dict(dim=3, condition_number=7.0, rotation_seed=4)], ids=["paper", "small"])
def icg(request):
    return targets.get("icg", **request.param)


def test_registry_lists_icg():
    assert "icg" in targets.names()


def test_gradient_matches_jax_grad(icg):
    x = np.random.default_rng(0).standard_normal((5, icg.dim))
    autodiff = jax.vmap(jax.grad(icg.logdensity))(jnp.asarray(x))
    np.testing.assert_allclose(icg.grad_logdensity(x), autodiff, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(icg.grad_logdensity(jnp.asarray(x)), autodiff, rtol=1e-10, atol=1e-10)


def test_logdensity_is_the_normalised_gaussian(icg):
    x = np.random.default_rng(1).standard_normal((4, icg.dim))
    expected = scipy.stats.multivariate_normal(icg.mean, icg.covariance).logpdf(x)
    np.testing.assert_allclose(icg.logdensity(x), expected, rtol=1e-10)
    np.testing.assert_allclose(icg.logdensity(jnp.asarray(x)), expected, rtol=1e-10)


def test_float32_inputs_stay_float32(icg):
    x = jnp.ones(icg.dim, jnp.float32)
    assert icg.grad_logdensity(x).dtype == jnp.float32
    assert icg.logdensity(x).dtype == jnp.float32


def test_spectrum_and_rotation_follow_appendix_c():
    icg = targets.get("icg")
    np.testing.assert_allclose(np.linalg.eigvalsh(icg.covariance), np.logspace(-2, 2, 10), rtol=1e-10)
    np.testing.assert_allclose(icg.rotation @ icg.rotation.T, np.eye(10), atol=1e-12)
    assert np.linalg.det(icg.rotation) == pytest.approx(1.0)
    assert not np.allclose(icg.rotation, targets.get("icg", rotation_seed=1).rotation)
    np.testing.assert_array_equal(icg.initial_position(), np.zeros(10))


def test_truth_agrees_with_exact_draws(icg):
    """z-tests of E[x], E[x^2] and Var[x^2] per dimension, Bonferroni: family-wise rate ALPHA."""
    n = 200_000
    x = np.asarray(icg.sample(jax.random.key(0), n))
    sq = x**2
    fourth = sq.var(0)  # Var[x^2] = E[x^4]-E[x^2]^2; its estimator's variance from 8th moments (Gaussian: 96 s^8)
    variance = np.diag(icg.covariance)
    moment_check(np.stack([x.mean(0), sq.mean(0), fourth]),
                 np.sqrt(np.stack([variance, icg.truth.second_moment_var, 96 * variance**4]) / n),
                 np.stack([np.zeros(icg.dim), icg.truth.second_moment, icg.truth.second_moment_var]), alpha=ALPHA,
                 name="icg truth: E[x], E[x^2], Var[x^2]").assert_passed()
    np.testing.assert_allclose(icg.truth.covariance, icg.covariance)
    assert icg.truth.source == "analytic" and not icg.truth.second_moment_se.any()


def test_isotropic_noise_has_mean_gradient_and_covariance_v():
    icg = targets.get("icg", noise="isotropic", noise_variance=256.0)
    assert set(icg.draw_spec) == {"gradient_noise"} and icg.draw_spec["gradient_noise"].shape == (10,)
    x = np.ones(10)
    z = np.random.default_rng(2).standard_normal((50_000, 10))
    noisy = icg.stochastic_grad(np.broadcast_to(x, z.shape), {"gradient_noise": z})
    error = noisy - icg.grad_logdensity(x)
    np.testing.assert_allclose(error, 16.0 * z)  # exact: eq. (24) with V^(1/2) = 16 I
    np.testing.assert_allclose(icg.noise.covariance(x), 256.0 * np.eye(10))


def test_no_noise_is_the_exact_gradient():
    icg = targets.get("icg")
    assert icg.draw_spec == {}
    x = np.arange(10.0)
    np.testing.assert_array_equal(icg.stochastic_grad(x, {}), icg.grad_logdensity(x))


@pytest.mark.parametrize("fused", [False, True])
def test_small_matrix_products_have_the_same_values_fused_or_not(icg, fused):
    """``sgbench.base.backend.matvec``: the JAX driver's fused broadcast-sum for few chains, a ``dot`` otherwise."""
    from sgbench.base.backend import fused_products

    x = jnp.asarray(np.random.default_rng(2).standard_normal((5, icg.dim)))
    with fused_products(fused):
        gradient = jax.jit(icg.grad_logdensity)
        program = gradient.lower(x).compile().as_text()
        np.testing.assert_allclose(gradient(x), -(np.asarray(x) - icg.mean) @ icg.precision, rtol=1e-12)
    assert (" dot(" in program) != fused
