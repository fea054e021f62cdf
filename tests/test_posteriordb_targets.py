r"""The posteriordb targets held to posteriordb's own reference draws.

*Density.* Under the target law, Stein's identities hold for the score :math:`g = \nabla \log p(u)` on the
unconstrained space: :math:`E[g_i] = 0` and :math:`E[g_i (u_i - \mu_i)] = -1`. On posteriordb's 10,000 reference
draws (mapped to the unconstrained space) each of the :math:`2d` sample means is standardised by its batch-means
standard error and compared with the two-sided normal quantile at a family rate of ``ALPHA`` = 0.001 per
posterior (Bonferroni over the :math:`2d` statistics): the false-failure rate of a correct density is at most
0.001 per posterior. The test detects, with probability 1/2 or more, an error of the score whose mean over the
draws is ``z_crit`` standard errors or more (a log density scaled by 0.9 shifts it by 5.9 to 11 standard
errors on all ten; a dropped log Jacobian by 1.8 to 75: it goes unseen where the data pin ``log sigma`` so
closely that adding 1 to its score is within the noise: diamonds, earnings, kidiq, nes).

*Truth.* The reference positions mapped back to the constrained scale are the reference draws themselves
(transformed parameters included), and the truth's moments are those of the positions.
"""

from __future__ import annotations

import dataclasses
import json
import shutil

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.scipy.stats.norm import logpdf as norm_logpdf
from scipy.stats import norm

from sgbench import targets
from sgbench.targets.posteriordb import POSTERIORS, Model, _models
from sgbench.targets.posteriordb._files import PACKAGED
from sgbench.targets.posteriordb._target import batch_means_se

ALPHA = 0.001


def stein_statistics(target) -> np.ndarray:
    """The 2d standardised Stein statistics of ``target``'s score on its reference positions."""
    x = target.reference_positions
    g = np.asarray(target.grad_logdensity(x.reshape(-1, target.dim))).reshape(x.shape)
    products = g * (x - x.reshape(-1, target.dim).mean(0))
    first = g.reshape(-1, target.dim).mean(0) / batch_means_se(g)
    second = (products.reshape(-1, target.dim).mean(0) + 1) / batch_means_se(products)
    return np.concatenate([first, second])


def critical(dim: int) -> float:
    return float(norm.ppf(1 - ALPHA / (2 * 2 * dim)))


def with_model(posterior: str, **change):
    """The posterior's target with its model's fields replaced (a planted error)."""
    target = targets.get("posteriordb", posterior=posterior)
    target.model = dataclasses.replace(_models.MODELS[posterior], **change)
    density = target._unconstrained_log_density
    target._grad = jax.jit(jnp.vectorize(jax.grad(density), signature="(d)->(d)"))
    return target


@pytest.mark.parametrize("posterior", POSTERIORS)
def test_density_satisfies_steins_identities_on_the_reference_draws(posterior):
    target = targets.get("posteriordb", posterior=posterior)
    z = stein_statistics(target)
    assert np.max(np.abs(z)) < critical(target.dim), (posterior, np.round(z, 2))


@pytest.mark.parametrize("posterior", POSTERIORS)
def test_truth_is_the_reference_draws_on_both_scales(posterior):
    target = targets.get("posteriordb", posterior=posterior)
    flat = target.reference_positions.reshape(-1, target.dim)
    back = target.quantities(flat)
    assert set(back) == set(target.reference)
    for name, value in target.reference.items():
        np.testing.assert_allclose(back[name], value.reshape(back[name].shape), rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(target.truth.mean, flat.mean(0))
    np.testing.assert_allclose(np.diag(target.truth.covariance), flat.var(0, ddof=1))
    assert np.all(target.truth.mean_se > 0) and np.all(np.isfinite(target.truth.covariance_se))


def test_gradients_jit_and_vmap_and_match_numpy():
    target = targets.get("posteriordb", posterior="garch-garch11")
    x = target.sample(jax.random.key(0), 5)
    with jax.enable_x64(True):
        traced = jax.jit(jax.vmap(target.grad_logdensity))(jnp.asarray(x))
        np.testing.assert_allclose(np.asarray(traced), target.grad_logdensity(x), rtol=1e-10)
        np.testing.assert_allclose(np.asarray(jax.grad(target.logdensity)(jnp.asarray(x[0]))),
                                   target.grad_logdensity(x[0]), rtol=1e-10)


def test_a_local_clone_of_posteriordb_is_read_in_its_own_layout(tmp_path):
    posterior = "sblrc-blr"
    shipped = PACKAGED / posterior
    root = tmp_path / "posterior_database"
    for folder in ("posteriors", "data/data", "reference_posteriors/draws/draws"):
        (root / folder).mkdir(parents=True)
    (root / "posteriors" / f"{posterior}.json").write_text((shipped / "posterior.json").read_text())
    shutil.copy(shipped / "data.json.zip", root / "data" / "data" / "sblrc.json.zip")
    draws = root / "reference_posteriors" / "draws" / "draws" / f"{posterior}.json.zip"
    shutil.copy(shipped / "reference_draws.json.zip", draws)
    cloned = targets.get("posteriordb", posterior=posterior, clone=tmp_path)
    np.testing.assert_array_equal(cloned.truth.mean, targets.get("posteriordb", posterior=posterior).truth.mean)
    (root / "data" / "data" / "sblrc.json.zip").unlink()
    with pytest.raises(FileNotFoundError, match="sblrc.json.zip is missing"):
        targets.get("posteriordb", posterior=posterior, clone=tmp_path)


def test_unknown_posterior_names_the_parameter_and_the_choices():
    with pytest.raises(ValueError, match="posterior.*eight_schools"):
        targets.get("posteriordb", posterior="radon")


@pytest.mark.statistical
@pytest.mark.parametrize("posterior", POSTERIORS)
def test_a_tempered_density_fails(posterior):
    model = _models.MODELS[posterior]
    target = with_model(posterior, log_density=lambda p, d: 0.9 * model.log_density(p, d))
    assert np.max(np.abs(stein_statistics(target))) > critical(target.dim)


@pytest.mark.statistical
@pytest.mark.parametrize("posterior", ["arK-arK", "eight_schools-eight_schools_noncentered", "garch-garch11",
                                       "low_dim_gauss_mix-low_dim_gauss_mix", "mesquite-logmesquite", "sblrc-blr"])
def test_a_dropped_jacobian_fails(posterior):
    model = _models.MODELS[posterior]
    target = with_model(posterior, constrain=lambda u: (model.constrain(u)[0], 0.0))
    assert np.max(np.abs(stein_statistics(target))) > critical(target.dim)


SPLIT = [p for p in POSTERIORS if _models.MODELS[p].log_term is not None]


def test_the_models_with_iid_data_split_them():
    assert set(SPLIT) == {"diamonds-diamonds", "earnings-logearn_interaction", "kidiq-kidscore_interaction",
                          "low_dim_gauss_mix-low_dim_gauss_mix", "mesquite-logmesquite", "nes2000-nes", "sblrc-blr"}


@pytest.mark.parametrize("posterior", SPLIT)
def test_a_minibatch_split_is_the_model_block_and_unbiased(posterior):
    whole = targets.get("posteriordb", posterior=posterior)
    target = targets.get("posteriordb", posterior=posterior, noise="minibatch", noise_batch_size=whole.num_data)
    x = target.initial_position() + 0.01 * np.random.default_rng(5).standard_normal(target.dim)
    np.testing.assert_allclose(target.log_prior(x) + target.log_likelihood(x), target.logdensity(x), rtol=1e-12)
    np.testing.assert_allclose(target.stochastic_grad(x, {"indices": np.arange(target.num_data)}),
                               target.grad_logdensity(x), rtol=1e-9, atol=1e-9)


def test_a_model_without_iid_data_refuses_minibatch_noise():
    with pytest.raises(ValueError, match="per-datum likelihood"):
        targets.get("posteriordb", posterior="arK-arK", noise="minibatch")


def _clone_with(tmp_path, shipped_name: str, new_name: str):
    """A posteriordb clone in ``tmp_path`` holding the shipped posterior ``shipped_name`` under ``new_name``."""
    shipped = PACKAGED / shipped_name
    root = tmp_path / "posterior_database"
    for folder in ("posteriors", "data/data", "reference_posteriors/draws/draws"):
        (root / folder).mkdir(parents=True, exist_ok=True)
    record = json.loads((shipped / "posterior.json").read_text())
    record.update(name=new_name, data_name=f"{new_name}-data", reference_posterior_name=new_name)
    (root / "posteriors" / f"{new_name}.json").write_text(json.dumps(record))
    shutil.copy(shipped / "data.json.zip", root / "data" / "data" / f"{new_name}-data.json.zip")
    shutil.copy(shipped / "reference_draws.json.zip",
                root / "reference_posteriors" / "draws" / "draws" / f"{new_name}.json.zip")
    return tmp_path


def users_blr_model():
    """A user's model of sblrc-blr, written from its Stan program: y ~ normal(X beta, sigma), beta ~ normal(0, 10),
    sigma ~ normal(0, 10) on sigma > 0 (log transform)."""

    def prepare(raw):
        return {"X": jnp.asarray(raw["X"], dtype=jnp.float64), "y": jnp.asarray(raw["y"], dtype=jnp.float64)}

    def constrain(u):
        return {"beta": u[:5], "sigma": jnp.exp(u[5])}, u[5]

    def unconstrain(params):
        return jnp.concatenate([params["beta"], jnp.log(jnp.atleast_1d(params["sigma"]))])

    def log_density(params, data):
        return (jnp.sum(norm_logpdf(data["y"], data["X"] @ params["beta"], params["sigma"]))
                + jnp.sum(norm_logpdf(params["beta"], 0.0, 10.0)) + norm_logpdf(params["sigma"], 0.0, 10.0))

    return Model("user-blr", tuple(f"beta[{i}]" for i in range(1, 6)) + ("log sigma",), prepare, constrain,
                 unconstrain, log_density)


def test_a_users_model_of_a_posterior_in_their_clone_gets_its_truth_and_is_checked(tmp_path):
    clone = _clone_with(tmp_path, "sblrc-blr", "user-blr")
    target = targets.get("posteriordb", posterior="user-blr", clone=clone, model=users_blr_model())
    np.testing.assert_allclose(target.truth.mean, targets.get("posteriordb", posterior="sblrc-blr").truth.mean)
    assert np.max(np.abs(stein_statistics(target))) < critical(target.dim)
    rebuilt = targets.get("posteriordb", **target.params)
    assert rebuilt.model is target.model
    model = users_blr_model()
    forgot_jacobian = dataclasses.replace(model, constrain=lambda u: (model.constrain(u)[0], 0.0))
    wrong = targets.get("posteriordb", posterior="user-blr", clone=clone, model=forgot_jacobian)
    assert np.max(np.abs(stein_statistics(wrong))) > critical(target.dim)
    with pytest.raises(ValueError, match="model must be None or a sgbench.targets.posteriordb.Model"):
        targets.get("posteriordb", posterior="user-blr", clone=clone, model="not a model")
    with pytest.raises(ValueError, match="give clone"):
        targets.get("posteriordb", posterior="user-blr", model=users_blr_model())
