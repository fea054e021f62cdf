"""Predictive metrics against scikit-learn (accuracy, NLL, AUROC, Brier) and hand-computed cases
(LPPD, RMSE, ECE/MCE, AURC, credible-interval calibration, AMB, VAR, perplexity), and their errors
on bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.special
import scipy.stats
import sklearn.metrics

from sgbench.reference import metrics
from sgbench.reference.metrics.classification import (
    accuracy,
    aurc,
    auroc,
    brier_score,
    categorical_lppd,
    ece,
    mce,
    nll,
    ood_auroc,
    perplexity,
)
from sgbench.reference.metrics.ensemble_diversity import ensemble_ambiguity, prediction_variance
from sgbench.reference.metrics.lppd import lppd
from sgbench.reference.metrics.regression import (
    credible_interval_calibration_error,
    credible_interval_coverage,
    gaussian_lppd,
    rmse,
)

PREDICTIVE_METRICS = (
    "accuracy", "aurc", "auroc", "brier_score", "categorical_lppd", "credible_interval_calibration_error",
    "credible_interval_coverage", "ece", "ensemble_ambiguity", "gaussian_lppd", "lppd", "mce", "nll",
    "ood_auroc", "perplexity", "prediction_variance", "rmse",
)


def random_predictions(samples=5, points=300, classes=4, seed=0):
    """Dirichlet per-sample probabilities sharing a per-point tendency, and labels drawn from their mean."""
    rng = np.random.default_rng(seed)
    centre = rng.dirichlet(np.full(classes, 0.5), size=points)
    probs = np.stack([rng.dirichlet(20 * centre[i] + 0.1) for _ in range(samples) for i in range(points)])
    probs = probs.reshape(samples, points, classes)
    labels = np.array([rng.choice(classes, p=p) for p in probs.mean(axis=0)])
    return probs, labels


def one_sample(rows):
    return np.asarray(rows, dtype=float)[None]


def test_all_predictive_metrics_are_registered():
    for name in PREDICTIVE_METRICS:
        assert callable(metrics.get(name))


@pytest.mark.parametrize("classes", [2, 4])
def test_agrees_with_scikit_learn(classes):
    probs, labels = random_predictions(classes=classes)
    mean = probs.mean(axis=0)
    assert accuracy(labels, probs) == sklearn.metrics.accuracy_score(labels, mean.argmax(axis=1))
    np.testing.assert_allclose(nll(labels, probs), sklearn.metrics.log_loss(labels, mean), rtol=1e-12)
    if classes == 2:
        expected_auroc = sklearn.metrics.roc_auc_score(labels, mean[:, 1])
        np.testing.assert_allclose(brier_score(labels, probs),
                                   2 * sklearn.metrics.brier_score_loss(labels, mean[:, 1]), rtol=1e-12)
    else:
        expected_auroc = sklearn.metrics.roc_auc_score(labels, mean, multi_class="ovr", average="macro")
    np.testing.assert_allclose(auroc(labels, probs), expected_auroc, rtol=1e-12)


def test_auroc_counts_ties_one_half_like_scikit_learn():
    rng = np.random.default_rng(1)
    p1 = rng.choice([0.2, 0.5, 0.8], size=(1, 60))
    labels = rng.integers(0, 2, 60)
    probs = np.stack([1 - p1, p1], axis=-1)
    np.testing.assert_allclose(auroc(labels, probs), sklearn.metrics.roc_auc_score(labels, p1[0]), rtol=1e-12)


def test_log_probs_give_the_same_values_as_probs():
    probs, labels = random_predictions(classes=3, seed=2)
    for metric in (accuracy, nll, perplexity, brier_score, ece, mce, auroc, aurc, categorical_lppd,
                   prediction_variance):
        np.testing.assert_allclose(metric(labels, log_probs=np.log(probs)), metric(labels, probs), rtol=1e-10)
    np.testing.assert_allclose(ensemble_ambiguity(log_probs=np.log(probs)), ensemble_ambiguity(probs), rtol=1e-10)


def test_multiclass_brier_by_hand():
    probs = np.array([[[0.7, 0.2, 0.1], [0.2, 0.3, 0.5]], [[0.5, 0.4, 0.1], [0.4, 0.3, 0.3]]])
    labels = np.array([0, 1])
    # BMA: [0.6, 0.3, 0.1] (label 0) and [0.3, 0.3, 0.4] (label 1)
    expected = ((0.4**2 + 0.3**2 + 0.1**2) + (0.3**2 + 0.7**2 + 0.4**2)) / 2
    np.testing.assert_allclose(brier_score(labels, probs), expected, rtol=1e-12)
    assert brier_score([0], one_sample([[1.0, 0.0]])) == 0
    assert brier_score([0], one_sample([[0.0, 1.0]])) == 2


def test_lppd_is_the_log_of_the_mean_density_not_the_mean_log_density():
    densities = np.array([[0.1, 0.5], [0.3, 0.5]])  # (samples, points)
    expected = (math.log(0.2) + math.log(0.5)) / 2
    np.testing.assert_allclose(lppd(np.log(densities)), expected, rtol=1e-12)
    assert lppd(np.log(densities)) > np.log(densities).mean()  # Jensen: strictly, as point 0's densities differ
    np.testing.assert_allclose(lppd([[-1000.0], [-1001.0]]), -1000 + math.log((1 + math.exp(-1)) / 2), rtol=1e-14)


def test_gaussian_lppd_by_hand():
    y = np.array([0.0, 1.0])
    means = np.array([[0.0, 1.0], [0.0, 3.0]])
    scales = np.array([[1.0, 1.0], [2.0, 2.0]])
    phi = scipy.stats.norm.pdf
    expected = (math.log((phi(0) + phi(0) / 2) / 2) + math.log((phi(0) + phi(1) / 2) / 2)) / 2
    np.testing.assert_allclose(gaussian_lppd(y, means, scales), expected, rtol=1e-12)


def test_categorical_lppd_and_nll():
    probs = np.array([[[0.9, 0.1]], [[0.5, 0.5]]])
    np.testing.assert_allclose(categorical_lppd([0], probs), math.log(0.7), rtol=1e-12)
    np.testing.assert_allclose(nll([0], probs), -math.log(0.7), rtol=1e-12)
    np.testing.assert_allclose(nll([0], probs, kind="individual"), -(math.log(0.9) + math.log(0.5)) / 2, rtol=1e-12)
    assert nll([0], probs, kind="individual") > nll([0], probs)
    # probabilities of exactly 0 are valid: one sample's zero on the label does not sink the ensemble
    zero = np.array([[[0.0, 1.0]], [[0.5, 0.5]]])
    np.testing.assert_allclose(categorical_lppd([0], zero), math.log(0.25), rtol=1e-12)
    assert nll([0], zero, kind="individual") == np.inf


def test_rmse_uses_the_posterior_predictive_mean():
    y = np.array([1.0, 2.0])
    means = np.array([[0.0, 2.0], [2.0, 4.0]])  # predictive means 1 and 3
    np.testing.assert_allclose(rmse(y, means), math.sqrt(0.5), rtol=1e-12)


def test_perplexity_is_exp_nll():
    probs, labels = random_predictions(classes=5, seed=3)
    np.testing.assert_allclose(perplexity(labels, probs), math.exp(nll(labels, probs)), rtol=1e-12)
    np.testing.assert_allclose(perplexity(labels, probs, kind="individual"),
                               math.exp(nll(labels, probs, kind="individual")), rtol=1e-12)
    np.testing.assert_allclose(perplexity([2, 0], np.full((3, 2, 4), 0.25)), 4.0, rtol=1e-12)
    assert perplexity([1], one_sample([[0.0, 1.0]])) == 1


def test_ece_and_mce_on_two_bins_by_hand():
    probs = one_sample([
        [0.4, 0.3, 0.3],     # confidence 0.4, bin (0, 0.5], correct
        [0.3, 0.4, 0.3],     # 0.4, bin (0, 0.5], wrong
        [0.8, 0.1, 0.1],     # 0.8, bin (0.5, 1], correct
        [0.1, 0.7, 0.2],     # 0.7, bin (0.5, 1], wrong
        [0.9, 0.05, 0.05],   # 0.9, bin (0.5, 1], correct
    ])
    labels = [0, 0, 0, 2, 0]
    # bin 1: accuracy 1/2, confidence 0.4; bin 2: accuracy 2/3, confidence 0.8
    np.testing.assert_allclose(ece(labels, probs, num_bins=2), (2 * 0.1 + 3 * (0.8 - 2 / 3)) / 5, rtol=1e-12)
    np.testing.assert_allclose(mce(labels, probs, num_bins=2), 0.8 - 2 / 3, rtol=1e-12)
    np.testing.assert_allclose(ece(labels, probs, num_bins=1), abs(3 / 5 - 3.2 / 5), rtol=1e-12)
    np.testing.assert_allclose(ece([1, 0], one_sample([[0.5, 0.5], [0.5, 0.5]]), num_bins=2), 0.0, atol=1e-15)
    assert ece([0, 1], one_sample([[1.0, 0.0], [0.0, 1.0]])) == 0


def test_aurc_by_hand():
    probs = one_sample([[0.9, 0.1], [0.2, 0.8], [0.7, 0.3], [0.4, 0.6]])
    # confidences 0.9, 0.8, 0.7, 0.6 with correct, wrong, correct, wrong
    labels = [0, 0, 0, 0]
    np.testing.assert_allclose(aurc(labels, probs), (0 + 1 / 2 + 1 / 3 + 2 / 4) / 4, rtol=1e-12)
    # the errors on the most confident points instead: larger area
    np.testing.assert_allclose(aurc([1, 0, 0, 1], probs), (1 + 1 + 2 / 3 + 2 / 4) / 4, rtol=1e-12)
    # all confidences tied: the expected area under a random order is the error rate
    np.testing.assert_allclose(aurc([0, 1, 1, 1], one_sample([[0.7, 0.3]] * 4)), 3 / 4, rtol=1e-12)


def test_credible_interval_coverage_and_calibration_error_by_hand():
    # one predictive N(0, 1); central intervals at 0.5, 0.75, 0.9, 0.95 have half-widths
    # 0.674, 1.150, 1.645, 1.960, so these targets are covered 1, 2, 3, 3 times of 4
    y = np.array([0.1, -1.0, 1.5, 3.0])
    means, scales = np.zeros((1, 4)), np.ones((1, 4))
    coverage = credible_interval_coverage(y, means, scales)
    np.testing.assert_allclose(coverage, [0.25, 0.5, 0.75, 0.75])
    expected = math.sqrt(np.mean((np.array([0.25, 0.5, 0.75, 0.75]) - [0.5, 0.75, 0.9, 0.95]) ** 2))
    np.testing.assert_allclose(credible_interval_calibration_error(y, means, scales), expected, rtol=1e-12)
    weighted = credible_interval_calibration_error(y, means, scales, levels=[0.5, 0.9], weights=[3, 1])
    np.testing.assert_allclose(weighted, math.sqrt(0.75 * 0.25**2 + 0.25 * 0.15**2), rtol=1e-12)
    # the mixture of N(-2, 1) and N(2, 1) is symmetric: y = 0 lies at its median, inside every interval
    mixture = credible_interval_coverage([0.0], [[-2.0], [2.0]], [[1.0], [1.0]])
    np.testing.assert_array_equal(mixture, [1.0, 1.0, 1.0, 1.0])


def test_credible_intervals_of_the_true_predictive_are_calibrated():
    rng = np.random.default_rng(4)
    means, scales = rng.normal(size=(3, 20000)), rng.uniform(0.5, 2.0, size=(3, 20000))
    component = rng.integers(0, 3, 20000)
    y = rng.normal(means[component, np.arange(20000)], scales[component, np.arange(20000)])
    coverage = credible_interval_coverage(y, means, scales, levels=[0.5, 0.9])
    np.testing.assert_allclose(coverage, [0.5, 0.9], atol=4 * math.sqrt(0.25 / 20000))


def test_ood_auroc_from_predictive_entropy():
    confident = one_sample([[0.95, 0.05], [0.1, 0.9], [0.8, 0.2]])
    uncertain = one_sample([[0.5, 0.5], [0.6, 0.4]])
    assert ood_auroc(confident, uncertain) == 1
    assert ood_auroc(uncertain, confident) == 0
    probs_in, _ = random_predictions(points=40, classes=3, seed=5)
    probs_out, _ = random_predictions(points=30, classes=3, seed=6)
    entropy = [scipy.stats.entropy(p.mean(axis=0), axis=1) for p in (probs_in, probs_out)]
    expected = sklearn.metrics.roc_auc_score(np.r_[np.ones(40), np.zeros(30)], -np.concatenate(entropy))
    np.testing.assert_allclose(ood_auroc(probs_in, probs_out), expected, rtol=1e-12)
    np.testing.assert_allclose(ood_auroc(in_log_probs=np.log(probs_in), out_probs=probs_out), expected, rtol=1e-12)


def test_identical_members_have_no_diversity():
    probs, labels = random_predictions(samples=1, classes=3, seed=7)
    copies = np.repeat(probs, 4, axis=0)
    np.testing.assert_allclose(ensemble_ambiguity(copies), 0.0, atol=1e-14)
    assert prediction_variance(labels, copies) == 0
    assert prediction_variance(labels, copies, normalise=False) == 0


def test_ensemble_ambiguity_is_the_loss_gap_of_logit_averaging_and_the_mean_kl():
    probs, labels = random_predictions(samples=6, classes=4, seed=8)
    logits = np.log(probs) + np.random.default_rng(9).normal(size=probs.shape[:2])[..., None]  # shifted logits
    member_nll = -np.mean(np.log(scipy.special.softmax(logits, axis=-1))[:, np.arange(labels.size), labels])
    ensemble_nll = -np.mean(np.log(scipy.special.softmax(logits.mean(axis=0), axis=-1))[np.arange(labels.size), labels])
    geometric = scipy.special.softmax(np.log(probs).mean(axis=0), axis=-1)
    mean_kl = np.mean([scipy.stats.entropy(geometric, q, axis=1) for q in probs])
    amb = ensemble_ambiguity(probs)
    assert amb > 0
    np.testing.assert_allclose(amb, member_nll - ensemble_nll, rtol=1e-10)
    np.testing.assert_allclose(amb, mean_kl, rtol=1e-10)


def test_prediction_variance_by_hand():
    probs = np.array([[[0.2, 0.8], [0.5, 0.5]], [[0.6, 0.4], [0.5, 0.5]]])  # label-0 probabilities 0.2, 0.6
    np.testing.assert_allclose(prediction_variance([0, 0], probs), (0.04 / (2 * 0.36) + 0) / 2, rtol=1e-12)
    np.testing.assert_allclose(prediction_variance([0, 0], probs, normalise=False), 0.02, rtol=1e-12)


def test_mismatched_shapes_name_the_argument_and_the_expected_shape():
    probs, labels = random_predictions(points=10, classes=3)
    with pytest.raises(ValueError, match=r"labels must have shape \(points,\) = \(10,\)"):
        accuracy(labels[:9], probs)
    with pytest.raises(ValueError, match=r"probs must have shape \(samples, points, classes\)"):
        nll(labels, probs[0])
    with pytest.raises(ValueError, match=r"y must have shape \(points,\) = \(3,\)"):
        rmse(np.zeros(4), np.zeros((2, 3)))
    with pytest.raises(ValueError, match=r"scales must have the shape of means \(2, 3\)"):
        gaussian_lppd(np.zeros(3), np.zeros((2, 3)), np.ones((3, 2)))
    with pytest.raises(ValueError, match=r"log_densities must have shape \(samples, points\)"):
        lppd(np.zeros(3))
    with pytest.raises(ValueError, match=r"out-of-distribution predictions must have shape"):
        ood_auroc(probs, np.full((5, 4, 2), 0.5))
    with pytest.raises(ValueError, match="weights must be 4 numbers"):
        credible_interval_calibration_error(np.zeros(3), np.zeros((2, 3)), np.ones((2, 3)), weights=[1, 1])


def test_non_finite_entries_are_reported_not_dropped():
    probs, labels = random_predictions(points=10, classes=3)
    probs[0, 1] = np.nan
    probs[2, 3, 0] = np.inf
    with pytest.raises(ValueError, match=r"probs has 4 non-finite \(NaN or inf\) entries of 150"):
        ece(labels, probs)
    with pytest.raises(ValueError, match=r"log_densities has 1 non-finite"):
        lppd([[0.0, -np.inf]])
    with pytest.raises(ValueError, match=r"y has 1 non-finite"):
        rmse([np.nan, 0.0], np.zeros((2, 2)))
    with pytest.raises(ValueError, match=r"means has 1 non-finite"):
        credible_interval_coverage([0.0, 0.0], [[np.nan, 0.0]], [[1.0, 1.0]])
    with pytest.raises(ValueError, match=r"labels has 1 non-finite"):
        accuracy([0.0, np.nan], np.full((1, 2, 2), 0.5))


def test_invalid_probabilities_labels_and_parameters():
    probs, labels = random_predictions(points=10, classes=3)
    with pytest.raises(ValueError, match=r"probs must sum to 1 over classes .* sample 1, point 2"):
        bad = probs.copy()
        bad[1, 2] *= 1.1
        brier_score(labels, bad)
    with pytest.raises(ValueError, match=r"probs must lie in \[0, 1\]"):
        accuracy([0], one_sample([[1.5, -0.5]]))
    with pytest.raises(ValueError, match="log_probs must be <= 0"):
        accuracy([0], log_probs=one_sample([[0.5, -2.0]]))
    with pytest.raises(ValueError, match="exactly one of probs and log_probs"):
        nll(labels)
    with pytest.raises(ValueError, match="exactly one of probs and log_probs"):
        nll(labels, probs, log_probs=np.log(probs))
    with pytest.raises(ValueError, match=r"labels must be integers in \[0, 2\]"):
        accuracy(np.full(10, 3), probs)
    with pytest.raises(ValueError, match=r"labels must be integers in \[0, 2\]"):
        accuracy(np.full(10, 0.5), probs)
    np.testing.assert_allclose(accuracy(labels.astype(float), probs), accuracy(labels, probs))
    with pytest.raises(ValueError, match="num_bins must be an integer >= 1"):
        ece(labels, probs, num_bins=0)
    with pytest.raises(TypeError, match="num_bins must be an integer >= 1"):
        mce(labels, probs, num_bins=2.5)
    with pytest.raises(ValueError, match=r"levels must be a non-empty sequence of numbers in \(0, 1\)"):
        credible_interval_coverage([0.0], [[0.0]], [[1.0]], levels=[0.5, 1.0])
    with pytest.raises(ValueError, match=r"levels must be .* in \(0, 1\)"):
        credible_interval_calibration_error([0.0], [[0.0]], [[1.0]], levels=[])
    with pytest.raises(ValueError, match="scales must be > 0"):
        gaussian_lppd([0.0], [[0.0]], [[0.0]])
    with pytest.raises(ValueError, match="kind must be one of"):
        nll(labels, probs, kind="mean")
    with pytest.raises(ValueError, match="at least one point of each class"):
        auroc(np.zeros(10, dtype=int), probs)
    with pytest.raises(TypeError, match="normalise must be True or False"):
        prediction_variance(labels, probs, normalise=1)
