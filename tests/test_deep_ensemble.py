"""The deep-ensemble initialisation of MILE (``samplers/_deep_ensemble.py``; MILE section 3.1 and appendix
"Optimization & sampling"): members improve and report their validation NLL, early stopping follows its
rule exactly, members are independent of each other, seeds reproduce, inputs are validated."""

import math

import jax
import numpy as np
import pytest
import scipy.special

from sgbench import targets
from sgbench.samplers._deep_ensemble import (
    SEED_STRIDE,
    DeepEnsemble,
    deep_ensemble,
    fit_members,
)

FEW = dict(max_epochs=40, patience=40)  # exactly 40 full-batch epochs: quick, and far from converged


@pytest.fixture(scope="module")
def regression():
    return targets.get("bnn", hidden=(8,))


@pytest.fixture(scope="module")
def classification():
    return targets.get("bnn", task="classification", hidden=(8,))


@pytest.fixture(scope="module")
def ensemble(regression):
    return deep_ensemble(regression, 3, seed=0, **FEW)


def validation_nll(target, x):
    """Mean validation NLL written out independently of the target's code (bnn docstring's likelihoods)."""
    features, labels = target.splits["validation"]
    outputs = target.predict(np.asarray(x), features)
    if target.task == "regression":
        z = (labels - outputs[:, 0]) * np.exp(-outputs[:, 1])
        terms = -0.5 * math.log(2 * math.pi) - outputs[:, 1] - 0.5 * z * z
    else:
        terms = outputs[np.arange(labels.size), labels.astype(int)] - scipy.special.logsumexp(outputs, axis=1)
    return -terms.mean()


@pytest.mark.parametrize("task", ["regression", "classification"])
def test_members_improve_on_their_starts_and_report_their_validation_nll(task, request, ensemble):
    target = request.getfixturevalue(task)
    result = ensemble if task == "regression" else deep_ensemble(target, 3, seed=0, **FEW)
    assert isinstance(result, DeepEnsemble)
    assert result.positions.shape == (3, target.dim) and result.positions.dtype == np.float64
    assert result.learning_rate == 1e-3
    np.testing.assert_array_equal(result.epochs, [40, 40, 40])
    for k in range(3):
        start = target._random_initialisation(0 * SEED_STRIDE + k)
        assert abs(result.validation_nll[k] - validation_nll(target, result.positions[k])) < 1e-10
        assert result.validation_nll[k] < validation_nll(target, start)


def test_split_likelihood_reads_the_named_split(regression, classification):
    """The training split's per-datum log-likelihood is the target's own; the validation split's
    has one term per validation datum; an unknown split is refused by name."""
    rng = np.random.default_rng(1)
    for target in (regression, classification):
        x = rng.normal(0.0, 0.3, target.dim)
        np.testing.assert_array_equal(target.split_log_likelihood_terms(x, "train"), target.log_likelihood_terms(x))
        assert target.split_log_likelihood_terms(x, "validation").shape == target.splits["validation"][1].shape
    with pytest.raises(ValueError, match="split"):
        regression.split_log_likelihood_terms(np.zeros(regression.dim), "holdout")


def test_members_start_apart_and_stay_apart(ensemble):
    # identical members (a shared start) would be exactly equal; distinct He starts differ by O(0.1-1)
    for i in range(3):
        for j in range(i):
            assert np.abs(ensemble.positions[i] - ensemble.positions[j]).max() > 1e-3


def test_early_stopping_keeps_the_best_epoch_and_stops_patience_epochs_later(regression):
    patience = 3
    stopped = deep_ensemble(regression, 1, seed=2, max_epochs=20_000, patience=patience)
    epochs = int(stopped.epochs[0])
    assert patience + 2 <= epochs < 20_000
    # the best epoch was epochs - patience: training that long (never stopping early) keeps the same parameters ...
    best = deep_ensemble(regression, 1, seed=2, max_epochs=epochs - patience, patience=20_000)
    assert best.epochs[0] == epochs - patience
    np.testing.assert_allclose(best.positions, stopped.positions, rtol=0, atol=1e-12)
    assert abs(best.validation_nll[0] - stopped.validation_nll[0]) < 1e-12
    # ... and it was a strict improvement on all earlier epochs
    earlier = deep_ensemble(regression, 1, seed=2, max_epochs=epochs - patience - 1, patience=20_000)
    assert earlier.validation_nll[0] > stopped.validation_nll[0]


def test_patience_at_least_max_epochs_runs_every_epoch(regression):
    result = deep_ensemble(regression, 2, seed=3, max_epochs=15, patience=15)
    np.testing.assert_array_equal(result.epochs, [15, 15])


@pytest.mark.parametrize("batch_size", [None, 32])
def test_a_member_stopped_early_is_the_member_fitted_alone(regression, batch_size):
    """vmapped members stop at different epochs; each equals its own single-member fit (to rounding)."""
    together = deep_ensemble(regression, 3, seed=4, max_epochs=5000, patience=3, batch_size=batch_size)
    assert len(set(together.epochs.tolist())) > 1
    for k in range(3):
        start = regression._random_initialisation(4 * SEED_STRIDE + k)[None]
        key = jax.random.fold_in(jax.random.PRNGKey(4), k)[None]
        alone = fit_members(regression, start, key, 1e-3, 1e-3, 5000, 3, batch_size)
        assert int(alone[1][0]) == together.epochs[k]
        np.testing.assert_allclose(np.asarray(alone[0][0]), together.positions[k], rtol=0, atol=1e-12)


@pytest.mark.parametrize("batch_size", [None, 32])
def test_seeds_reproduce_and_differ(regression, ensemble, batch_size):
    first = ensemble if batch_size is None else deep_ensemble(regression, 3, seed=0, batch_size=batch_size, **FEW)
    again = deep_ensemble(regression, 3, seed=0, batch_size=batch_size, **FEW)
    other = deep_ensemble(regression, 3, seed=1, batch_size=batch_size, **FEW)
    for a, b in zip(first, again, strict=True):
        np.testing.assert_array_equal(a, b)
    assert np.abs(first.positions - other.positions).max() > 1e-3


def test_minibatches_change_the_fit(regression, ensemble):
    minibatch = deep_ensemble(regression, 3, seed=0, batch_size=32, **FEW)
    assert np.abs(minibatch.positions - ensemble.positions).max() > 1e-3
    for k in range(3):  # 9 batches an epoch: more steps than the full batch's one
        assert minibatch.validation_nll[k] < ensemble.validation_nll[k]


@pytest.mark.parametrize(("name", "params", "kwargs", "match"), [
    ("bnn", {}, dict(num_members=0), "num_members must be an integer >= 1"),
    ("bnn", {}, dict(learning_rate=-1), "learning_rate"),
    ("bnn", {}, dict(weight_decay=-1e-3), "weight_decay"),
    ("bnn", {}, dict(max_epochs=0), "max_epochs"),
    ("bnn", {}, dict(patience=0), "patience"),
    ("bnn", {}, dict(batch_size=10_000), "batch_size"),
    ("bnn", {}, dict(batch_size=0), "batch_size"),
    ("bnn", dict(validation_fraction=0.0), {}, "validation_fraction must be > 0"),
    ("icg", {}, {}, "needs a data target"),
    ("linreg", {}, {}, "validation split"),
])
def test_bad_inputs_name_the_parameter(name, params, kwargs, match):
    target = targets.get(name, **({"hidden": (8,)} if name == "bnn" else {}), **params)
    kwargs = {"num_members": 2, **kwargs}
    with pytest.raises(ValueError, match=match):
        deep_ensemble(target, kwargs.pop("num_members"), **kwargs)
