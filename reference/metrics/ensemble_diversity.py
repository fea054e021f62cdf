r"""Diversity of the predictions of posterior samples, as the PX-SGMCMC paper measures it (section 5.3.1,
Table 5 and appendix B.1): ensemble ambiguity (AMB, Wood et al. 2023) and
the variance of predictions (VAR, Ortega et al. 2022). Both are 0 when all samples predict alike and
grow with their disagreement.

Inputs as in :mod:`sgbench.reference.metrics.classification`: exactly one of ``probs`` or ``log_probs``
(samples, points, classes), ``labels`` (points,). Pooled over all samples of all chains, the
"members" :math:`m = 1..M`; pass one chain's draws for a per-chain value.
"""

from __future__ import annotations

import numpy as np
import scipy.special

from sgbench.reference.metrics import register
from sgbench.reference.metrics._predictive import class_log_probs, classification_inputs, label_log_probs


@register("ensemble_ambiguity")
def ensemble_ambiguity(probs=None, log_probs=None) -> float:
    r"""Ensemble ambiguity of the cross-entropy loss (Wood et al. 2023; PX-SGMCMC eq. 41), the average
    member loss minus the loss of the logit-averaged ensemble :math:`\sigma(\frac1M \sum_m z_{mi})`:

    .. math:: \mathrm{AMB} = \frac1n \sum_i \Big[ -\frac1M \sum_m \log q_{mi y_i} + \log \bar q_{i y_i} \Big]
              = \frac1n \sum_i \frac1M \sum_m \mathrm{KL}(\bar q_i \,\|\, q_{mi})
              = -\frac1n \sum_i \log \sum_k \exp\Big(\frac1M \sum_m \log q_{mik}\Big),

    where :math:`q_{mi} = \sigma(z_{mi})` and :math:`\bar q_i`, the normalised geometric mean of the
    members, is the softmax of the mean logits. The label cancels, so none is needed. Eq. 41 prints
    log-likelihoods where losses (negative log-likelihoods) are meant: with them AMB >= 0, as in the
    paper's tables and its code. Higher means more diverse.

    Args:
        probs: per-sample class probabilities, shape (samples, points, classes), or None.
        log_probs: per-sample log class probabilities, shape (samples, points, classes), or None (pass exactly one
            of ``probs`` and ``log_probs``).

    Returns:
        float: AMB, >= 0.

    Raises:
        ValueError: invalid predictions (both or neither given, a shape, a non-finite entry, probabilities that do
            not sum to 1).
    """
    log_p = class_log_probs(probs, log_probs)
    return float(-np.mean(scipy.special.logsumexp(log_p.mean(axis=0), axis=-1)))


@register("prediction_variance")
def prediction_variance(labels, probs=None, log_probs=None, normalise: bool = True) -> float:
    r"""Variance of the predictions (Ortega et al. 2022, the diversity term of their second-order
    Jensen bound for the cross-entropy of model averaging; PX-SGMCMC Table 5 "VAR"): over points, the
    variance across members of the probability of the true label,

    .. math:: \mathrm{VAR} = \frac1n \sum_i \frac{\frac1M \sum_m (q_{m i y_i} - \bar q_{i y_i})^2}
              {2 \max_m q_{m i y_i}^2}, \qquad \bar q_{i y_i} = \frac1M \sum_m q_{m i y_i},

    (population variance over members; a point whose members all give its label probability 0 counts
    0). ``normalise=False`` drops the divisor :math:`2 \max_m q_{m i y_i}^2`. Higher means more diverse.

    Args:
        labels: the true classes, shape (points,), integers in [0, classes - 1].
        probs: per-sample class probabilities, shape (samples, points, classes), or None.
        log_probs: per-sample log class probabilities, shape (samples, points, classes), or None (pass exactly one
            of ``probs`` and ``log_probs``).
        normalise: whether to divide by :math:`2 \max_m q_{m i y_i}^2`.

    Returns:
        float: VAR, >= 0.

    Raises:
        TypeError: ``normalise`` is not a bool.
        ValueError: invalid labels or predictions.
    """
    if not isinstance(normalise, bool):
        raise TypeError(f"normalise must be True or False, got {normalise!r}")
    labels, log_p = classification_inputs(labels, probs, log_probs)
    label_probs = np.exp(label_log_probs(labels, log_p))
    variance = label_probs.var(axis=0)
    if not normalise:
        return float(np.mean(variance))
    top = label_probs.max(axis=0)
    return float(np.mean(np.divide(variance, 2 * top**2, out=np.zeros_like(variance), where=top > 0)))
