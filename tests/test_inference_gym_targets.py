r"""The Inference Gym targets: their unconstrained densities, their truth's alignment, the item response split.

*Density.* The target's log density at :math:`u` minus Inference Gym's at the constrained point is the log
Jacobian of the forward map; here it is held to :math:`\log|\det \partial b/\partial u|` computed independently, by
``jax.jacfwd`` of the flat map and ``slogdet``, at random points (float32 rounding of Inference Gym's density: a
relative tolerance of 1e-5).

*Truth.* NUTS (numpyro, 4 chains of 1000 adaptation steps and 2000 draws) on the 10-dimensional eight schools model
is z-tested against Inference Gym's means and second moments (``sgbench.reference.agreement.compare``, family rate
0.001 over the 20 tests, so the false-failure rate of a correct truth is at most 0.001); the truth shifted by a
quarter of a standard deviation in one coordinate, or its coordinates reversed (a misaligned layout), fails (with
NUTS's effective sample sizes here, a few hundred to a few thousand, the shift is 5 or more standard errors;
the test's threshold is 4.06). Under ``-m statistical`` the same test (4 chains of 1000 + 2500) holds the other
NUTS-truth models to theirs, where ``reports/inference_gym_nuts`` found the suite's NUTS agreeing (about 20
minutes, most of it the 501-d item response model); the Brownian motion with unknown scales, whose stated truth is
wrong, is ``test_inference_gym_truth_defects``'s, and the three analytic ones are
``test_inference_gym_against_suite``'s.
"""

from __future__ import annotations

import dataclasses
import subprocess
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

pytest.importorskip("inference_gym.using_jax", reason="Inference Gym is absent: python -m pip install "
                                                      "'sgmcmc-bench[gym]'")

from sgbench import targets  # noqa: E402
from sgbench.reference import agreement  # noqa: E402
from sgbench.reference.nuts import run_numpyro  # noqa: E402
from sgbench.targets.inference_gym import MODELS  # noqa: E402
from sgbench.targets.inference_gym._structure import flatten  # noqa: E402

CONSTRAINED = ("brownian_motion_unknown_scales", "lorenz_bridge_unknown_scales", "stochastic_volatility",
               "log_gaussian_cox_process")


@pytest.fixture(scope="module")
def built():
    return {}


def target_of(built, model):
    if model not in built:
        built[model] = targets.get("inference_gym", model=model)
    return built[model]


@pytest.mark.parametrize("model", MODELS)
def test_every_model_has_a_finite_density_gradient_and_truth(built, model):
    target = target_of(built, model)
    x = target.initial_position()
    assert x.shape == (target.dim,) and len(target.coordinates) == target.dim
    assert np.isfinite(target.logdensity(x)) and np.all(np.isfinite(target.grad_logdensity(x)))
    truth = target.quantity_truth
    assert truth.mean.shape == (len(target.quantity_coordinates),)
    assert np.all(np.isfinite(truth.mean)) and np.all(np.diag(truth.covariance) > 0)
    assert np.all(truth.mean_se >= 0) and np.all(np.isfinite(truth.second_moment_se))
    assert np.all(np.isfinite(target.truth.mean[target.known])) and np.all(np.isnan(target.truth.mean[~target.known]))
    batch = np.stack([x, x + 0.01])  # gradients vmap over leading axes, and jit
    np.testing.assert_allclose(target.grad_logdensity(batch)[0], target.grad_logdensity(x), rtol=1e-6)
    assert jax.jit(target.grad_logdensity)(jnp.asarray(batch, dtype=jnp.float32)).dtype == jnp.float32


@pytest.mark.parametrize("model", CONSTRAINED)
def test_the_log_jacobian_is_the_determinant_of_the_forward_map(built, model):
    target = target_of(built, model)
    assert not np.all(target.known)  # a constrained coordinate carries no position truth

    def forward(u):
        return flatten(target.constrain(u)[0])

    rng = np.random.default_rng(7)
    with jax.enable_x64(True):
        for _ in range(3):
            u = jnp.asarray(target.initial_position() + 0.3 * rng.standard_normal(target.dim))
            log_det = np.linalg.slogdet(np.asarray(jax.jacfwd(forward)(u)))[1]
            pieces = target.layout.pieces(forward(u))  # in the model's own dtypes
            gym = float(target.gym_model.unnormalized_log_prob(target.layout.build(
                [piece.astype(dtype) for piece, dtype in zip(pieces, target.dtypes, strict=True)])))
            np.testing.assert_allclose(float(target.logdensity(np.asarray(u))) - gym, log_det,
                                       rtol=1e-5, atol=1e-5 * abs(gym))


def test_the_item_response_split_is_inference_gym_s_density_and_its_minibatch_is_unbiased(built):
    target = target_of(built, "item_response_theory")
    assert target.num_data == 30_012
    x = target.initial_position() + 0.1 * np.random.default_rng(3).standard_normal(target.dim)
    joint = target.log_prior(x) + target.log_likelihood(x)
    np.testing.assert_allclose(joint, target.logdensity(x), rtol=1e-6)
    np.testing.assert_allclose(target.grad_log_prior(x) + target.grad_log_likelihood(x), target.grad_logdensity(x),
                               rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(target.grad_log_likelihood_terms(x, np.arange(5)).sum(0),
                               target.grad_log_likelihood(x, np.arange(5)), rtol=1e-9, atol=1e-12)
    whole = targets.get("inference_gym", model="item_response_theory", noise="minibatch",
                        noise_batch_size=target.num_data)
    np.testing.assert_allclose(whole.stochastic_grad(x, {"indices": np.arange(target.num_data)}),
                               whole.grad_logdensity(x), rtol=1e-4, atol=1e-3)
    minibatch = targets.get("inference_gym", model="item_response_theory", noise="minibatch", noise_batch_size=32)
    with jax.enable_x64(False):  # a float32 chain: the indices are int32 and so are the data's
        grad = jax.jit(minibatch.stochastic_grad)(jnp.asarray(x, dtype=jnp.float32), {"indices": jnp.arange(32)})
    assert grad.dtype == jnp.float32 and np.all(np.isfinite(grad))


def test_a_model_without_a_per_datum_likelihood_refuses_minibatch_noise():
    with pytest.raises(ValueError, match="per-datum likelihood"):
        targets.get("inference_gym", model="eight_schools", noise="minibatch")


def test_bad_input_names_the_parameter_and_a_missing_extra_names_the_install(monkeypatch):
    with pytest.raises(ValueError, match="model"):
        targets.get("inference_gym", model="radon")
    monkeypatch.setitem(sys.modules, "inference_gym.using_jax", None)
    with pytest.raises(ImportError, match=r"sgmcmc-bench\[gym\]"):
        targets.get("inference_gym", model="banana")


def test_a_process_using_a_gym_target_exits_quietly():
    code = ("from sgbench import targets; t = targets.get('inference_gym', model='stochastic_volatility'); "
            "t.grad_logdensity(t.initial_position())")
    finished = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert finished.returncode == 0, finished.stderr
    assert finished.stderr == "" and finished.stdout == ""


def nuts_against(target, truth, num_draws: int = 2000) -> agreement.Agreement:
    result = run_numpyro(target, num_chains=4, num_warmup=1000, num_draws=num_draws, seed=0, target_accept=0.9)
    chains, draws, _ = result.draws.shape
    ours = target.quantities(result.draws.reshape(-1, target.dim)).reshape(chains, draws, -1)
    theirs = {"mean": truth.mean, "mean_se": truth.mean_se, "second_moment": truth.second_moment,
              "second_moment_se": truth.second_moment_se}
    return agreement.compare(agreement.moments(ours), theirs, alpha=1e-3)


def test_nuts_agrees_with_the_truth_and_a_wrong_or_misaligned_truth_fails(built):
    target = target_of(built, "eight_schools")
    truth = target.quantity_truth
    assert nuts_against(target, truth).passed
    shifted_mean = truth.mean.copy()
    shifted_mean[1] += 0.25 * np.sqrt(truth.covariance[1, 1])
    shifted = dataclasses.replace(truth, mean=shifted_mean, second_moment=shifted_mean**2 + np.diag(truth.covariance))
    reversed_ = dataclasses.replace(truth, mean=truth.mean[::-1], second_moment=truth.second_moment[::-1])
    assert not nuts_against(target, shifted).passed
    assert not nuts_against(target, reversed_).passed


@pytest.mark.statistical
@pytest.mark.parametrize("model", ["brownian_motion", "lorenz_bridge", "lorenz_bridge_unknown_scales",
                                   "stochastic_volatility", "item_response_theory"])
def test_nuts_agrees_with_the_truth_of_every_nuts_truth_model(model):
    target = targets.get("inference_gym", model=model)
    test = nuts_against(target, target.quantity_truth, num_draws=2500)
    assert test.passed, test
