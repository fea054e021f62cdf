"""Analytic targets (rosenbrock, funnel, gmm, multimodal1d): exact truth against 10^6 exact draws
and against numerical quadrature, analytic gradients against jax.grad, NumPy against JAX on shared
draws, normalisation, and bad input.

Statistical checks: every test over draws has a family-wise false-failure rate of at most
ALPHA = 1e-3 per target case, by Bonferroni over all its coordinates and statistics.
"""

from __future__ import annotations

import functools
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.integrate
import scipy.stats

from sgbench import targets
from sgbench.reference.checks import p_value_check
from sgbench.targets._moments import gaussian_raw_moment

ALPHA = 1e-3
N_DRAWS = 10**6
BATCHES = 100

PAPER = {  # the papers' settings
    "rosenbrock": ("rosenbrock", {}),
    "funnel": ("funnel", {}),
    "gmm": ("gmm", {}),
    "gmm-px": ("gmm", dict(extra_dims=0, component_variance=0.03)),
    "multimodal1d": ("multimodal1d", {}),
}
SMALL = {  # other parameters, to catch constants that only work at the defaults
    "rosenbrock-small": ("rosenbrock", dict(dim=4, Q=0.5)),
    "funnel-small": ("funnel", dict(dim=3, scale=1.5)),
    "gmm-small": ("gmm", dict(extra_dims=1, component_variance=0.5, spacing=3.0, grid_points=3)),
    "multimodal1d-small": ("multimodal1d", dict(weights=(1.0, 3.0), means=(-1.0, 2.5), scales=(0.5, 2.0))),
}
CASES = {**PAPER, **SMALL}
LIGHT_TAILED = ["rosenbrock", "gmm", "gmm-px", "multimodal1d"]


@functools.cache
def make(case, **extra):
    name, params = CASES[case]
    return targets.get(name, **params, **extra)


@functools.cache
def exact_draws(case):
    return np.asarray(make(case).sample(jax.random.key(20240), N_DRAWS))


def points(target, seed=0, n=4):
    """The initial position, and normal points of scales 1 and 3 about it (typical and atypical
    places: the funnel's neck and mouth, the mixtures' outer modes and the space between them)."""
    z = np.random.default_rng(seed).standard_normal((2, n, target.dim)) * np.array([1.0, 3.0])[:, None, None]
    x0 = target.initial_position()
    return np.concatenate([x0[None], x0 + z.reshape(2 * n, target.dim)])


def assert_family(pvalues: dict, alpha=ALPHA):
    """Bonferroni (``sgbench.reference.checks.p_value_check``): every p-value above alpha / (their number), so
    the family-wise rate is <= alpha; the message names the statistics with a rejected p-value."""
    flat = {name: np.atleast_1d(p).ravel() for name, p in pvalues.items()}
    check = p_value_check(np.concatenate(list(flat.values())), alpha=alpha, method="bonferroni")
    ends = np.cumsum([p.size for p in flat.values()])
    rejected = check.details["rejected"]
    failed = {name: p for name, p, end in zip(flat, flat.values(), ends) if rejected[end - p.size:end].any()}
    assert check.passed, f"{check.message()} Rejected: {failed}"


def z_pvalue(estimate, truth, se):
    return 2 * scipy.stats.norm.sf(np.abs(estimate - truth) / se)


def batch_pvalue(batch_estimates, truth):
    """t-test (BATCHES - 1 degrees of freedom) of the mean of independent batch estimates."""
    b = batch_estimates.shape[0]
    t = (batch_estimates.mean(0) - truth) / (batch_estimates.std(0, ddof=1) / math.sqrt(b))
    return 2 * scipy.stats.t.sf(np.abs(t), b - 1)


def symmetric_pvalue(total, total_of_squares):
    """Efron's (1969) bound for the self-normalised sum of n independent variables y_k symmetric
    about 0 (no moment conditions, so heavy tails are fine), from sum y and sum y^2:
    P(|sum y| >= t sqrt(sum y^2)) <= 2 exp(-t^2/2)."""
    t = np.abs(total) / np.sqrt(total_of_squares)
    return np.minimum(1.0, 2 * np.exp(-(t**2) / 2))


def moment_pvalues(x, truth):
    """z-tests of E[x], E[x^2] (SE from the sample variance), the covariance entries (delta method:
    SE from the variance of the centred products), and a batch-means t-test of Var[x^2]."""
    n, d = x.shape
    sq = x**2
    centred = x - x.mean(0)
    covariance = centred.T @ centred / n
    product_var = (centred**2).T @ centred**2 / n - covariance**2
    upper = np.triu_indices(d)
    batch_var = sq.reshape(BATCHES, n // BATCHES, d).var(axis=1, ddof=1)
    return {
        "mean": z_pvalue(x.mean(0), truth.mean, x.std(0) / math.sqrt(n)),
        "second_moment": z_pvalue(sq.mean(0), truth.second_moment, sq.std(0) / math.sqrt(n)),
        "second_moment_var": batch_pvalue(batch_var, truth.second_moment_var),
        "covariance": z_pvalue(covariance[upper], truth.covariance[upper], np.sqrt(product_var[upper] / n)),
    }


def gauss_legendre(breaks, per_cell):
    """Nodes and weights of Gauss-Legendre rules with ``per_cell`` nodes on each [breaks[i], breaks[i+1]]."""
    z, w = np.polynomial.legendre.leggauss(per_cell)
    lo, hi = np.asarray(breaks[:-1])[:, None], np.asarray(breaks[1:])[:, None]
    return ((hi - lo) / 2 * z + (hi + lo) / 2).ravel(), ((hi - lo) / 2 * w).ravel()


def test_registry_lists_the_analytic_targets():
    assert {"rosenbrock", "funnel", "gmm", "multimodal1d"} <= set(targets.names())


@pytest.mark.parametrize("order", range(9))
def test_gaussian_raw_moments(order):
    assert gaussian_raw_moment(order, 1.3, 0.7) == pytest.approx(scipy.stats.norm(1.3, math.sqrt(0.7)).moment(order),
                                                                  rel=1e-12)


# --- truth against exact draws -------------------------------------------------------------------


@pytest.mark.parametrize("case", LIGHT_TAILED)
def test_truth_agrees_with_exact_draws(case):
    """10^6 exact draws: z-tests of E[x], E[x^2] and every covariance entry, batch-means t-test of
    Var[x^2], per coordinate; Bonferroni over all of them, family-wise false-failure rate ALPHA."""
    assert_family(moment_pvalues(exact_draws(case), make(case).truth))


def test_funnel_truth_agrees_with_exact_draws():
    """The funnel's x_i^2 (i >= 2) is too heavy-tailed for z-tests from 10^6 draws: the standard
    error of E[x_i^2] needs E[x_i^4] = 3 E[e^{2v}], whose mass sits at v = 2 s^2 = 18, six standard
    deviations out (probability ~1e-9 per draw), and x_i^2 has kurtosis E[x^8]/E[x^4]^2 = (35/3) e^36
    (~5e16); such tests would not hold their level, so those moments are checked by quadrature
    (below). Here, with family-wise rate ALPHA (Bonferroni): z-tests of the Gaussian log-scale v
    (E[v], E[v^2], batch-means Var[v^2]), of the light-tailed E[log x_i^2] = E[v] + E[log z^2] =
    -(gamma + log 2) and E[x_i^2 e^-v] = E[z^2] = 1, and Efron's moment-free test, for variables
    symmetric about 0, of E[x_i] and of the off-diagonal covariance."""
    funnel = make("funnel")
    truth = funnel.truth
    x = exact_draws("funnel")
    n = x.shape[0]
    v, rest = x[:, 0], x[:, 1:]
    log_sq = np.log(rest**2)
    standardised = rest**2 * np.exp(-v)[:, None]
    centred = x - truth.mean
    off_diagonal = np.triu_indices(funnel.dim, 1)
    # y = c_i c_j - C_ij for i < j: sum y and sum y^2 from the matrices of sums of products
    c = truth.covariance[off_diagonal]
    products = (centred.T @ centred)[off_diagonal]
    products_sq = ((centred**2).T @ centred**2)[off_diagonal]
    assert_family({
        "E[v]": z_pvalue(v.mean(), truth.mean[0], v.std() / math.sqrt(n)),
        "E[v^2]": z_pvalue((v**2).mean(), truth.second_moment[0], (v**2).std() / math.sqrt(n)),
        "Var[v^2]": batch_pvalue((v**2).reshape(BATCHES, -1).var(axis=1, ddof=1), truth.second_moment_var[0]),
        "E[log x^2]": z_pvalue(log_sq.mean(0), -(np.euler_gamma + math.log(2)), log_sq.std(0) / math.sqrt(n)),
        "E[x^2 e^-v]": z_pvalue(standardised.mean(0), 1.0, standardised.std(0) / math.sqrt(n)),
        "E[x]": symmetric_pvalue(centred[:, 1:].sum(0), (centred[:, 1:] ** 2).sum(0)),
        "covariance": symmetric_pvalue(products - n * c, products_sq - 2 * c * products + n * c**2),
    })
    assert np.all(truth.mean == 0) and np.all(truth.covariance[off_diagonal] == 0)


# --- truth and normalisation against quadrature ----------------------------------------------------


def test_rosenbrock_pair_moments_by_quadrature():
    """2-d adaptive quadrature of exp(logdensity) of one (a, b) pair, b integrated over a^2 +- 12 sd."""
    rosenbrock = make("rosenbrock")
    pair = targets.get("rosenbrock", dim=2, Q=rosenbrock.Q)
    sd_b = math.sqrt(rosenbrock.Q / 2)

    def moments(a, b):
        return np.exp(pair.logdensity(np.array([a, b]))) * np.array([1, a, b, a * a, b * b, a**4, b**4, a * b])

    def over_b(a):
        return scipy.integrate.quad_vec(lambda b: moments(a, b), a * a - 12 * sd_b, a * a + 12 * sd_b,
                                        epsabs=1e-13, epsrel=1e-11)[0]

    one, ea, eb, ea2, eb2, ea4, eb4, eab = scipy.integrate.quad_vec(over_b, 1 - 8.0, 1 + 8.0, epsabs=1e-12,
                                                                     epsrel=1e-11)[0]
    truth = rosenbrock.truth
    np.testing.assert_allclose(one, 1.0, rtol=1e-9)
    np.testing.assert_allclose([ea, eb], truth.mean[:2], rtol=1e-9)
    np.testing.assert_allclose([ea2, eb2], truth.second_moment[:2], rtol=1e-9)
    np.testing.assert_allclose([ea4 - ea2**2, eb4 - eb2**2], truth.second_moment_var[:2], rtol=1e-9)
    np.testing.assert_allclose(eab - ea * eb, truth.covariance[0, 1], rtol=1e-9)
    # the derivation's numbers (module docstring of sgbench.targets.rosenbrock)
    np.testing.assert_allclose(truth.covariance[:2, :2], [[0.5, 1.0], [1.0, 2.55]], rtol=1e-14)
    np.testing.assert_allclose(truth.second_moment_var[:2], [2.5, 104.955], rtol=1e-14)
    assert not truth.covariance[:2, 2:].any()


def test_rosenbrock_is_a_product_of_pairs():
    rosenbrock = make("rosenbrock")
    pair = targets.get("rosenbrock", dim=2, Q=rosenbrock.Q)
    x = points(rosenbrock)
    np.testing.assert_allclose(rosenbrock.logdensity(x), pair.logdensity(x.reshape(-1, 5, 2)).sum(-1), rtol=1e-13)


@pytest.mark.parametrize("case", ["funnel", "funnel-small"])
def test_funnel_moments_by_quadrature(case):
    """1-d quadrature over v of the conditional moments (E[x_i^2 | v] = e^v, E[x_i^4 | v] = 3 e^{2v}),
    and 2-d quadrature of exp(logdensity) of the 2-d funnel (normalisation, E[v^k], E[x^k], E[v x])."""
    funnel = make(case)
    truth, s = funnel.truth, funnel.scale
    prior = scipy.stats.norm(0, s)
    second = scipy.integrate.quad(lambda v: prior.pdf(v) * math.exp(v), -20 * s, 20 * s, points=[s**2])[0]
    fourth = scipy.integrate.quad(lambda v: prior.pdf(v) * 3 * math.exp(2 * v), -20 * s, 20 * s,
                                  points=[2 * s**2])[0]
    np.testing.assert_allclose(truth.second_moment[1:], second, rtol=1e-10)
    np.testing.assert_allclose(truth.second_moment_var[1:], fourth - second**2, rtol=1e-10)
    np.testing.assert_allclose(np.diag(truth.covariance)[1:], second, rtol=1e-10)

    small = targets.get("funnel", dim=2, scale=s)
    # integrand entries scaled to order 1, so quad_vec's error norm controls each of them
    expected = np.array([1, 0, s**2, 3 * s**4, second, fourth, 0])
    scale = np.maximum(np.abs(expected), 1.0)

    def over_x(v):
        width = 12 * math.exp(v / 2)
        return scipy.integrate.quad_vec(
            lambda x: np.exp(small.logdensity(np.array([v, x]))) * np.array([1, v, v * v, v**4, x * x, x**4, v * x])
            / scale, -width, width, epsabs=1e-13, epsrel=1e-11)[0]

    got = scipy.integrate.quad_vec(over_x, -20 * s, 20 * s, points=[0, s**2, 2 * s**2], epsabs=1e-11,
                                   epsrel=1e-10)[0] * scale
    np.testing.assert_allclose(got, expected, rtol=1e-8, atol=1e-9)


@pytest.mark.parametrize("case", ["multimodal1d", "multimodal1d-small"])
def test_multimodal1d_moments_by_quadrature(case):
    target = make(case)
    means = np.asarray(target.params["means"])
    lo, hi = means.min() - 40, means.max() + 40

    def moment(order):
        return scipy.integrate.quad(lambda y: y**order * np.exp(target.logdensity(np.array([y]))), lo, hi,
                                    points=means, epsabs=1e-13, epsrel=1e-12, limit=200)[0]

    one, first, second, fourth = (moment(k) for k in (0, 1, 2, 4))
    truth = target.truth
    np.testing.assert_allclose(one, 1.0, rtol=1e-10)
    np.testing.assert_allclose([first, second, fourth - second**2, second - first**2],
                               [truth.mean[0], truth.second_moment[0], truth.second_moment_var[0],
                                truth.covariance[0, 0]], rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("component_variance", [0.3, 0.03])
def test_gmm_moments_by_quadrature(component_variance):
    """Tensor Gauss-Legendre quadrature of exp(logdensity) of the 2-d mixture (one cell per grid
    point, 120 nodes each): normalisation, the 1-d marginal moments, and E[x_1 x_2]."""
    paper = targets.get("gmm", component_variance=component_variance)
    target = targets.get("gmm", extra_dims=0, component_variance=component_variance)
    y, w = gauss_legendre(np.concatenate([[-14], target.grid - 1, [target.grid[-1] + 1, 14]]), 120)
    a, b = np.meshgrid(y, y, indexing="ij")
    weight = np.exp(target.logdensity(np.stack([a, b], axis=-1))) * np.outer(w, w)
    one, first, second, fourth, cross = (np.sum(weight * f) for f in (1, a, a**2, a**4, a * b))
    truth = paper.truth
    np.testing.assert_allclose(one, 1.0, rtol=1e-12)
    np.testing.assert_allclose([first, cross], 0.0, atol=1e-12)
    np.testing.assert_allclose(truth.mean[:2], first, atol=1e-12)
    np.testing.assert_allclose(truth.second_moment[:2], second, rtol=1e-12)
    np.testing.assert_allclose(truth.second_moment_var[:2], fourth - second**2, rtol=1e-12)
    np.testing.assert_allclose(truth.covariance, np.diag(truth.second_moment - truth.mean**2), rtol=1e-14)
    np.testing.assert_allclose(truth.second_moment[2:], 1.0)
    np.testing.assert_allclose(truth.second_moment_var[2:], 2.0)


@pytest.mark.parametrize("case", ["gmm", "gmm-px", "gmm-small"])
def test_gmm_is_the_mixture_of_every_grid_component(case):
    """log p against the 25-component (grid_points^2) sum of scipy normal densities, by brute force."""
    target = make(case)
    x = points(target)
    centres = np.array([(u, v) for u in target.grid for v in target.grid])
    mixed = scipy.stats.multivariate_normal(np.zeros(2), target.component_variance * np.eye(2))
    expected = (scipy.special.logsumexp([mixed.logpdf(x[:, :2] - c) for c in centres], axis=0) - math.log(len(centres))
                + scipy.stats.norm.logpdf(x[:, 2:]).sum(-1))
    np.testing.assert_allclose(target.logdensity(x), expected, rtol=1e-12)


def test_funnel_logdensity_is_the_hierarchical_model():
    funnel = make("funnel")
    x = points(funnel)
    v = x[:, 0]
    expected = scipy.stats.norm.logpdf(v, 0, 3.0) + scipy.stats.norm.logpdf(x[:, 1:], 0, np.exp(v / 2)[:, None]).sum(-1)
    np.testing.assert_allclose(funnel.logdensity(x), expected, rtol=1e-12)


def test_default_truths_in_closed_form():
    """The numbers the module docstrings derive."""
    funnel = make("funnel").truth
    np.testing.assert_allclose(funnel.second_moment, [9, *[math.exp(4.5)] * 9], rtol=1e-14)
    np.testing.assert_allclose(funnel.second_moment_var, [162, *[3 * math.exp(18) - math.exp(9)] * 9], rtol=1e-14)
    gmm = make("gmm").truth
    np.testing.assert_allclose(gmm.second_moment[:2], 8 + 0.3, rtol=1e-14)  # mean(mu^2) = 8, mean(mu^4) = 108.8
    np.testing.assert_allclose(gmm.second_moment_var[:2], 108.8 + 6 * 8 * 0.3 + 3 * 0.09 - 8.3**2, rtol=1e-13)
    mm = make("multimodal1d").truth
    np.testing.assert_allclose([mm.mean[0], mm.second_moment[0]], [0.4, 0.2 * 17 + 0.5 + 0.3 * 17], rtol=1e-14)
    for case in PAPER:
        truth = make(case).truth
        assert truth.source == "analytic" and not truth.second_moment_se.any() and not truth.covariance_se.any()
        np.testing.assert_array_equal(make(case).initial_position(), truth.mean)


# --- gradients, backends, shapes ------------------------------------------------------------------


@pytest.mark.parametrize("case", CASES)
def test_gradient_matches_jax_grad(case):
    target = make(case)
    x = points(target, seed=3)
    autodiff = np.asarray(jax.jit(jax.vmap(jax.grad(target.logdensity)))(jnp.asarray(x)))
    np.testing.assert_allclose(target.grad_logdensity(x), autodiff, rtol=1e-10, atol=1e-10)
    single = np.asarray(jax.jit(jax.grad(target.logdensity))(jnp.asarray(x[-1])))
    np.testing.assert_allclose(target.grad_logdensity(x[-1]), single, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("case", CASES)
def test_numpy_and_jax_agree_on_shared_draws(case):
    target = make(case, noise="isotropic")
    x = points(target, seed=4)
    draw = {"gradient_noise": np.random.default_rng(5).standard_normal(x.shape)}
    jx, jdraw = jnp.asarray(x), jax.tree.map(jnp.asarray, draw)
    for method, args, jargs in ((target.logdensity, (x,), (jx,)), (target.grad_logdensity, (x,), (jx,)),
                                (target.stochastic_grad, (x, draw), (jx, jdraw))):
        np.testing.assert_allclose(np.asarray(jax.jit(method)(*jargs)), method(*args), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(target.stochastic_grad(x, draw) - target.grad_logdensity(x),
                               16.0 * draw["gradient_noise"], rtol=1e-12, atol=1e-11)


@pytest.mark.parametrize("case", CASES)
def test_shapes_and_dtypes(case):
    target = make(case)
    x = np.random.default_rng(6).standard_normal((3, 4, target.dim))
    assert target.logdensity(x).shape == (3, 4) and target.grad_logdensity(x).shape == (3, 4, target.dim)
    assert np.shape(target.logdensity(x[0, 0])) == () and target.grad_logdensity(x[0, 0]).shape == (target.dim,)
    np.testing.assert_allclose(target.logdensity(x)[1, 2], target.logdensity(x[1, 2]), rtol=1e-14)
    single = jnp.ones(target.dim, jnp.float32)
    assert jax.jit(target.logdensity)(single).dtype == jax.jit(target.grad_logdensity)(single).dtype == jnp.float32
    draws = target.sample(jax.random.key(1), 7)
    assert isinstance(draws, jax.Array) and draws.shape == (7, target.dim) and draws.dtype == jnp.float64
    np.testing.assert_array_equal(draws, target.sample(jax.random.key(1), 7))
    assert not np.array_equal(draws, target.sample(jax.random.key(2), 7))
    assert target.initial_position().shape == (target.dim,)


# --- bad input ------------------------------------------------------------------------------------

BAD = [
    ("rosenbrock", dict(dim=3), ValueError, r"dim must be an even integer >= 2 for rosenbrock, got 3"),
    ("rosenbrock", dict(dim=1), ValueError, r"dim must be an integer >= 2"),
    ("rosenbrock", dict(dim=0), ValueError, r"dim must be an integer >= 2"),
    ("rosenbrock", dict(dim=4.0), TypeError, r"dim must be an integer >= 2"),
    ("rosenbrock", dict(Q=0.0), ValueError, r"Q must be a finite number > 0"),
    ("rosenbrock", dict(Q=-0.1), ValueError, r"Q must be a finite number > 0"),
    ("rosenbrock", dict(Q=math.inf), ValueError, r"Q must be a finite number > 0"),
    ("funnel", dict(dim=1), ValueError, r"dim must be an integer >= 2"),
    ("funnel", dict(dim=2.5), TypeError, r"dim must be an integer >= 2"),
    ("funnel", dict(scale=0.0), ValueError, r"scale must be a finite number > 0"),
    ("funnel", dict(scale=-3.0), ValueError, r"scale must be a finite number > 0"),
    ("funnel", dict(scale=math.nan), ValueError, r"scale must be a finite number > 0"),
    ("gmm", dict(extra_dims=-1), ValueError, r"extra_dims must be an integer >= 0"),
    ("gmm", dict(extra_dims=1.5), TypeError, r"extra_dims must be an integer >= 0"),
    ("gmm", dict(component_variance=0.0), ValueError, r"component_variance must be a finite number > 0"),
    ("gmm", dict(component_variance=-0.3), ValueError, r"component_variance must be a finite number > 0"),
    ("gmm", dict(spacing=-2.0), ValueError, r"spacing must be a finite number > 0"),
    ("gmm", dict(grid_points=0), ValueError, r"grid_points must be an integer >= 1"),
    ("multimodal1d", dict(weights=(0.5, -0.5)), ValueError, r"weights\[1\] must be a finite number > 0"),
    ("multimodal1d", dict(scales=(1.0, 0.0, 1.0)), ValueError, r"scales\[1\] must be a finite number > 0"),
    ("multimodal1d", dict(means=(0.0, math.nan, 1.0)), ValueError, r"means\[1\] must be a finite number"),
    ("multimodal1d", dict(means=(0.0, 1.0)), ValueError, r"means must have one entry per component \(3"),
    ("multimodal1d", dict(weights=()), ValueError, r"weights must be a non-empty sequence"),
    ("multimodal1d", dict(weights=1.0), ValueError, r"weights must be a non-empty sequence"),
]


@pytest.mark.parametrize("name, params, error, message", BAD, ids=[f"{b[0]}-{b[1]}" for b in BAD])
def test_bad_parameters_name_the_parameter_and_range(name, params, error, message):
    with pytest.raises(error, match=message):
        targets.get(name, **params)


@pytest.mark.parametrize("case", PAPER)
def test_draw_count_is_checked(case):
    with pytest.raises(ValueError, match="n must be an integer >= 1"):
        make(case).sample(jax.random.key(0), 0)
