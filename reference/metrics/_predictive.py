"""Validation and shared pieces of the predictive metrics: per-sample class probabilities, labels,
regression predictions, credible levels, the Bayesian-model-average predictive and a rank AUROC.

Every array is checked for its shape (the error names the argument and the expected shape) and
for non-finite entries (the error says how many), so that nothing is silently dropped.
"""

from __future__ import annotations

import numbers

import numpy as np
import scipy.special
import scipy.stats

PROBABILITY_TOLERANCE = 1e-5  # allowed |sum over classes - 1| (float32 softmax outputs pass)


def finite_array(name: str, value, shape_text: str, ndim: int) -> np.ndarray:
    """``value`` as a float64 array with ``ndim`` axes, each of length >= 1, all entries finite.

    Args:
        name: the argument's name, for the message.
        value: the array given.
        shape_text: the expected shape in words, for the message (e.g. ``"(samples, points)"``).
        ndim: the number of axes required.

    Returns:
        float64 array.

    Raises:
        ValueError: another number of axes, an axis of length 0, or a non-finite entry (the message counts them).
    """
    array = np.asarray(value, dtype=np.float64)
    if array.ndim != ndim or 0 in array.shape:
        raise ValueError(f"{name} must have shape {shape_text} with every length >= 1, got shape {array.shape}")
    bad = int(np.count_nonzero(~np.isfinite(array)))
    if bad:
        raise ValueError(f"{name} has {bad} non-finite (NaN or inf) entries of {array.size}; "
                         f"predictive metrics do not drop them: remove or repair those samples first")
    return array


def class_log_probs(probs=None, log_probs=None) -> np.ndarray:
    """Per-sample log class probabilities (samples, points, classes) from exactly one of ``probs``
    (in [0, 1]; exact zeros become -inf) or ``log_probs`` (finite, <= 0), each summing to 1 over classes
    within PROBABILITY_TOLERANCE.

    Args:
        probs: per-sample class probabilities, shape (samples, points, classes), or None.
        log_probs: per-sample log class probabilities, shape (samples, points, classes), or None.

    Returns:
        float64 array of log probabilities, shape (samples, points, classes).

    Raises:
        ValueError: both or neither given, a non-finite entry, probabilities outside [0, 1], log probabilities
            above 0, or a sample whose classes do not sum to 1.
    """
    if (probs is None) == (log_probs is None):
        raise ValueError("pass exactly one of probs and log_probs (per-sample predictions of shape "
                         "(samples, points, classes))")
    name = "probs" if log_probs is None else "log_probs"
    array = finite_array(name, probs if log_probs is None else log_probs, "(samples, points, classes)", 3)
    if log_probs is None:
        outside = np.count_nonzero((array < 0) | (array > 1))
        if outside:
            raise ValueError(f"probs must lie in [0, 1]; {outside} entries do not (range [{array.min():g}, "
                             f"{array.max():g}])")
        total = array.sum(axis=-1)
        with np.errstate(divide="ignore"):
            array = np.log(array)
    else:
        if np.any(array > PROBABILITY_TOLERANCE):
            raise ValueError(f"log_probs must be <= 0 (log probabilities), got a maximum of {array.max():g}")
        total = np.exp(scipy.special.logsumexp(array, axis=-1))
    worst = np.unravel_index(np.argmax(np.abs(total - 1)), total.shape)
    if abs(total[worst] - 1) > PROBABILITY_TOLERANCE:
        raise ValueError(f"{name} must sum to 1 over classes (last axis) within {PROBABILITY_TOLERANCE:g}; "
                         f"sample {worst[0]}, point {worst[1]} sums to {total[worst]:.6g}")
    return array


def class_labels(labels, log_probs: np.ndarray) -> np.ndarray:
    """``labels`` as integers (points,) in [0, classes - 1] matching ``log_probs`` (samples, points, classes);
    integer-valued floats (as the data targets' splits hold) are accepted.

    Args:
        labels: the true classes, shape (points,).
        log_probs: validated log class probabilities, shape (samples, points, classes).

    Returns:
        int64 array of shape (points,).

    Raises:
        ValueError: another shape, a non-finite entry, or a value that is not an integer in [0, classes - 1].
    """
    num_points, num_classes = log_probs.shape[1:]
    array = finite_array("labels", labels, f"(points,) = ({num_points},)", 1)
    if array.shape != (num_points,):
        raise ValueError(f"labels must have shape (points,) = ({num_points},) to match the predictions, "
                         f"got shape {array.shape}")
    if not np.all((array == np.round(array)) & (array >= 0) & (array < num_classes)):
        bad = array[(array != np.round(array)) | (array < 0) | (array >= num_classes)]
        raise ValueError(f"labels must be integers in [0, {num_classes - 1}] (the classes of the predictions), "
                         f"got values such as {bad[:5].tolist()}")
    return array.astype(np.int64)


def classification_inputs(labels, probs=None, log_probs=None) -> tuple[np.ndarray, np.ndarray]:
    """Validated (labels (points,), log_probs (samples, points, classes)).

    Args:
        labels: the true classes, shape (points,).
        probs: per-sample class probabilities, shape (samples, points, classes), or None.
        log_probs: per-sample log class probabilities, shape (samples, points, classes), or None (exactly one of
            the two).

    Returns:
        (labels, log_probs): int64 array (points,) and float64 array (samples, points, classes).

    Raises:
        ValueError: as :func:`class_log_probs` and :func:`class_labels`.
    """
    log_p = class_log_probs(probs, log_probs)
    return class_labels(labels, log_p), log_p


def log_sample_mean(log_values: np.ndarray) -> np.ndarray:
    r""":math:`\log \frac1S \sum_s e^{a_s}` over the samples (first) axis, by logsumexp: with per-sample log
    class probabilities (samples, points, classes), the log of the Bayesian model average
    :math:`\bar p_{ik} = \frac1S \sum_s p_{sik}`; with per-sample log densities (samples, points), the
    log predictive densities whose mean is the LPPD. Entries of -inf (probability 0) are allowed.

    Args:
        log_values: per-sample log values, samples first: (samples, points, classes) or (samples, points).

    Returns:
        the log of the mean over samples, shape ``log_values.shape[1:]``.
    """
    return scipy.special.logsumexp(log_values, axis=0) - np.log(log_values.shape[0])


def label_log_probs(labels: np.ndarray, log_probs: np.ndarray) -> np.ndarray:
    r""":math:`\log p_s(y_i \mid x_i)` (samples, points): each point's log probability of its label.

    Args:
        labels: validated labels, int array of shape (points,).
        log_probs: validated log class probabilities, shape (samples, points, classes).

    Returns:
        shape (samples, points).
    """
    return log_probs[:, np.arange(labels.size), labels]


def regression_inputs(y, means, scales=None) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """Validated targets ``y`` (points,), per-sample predictive ``means`` (samples, points) and, if
    given, ``scales`` (samples, points) > 0.

    Args:
        y: the targets, shape (points,).
        means: per-sample predictive means, shape (samples, points).
        scales: per-sample predictive standard deviations, shape (samples, points), or None.

    Returns:
        (y, means, scales) as float64 arrays (``scales`` None where not given).

    Raises:
        ValueError: a shape that does not match, a non-finite entry, or a scale <= 0.
    """
    means = finite_array("means", means, "(samples, points)", 2)
    num_points = means.shape[1]
    y = finite_array("y", y, f"(points,) = ({num_points},)", 1)
    if y.shape != (num_points,):
        raise ValueError(f"y must have shape (points,) = ({num_points},) to match means {means.shape}, "
                         f"got shape {y.shape}")
    if scales is not None:
        scales = finite_array("scales", scales, f"{means.shape} (that of means)", 2)
        if scales.shape != means.shape:
            raise ValueError(f"scales must have the shape of means {means.shape}, got shape {scales.shape}")
        if np.any(scales <= 0):
            raise ValueError(f"scales must be > 0 (predictive standard deviations); {np.count_nonzero(scales <= 0)} "
                             f"entries are not (minimum {scales.min():g})")
    return y, means, scales


def credible_levels(levels) -> np.ndarray:
    """``levels`` as a float array (L,) of numbers in (0, 1).

    Args:
        levels: a number or a sequence of numbers in (0, 1) (nominal coverages).

    Returns:
        float64 array of shape (L,).

    Raises:
        ValueError: an empty sequence, or an entry that is not a number in (0, 1) (a bool is not one).
    """
    array = np.atleast_1d(np.asarray(levels, dtype=object))
    if array.ndim != 1 or array.size == 0 or not all(
            isinstance(v, numbers.Real) and not isinstance(v, bool) and 0 < v < 1 for v in array):
        raise ValueError(f"levels must be a non-empty sequence of numbers in (0, 1) (nominal coverages), "
                         f"got {levels!r}")
    return array.astype(np.float64)


def rank_auroc(scores: np.ndarray, positive: np.ndarray) -> float:
    r"""Area under the ROC curve of ``scores`` for the boolean ``positive``, as the Mann-Whitney statistic
    :math:`P(s^+ > s^-) + \tfrac12 P(s^+ = s^-)` from mid-ranks (Hanley & McNeil 1982).

    Args:
        scores: the scores, shape (n,).
        positive: which entries are positives, boolean of shape (n,) (at least one positive and one negative).

    Returns:
        float: the AUROC, in [0, 1].
    """
    num_positive = int(np.count_nonzero(positive))
    num_negative = positive.size - num_positive
    ranks = scipy.stats.rankdata(scores)
    return float((ranks[positive].sum() - num_positive * (num_positive + 1) / 2) / (num_positive * num_negative))
