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


@pytest.mark.parametrize("name,base", [("sgld_cv", "sgld"), ("sghmc_cv", "sghmc"), ("sgnht_cv", "sgnht")])
def test_params_are_the_base_params_and_the_centre_and_pickle(name, base):
    """A control-variate sampler's Params, declared in its module: the base's fields, then ``centre`` and
    ``centre_grad``; a value pickles to an equal one of the same class (the gate and Dask pickle them) and
    ``dataclasses.replace`` re-validates it."""
    import dataclasses
    import pickle

    Params, BaseParams = samplers.get(name).Params, samplers.get(base).Params
    assert Params.__module__ == f"sgbench.samplers.{name}" and Params.__qualname__ == "Params"
    assert [f.name for f in dataclasses.fields(Params)] == [
        *(f.name for f in dataclasses.fields(BaseParams)), "centre", "centre_grad"]
    params = samplers.get(name).params(step_size=1e-3, centre=[0.5, 1.0], centre_grad=[0.0, -1.0])
    copy = pickle.loads(pickle.dumps(params))
    assert type(copy) is Params and repr(copy) == repr(params)
    assert dataclasses.replace(params, step_size=2e-3).step_size == 2e-3
    with pytest.raises(ValueError, match="centre_grad must have the shape of centre"):
        dataclasses.replace(params, centre_grad=[1.0])


def test_wrap_refuses_params_without_the_centre():
    """``control_variates.wrap`` takes a Params that subclasses ``Centred`` and the base's Params, else TypeError."""
    from sgbench.samplers import control_variates

    sgld = samplers.get("sgld")
    with pytest.raises(TypeError, match="Centred and the Params of 'sgld'"):
        control_variates.wrap(sgld, sgld.Params, "sgld_cv2", "none")
    with pytest.raises(TypeError, match="Centred and the Params of 'sgld'"):
        control_variates.wrap(sgld, samplers.get("sghmc_cv").Params, "sgld_cv2", "none")
