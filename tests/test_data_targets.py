"""Data targets (linreg, logreg, bnn), the minibatch noise model and the data loaders.

Exact checks: the minibatch gradient averaged over all N^B index tuples is the full gradient and
its covariance is the model's; analytic gradients equal ``jax.grad``; NumPy and jitted JAX agree on
shared draws. Statistical check (linreg): moments of 10^6 exact draws against the closed form,
z-tests with Bonferroni, family-wise false-failure rate ALPHA = 1e-3.
"""

from __future__ import annotations

import itertools
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.linalg
import scipy.stats

from sgbench import targets
from sgbench.base.draws import numpy_draws
from sgbench.bench.running import run as running
from sgbench.reference.checks import moment_check
from sgbench.targets import datasets
from sgbench.targets._contract import NoExactSamplerError

ALPHA = 1e-3


def write_csv(path, features, labels, names=None, label="y"):
    names = names or [f"f{j}" for j in range(features.shape[1])]
    lines = [",".join([*names, label])] + [",".join(map(repr, [*map(float, row), float(y)]))
                                            for row, y in zip(features, labels)]
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
    """Small data files: binary labels (logreg), real and class labels (bnn)."""
    directory = tmp_path_factory.mktemp("data")
    rng = np.random.default_rng(7)
    features = rng.standard_normal((10, 3))
    write_csv(directory / "binary.csv", features[:6], np.array([0, 1, 1, 0, 1, 0]), label="outcome")
    write_csv(directory / "real.csv", features, rng.standard_normal(10))
    np.savez(directory / "classes.npz", X=features, y=np.arange(10) % 3)
    return directory


def tiny_targets(data_dir):
    """(name, params): small targets whose N^B minibatches can be enumerated."""
    return [
        ("linreg", dict(num_data=4, dim=2, noise_batch_size=3)),
        ("logreg", dict(dataset="simulated", num_data=5, noise_batch_size=3)),
        ("logreg", dict(dataset="file", path=str(data_dir / "binary.csv"), label="outcome", noise_batch_size=2)),
        ("bnn", dict(dataset="file", path=str(data_dir / "real.csv"), hidden=(3,), noise_batch_size=2)),
        ("bnn", dict(task="classification", dataset="file", path=str(data_dir / "classes.npz"), hidden=(4, 3),
                     activation="tanh", noise_batch_size=2)),
    ]


# Default-size targets and variants (built once).
VARIANTS = {
    "linreg": ("linreg", {}),
    "logreg_breast_cancer": ("logreg", {}),
    "logreg_simulated": ("logreg", dict(dataset="simulated", num_data=2000)),
    "bnn_regression_relu": ("bnn", {}),
    "bnn_regression_tanh": ("bnn", dict(activation="tanh", hidden=(8,))),
    "bnn_classification_relu": ("bnn", dict(task="classification")),
    "bnn_classification_tanh": ("bnn", dict(task="classification", activation="tanh", hidden=(8, 8))),
}
_BUILT = {}


def variant(key):
    if key not in _BUILT:
        name, params = VARIANTS[key]
        _BUILT[key] = targets.get(name, **params)
    return _BUILT[key]


def random_point(target, seed):
    x0 = target.initial_position()
    return x0 + 0.3 * np.random.default_rng(seed).standard_normal(x0.shape)


def assert_close(actual, expected, tol):
    """|actual - expected| <= tol * max(1, max |expected|), elementwise."""
    expected = np.asarray(expected)
    scale = max(1.0, float(np.max(np.abs(expected))))
    np.testing.assert_allclose(np.asarray(actual), expected, rtol=0, atol=tol * scale)


# ----------------------------------------------------------------------------- minibatch noise


@pytest.mark.parametrize("case", range(5))
def test_minibatch_gradient_is_unbiased_and_has_the_stated_covariance(data_dir, case):
    """Exactly: the mean over all N^B index tuples (each equally likely under sampling with
    replacement) is the full gradient, and their covariance is ``noise.covariance``."""
    name, params = tiny_targets(data_dir)[case]
    target = targets.get(name, **params)
    n, b = target.num_data, target.noise.batch_size
    x = random_point(target, seed=case)
    grads = np.array([target.stochastic_grad(x, {"indices": np.array(t)})
                      for t in itertools.product(range(n), repeat=b)])
    assert grads.shape == (n**b, target.dim)
    assert_close(grads.mean(axis=0), target.grad_logdensity(x), 1e-12)
    centred = grads - grads.mean(axis=0)
    assert_close(target.noise.covariance(x), centred.T @ centred / len(grads), 1e-12)


def test_minibatch_of_all_data_in_order_is_the_full_gradient():
    target = targets.get("linreg", num_data=50, dim=3, noise_batch_size=50)
    x = random_point(target, 0)
    assert_close(target.stochastic_grad(x, {"indices": np.arange(50)}), target.grad_logdensity(x), 1e-12)


def test_draw_spec_and_default_batch_size():
    target = targets.get("linreg")
    spec = target.draw_spec["indices"]
    assert (spec.law, spec.shape, spec.high) == ("index", (32,), 1000)
    assert targets.get("linreg", num_data=10).noise.batch_size == 10  # min(32, N)
    assert targets.get("linreg", noise_batch_size=100).params["noise_batch_size"] == 100


def test_no_noise_gives_the_exact_gradient_and_additive_noise_works():
    exact = targets.get("linreg", noise="none")
    x = random_point(exact, 1)
    assert exact.draw_spec == {}
    np.testing.assert_array_equal(exact.stochastic_grad(x, {}), exact.grad_logdensity(x))
    noisy = targets.get("linreg", noise="isotropic", noise_variance=4.0)
    z = np.random.default_rng(0).standard_normal(noisy.dim)
    assert_close(noisy.stochastic_grad(x, {"gradient_noise": z}), exact.grad_logdensity(x) + 2.0 * z, 1e-14)


# ----------------------------------------------------------------------------- gradients


@pytest.mark.parametrize("key", VARIANTS)
def test_analytic_gradients_equal_jax_grad(key):
    """Full-data gradient, minibatch gradient (of log prior + N/B * minibatch log likelihood) and
    per-datum gradients against autodiff, in float64, to 1e-10 of their scale."""
    target = variant(key)
    rng = np.random.default_rng(3)
    scale = target.num_data / target.noise.batch_size
    full = jax.jit(jax.grad(target.logdensity))
    minibatch = jax.jit(jax.grad(lambda v, i: target.log_prior(v) + scale * target.log_likelihood(v, i)))
    per_datum = jax.jit(jax.jacobian(target.log_likelihood_terms))
    for seed in range(2):
        x = random_point(target, seed)
        xj = jnp.asarray(x)
        assert_close(target.grad_logdensity(x), full(xj), 1e-10)
        indices = rng.integers(0, target.num_data, target.noise.batch_size)
        assert_close(target.stochastic_grad(x, {"indices": indices}), minibatch(xj, jnp.asarray(indices)), 1e-10)
        few = indices[:5]
        assert_close(target.grad_log_likelihood_terms(x, few), per_datum(xj, jnp.asarray(few)), 1e-10)
        assert_close(target.grad_log_likelihood_terms(x, few).sum(axis=0), target.grad_log_likelihood(x, few), 1e-13)


@pytest.mark.parametrize("key", VARIANTS)
def test_numpy_and_jitted_jax_agree_on_shared_draws(key):
    target = variant(key)
    rng = np.random.default_rng(5)
    grad = jax.jit(target.stochastic_grad)
    density = jax.jit(target.logdensity)
    for seed in range(3):
        x = random_point(target, seed)
        draw = numpy_draws(rng, target.draw_spec)
        jax_draw = {"indices": jnp.asarray(draw["indices"], dtype=jnp.int32)}  # the JAX driver's index dtype
        assert_close(grad(jnp.asarray(x), jax_draw), target.stochastic_grad(x, draw), 1e-12)
        assert_close(density(jnp.asarray(x)), target.logdensity(x), 1e-12)


@pytest.mark.parametrize("key", ["linreg", "logreg_breast_cancer", "bnn_classification_tanh"])
def test_float32_positions_stay_float32(key):
    target = variant(key)
    x = jnp.asarray(target.initial_position(), jnp.float32)
    draw = {"indices": jnp.arange(target.noise.batch_size, dtype=jnp.int32)}
    assert jax.jit(target.stochastic_grad)(x, draw).dtype == jnp.float32
    assert jax.jit(target.logdensity)(x).dtype == jnp.float32
    assert jax.jit(target.grad_logdensity)(x).dtype == jnp.float32


def test_positions_are_single_vectors():
    target = variant("linreg")
    with pytest.raises(ValueError, match=r"single vectors of shape \(20,\)"):
        target.logdensity(np.zeros((3, 20)))
    with pytest.raises(ValueError, match="single vectors"):
        target.stochastic_grad(np.zeros(19), {"indices": np.arange(32)})
    batch = np.stack([random_point(target, s) for s in range(3)])
    np.testing.assert_allclose(jax.vmap(target.grad_logdensity)(jnp.asarray(batch)),
                               [target.grad_logdensity(x) for x in batch], rtol=1e-12)


# ----------------------------------------------------------------------------- linreg truth


def test_linreg_closed_form_equals_an_independent_solve():
    """Mean: least squares of the stacked system [X / sigma; sqrt(tau) I] theta = [y / sigma; 0];
    covariance: (R^T R)^-1 from its QR factor; density: scipy's normal; evidence: the marginal
    y ~ N(0, sigma^2 I + X X^T / tau)."""
    target = targets.get("linreg", num_data=200, dim=5, sigma2=0.7, tau=0.3, data_seed=3)
    sigma, x_data, y = math.sqrt(0.7), target.features, target.labels
    stacked = np.vstack([x_data / sigma, math.sqrt(0.3) * np.eye(5)])
    mean = np.linalg.lstsq(stacked, np.concatenate([y / sigma, np.zeros(5)]), rcond=None)[0]
    r = np.linalg.qr(stacked, mode="r")
    r_inverse = scipy.linalg.solve_triangular(r, np.eye(5))
    np.testing.assert_allclose(target.truth.mean, mean, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(target.truth.covariance, r_inverse @ r_inverse.T, rtol=1e-10, atol=1e-14)
    x = random_point(target, 0)
    posterior = scipy.stats.multivariate_normal(mean, r_inverse @ r_inverse.T)
    np.testing.assert_allclose(target.logdensity(x), posterior.logpdf(x), rtol=1e-10)
    marginal = scipy.stats.multivariate_normal(np.zeros(200), 0.7 * np.eye(200) + x_data @ x_data.T / 0.3)
    np.testing.assert_allclose(target.log_evidence, marginal.logpdf(y), rtol=1e-10)
    np.testing.assert_array_equal(target.initial_position(), target.truth.mean)


def test_linreg_follows_section_5_2():
    target = variant("linreg")
    assert (target.num_data, target.dim, target.sigma2, target.tau, target.prior_variance) == (1000, 20, 1.5, 0.01, 100)
    residual = target.labels - target.features @ target.theta_star
    assert abs(residual.var() / 1.5 - 1) < 0.15  # eps ~ N(0, 1.5 I); 1000 draws
    np.testing.assert_array_equal(targets.get("linreg").features, target.features)  # reproducible from data_seed
    assert not np.allclose(targets.get("linreg", data_seed=1).features, target.features)


def test_linreg_truth_agrees_with_exact_draws():
    """z-tests of E[x] and E[x^2] per dimension against 10^6 exact draws, with their Monte Carlo
    errors Var[x]/n and Var[x^2]/n; Bonferroni over 2 * dim tests: family-wise rate ALPHA."""
    target = variant("linreg")
    n = 1_000_000
    draws = np.asarray(target.sample(jax.random.key(11), n))
    assert draws.shape == (n, target.dim)
    truth = target.truth
    moment_check(np.stack([draws.mean(0), (draws**2).mean(0)]),
                 np.sqrt(np.stack([np.diag(truth.covariance), truth.second_moment_var]) / n),
                 np.stack([truth.mean, truth.second_moment]), alpha=ALPHA,
                 name="linreg truth: E[x], E[x^2]").assert_passed()


def test_targets_without_truth_declare_it():
    for key in ("logreg_breast_cancer", "bnn_regression_relu"):
        target = variant(key)
        assert target.truth is None
        with pytest.raises(NoExactSamplerError, match="no exact sampler"):
            target.sample(jax.random.key(0), 10)


# ----------------------------------------------------------------------------- logreg


def test_logreg_data_sets_follow_the_papers():
    cancer = variant("logreg_breast_cancer")
    assert (cancer.num_data, cancer.dim, cancer.prior_variance) == (569, 31, 1.0)
    np.testing.assert_array_equal(cancer.features[:, 0], 1.0)  # intercept
    np.testing.assert_allclose(cancer.features[:, 1:].mean(0), 0, atol=1e-12)
    np.testing.assert_allclose(cancer.features[:, 1:].std(0), 1, rtol=1e-12)
    simulated = targets.get("logreg", dataset="simulated")
    assert (simulated.num_data, simulated.dim, simulated.prior_variance) == (10_000, 10, 10.0)
    assert set(np.unique(simulated.labels)) == {0.0, 1.0}
    assert simulated.params["data_seed"] == 0 and cancer.params["data_seed"] is None


def test_logreg_starts_at_the_mode():
    target = variant("logreg_breast_cancer")
    x0 = target.initial_position()
    assert np.max(np.abs(target.grad_logdensity(x0))) < 1e-2
    assert target.logdensity(x0) > target.logdensity(x0 + 0.01)


def test_log_sigmoid_is_stable_for_large_arguments():
    target = variant("logreg_simulated")
    eta = np.array([-800.0, 0.0, 800.0])
    y = np.array([1.0, 1.0, 0.0])
    np.testing.assert_allclose(target.link_log_likelihood(eta, y), [-800.0, -math.log(2), -800.0])
    np.testing.assert_allclose(target.link_slope(eta, y), [1.0, 0.5, -1.0])


# ----------------------------------------------------------------------------- bnn


def test_flatten_and_unflatten_round_trip():
    target = variant("bnn_classification_relu")
    assert target.layer_sizes == (64, 16, 16, 10)
    x = random_point(target, 0)
    layers = target.unflatten(x)
    assert [(w.shape, b.shape) for w, b in layers] == [((64, 16), (16,)), ((16, 16), (16,)), ((16, 10), (10,))]
    np.testing.assert_array_equal(target.flatten(layers), x)
    np.testing.assert_array_equal(layers[0][0].ravel(), x[:64 * 16])  # W_1 first, row-major
    batch = np.stack([x, 2 * x])
    np.testing.assert_array_equal(target.flatten(target.unflatten(batch)), batch)
    np.testing.assert_array_equal(target.unflatten(jnp.asarray(batch))[2][1][1], 2 * layers[2][1])
    with pytest.raises(ValueError, match="last axis 1482"):
        target.unflatten(x[:-1])
    regression = variant("bnn_regression_relu")
    assert regression.layer_sizes == (10, 16, 16, 2) and regression.dim == 10 * 16 + 16 + 16 * 16 + 16 + 16 * 2 + 2


def test_predict_is_the_network():
    target = variant("bnn_regression_tanh")
    x = random_point(target, 2)
    (w1, b1), (w2, b2) = target.unflatten(x)
    features = target.splits["test"][0]
    np.testing.assert_allclose(target.predict(x, features), np.tanh(features @ w1 + b1) @ w2 + b2, rtol=1e-12)


def test_splits_are_disjoint_cover_the_data_and_follow_the_seed():
    target = variant("bnn_regression_relu")
    parts = target.split_indices
    assert [len(parts[s]) for s in ("train", "validation", "test")] == [309, 45, 88]  # cut at 70 % and 80 % of 442
    joined = np.concatenate(list(parts.values()))
    np.testing.assert_array_equal(np.sort(joined), np.arange(442))
    again = targets.get("bnn", split_seed=0)
    for name in parts:
        np.testing.assert_array_equal(again.split_indices[name], parts[name])
        np.testing.assert_array_equal(again.splits[name][0], target.splits[name][0])
    assert not np.array_equal(targets.get("bnn", split_seed=1).split_indices["train"], parts["train"])
    odd = datasets.split_indices(3, dict(train=0.5, validation=0.5, test=0.0), seed=0)  # cuts at round(1.5), 3
    assert [len(v) for v in odd.values()] == [2, 1, 0] and sorted(np.concatenate(list(odd.values()))) == [0, 1, 2]
    train_x, train_y = target.splits["train"]
    np.testing.assert_array_equal(target.features, train_x)
    np.testing.assert_allclose(train_x.mean(0), 0, atol=1e-12)
    np.testing.assert_allclose(train_y.mean(), 0, atol=1e-12)
    np.testing.assert_allclose(train_y.std(), 1, rtol=1e-12)
    raw_x, raw_y = datasets.bundled("diabetes")
    test = parts["test"]
    np.testing.assert_allclose(target.splits["test"][1] * target.label_scale + target.label_mean, raw_y[test])
    scale = raw_x[parts["train"]].std(0)
    np.testing.assert_allclose(target.splits["test"][0] * scale + raw_x[parts["train"]].mean(0), raw_x[test])


def test_classification_uses_all_classes_and_constant_pixels_are_kept_finite():
    target = variant("bnn_classification_relu")
    assert target.num_outputs == 10 and target.num_data == round(0.7 * 1797)
    assert np.all(np.isfinite(target.features))  # digits has pixels that are always 0


def test_random_initialisation_is_seeded_and_scaled():
    target = variant("bnn_classification_relu")
    layers = target.unflatten(target.initial_position())
    assert abs(layers[0][0].std() - math.sqrt(2 / 64)) < 0.02 and not layers[0][1].any()  # He: N(0, 2/fan-in)
    np.testing.assert_array_equal(targets.get("bnn", task="classification").initial_position(),
                                  target.initial_position())
    assert not np.array_equal(targets.get("bnn", task="classification", init_seed=1).initial_position(),
                              target.initial_position())


# ----------------------------------------------------------------------------- loaders


def test_bundled_data_sets_have_their_documented_shapes():
    for name, shape in (("breast_cancer", (569, 30)), ("diabetes", (442, 10)), ("digits", (1797, 64)),
                        ("friedman1", (1000, 10))):
        features, labels = datasets.bundled(name)
        assert features.shape == shape and labels.shape == shape[:1] and features.dtype == np.float64


def test_friedman1_is_its_formula_plus_unit_noise():
    # the residual of the documented formula is the N(0, 1) noise: its sd within 5 % of 1 (1000 draws: the sd's
    # standard error is 2.2 %, so 2.3 standard errors; seed fixed, so the test is deterministic)
    x, y = datasets.bundled("friedman1")
    assert abs(np.std(y - datasets.friedman1_mean(x)) - 1.0) < 0.05 and np.all((x >= 0) & (x <= 1))
    shuffled = datasets.friedman1_mean(x[:, ::-1])  # the formula reads the first five features only
    assert np.std(y - shuffled) > 2


def test_csv_and_npz_files_load(data_dir, tmp_path):
    features, labels = datasets.load_file(data_dir / "binary.csv", label="outcome")
    assert features.shape == (6, 3)
    np.testing.assert_array_equal(labels, [0, 1, 1, 0, 1, 0])
    x, y = datasets.load_file(str(data_dir / "classes.npz"))
    np.testing.assert_array_equal(y, np.arange(10) % 3)
    np.testing.assert_array_equal(x[:6], features)  # the same rows were written to both files
    np.savez(tmp_path / "named.npz", X=x, target=y)
    np.testing.assert_array_equal(datasets.load_file(tmp_path / "named.npz", label="target")[1], y)
    target = targets.get("logreg", dataset="file", path=str(data_dir / "binary.csv"), label="outcome")
    assert target.dim == 4 and target.num_data == 6 and target.params["path"] == str(data_dir / "binary.csv")


@pytest.mark.parametrize("content, match", [
    ("a,b\n1,2\n", r"no label column 'y'; its columns are \['a', 'b'\]"),
    ("a,y\n1,0\n,1\n", r"features hold NaN or infinite values \(rows \[1\]"),
    ("a,y\n1,0\n2,nan\n", r"labels hold NaN or infinite values \(rows \[1\]"),
    ("a,y\n1,0\nx,1\n", r"column 'a' is not numeric"),
    ("y\n1\n0\n", r"at least one row and one feature column"),
    ("", r"not a readable CSV file"),
])
def test_bad_csv_files_are_named_errors(tmp_path, content, match):
    path = tmp_path / "bad.csv"
    path.write_text(content)
    with pytest.raises(ValueError, match=match):
        datasets.load_file(path)


def test_bad_files_are_named_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="does not exist"):
        datasets.load_file(tmp_path / "missing.csv")
    with pytest.raises(ValueError, match=r"must name a \.csv or \.npz file"):
        datasets.load_file(tmp_path / "data.txt")
    np.savez(tmp_path / "a.npz", features=np.ones((3, 2)), y=np.ones(3))
    with pytest.raises(ValueError, match=r"lacks array\(s\) \['X'\]"):
        datasets.load_file(tmp_path / "a.npz")
    np.savez(tmp_path / "b.npz", X=np.ones((3, 2)), y=np.ones(4))
    with pytest.raises(ValueError, match="3 rows of features but 4 labels"):
        datasets.load_file(tmp_path / "b.npz")
    np.savez(tmp_path / "c.npz", X=np.ones(3), y=np.ones(3))
    with pytest.raises(ValueError, match=r"features must be a 2-d array, got shape \(3,\)"):
        datasets.load_file(tmp_path / "c.npz")
    (tmp_path / "garbage.npz").write_bytes(b"garbage")
    np.savez(tmp_path / "objects.npz", X=np.array([{"a": 1}] * 3, dtype=object), y=np.ones(3))
    for name in ("garbage.npz", "objects.npz"):  # refused without advising allow_pickle, which runs code
        with pytest.raises(ValueError, match="not a readable .npz archive of numeric arrays") as raised:
            datasets.load_file(tmp_path / name)
        assert "allow_pickle" not in str(raised.value)
    np.savez(tmp_path / "d.npz", X=np.array([[1.0, np.nan]]), y=np.ones(1))
    with pytest.raises(ValueError, match="NaN"):
        datasets.load_file(tmp_path / "d.npz")
    with pytest.raises(TypeError, match="path must be a str"):
        datasets.load_file(3)


# ----------------------------------------------------------------------------- bad input


@pytest.mark.parametrize("name, params, error, match", [
    ("linreg", dict(noise_batch_size=1001), ValueError,
     r"noise_batch_size must be an integer in \[1, N\] with N = 1000"),
    ("linreg", dict(noise_batch_size=0), ValueError, "noise_batch_size must be an integer >= 1"),
    ("linreg", dict(noise_batch_size=2.5), TypeError, "noise_batch_size must be an integer"),
    ("bnn", dict(noise_batch_size=310), ValueError, r"noise_batch_size must be an integer in \[1, N\] with N = 309"),
    ("linreg", dict(sigma2=0.0), ValueError, "sigma2 must be a finite number > 0"),
    ("linreg", dict(tau=-1.0), ValueError, "tau must be a finite number > 0"),
    ("linreg", dict(num_data=0), ValueError, "num_data must be an integer >= 1"),
    ("linreg", dict(dim=0), ValueError, "dim must be an integer >= 1"),
    ("logreg", dict(prior_variance=0.0), ValueError, "prior_variance must be a finite number > 0"),
    ("logreg", dict(num_data=100), ValueError, "num_data is only accepted with dataset='simulated'"),
    ("logreg", dict(data_seed=1), ValueError, "data_seed is only accepted with dataset='simulated'"),
    ("logreg", dict(dataset="simulated", num_data=10**6 + 1), ValueError,
     r"num_data must be an integer in \[1, 1000000\]"),
    ("logreg", dict(dataset="iris"), ValueError, r"dataset must be one of \['breast_cancer', 'file', 'simulated'\]"),
    ("logreg", dict(dataset="file"), ValueError, "dataset='file' needs path"),
    ("logreg", dict(path="x.csv"), ValueError, "path and label are only accepted with dataset='file'"),
    ("bnn", dict(prior_scale=-1.0), ValueError, "prior_scale must be a finite number > 0"),
    ("bnn", dict(task="ranking"), ValueError, r"task must be one of \['classification', 'regression'\]"),
    ("bnn", dict(activation="gelu"), ValueError, r"activation must be one of \['relu', 'tanh'\]"),
    ("bnn", dict(hidden=(16, 0)), ValueError, r"hidden\[1\] must be an integer >= 1"),
    ("bnn", dict(hidden=16), TypeError, "hidden must be a sequence of integers"),
    ("bnn", dict(hidden=None), TypeError, "hidden must be a sequence of integers"),
    ("bnn", dict(train_fraction=0.0), ValueError, r"train_fraction must be a number in \(0, 1\]"),
    ("bnn", dict(validation_fraction=0.5), ValueError, r"validation_fraction must be a number in \[0, 0.3\], got 0.5"),
    ("icg", dict(noise="minibatch"), ValueError, "'minibatch' needs a posterior with a per-datum likelihood"),
])
def test_bad_parameters_are_named_errors(name, params, error, match):
    with pytest.raises(error, match=match):
        targets.get(name, **params)


def test_file_labels_must_fit_the_likelihood(data_dir):
    with pytest.raises(ValueError, match="labels of dataset 'file' must be 0 or 1"):
        targets.get("logreg", dataset="file", path=str(data_dir / "real.csv"))
    with pytest.raises(ValueError, match=r"labels of dataset 'file' must be integers 0, 1, \.\.\. \(class numbers\)"):
        targets.get("bnn", task="classification", dataset="file", path=str(data_dir / "real.csv"))
    with pytest.raises(ValueError, match="no label column 'y'"):
        targets.get("logreg", dataset="file", path=str(data_dir / "binary.csv"))


# ----------------------------------------------------------------------------- end to end


@pytest.mark.parametrize("backend", ["jax", "numpy"])
@pytest.mark.parametrize("name", ["linreg", "logreg", "bnn"])
def test_sgld_runs_on_data_targets(name, backend):
    result = running.run("sgld", name, params={"step_size": 1e-5}, num_chains=2, num_steps=200, backend=backend)
    assert result.grad_evals == 2 * 200
    assert result.metrics["num_diverged_chains"] == 0
    has_b2 = any(key.startswith("b2_") for key in result.metrics)
    assert has_b2 == (name == "linreg")
    if name == "linreg":
        assert np.isfinite(result.metrics["b2_mean_pooled"])
