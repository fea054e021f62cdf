"""The control-variate machinery of SGLD-CV (and SGHMC-CV, SGNHT-CV): the optax MAP search and the
estimator of MAMBA appendix D.3, eq. (8). Deterministic checks (no false-failure rate)."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import pytest

from sgbench import samplers, targets
from sgbench.base.draws import numpy_draws
from sgbench.samplers.control_variates import NoModeError, cv_grad_fn, find_map, prepare


class StartedAway:
    """``target`` with its initial position moved, so the search has work to do."""

    def __init__(self, target, shift):
        self.target, self.shift, self.dim = target, shift, target.dim

    def logdensity(self, x):
        return self.target.logdensity(x)

    def grad_logdensity(self, x):
        return self.target.grad_logdensity(x)

    def initial_position(self):
        return self.target.initial_position() + self.shift


def test_map_of_linear_regression_is_the_closed_form_posterior_mean():
    target = targets.get("linreg", num_data=200, dim=5)
    centre, gradient = find_map(StartedAway(target, 3.0))
    np.testing.assert_allclose(centre, target.truth.mean, rtol=0, atol=1e-7)
    assert np.max(np.abs(gradient)) < 1e-6


def test_map_of_logistic_regression_is_a_stationary_point():
    target = targets.get("logreg", dataset="breast_cancer")
    centre, gradient = find_map(target)
    np.testing.assert_allclose(gradient, target.grad_logdensity(centre))
    assert np.max(np.abs(gradient)) < 1e-8 * max(1.0, np.max(np.abs(target.grad_logdensity(target.initial_position()))))


class Unbounded:
    """log p(x) = sum(x): no mode."""

    dim = 3

    def __init__(self, value_at_infinity=0.0):
        self.value_at_infinity = value_at_infinity

    def logdensity(self, x):
        return jnp.sum(x)

    def grad_logdensity(self, x):
        return np.ones(3) + self.value_at_infinity * np.sum(x)

    def initial_position(self):
        return np.zeros(3)


def test_search_without_a_mode_warns_or_refuses():
    with pytest.warns(RuntimeWarning, match="the control-variate centre is not a mode"):
        find_map(Unbounded(), max_steps=50)
    with pytest.raises(NoModeError, match="no finite mode"):
        find_map(Unbounded(np.inf), max_steps=50)


@pytest.mark.parametrize("noise", [dict(noise="isotropic", noise_variance=100.0),
                                   dict(noise="minibatch", noise_batch_size=4)])
def test_estimator_is_unbiased_and_exact_for_additive_noise(noise):
    """Mean over 2000 minibatches within 5 standard errors of the full gradient (a 6e-7 two-sided
    rate per coordinate); with additive noise every single draw gives the exact gradient."""
    target = targets.get("linreg", num_data=100, dim=3, **noise)
    params = prepare(target, {})
    x = target.truth.mean + 0.3
    rng = np.random.default_rng(0)
    draws = numpy_draws(rng, target.draw_spec, (2000,))
    estimates = np.array([
        cv_grad_fn(lambda y, d=d: target.stochastic_grad(y, d), params["centre"], params["centre_grad"])(x)
        for d in ({k: v[i] for k, v in draws.items()} for i in range(2000))
    ])
    exact = target.grad_logdensity(x)
    if noise["noise"] == "isotropic":
        np.testing.assert_allclose(estimates, np.broadcast_to(exact, estimates.shape), atol=1e-9)
    else:
        se = estimates.std(axis=0, ddof=1) / np.sqrt(len(estimates))
        assert np.all(np.abs(estimates.mean(axis=0) - exact) < 5 * se)
        plain = np.array([target.stochastic_grad(x, {k: v[i] for k, v in draws.items()}) for i in range(500)])
        assert np.all(estimates.std(axis=0) < plain.std(axis=0))  # it does reduce the variance


def test_sampler_params_for_fills_in_the_centre_once():
    target = targets.get("icg", dim=4)
    sampler = samplers.get("sgld_cv")
    params = sampler.params_for(target, step_size=0.01)
    np.testing.assert_allclose(params.centre, np.zeros(4), atol=1e-9)
    np.testing.assert_allclose(params.centre_grad, target.grad_logdensity(params.centre))
    given = sampler.params_for(target, step_size=0.01, centre=np.ones(4))
    np.testing.assert_allclose(given.centre_grad, target.grad_logdensity(np.ones(4)))
