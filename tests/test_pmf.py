"""The ``pmf`` target (MAMBA paper, appendix C.2.1): its density against scipy's, its analytic
gradients against ``jax.grad`` (NumPy and jitted JAX), the minibatch gradient's unbiasedness
(exactly, and by Monte Carlo with a z-test), the generated MovieLens-shaped data, the ratings-file
loader and its errors, parameter validation, predictions and an end-to-end SGLD run.
Deterministic (fixed seeds); the Monte Carlo check's false-failure rate is stated where it is made.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.stats

from sgbench import targets
from sgbench.bench.running import run as running
from sgbench.targets import datasets
from sgbench.targets.pmf import PMFParameters

SMALL = dict(num_users=50, num_items=80, num_ratings=2000, latent_dim=3)
_BUILT = {}


def build(**params):
    key = tuple(sorted(params.items()))
    if key not in _BUILT:
        _BUILT[key] = targets.get("pmf", **params)
    return _BUILT[key]


def random_point(target, seed, scale=0.5):
    """Rows and means N(0, scale^2), log-precisions N(log 0.8, 0.5^2): away from the start and the mode."""
    rng = np.random.default_rng(seed)
    d = target.latent_dim
    return target.flatten(PMFParameters(
        scale * rng.standard_normal((target.num_users, d)), scale * rng.standard_normal(d),
        math.log(0.8) + 0.5 * rng.standard_normal(d), scale * rng.standard_normal((target.num_items, d)),
        scale * rng.standard_normal(d), math.log(0.8) + 0.5 * rng.standard_normal(d)))


def assert_close(actual, expected, tol):
    """|actual - expected| <= tol * max(1, max |expected|), elementwise."""
    expected = np.asarray(expected)
    scale = max(1.0, float(np.max(np.abs(expected))))
    np.testing.assert_allclose(np.asarray(actual), expected, rtol=0, atol=tol * scale)


# ----------------------------------------------------------------------------- the density


@pytest.mark.parametrize("params", [SMALL, dict(SMALL, centre_ratings=False, alpha=2.0, mu_0=0.5, a0=3.0, b0=1.5)])
def test_log_density_is_the_model_of_appendix_c21(params):
    """log p = sum of N(R - o; U_i^T V_j, 1/alpha) over training ratings + N(W_i; mu, Lambda^-1) rows
    + N(mu; mu_0, Lambda^-1) + log Gamma(lambda; a0, rate b0) + log-Jacobian log(lambda), by scipy."""
    target = build(**params)
    x = random_point(target, 0)
    p = target.unflatten(x)
    users, items, ratings = target.splits["train"]
    offset = ratings.mean() if target.params["centre_ratings"] else 0.0
    assert target.rating_offset == pytest.approx(offset)
    alpha, mu_0, a0, b0 = (target.params[k] for k in ("alpha", "mu_0", "a0", "b0"))
    likelihood = scipy.stats.norm.logpdf(ratings - offset, np.sum(p.U[users] * p.V[items], axis=1),
                                         1 / math.sqrt(alpha)).sum()
    prior = 0.0
    for W, mu, log_lam in ((p.U, p.mu_U, p.log_lambda_U), (p.V, p.mu_V, p.log_lambda_V)):
        sd = np.exp(-0.5 * log_lam)
        prior += scipy.stats.norm.logpdf(W, mu, sd).sum() + scipy.stats.norm.logpdf(mu, mu_0, sd).sum()
        prior += (scipy.stats.gamma.logpdf(np.exp(log_lam), a0, scale=1 / b0) + log_lam).sum()
    np.testing.assert_allclose(target.log_likelihood(x), likelihood, rtol=1e-12)
    np.testing.assert_allclose(target.log_prior(x), prior, rtol=1e-12)
    np.testing.assert_allclose(target.logdensity(x), likelihood + prior, rtol=1e-12)


def test_layout_follows_theta_and_round_trips():
    target = build(**SMALL)
    d, nu, nv = 3, 50, 80
    assert target.dim == (nu + nv + 4) * d == 402
    x = np.arange(target.dim, dtype=np.float64)
    p = target.unflatten(x)
    np.testing.assert_array_equal(p.U[7], x[7 * d:8 * d])
    np.testing.assert_array_equal(p.mu_U, x[nu * d:nu * d + d])
    np.testing.assert_array_equal(p.log_lambda_U, x[nu * d + d:nu * d + 2 * d])
    np.testing.assert_array_equal(p.V[5], x[(nu + 2) * d + 5 * d:(nu + 2) * d + 6 * d])
    np.testing.assert_array_equal(p.log_lambda_V, x[-d:])
    np.testing.assert_array_equal(target.flatten(p), x)
    batch = np.stack([x, -x])
    np.testing.assert_array_equal(target.flatten(target.unflatten(batch)), batch)
    np.testing.assert_allclose(target.log_prior(batch / 1000),
                               [target.log_prior(x / 1000), target.log_prior(-x / 1000)])
    with pytest.raises(ValueError, match="must have last axis 402"):
        target.unflatten(np.zeros(401))
    with pytest.raises(ValueError, match=r"block U of target 'pmf' must have trailing shape \(50, 3\)"):
        target.flatten(p._replace(U=np.zeros((49, 3))))


# ----------------------------------------------------------------------------- gradients


@pytest.mark.parametrize("params", [SMALL, dict(SMALL, centre_ratings=False, alpha=2.0, mu_0=0.5, a0=3.0, b0=1.5),
                                    {}])
def test_analytic_gradients_equal_jax_grad(params):
    """In float64 at random points: the full gradient (NumPy, and the jitted JAX path), the minibatch
    gradient (log prior + N/B minibatch log likelihood) and per-rating gradients, against autodiff."""
    target = build(**params)
    scale = target.num_data / target.noise.batch_size
    full = jax.jit(jax.grad(target.logdensity))
    minibatch = jax.jit(jax.grad(lambda v, i: target.log_prior(v) + scale * target.log_likelihood(v, i)))
    per_rating = jax.jit(jax.jacobian(target.log_likelihood_terms))
    rng = np.random.default_rng(1)
    for seed in range(2):
        x = random_point(target, seed)
        xj = jnp.asarray(x)
        expected = full(xj)
        assert_close(target.grad_logdensity(x), expected, 1e-12)
        assert_close(jax.jit(target.grad_logdensity)(xj), expected, 1e-12)
        indices = rng.integers(0, target.num_data, target.noise.batch_size)
        expected = minibatch(xj, jnp.asarray(indices))
        assert_close(target.stochastic_grad(x, {"indices": indices}), expected, 1e-12)
        assert_close(jax.jit(target.stochastic_grad)(xj, {"indices": jnp.asarray(indices, jnp.int32)}), expected, 1e-12)
        few = np.append(indices[:4], indices[0])  # a repeat counts twice
        terms = target.grad_log_likelihood_terms(x, few)
        assert_close(terms, per_rating(xj, jnp.asarray(few)), 1e-12)
        assert_close(jax.jit(target.grad_log_likelihood_terms)(xj, jnp.asarray(few)), terms, 1e-12)
        assert_close(terms.sum(axis=0), target.grad_log_likelihood(x, few), 1e-13)


def test_per_rating_gradients_refuse_to_fill_memory():
    target = build()
    with pytest.raises(ValueError, match="per-rating gradients of 80000 ratings would hold 80000 x 52580 numbers"):
        target.grad_log_likelihood_terms(target.start())


def test_float32_positions_stay_float32():
    target = build(**SMALL)
    x = jnp.asarray(random_point(target, 2), jnp.float32)
    draw = {"indices": jnp.arange(target.noise.batch_size, dtype=jnp.int32)}
    assert jax.jit(target.stochastic_grad)(x, draw).dtype == jnp.float32
    assert jax.jit(target.logdensity)(x).dtype == jnp.float32
    assert target.grad_logdensity(np.asarray(x)).dtype == np.float32
    assert target.stochastic_grad(np.asarray(x), {"indices": np.arange(32)}).dtype == np.float32


# ----------------------------------------------------------------------------- the minibatch gradient


def test_minibatch_gradient_is_exactly_unbiased():
    """With B = 1 the mean over the N equally likely indices is the full gradient (sampling with
    replacement makes B > 1 a mean of such draws)."""
    target = build(**dict(SMALL, noise_batch_size=1))
    x = random_point(target, 3)
    grads = np.array([target.stochastic_grad(x, {"indices": np.array([i])}) for i in range(target.num_data)])
    assert_close(grads.mean(axis=0), target.grad_logdensity(x), 1e-12)


def test_average_of_minibatch_gradients_is_near_the_full_gradient():
    """K = 4000 minibatch gradients (B = 16): per coordinate the mean lies within z standard errors
    (sample standard deviation / sqrt(K)) of the full gradient, z = Phi^-1(1 - 1e-3 / (2 dim)) (a
    Bonferroni z-test over the dim coordinates: family-wise false-failure rate 1e-3 under the CLT;
    K = 4000 means of a bounded, finite-variance sum make the normal approximation good). The
    hyperparameter blocks are not subsampled: those coordinates are exact in every draw."""
    target = build(**dict(SMALL, noise_batch_size=16))
    x = random_point(target, 4)
    full = target.grad_logdensity(x)
    rng = np.random.default_rng(5)
    draws = 4000
    grads = np.array([target.stochastic_grad(x, {"indices": rng.integers(0, target.num_data, 16)})
                      for _ in range(draws)])
    mean, se = grads.mean(axis=0), grads.std(axis=0, ddof=1) / math.sqrt(draws)
    z = scipy.stats.norm.isf(1e-3 / (2 * target.dim))
    p = target.unflatten(np.arange(target.dim))
    exact = np.concatenate([p.mu_U, p.log_lambda_U, p.mu_V, p.log_lambda_V])
    assert np.all(np.ptp(grads[:, exact], axis=0) == 0)
    assert_close(grads[0, exact], full[exact], 1e-12)
    sampled = np.setdiff1d(np.arange(target.dim), exact)
    assert np.all(se[sampled] > 0)  # every user and item has training ratings in this data set
    assert np.all(np.abs(mean[sampled] - full[sampled]) <= z * se[sampled])


# ----------------------------------------------------------------------------- generated data


def test_generated_data_have_movielens_100k_shape():
    target = build()
    assert (target.num_users, target.num_items, target.latent_dim, target.dim) == (943, 1682, 20, 52_580)
    users = np.concatenate([target.splits[s][0] for s in ("train", "test")])
    items = np.concatenate([target.splits[s][1] for s in ("train", "test")])
    ratings = np.concatenate([target.splits[s][2] for s in ("train", "test")])
    assert users.shape == items.shape == ratings.shape == (100_000,)
    per_user = np.bincount(users, minlength=943)
    assert per_user.shape == (943,) and per_user.min() >= 20
    assert users.max() < 943 and items.min() >= 0 and items.max() < 1682
    assert len(set(zip(users.tolist(), items.tolist()))) == 100_000  # each pair rated once
    values, counts = np.unique(ratings, return_counts=True)
    np.testing.assert_array_equal(values, [1, 2, 3, 4, 5])
    np.testing.assert_array_equal(counts, datasets.MOVIELENS_100K_RATING_COUNTS)  # MovieLens-100k's frequencies
    per_item = np.bincount(items, minlength=1682)
    assert per_item.max() > 10 * np.median(per_item) and np.median(per_item) > np.mean(per_item) / 4  # skewed
    assert np.median(per_user) < np.mean(per_user)  # skewed activity
    assert target.num_data == 80_000 and target.split_indices["test"].size == 20_000
    np.testing.assert_array_equal(np.sort(np.concatenate(list(target.split_indices.values()))), np.arange(100_000))
    assert target.rating_offset == pytest.approx(target.splits["train"][2].mean())
    np.testing.assert_allclose(target.labels, target.splits["train"][2] - target.rating_offset)
    assert target.truth is None


def test_generated_ratings_follow_the_model_scores():
    """Ratings are the ranks of the model's scores U_i^T V_j + noise, cut at MovieLens' frequencies."""
    users, items, ratings, latent = datasets.matrix_factorisation_data(60, 90, 3000, 4, seed=3)
    assert latent["U"].shape == (60, 4) and latent["V"].shape == (90, 4) and latent["lambda_U"].shape == (4,)
    order = np.argsort(latent["scores"])
    assert np.all(np.diff(ratings[order]) >= 0)
    noise = latent["scores"] - np.sum(latent["U"][users] * latent["V"][items], axis=1)
    assert abs(noise.std() - 1 / math.sqrt(3)) < 0.05
    assert np.all(np.bincount(users) >= 20)
    again = datasets.matrix_factorisation_data(60, 90, 3000, 4, seed=3)
    np.testing.assert_array_equal(again[2], ratings)
    assert not np.array_equal(datasets.matrix_factorisation_data(60, 90, 3000, 4, seed=4)[1], items)


def test_dense_generated_data_rate_every_pair():
    target = targets.get("pmf", num_users=3, num_items=20, num_ratings=60, latent_dim=2, train_fraction=1.0)
    users, items, _ = target.splits["train"]
    assert sorted(zip(users.tolist(), items.tolist())) == [(i, j) for i in range(3) for j in range(20)]
    with pytest.raises(ValueError, match=r"no test ratings \(train_fraction=1\)"):
        target.test_rmse(target.start())


def test_seeds_change_the_data_and_the_split():
    base = build(**SMALL)
    other_data = targets.get("pmf", data_seed=1, **SMALL)
    other_split = targets.get("pmf", split_seed=1, **SMALL)
    assert not np.array_equal(other_data.labels, base.labels)
    assert not np.array_equal(other_split.split_indices["train"], base.split_indices["train"])
    np.testing.assert_array_equal(targets.get("pmf", **SMALL).labels, base.labels)


# ----------------------------------------------------------------------------- start and predictions


def test_start_is_an_approximate_mode():
    target = build()
    start, x0 = target.start(), target.initial_position()
    assert x0.shape == (52_580,) and np.all(np.isfinite(x0))
    assert target.logdensity(x0) > target.logdensity(start) + 1e5
    assert np.linalg.norm(target.grad_logdensity(x0)) < 1e-2 * np.linalg.norm(target.grad_logdensity(start))
    np.testing.assert_array_equal(target.initial_position(), x0)  # computed once, handed out as copies
    small = build(**SMALL)
    values = [small.logdensity(small.mode_estimate(sweeps)) for sweeps in (0, 1, 2, 5, 20)]
    assert np.all(np.diff(values) > 0)  # coordinate ascent: every sweep increases the log density


def test_test_rmse_is_that_of_posterior_mean_predictions():
    target = build()
    x0 = target.initial_position()
    users, items, ratings = target.splits["test"]
    draws = np.stack([x0, random_point(target, 0, scale=0.1), x0 + 0.01])
    by_hand = target.rating_offset + np.mean([np.sum(target.unflatten(x).U[users] * target.unflatten(x).V[items], 1)
                                              for x in draws], axis=0)
    np.testing.assert_allclose(target.predict(draws, users, items), by_hand, rtol=1e-12)
    assert target.test_rmse(draws) == pytest.approx(math.sqrt(np.mean((by_hand - ratings) ** 2)), rel=1e-12)
    assert target.test_rmse(draws[None]) == target.test_rmse(draws)  # chains and draws pooled
    constant = math.sqrt(np.mean((ratings - target.rating_offset) ** 2))  # predicting the training mean
    assert target.test_rmse(x0) < 0.8 * constant


def test_reference_quantities_are_the_predictions_and_ignore_the_symmetries():
    """A NUTS reference keeps the per-draw predicted ratings of the first test pairs; a sign flip and a permutation of
    the latent coordinates (which leave the density unchanged) leave them unchanged, and change U and V."""
    target = build(**SMALL)
    users, items, _ = target.splits["test"]
    draws = np.stack([random_point(target, seed) for seed in range(3)])
    kept = target.reference_quantities(draws[None])
    assert kept.shape == (1, 3, 50) and "first 50 test ratings" in target.reference_quantities_label
    for x, row in zip(draws, kept[0]):
        np.testing.assert_allclose(row, target.predict(x, users[:50], items[:50]), rtol=1e-12)
    p = target.unflatten(draws[0])
    order, signs = np.array([2, 0, 1]), np.array([1.0, -1.0, -1.0])
    moved = target.flatten(PMFParameters(*(block[..., order] * (signs if k in (0, 1, 3, 4) else 1.0)
                                           for k, block in enumerate(p))))
    assert target.logdensity(moved) == pytest.approx(target.logdensity(draws[0]), rel=1e-12)
    assert not np.allclose(moved, draws[0])
    np.testing.assert_allclose(target.reference_quantities(moved), kept[0, 0], rtol=1e-12)
    with pytest.raises(ValueError, match="no test ratings"):
        build(**SMALL, train_fraction=1.0).reference_quantities(draws)


# ----------------------------------------------------------------------------- ratings files


U_DATA = "196\t242\t3\t881250949\n186\t302\t3\t891717742\n22\t377\t1\t878887116\n196\t377\t4\t880000000\n\n"


def test_udata_and_csv_files_load(tmp_path):
    udata = tmp_path / "u.data"
    udata.write_text(U_DATA)
    users, items, ratings = datasets.load_ratings(udata)
    np.testing.assert_array_equal(users, [196, 186, 22, 196])
    np.testing.assert_array_equal(items, [242, 302, 377, 377])
    np.testing.assert_array_equal(ratings, [3, 3, 1, 4])
    assert users.dtype == items.dtype == np.int64 and ratings.dtype == np.float64
    table = tmp_path / "ratings.csv"
    table.write_text("timestamp,rating,item,user\n5,4.5,10,1\n6,1,11,2\n\n")
    users, items, ratings = datasets.load_ratings(str(table))
    np.testing.assert_array_equal(users, [1, 2])
    np.testing.assert_array_equal(items, [10, 11])
    np.testing.assert_array_equal(ratings, [4.5, 1.0])


def test_file_target_numbers_users_and_items_by_their_ids(tmp_path):
    rng = np.random.default_rng(0)
    pairs = [(u, i) for u in (3, 10, 11) for i in (1, 5, 7, 100)]
    lines = [f"{u}\t{i}\t{int(rng.integers(1, 6))}\t0" for u, i in pairs]
    path = tmp_path / "u.data"
    path.write_text("\n".join(lines) + "\n")
    target = targets.get("pmf", dataset="file", path=str(path), latent_dim=2, noise_batch_size=4)
    np.testing.assert_array_equal(target.user_ids, [3, 10, 11])
    np.testing.assert_array_equal(target.item_ids, [1, 5, 7, 100])
    assert target.dim == (3 + 4 + 4) * 2 and target.num_data == round(0.8 * 12)
    assert target.params["path"] == str(path) and target.params["num_users"] is None
    rebuilt = targets.get("pmf", **target.params)
    x = random_point(target, 0)
    assert rebuilt.logdensity(x) == target.logdensity(x)
    assert np.isfinite(target.test_rmse(target.initial_position()))
    users, items, ratings = target.splits["train"]
    raw = {(u, i): r for (u, i), r in zip(pairs, (float(line.split("\t")[2]) for line in lines))}
    for user, item, rating in zip(users, items, ratings):
        assert raw[(target.user_ids[user], target.item_ids[item])] == rating


@pytest.mark.parametrize("name, content, match", [
    ("u.data", "1\t2\t3\t4\n1\t2\n", r"line 2: expected 4 fields separated by tabs .* got 2"),
    ("u.data", "1\t2\t3\t4\nx\t2\t3\t4\n", r"line 2: user id must be an integer >= 0, got 'x'"),
    ("u.data", "1\t-2\t3\t4\n", r"line 1: item id must be an integer >= 0, got '-2'"),
    ("u.data", "1\t2\t3\t4\n\n2\t2\t6\t4\n", r"line 3: rating must be a number in \[1, 5\], got '6'"),
    ("u.data", "1\t2\t0\t4\n", r"line 1: rating must be a number in \[1, 5\], got '0'"),
    ("u.data", "1\t2\tnan\t4\n", r"line 1: rating must be a number in \[1, 5\], got 'nan'"),
    ("u.data", "1\t2\tgood\t4\n", r"line 1: rating must be a number in \[1, 5\], got 'good'"),
    ("u.data", "1\t2\t3\t4\n1\t3\t3\t4\n1\t2\t5\t4\n", r"line 3: user 1 rated item 2 again \(first on line 1\)"),
    ("u.data", "\n\n", "holds no ratings"),
    ("r.csv", "", r"holds no ratings \(an empty .csv file"),
    ("r.csv", "user,item\n1,2\n", r"lacks column\(s\) \['rating'\] in its header row; it has \['user', 'item'\]"),
    ("r.csv", "user,item,rating\n1,2,3\n1,2\n", r"line 3: expected 3 comma-separated fields"),
    ("r.csv", "user,item,rating\n1,2,3\n1,2.5,3\n", r"line 3: item id must be an integer >= 0, got '2.5'"),
    ("r.csv", "user,item,rating\n1,2,5.5\n", r"line 2: rating must be a number in \[1, 5\], got '5.5'"),
])
def test_bad_ratings_files_are_named_errors(tmp_path, name, content, match):
    path = tmp_path / name
    path.write_text(content)
    with pytest.raises(ValueError, match=match) as error:
        datasets.load_ratings(path)
    assert f"ratings file {str(path)!r}" in str(error.value)
    with pytest.raises(ValueError, match=match):
        targets.get("pmf", dataset="file", path=str(path))


def test_missing_and_binary_files_are_named_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"ratings file '.*nowhere.data' does not exist"):
        datasets.load_ratings(tmp_path / "nowhere.data")
    binary = tmp_path / "u.data"
    binary.write_bytes(b"\xff\xfe\x00\x01")
    with pytest.raises(ValueError, match="is not UTF-8 text"):
        datasets.load_ratings(binary)
    with pytest.raises(TypeError, match="path must be a str or pathlib.Path"):
        datasets.load_ratings(3)


# ----------------------------------------------------------------------------- parameters


@pytest.mark.parametrize("params, error, match", [
    (dict(num_users=0), ValueError, r"num_users must be an integer in \[2, 100000\], got 0"),
    (dict(num_users=100_001), ValueError, r"num_users must be an integer in \[2, 100000\], got 100001"),
    (dict(num_users=2.5), TypeError, "num_users must be an integer"),
    (dict(num_items=19), ValueError, r"num_items must be an integer in \[20, 100000\], got 19"),
    (dict(num_users=20_000, num_items=60_000), ValueError, r"num_users \* num_items must be at most 1e\+09"),
    (dict(num_ratings=5), ValueError, r"num_ratings must be an integer in \[18860, 1586126\], got 5 \(at least 20 "
                                      r"per user with num_users=943"),
    (dict(num_users=10, num_items=20, num_ratings=201), ValueError,
     r"num_ratings must be an integer in \[200, 200\], got 201 .*at most one per \(user, item\) pair "
     r"with num_items=20"),
    (dict(num_users=6000), ValueError, r"num_ratings must be an integer in \[120000, 10000000\], got 100000"),
    (dict(latent_dim=0), ValueError, r"latent_dim must be an integer in \[1, 100\], got 0"),
    (dict(latent_dim=101), ValueError, r"latent_dim must be an integer in \[1, 100\], got 101"),
    (dict(data_seed=-1), ValueError, "data_seed must be an integer >= 0"),
    (dict(split_seed=-1), ValueError, "split_seed must be an integer >= 0"),
    (dict(train_fraction=0.0), ValueError, r"train_fraction must be a number in \(0, 1\], got 0.0"),
    (dict(train_fraction=1.5), ValueError, r"train_fraction must be a number in \(0, 1\]"),
    (dict(centre_ratings="yes"), TypeError, "centre_ratings must be True or False, got 'yes'"),
    (dict(alpha=0.0), ValueError, "alpha must be a finite number > 0, got 0.0"),
    (dict(mu_0=math.inf), ValueError, "mu_0 must be a finite number, got inf"),
    (dict(a0=-4.0), ValueError, "a0 must be a finite number > 0, got -4.0"),
    (dict(b0=math.nan), ValueError, "b0 must be a finite number > 0, got nan"),
    (dict(dataset="movielens"), ValueError, r"dataset must be one of \['file', 'generated'\], got 'movielens'"),
    (dict(dataset="file"), ValueError, "dataset='file' needs path"),
    (dict(dataset="file", path="u.data", num_users=10), ValueError,
     "num_users is only accepted with dataset='generated'"),
    (dict(dataset="file", path="u.data", data_seed=1), ValueError,
     "data_seed is only accepted with dataset='generated'"),
    (dict(path="u.data"), ValueError, "path is only accepted with dataset='file', got dataset='generated'"),
    (dict(SMALL, noise_batch_size=1601), ValueError, r"noise_batch_size must be an integer in \[1, N\] with N = 1600"),
    (dict(colour="red"), ValueError, "target 'pmf' has no parameter 'colour'"),
])
def test_bad_parameters_are_named_errors(params, error, match):
    with pytest.raises(error, match=match):
        targets.get("pmf", **params)


def test_parameters_rebuild_the_target_and_have_defaults():
    target = build()
    assert target.params == dict(dataset="generated", num_users=943, num_items=1682, num_ratings=100_000,
                                 latent_dim=20, path=None, data_seed=0, train_fraction=0.8, split_seed=0,
                                 centre_ratings=True, alpha=3.0, mu_0=0.0, a0=4.0, b0=5.0, noise="minibatch",
                                 noise_batch_size=32)
    assert targets.get("pmf", **build(**SMALL).params).params == build(**SMALL).params
    assert "pmf" in targets.names()


# ----------------------------------------------------------------------------- end to end


@pytest.mark.parametrize("backend", ["jax", "numpy"])
def test_sgld_runs_on_pmf(backend):
    result = running.run("sgld", "pmf", params={"step_size": 1e-6}, num_chains=2, num_steps=50, backend=backend,
                         target_params=SMALL)
    assert result.grad_evals == 2 * 50
    assert result.metrics["num_diverged_chains"] == 0
    moments = result.moments
    assert np.shape(moments.mean) == (2, 402)
    for field in moments:
        assert np.all(np.isfinite(np.asarray(field)))
