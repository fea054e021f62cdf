r"""Predictive metrics of classifiers from per-sample class probabilities.

Inputs: ``labels`` (points,) integers in [0, classes - 1] (integer-valued floats accepted), and exactly
one of ``probs`` or ``log_probs`` (samples, points, classes): :math:`p_{sik} = p(y = k \mid x_i, \theta_s)`
(for the ``bnn`` target, the softmax of ``predict``'s logits; a binary model passes the two columns
:math:`1 - \sigma(\eta), \sigma(\eta)`). Every metric is pooled over all samples of all chains (chains
x draws flattened into the samples axis; pass one chain's draws for a per-chain value) through the
Bayesian model average (BMA) :math:`\bar p_{ik} = \frac1S \sum_s p_{sik}` (PX-SGMCMC paper,
eq. 38), its prediction :math:`\hat y_i = \arg\max_k \bar p_{ik}` and its
confidence :math:`c_i = \max_k \bar p_{ik}`, except ``nll(kind="individual")``.

Sources: SMILE paper appendix B.3 (LPPD, accuracy, Brier, NLL, AUROC,
AURC, perplexity), MAMBA paper section 3 (ECE, MCE after Guo et al. 2017),
PX-SGMCMC paper appendix B (ERR, NLL, ECE with 15 bins, OOD AUROC from predictive entropy).
"""

from __future__ import annotations

import numpy as np
import scipy.special

from sgbench.base.arguments import integer_at_least, one_of
from sgbench.reference.metrics import register
from sgbench.reference.metrics._predictive import (
    class_log_probs,
    classification_inputs,
    label_log_probs,
    log_sample_mean,
    rank_auroc,
)

NLL_KINDS = ("ensemble", "individual")
DEFAULT_BINS = 15  # Guo et al. (2017) and PX-SGMCMC appendix B.2


def _bma(labels, probs, log_probs):
    """Validated labels, the BMA probabilities (points, classes), its predictions and whether they are right."""
    labels, log_p = classification_inputs(labels, probs, log_probs)
    mean_probs = np.exp(log_sample_mean(log_p))
    predictions = np.argmax(mean_probs, axis=1)
    return labels, mean_probs, predictions, predictions == labels


@register("categorical_lppd")
def categorical_lppd(labels, probs=None, log_probs=None) -> float:
    r"""LPPD (SMILE eq. 23; :func:`sgbench.reference.metrics.lppd.lppd`) of the labels:
    :math:`\frac1n \sum_i \log \frac1S \sum_s p_{s i y_i}`; higher is better. Equals ``-nll(kind="ensemble")``;
    -inf if all samples give some point's label probability 0.

    Args:
        labels: the true classes, shape (points,), integers in [0, classes - 1].
        probs: per-sample class probabilities, shape (samples, points, classes), or None.
        log_probs: per-sample log class probabilities, shape (samples, points, classes), or None (pass exactly one
            of ``probs`` and ``log_probs``).

    Returns:
        float: the LPPD, <= 0 (-inf possible).

    Raises:
        ValueError: invalid labels or predictions (a shape, a non-finite entry, probabilities that do not
            sum to 1; the message says which).
    """
    labels, log_p = classification_inputs(labels, probs, log_probs)
    return float(np.mean(log_sample_mean(label_log_probs(labels, log_p))))


@register("accuracy")
def accuracy(labels, probs=None, log_probs=None) -> float:
    r"""Accuracy of the BMA prediction, :math:`\frac1n \sum_i [\hat y_i = y_i]` (SMILE B.3; one minus
    PX-SGMCMC's ERR, eq. 39); ties between classes go to the lowest class index.

    Args:
        labels: the true classes, shape (points,), integers in [0, classes - 1].
        probs: per-sample class probabilities, shape (samples, points, classes), or None.
        log_probs: per-sample log class probabilities, shape (samples, points, classes), or None (pass exactly one
            of ``probs`` and ``log_probs``).

    Returns:
        float: the accuracy, in [0, 1].

    Raises:
        ValueError: invalid labels or predictions (a shape, a non-finite entry, probabilities that do not
            sum to 1; the message says which).
    """
    return float(np.mean(_bma(labels, probs, log_probs)[3]))


@register("nll")
def nll(labels, probs=None, log_probs=None, kind: str = "ensemble") -> float:
    r"""Mean negative log-likelihood per point; lower is better. ``kind="ensemble"``: of the BMA,
    :math:`-\frac1n \sum_i \log \bar p_{i y_i}` (PX-SGMCMC eq. 40 and Table 5 "ENS"; the cross-entropy of
    scikit-learn's ``log_loss``; equals :math:`-\mathrm{LPPD}`). ``kind="individual"``: the average over
    samples of each sample's NLL, :math:`-\frac1{Sn} \sum_{s,i} \log p_{s i y_i}` (PX-SGMCMC Table 5 "IND");
    SMILE's tables report an NLL above :math:`-\mathrm{LPPD}`, consistent with this average.

    Args:
        labels: the true classes, shape (points,), integers in [0, classes - 1].
        probs: per-sample class probabilities, shape (samples, points, classes), or None.
        log_probs: per-sample log class probabilities, shape (samples, points, classes), or None (pass exactly one
            of ``probs`` and ``log_probs``).
        kind: ``"ensemble"`` (the BMA's NLL) or ``"individual"`` (the average of each sample's).

    Returns:
        float: the mean NLL, >= 0 (inf possible).

    Raises:
        ValueError: an unknown ``kind``, or invalid labels or predictions (the message says which).
    """
    one_of("kind", kind, NLL_KINDS)
    if kind == "ensemble":
        return -categorical_lppd(labels, probs, log_probs)
    labels, log_p = classification_inputs(labels, probs, log_probs)
    return float(-np.mean(label_log_probs(labels, log_p)))


@register("perplexity")
def perplexity(labels, probs=None, log_probs=None, kind: str = "ensemble") -> float:
    r"""Perplexity :math:`\exp(\mathrm{NLL})`, with the mean NLL per token (point) of :func:`nll`
    (SMILE B.3 and E.6, nanoGPT); lower is better, 1 for certain correct predictions.

    Args:
        labels: the true classes, shape (points,), integers in [0, classes - 1].
        probs: per-sample class probabilities, shape (samples, points, classes), or None.
        log_probs: per-sample log class probabilities, shape (samples, points, classes), or None (pass exactly one
            of ``probs`` and ``log_probs``).
        kind: ``"ensemble"`` or ``"individual"``, as in :func:`nll`.

    Returns:
        float: the perplexity, >= 1.

    Raises:
        ValueError: an unknown ``kind``, or invalid labels or predictions (the message says which).
    """
    return float(np.exp(nll(labels, probs, log_probs, kind)))


@register("brier_score")
def brier_score(labels, probs=None, log_probs=None) -> float:
    r"""Brier score (Brier 1950; SMILE B.3) of the BMA: :math:`\frac1n \sum_i \sum_k (\bar p_{ik} - [y_i = k])^2`,
    summed over all classes (in [0, 2]; for two classes twice scikit-learn's ``brier_score_loss`` of
    :math:`\bar p_{i1}`); lower is better.

    Args:
        labels: the true classes, shape (points,), integers in [0, classes - 1].
        probs: per-sample class probabilities, shape (samples, points, classes), or None.
        log_probs: per-sample log class probabilities, shape (samples, points, classes), or None (pass exactly one
            of ``probs`` and ``log_probs``).

    Returns:
        float: the Brier score, in [0, 2].

    Raises:
        ValueError: invalid labels or predictions (a shape, a non-finite entry, probabilities that do not
            sum to 1; the message says which).
    """
    labels, mean_probs, _, _ = _bma(labels, probs, log_probs)
    one_hot = np.eye(mean_probs.shape[1])[labels]
    return float(np.mean(np.sum((mean_probs - one_hot) ** 2, axis=1)))


def _calibration_gaps(labels, probs, log_probs, num_bins) -> tuple[np.ndarray, np.ndarray]:
    """Sizes and |accuracy - confidence| of the non-empty confidence bins ((j-1)/J, j/J]."""
    num_bins = integer_at_least("num_bins", num_bins, 1)
    _, mean_probs, _, correct = _bma(labels, probs, log_probs)
    confidence = mean_probs.max(axis=1)
    edges = np.linspace(0.0, 1.0, num_bins + 1)
    bins = np.clip(np.searchsorted(edges, confidence, side="left") - 1, 0, num_bins - 1)
    sizes = np.bincount(bins, minlength=num_bins)
    filled = sizes > 0
    bin_accuracy = np.bincount(bins, weights=correct.astype(np.float64), minlength=num_bins)[filled] / sizes[filled]
    bin_confidence = np.bincount(bins, weights=confidence, minlength=num_bins)[filled] / sizes[filled]
    return sizes[filled], np.abs(bin_accuracy - bin_confidence)


@register("ece")
def ece(labels, probs=None, log_probs=None, num_bins: int = DEFAULT_BINS) -> float:
    r"""Expected calibration error (Naeini et al. 2015, Guo et al. 2017; MAMBA section 3, PX-SGMCMC eq. 42):
    :math:`\sum_{j=1}^{J} \frac{|B_j|}{n} |\mathrm{acc}(B_j) - \mathrm{conf}(B_j)|`, where bin :math:`B_j`
    holds the points whose confidence :math:`c_i` lies in :math:`((j-1)/J, j/J]`, ``num_bins`` :math:`J`
    (default 15), acc is the bin's accuracy and conf its mean confidence; lower is better.

    Args:
        labels: the true classes, shape (points,), integers in [0, classes - 1].
        probs: per-sample class probabilities, shape (samples, points, classes), or None.
        log_probs: per-sample log class probabilities, shape (samples, points, classes), or None (pass exactly one
            of ``probs`` and ``log_probs``).
        num_bins: J, the number of confidence bins, >= 1.

    Returns:
        float: the ECE, in [0, 1].

    Raises:
        ValueError: ``num_bins`` < 1, or invalid labels or predictions (the message says which).
    """
    sizes, gaps = _calibration_gaps(labels, probs, log_probs, num_bins)
    return float(np.sum(sizes * gaps) / sizes.sum())


@register("mce")
def mce(labels, probs=None, log_probs=None, num_bins: int = DEFAULT_BINS) -> float:
    r"""Maximum calibration error (Naeini et al. 2015, Guo et al. 2017; MAMBA section 3):
    :math:`\max_j |\mathrm{acc}(B_j) - \mathrm{conf}(B_j)|` over the non-empty bins of :func:`ece`;
    lower is better.

    Args:
        labels: the true classes, shape (points,), integers in [0, classes - 1].
        probs: per-sample class probabilities, shape (samples, points, classes), or None.
        log_probs: per-sample log class probabilities, shape (samples, points, classes), or None (pass exactly one
            of ``probs`` and ``log_probs``).
        num_bins: J, the number of confidence bins, >= 1.

    Returns:
        float: the MCE, in [0, 1].

    Raises:
        ValueError: ``num_bins`` < 1, or invalid labels or predictions (the message says which).
    """
    return float(np.max(_calibration_gaps(labels, probs, log_probs, num_bins)[1]))


@register("auroc")
def auroc(labels, probs=None, log_probs=None) -> float:
    r"""Area under the ROC curve of the BMA class probabilities as class scores, the "discriminative
    ability" of SMILE B.3 (its values, e.g. 0.995 at 91 % accuracy on CIFAR-10, are those of class
    discrimination, not of misclassification or OOD detection; for OOD see :func:`ood_auroc`).
    Two classes: the AUROC of :math:`\bar p_{i1}` for :math:`y_i = 1`. More: the one-vs-rest macro
    average :math:`\frac1K \sum_k \mathrm{AUROC}(\bar p_{\cdot k}, [y = k])` (scikit-learn's
    ``roc_auc_score(multi_class="ovr")``). Each AUROC is the Mann-Whitney statistic with ties counted
    one half. Every class needs at least one point; higher is better.

    Args:
        labels: the true classes, shape (points,), integers in [0, classes - 1].
        probs: per-sample class probabilities, shape (samples, points, classes), or None.
        log_probs: per-sample log class probabilities, shape (samples, points, classes), or None (pass exactly one
            of ``probs`` and ``log_probs``).

    Returns:
        float: the AUROC, in [0, 1].

    Raises:
        ValueError: fewer than 2 classes, a class without points, or invalid labels or predictions.
    """
    labels, mean_probs, _, _ = _bma(labels, probs, log_probs)
    num_classes = mean_probs.shape[1]
    counts = np.bincount(labels, minlength=num_classes)
    if num_classes < 2 or np.any(counts == 0):
        raise ValueError(f"auroc needs >= 2 classes and at least one point of each class; the labels hold "
                         f"{counts.tolist()} points of classes 0..{num_classes - 1}")
    classes = [1] if num_classes == 2 else range(num_classes)
    return float(np.mean([rank_auroc(mean_probs[:, k], labels == k) for k in classes]))


@register("ood_auroc")
def ood_auroc(in_probs=None, out_probs=None, in_log_probs=None, out_log_probs=None) -> float:
    r"""Out-of-distribution detection AUROC from predictive entropy (PX-SGMCMC section 5.2.1, Table 2
    and appendix B.3, after Lakshminarayanan et al. 2017): in-distribution points are the positives,
    scored by :math:`-H(\bar p_i) = \sum_k \bar p_{ik} \log \bar p_{ik}` of the BMA, so the AUROC is
    :math:`P(H_{\rm in} < H_{\rm out}) + \tfrac12 P(H_{\rm in} = H_{\rm out})`. Pass one of ``in_probs``,
    ``in_log_probs`` (samples, in-points, classes) and one of ``out_probs``, ``out_log_probs``
    (samples, out-points, classes) with the same samples and classes; higher is better. The AUROC does
    not depend on the ratio of the set sizes (the paper balances them).

    Args:
        in_probs: in-distribution class probabilities, shape (samples, in-points, classes), or None.
        out_probs: out-of-distribution class probabilities, shape (samples, out-points, classes), or None.
        in_log_probs: in-distribution log class probabilities, or None (exactly one of ``in_probs`` and
            ``in_log_probs``).
        out_log_probs: out-of-distribution log class probabilities, or None (exactly one of ``out_probs`` and
            ``out_log_probs``).

    Returns:
        float: the AUROC, in [0, 1].

    Raises:
        ValueError: the two sets differ in samples or classes, or invalid predictions.
    """
    inside = class_log_probs(in_probs, in_log_probs)
    outside = class_log_probs(out_probs, out_log_probs)
    if inside.shape[0] != outside.shape[0] or inside.shape[2] != outside.shape[2]:
        raise ValueError(f"out-of-distribution predictions must have shape (samples, points, classes) = "
                         f"({inside.shape[0]}, points, {inside.shape[2]}) like the in-distribution ones, "
                         f"got {outside.shape}")
    entropy = [scipy.special.entr(np.exp(log_sample_mean(log_p))).sum(axis=1) for log_p in (inside, outside)]
    positive = np.arange(inside.shape[1] + outside.shape[1]) < inside.shape[1]
    return rank_auroc(-np.concatenate(entropy), positive)


@register("aurc")
def aurc(labels, probs=None, log_probs=None) -> float:
    r"""Area under the risk-coverage curve (Geifman & El-Yaniv 2017, Geifman et al. 2019), selective
    classification with confidence :math:`c_i`: sort the points by decreasing confidence; the risk at
    coverage :math:`k/n` is the error rate of the BMA on the :math:`k` most confident points, and
    :math:`\mathrm{AURC} = \frac1n \sum_{k=1}^{n} \mathrm{risk}(k)`. Lower is better; confidences
    unrelated to correctness give the error rate in expectation. SMILE B.3 follows Zhou et al. (2025)
    and calls it "area under the reliability curve"; its values (0.011 at 91 % accuracy, 0.88 at chance
    accuracy) are those of this area. Tied confidences are ordered at random in expectation: each error
    in a tie group counts as the group's error rate.

    Args:
        labels: the true classes, shape (points,), integers in [0, classes - 1].
        probs: per-sample class probabilities, shape (samples, points, classes), or None.
        log_probs: per-sample log class probabilities, shape (samples, points, classes), or None (pass exactly one
            of ``probs`` and ``log_probs``).

    Returns:
        float: the AURC, in [0, 1].

    Raises:
        ValueError: invalid labels or predictions (a shape, a non-finite entry, probabilities that do not
            sum to 1; the message says which).
    """
    _, mean_probs, _, correct = _bma(labels, probs, log_probs)
    confidence = mean_probs.max(axis=1)
    order = np.argsort(-confidence, kind="stable")
    _, group, group_sizes = np.unique(-confidence[order], return_inverse=True, return_counts=True)
    group_errors = np.bincount(group, weights=(~correct[order]).astype(np.float64)) / group_sizes
    risk = np.cumsum(group_errors[group]) / np.arange(1, correct.size + 1)
    return float(np.mean(risk))
