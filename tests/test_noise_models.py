"""Gradient-noise models (``targets/noise``): mean zero and the claimed covariance, the alpha-stable
law against scipy, NumPy = JAX on shared draws, float32, bad input, and end-to-end runs."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.integrate
import scipy.stats

from sgbench import targets
from sgbench.base.draws import numpy_draws
from sgbench.base.registry import UnknownNameError
from sgbench.bench.running import run as running
from sgbench.reference.checks import z_critical
from sgbench.targets import noise as noise_models
from sgbench.targets.noise.alpha_stable import symmetric_stable
from sgbench.targets.noise.spatial import SpatialNoise

ALPHA = 1e-3
# Models that work on any analytic target ('minibatch' needs a data target and is tested with them).
ANALYTIC_NOISE = [name for name in noise_models.names() if name != "minibatch"]


def noise_z_scores(errors: np.ndarray, claimed: np.ndarray) -> np.ndarray:
    """z-scores of E[e_i] = 0 (d of them) and of E[e_i e_j] = claimed[i, j] for i <= j
    (d(d+1)/2), each with its Monte Carlo standard error estimated from the ``errors`` (n, d)."""
    n, d = errors.shape
    z_mean = errors.mean(0) / (errors.std(0) / np.sqrt(n))
    products = errors.T @ errors / n
    products_var = (errors**2).T @ (errors**2) / n - products**2
    z_cov = (products - claimed) / np.sqrt(products_var / n)
    return np.concatenate([z_mean, z_cov[np.triu_indices(d)]])


GAUSSIAN_CASES = {
    "isotropic": ("isotropic", 0.3),
    "diagonal": ("diagonal", 0.3),
    "correlated": ("correlated", 0.3),
    "spatial-x2=-1": ("spatial", -1.0),
    "spatial-x2=+1": ("spatial", 1.0),
}


@pytest.mark.parametrize("name, x2", GAUSSIAN_CASES.values(), ids=GAUSSIAN_CASES.keys())
def test_noise_has_mean_zero_and_the_claimed_covariance(name, x2):
    """n = 2e5 noise vectors e = stochastic_grad(x, draw) - grad log p(x) on the 10-d ICG; z-tests of
    the 10 means and the 55 entries of E[e e^T] against ``covariance(x)``, MCSE from the draws,
    Bonferroni over the 65: family-wise false-failure rate 1e-3 per case.

    Power: a variance's estimate has relative standard error sqrt(2/n) = 0.32% (Gaussian noise),
    and an off-diagonal entry's at most sqrt(2 V_ii V_jj / n), so with the critical |z| = 4.32 a
    relative error of 2.3% in any one variance, or an error of 0.023 in any correlation coefficient,
    is rejected with probability > 0.999. Claims wrong by a factor 1.05, and the claim that
    ignores this model's correlation or spatial factor, must be rejected.
    """
    target = targets.get("icg", noise=name)
    n, d = 200_000, target.dim
    x = np.full(d, 0.3)
    x[1] = x2
    draws = numpy_draws(np.random.default_rng(11), target.draw_spec, (n,))
    errors = target.stochastic_grad(np.broadcast_to(x, (n, d)), draws) - target.grad_logdensity(x)
    claimed = target.noise.covariance(x)
    critical = z_critical(ALPHA, d + d * (d + 1) // 2)  # two-sided, Bonferroni over the 65 z-tests
    assert np.max(np.abs(noise_z_scores(errors, claimed))) < critical
    assert np.max(np.abs(noise_z_scores(errors, 1.05 * claimed))) > critical
    simpler = {"isotropic": 256.0 * np.eye(d), "diagonal": 256.0 * np.eye(d),
               "correlated": np.diag(np.diag(claimed)),
               "spatial": targets.get("icg", noise="correlated").noise.covariance(x)}[name]
    if name != "isotropic":
        assert np.max(np.abs(noise_z_scores(errors, simpler))) > critical


def test_covariances_follow_appendix_c():
    icg = targets.get("icg")
    diagonal = targets.get("icg", noise="diagonal").noise.covariance(None)
    np.testing.assert_allclose(diagonal, 256.0 * np.diag(np.logspace(-2, 2, 10)), rtol=1e-12)
    correlated = targets.get("icg", noise="correlated").noise
    np.testing.assert_allclose(np.linalg.eigvalsh(correlated.covariance(None)), np.diag(diagonal), rtol=1e-10)
    assert not np.allclose(correlated.covariance(None), icg.rotation.T @ diagonal @ icg.rotation)  # R' != R
    spatial = targets.get("icg", noise="spatial").noise
    sigma = np.sqrt(icg.covariance[1, 1])
    x = np.array([[0.0, 2.0, 0.0, 0, 0, 0, 0, 0, 0, 0], [5.0, 0.0, 7.0, 0, 0, 0, 0, 0, 0, 0]])
    np.testing.assert_allclose(spatial.covariance(x), [np.exp(-2 / sigma) * correlated.covariance(None),
                                                       correlated.covariance(None)], rtol=1e-12)
    assert spatial.sigma == pytest.approx(sigma)
    one_d = targets.get("icg", dim=1, noise="correlated", noise_variance=3.0).noise  # every 1-d rotation is 1
    np.testing.assert_allclose(one_d.covariance(None), [[3.0 / 100]])
    small = targets.get("icg", dim=4, noise="diagonal", noise_variance=2.0, noise_condition_number=81.0).noise
    np.testing.assert_allclose(small.diagonal, 2.0 * 9.0 ** np.array([-1, -1 / 3, 1 / 3, 1]), rtol=1e-12)


def test_params_are_reported_and_round_trip():
    for name, params in [("diagonal", dict(variance=4.0, condition_number=9.0)),
                         ("correlated", dict(variance=4.0, condition_number=9.0, rotation_seed=3)),
                         ("spatial", dict(variance=4.0, condition_number=9.0, rotation_seed=3)),
                         ("alpha_stable", dict(alpha=1.2, scale=0.5))]:
        target = targets.get("icg", dim=3, noise=name, **{f"noise_{k}": v for k, v in params.items()})
        assert target.noise.params() == params
        assert target.params["noise"] == name
        assert all(target.params[f"noise_{k}"] == v for k, v in params.items())
        assert repr(targets.get("icg", **target.params)) == repr(target)


STABLE_CASES = [(1.5, 1.0), (1.5, 3.0), (0.7, 0.5), (1.9, 2.0), (1.0, 1.5), (2.0, 1.5)]


def ks_at_order_statistics(sample: np.ndarray, cdf, num_nodes: int) -> float:
    """The Kolmogorov-Smirnov distance sup |F_n - F| restricted to ``num_nodes`` evenly spaced
    order statistics (both sides of each jump): a lower bound of the full statistic, so comparing
    it with the KS critical value keeps the false-failure rate at most the level, and it misses at
    most the largest increase of F between neighbouring nodes (about 1/num_nodes)."""
    x = np.sort(sample)
    n = x.shape[0]
    ranks = np.unique(np.linspace(1, n, num_nodes).round().astype(int))
    f = cdf(x[ranks - 1])
    return float(max(np.max(ranks / n - f), np.max(f - (ranks - 1) / n)))


@pytest.fixture
def accurate_levy_stable(monkeypatch):
    """scipy's levy_stable CDF returns exactly 1/2 within 0.005 alpha^(1/alpha) of 0
    (``piecewise_x_tol_near_zeta``), off by up to 1.6e-3 there; a tolerance of 1e-10 makes it
    accurate to ~1e-11 (see ``test_levy_stable_cdf_inverts_the_characteristic_function``)."""
    monkeypatch.setattr(scipy.stats.levy_stable, "piecewise_x_tol_near_zeta", 1e-10)


def stable_cdf(alpha, scale):
    """CDF of ``scale`` times a standard symmetric alpha-stable variate."""
    if alpha == 1:
        return scipy.stats.cauchy(scale=scale).cdf
    if alpha == 2:
        return scipy.stats.norm(scale=np.sqrt(2) * scale).cdf
    return lambda x: scipy.stats.levy_stable.cdf(x, alpha, 0.0, scale=scale)


@pytest.mark.parametrize("alpha", [0.7, 1.5, 1.9])
def test_levy_stable_cdf_inverts_the_characteristic_function(alpha, accurate_levy_stable):
    """The reference law is exp(-|scale t|^alpha): Gil-Pelaez inversion
    F(x) = 1/2 + (1/pi) int_0^inf sin(t x / scale) exp(-t^alpha) / t dt."""
    x, scale = np.array([-7.0, -0.5, -0.003, 0.0, 0.001, 0.004, 2.0]), 1.7
    integrand = lambda t, v: np.sin(t * v / scale) * np.exp(-(t**alpha)) / t
    inverted = [0.5 + scipy.integrate.quad(integrand, 0, np.inf, args=(v,), limit=500)[0] / np.pi for v in x]
    np.testing.assert_allclose(stable_cdf(alpha, scale)(x), inverted, rtol=0, atol=1e-9)


@pytest.mark.parametrize("alpha, scale", STABLE_CASES)
def test_alpha_stable_noise_follows_scipy_levy_stable(alpha, scale, accurate_levy_stable):
    """Each coordinate of n = 1e5 noise draws (2-d ICG at x = 0, where the gradient is exactly 0)
    against ``levy_stable(alpha, 0, scale=scale)`` (Cauchy for alpha = 1, N(0, 2 scale^2) for
    alpha = 2): KS test, and a sign test that the median is 0, Bonferroni over coordinates and the
    two tests: family-wise false-failure rate 1e-3 per case. levy_stable's CDF costs ~0.15 ms a
    point, so its KS statistic is taken at 1000 order statistics (see ``ks_at_order_statistics``).

    Power: the KS critical distance is 0.0067 and F_n's standard error at most 0.0016, so a law
    whose CDF differs by more than about 0.013 somewhere (0.0117, plus 0.001 for the nodes; a scale
    error of about 7% at alpha = 1.5) is rejected with probability > 0.999; a 10% scale error must
    be rejected.
    """
    target = targets.get("icg", dim=2, noise="alpha_stable", noise_alpha=alpha, noise_scale=scale)
    n, d = 100_000, target.dim
    noise = target.stochastic_grad(np.zeros((n, d)), numpy_draws(np.random.default_rng(12), target.draw_spec, (n,)))
    cdf, wrong_cdf = stable_cdf(alpha, scale), stable_cdf(alpha, 1.1 * scale)
    level = ALPHA / (2 * d)
    ks_critical = scipy.stats.kstwo.ppf(1 - level, n)
    sign_critical = z_critical(level)
    nodes = 1000 if alpha not in (1, 2) else n
    for coordinate in noise.T:
        assert ks_at_order_statistics(coordinate, cdf, nodes) < ks_critical
        assert ks_at_order_statistics(coordinate, wrong_cdf, nodes) > ks_critical
        assert abs(np.sum(coordinate > 0) - n / 2) / np.sqrt(n / 4) < sign_critical
    if alpha == 2:
        np.testing.assert_allclose(target.noise.covariance(None), 2 * scale**2 * np.eye(d))
    else:
        assert target.noise.covariance(None) is None


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("alpha", [0.5, 1.0, 1.5, 2.0])
def test_symmetric_stable_is_the_same_in_numpy_and_jax_and_finite_at_the_endpoints(alpha, dtype):
    rng = np.random.default_rng(13)
    eps = np.finfo(dtype).eps
    u = np.concatenate([rng.random(1000), [0.0, eps / 4, 1 - eps / 2, 0.5, 0.0]]).astype(dtype)
    w = np.concatenate([rng.standard_exponential(1000), [1.0, 0.0, 0.0, 0.0, 0.0]]).astype(dtype)
    reference = symmetric_stable(u, w, alpha)
    optimized = jax.jit(symmetric_stable, static_argnums=2)(jnp.asarray(u), jnp.asarray(w), alpha)
    assert reference.dtype == optimized.dtype == dtype
    assert np.all(np.isfinite(reference)) and np.all(np.isfinite(optimized))
    rtol = 1e-12 if dtype == np.float64 else 1e-5
    np.testing.assert_allclose(optimized, reference, rtol=rtol, atol=0)
    if alpha == 1:
        np.testing.assert_allclose(reference[:1000], np.tan(np.pi * (u[:1000] - 0.5)), rtol=10 * rtol)
    if alpha == 2:
        np.testing.assert_allclose(reference[:1000], 2 * np.sqrt(w[:1000]) * np.sin(np.pi * (u[:1000] - 0.5)),
                                   rtol=10 * rtol, atol=10 * rtol)


@pytest.mark.parametrize("name", ANALYTIC_NOISE)
def test_numpy_and_jax_agree_on_shared_draws(name):
    """stochastic_grad on NumPy arrays vs on JAX arrays inside jit (batched and vmapped), same draws."""
    target = targets.get("icg", noise=name)
    rng = np.random.default_rng(14)
    n = 64
    x = rng.standard_normal((n, target.dim))
    draws = numpy_draws(rng, target.draw_spec, (n,))
    reference = target.stochastic_grad(x, draws)
    jx, jdraws = jnp.asarray(x), jax.tree.map(jnp.asarray, draws)
    batched = jax.jit(target.stochastic_grad)(jx, jdraws)
    vmapped = jax.jit(jax.vmap(target.stochastic_grad))(jx, jdraws)
    atol = 1e-12 * np.max(np.abs(reference))
    for optimized in (batched, vmapped):
        assert isinstance(optimized, jax.Array)
        np.testing.assert_allclose(optimized, reference, rtol=1e-12, atol=atol)


@pytest.mark.parametrize("name", ANALYTIC_NOISE)
def test_float32_inputs_stay_float32(name):
    target = targets.get("icg", noise=name)
    draws = numpy_draws(np.random.default_rng(15), target.draw_spec, (3,))
    x = np.full((3, target.dim), 0.5, np.float32)
    draws32 = jax.tree.map(lambda v: v.astype(np.float32), draws)
    assert target.stochastic_grad(x, draws32).dtype == np.float32
    out = jax.jit(target.stochastic_grad)(jnp.asarray(x), jax.tree.map(jnp.asarray, draws32))
    assert out.dtype == jnp.float32
    np.testing.assert_allclose(out, target.stochastic_grad(x.astype(np.float64), draws), rtol=1e-4, atol=1e-3)


BAD_INPUT = {
    "isotropic-variance-0": (dict(noise="isotropic", noise_variance=0.0), "noise_variance"),
    "diagonal-variance-negative": (dict(noise="diagonal", noise_variance=-1.0), "noise_variance"),
    "correlated-variance-inf": (dict(noise="correlated", noise_variance=np.inf), "noise_variance"),
    "spatial-variance-0": (dict(noise="spatial", noise_variance=0), "noise_variance"),
    "diagonal-condition-number-below-1": (dict(noise="diagonal", noise_condition_number=0.5), "noise_condition_number"),
    "correlated-condition-number-0": (dict(noise="correlated", noise_condition_number=0.0), "noise_condition_number"),
    "spatial-condition-number-below-1": (dict(noise="spatial", noise_condition_number=0.9), "noise_condition_number"),
    "correlated-rotation-seed-negative": (dict(noise="correlated", noise_rotation_seed=-1), "noise_rotation_seed"),
    "correlated-rotation-of-the-target": (dict(noise="correlated", rotation_seed=1), "noise_rotation_seed"),
    "alpha-stable-scale-0": (dict(noise="alpha_stable", noise_scale=0.0), "noise_scale"),
    "alpha-stable-scale-negative": (dict(noise="alpha_stable", noise_scale=-2.0), "noise_scale"),
    "alpha-stable-alpha-0": (dict(noise="alpha_stable", noise_alpha=0.0), r"noise_alpha must be a number in \(0, 2\]"),
    "alpha-stable-alpha-negative": (dict(noise="alpha_stable", noise_alpha=-1.0), r"noise_alpha .* \(0, 2\]"),
    "alpha-stable-alpha-above-2": (dict(noise="alpha_stable", noise_alpha=2.01), r"noise_alpha .* \(0, 2\]"),
    "alpha-stable-alpha-nan": (dict(noise="alpha_stable", noise_alpha=np.nan), r"noise_alpha .* \(0, 2\]"),
    "unknown-model": (dict(noise="pink"), "unknown noise model 'pink'.*alpha_stable.*spatial"),
    "unknown-parameter": (dict(noise="diagonal", noise_alpha=1.5), "no parameter 'noise_alpha'.*noise_variance"),
    "parameter-of-no-noise": (dict(noise_variance=1.0), "no parameter 'noise_variance'"),
    "spatial-on-dim-1": (dict(dim=1, noise="spatial"), "dim >= 2, got dim=1"),
}


@pytest.mark.parametrize("params, match", BAD_INPUT.values(), ids=BAD_INPUT.keys())
def test_bad_input_is_a_clear_error(params, match):
    with pytest.raises(ValueError, match=match):
        targets.get("icg", **params)


def test_unknown_model_is_an_unknown_name_error_and_spatial_needs_truth():
    with pytest.raises(UnknownNameError):
        targets.get("icg", noise="pink")

    class NoTruth:
        dim, truth = 3, None

    with pytest.raises(ValueError, match="needs a target with truth"):
        SpatialNoise(NoTruth())


@pytest.mark.parametrize("backend", ["jax", "numpy"])
@pytest.mark.parametrize("name", ANALYTIC_NOISE)
def test_sgld_runs_with_every_noise_model(name, backend):
    result = running.run("sgld", "icg", params={"step_size": 1e-3}, target_params={"noise": name},
                         num_chains=2, num_steps=200, backend=backend)
    assert result.target_params["noise"] == name
    assert result.grad_evals == 2 * 200
