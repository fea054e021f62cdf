"""Every registered target keeps the target contract (DESIGN.md): the checks here run on each
name in ``targets.names()`` at its default parameters, so a new target is covered on arrival."""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from sgbench import targets
from sgbench.base.draws import numpy_draws


@functools.cache
def default(name):
    return targets.get(name)


def point(target, seed=0):
    """A reproducible point near the target's initial position."""
    x0 = target.initial_position()
    return x0 + 0.1 * np.random.default_rng(seed).standard_normal(x0.shape)


@pytest.mark.parametrize("name", targets.names())
def test_parameters_rebuild_the_same_target(name):
    target = default(name)
    assert target.name == name
    rebuilt = targets.get(name, **target.params)
    assert rebuilt.params == target.params
    np.testing.assert_array_equal(rebuilt.logdensity(point(target)), target.logdensity(point(target)))


@pytest.mark.parametrize("name", targets.names())
def test_initial_position_has_the_target_dimension(name):
    target = default(name)
    x0 = target.initial_position()
    assert x0.shape == (target.dim,) and np.all(np.isfinite(x0))
    assert np.isfinite(target.logdensity(x0))


@pytest.mark.parametrize("name", targets.names())
def test_gradient_is_the_gradient_of_the_log_density(name):
    target = default(name)
    x = point(target)
    autodiff = jax.grad(target.logdensity)(jnp.asarray(x))
    tolerance = 1e-10 if target.density_dtype == "float64" else 1e-5 * float(np.max(np.abs(autodiff)))
    np.testing.assert_allclose(target.grad_logdensity(x), autodiff, rtol=tolerance, atol=tolerance)


@pytest.mark.parametrize("name", targets.names())
def test_numpy_and_jax_agree_on_shared_draws(name):
    target = default(name)
    x = point(target, seed=1)
    draw = numpy_draws(np.random.default_rng(2), target.draw_spec)
    expected = target.stochastic_grad(x, draw)
    compiled = jax.jit(target.stochastic_grad)(jnp.asarray(x), jax.tree.map(jnp.asarray, draw))
    np.testing.assert_allclose(np.asarray(compiled), expected, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(np.asarray(jax.jit(target.logdensity)(jnp.asarray(x))), target.logdensity(x),
                               rtol=1e-12)


@pytest.mark.parametrize("name", targets.names())
def test_truth_is_declared(name):
    truth = default(name).truth
    if truth is None:
        return  # a declared "no analytic truth" (gold standards come from reference/)
    assert truth.dim == default(name).dim
    for value, se in ((truth.mean, truth.mean_se), (truth.second_moment, truth.second_moment_se),
                      (truth.second_moment_var, truth.second_moment_var_se)):
        assert value.shape == se.shape == (truth.dim,) and np.all((se >= 0) | np.isnan(se))  # NaN: not stated
    assert np.all((truth.second_moment_var > 0) | np.isnan(truth.second_moment_var))
    assert np.any(np.isfinite(truth.mean))
    np.testing.assert_allclose(truth.covariance, truth.covariance.T)  # NaN entries symmetric too


@pytest.mark.parametrize("noise", ["none", "isotropic", "diagonal", "correlated", "minibatch"])
def test_stochastic_log_density_has_the_stochastic_gradient(noise):
    """The log density a draw gives (eq. 24 for additive noise, the minibatch estimator for data)
    has the same draw's stochastic gradient (``jax.grad`` with the draw fixed; noise models whose
    noise does not depend on x), and its NumPy and JAX values agree."""
    target = targets.get("logreg" if noise == "minibatch" else "icg", noise=noise)
    x = point(target, seed=3)
    draw = numpy_draws(np.random.default_rng(4), target.draw_spec)
    jax_draw = jax.tree.map(jnp.asarray, draw)
    autodiff = jax.grad(lambda y: target.stochastic_logdensity(y, jax_draw))(jnp.asarray(x))
    np.testing.assert_allclose(target.stochastic_grad(x, draw), autodiff, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(np.asarray(jax.jit(target.stochastic_logdensity)(jnp.asarray(x), jax_draw)),
                               target.stochastic_logdensity(x, draw), rtol=1e-12)
