"""The metrics a run reports, computed from what the driver streamed (per-chain moments, running
moments at checkpoints) and, when the run kept them, its thinned samples, against the target's
truth.

Diverged chains (any non-finite position) are left out and counted. From streamed moments:
b^2 (SMILE appendix C: mean over dimensions ``b2_mean_*``, max ``b2_max_*``), xi(sigma), the
KL of a diagonal Gaussian fit, the classic R-hat. From checkpoints: the pooled running b^2 curve
and the gradient evaluations (per chain) until it stays below 0.01 (Hoffman & Sountsov 2022).
From kept samples: the full-covariance Gaussian-fit KL (NaN where the fit is singular) and
covariance MSE (SGLRW paper), bulk
and tail ESS and the rank-normalised split R-hat. Against a function-space NUTS reference, where the
target has one stored (``bnn``): the predictive-moment scores of ``sgbench.reference.function_space``.
"""

from __future__ import annotations

import numpy as np

from sgbench.bench.running.trace import ChainTrace
from sgbench.reference.metrics import (
    Moments,
    b2_curve,
    b2_summary,
    covariance_mse,
    ess,
    gelman_rubin_from_moments,
    gradient_evaluations_to_threshold,
    kl_diagonal_fit_from_moments,
    kl_to_fit,
    split_rhat,
    std_relative_error,
)

B2_THRESHOLD = 0.01
_B2_KEYS = ("chain_average", "chain_average_bootstrap_std", "pooled", "pooled_bootstrap_std")


def score(trace: ChainTrace, truth) -> tuple[dict[str, float], dict[str, dict]]:
    """``(metrics, curves)``: metric name -> value (NaN b^2 when every chain diverged; only the
    divergence count without truth), and curve name -> {"grad_evals": [...], "value": [...]}."""
    healthy = ~trace.diverged
    metrics: dict[str, float] = {"num_diverged_chains": float((~healthy).sum())}
    curves: dict[str, dict] = {}
    if truth is None:
        return metrics, curves
    if not healthy.any():
        metrics.update({f"b2_{d}_{k}": np.nan for d in ("mean", "max") for k in _B2_KEYS})
        return metrics, curves
    moments = Moments(*(field[healthy] for field in trace.moments))
    for over_dims in ("mean", "max"):
        metrics.update(b2_summary(moments.second_moment, truth, over_dims).as_dict(f"b2_{over_dims}"))
    if np.all(moments.count >= 2):
        metrics["std_relative_error"] = std_relative_error(moments, truth)
        try:
            metrics["kl_diagonal_truth_to_fit"] = kl_diagonal_fit_from_moments(truth, moments)
        except ValueError:  # a zero variance: chains that never moved
            metrics["kl_diagonal_truth_to_fit"] = np.nan
        if len(moments.count) >= 2:
            metrics["rhat_classic_max"] = float(np.max(gelman_rubin_from_moments(moments)))
    if trace.checkpoints is not None:
        metrics.update(_running_b2(trace.checkpoints, healthy, truth, curves))
    if trace.samples is not None:
        samples = trace.samples[healthy]
        # Steps that were not samples (an exploration stage) left NaN rows in every healthy chain.
        metrics.update(_of_samples(samples[:, np.all(np.isfinite(samples), axis=(0, 2))], truth))
    return metrics, curves


def score_predictions(trace: ChainTrace, target) -> dict[str, float]:
    """Where ``target`` has a stored function-space reference (``sgbench.reference.function_space``: a ``bnn`` whose
    predictive means NUTS has a gold standard of) and the run kept samples, the run's predictive-moment scores
    against it from its healthy chains; else nothing."""
    from sgbench.reference import function_space

    if trace.samples is None or not function_space.has_reference(target):
        return {}
    samples = trace.samples[~trace.diverged]
    samples = samples[:, np.all(np.isfinite(samples), axis=(0, 2))]
    if samples.shape[0] == 0 or samples.shape[1] < 4:
        return {}
    return function_space.predictive_moment_scores(target, samples)


def _running_b2(checkpoints, healthy, truth, curves) -> dict[str, float]:
    started = checkpoints.moments.count[healthy].min(axis=0) > 0  # checkpoints before any draw: no b^2
    curve = b2_curve(checkpoints.moments.second_moment[healthy][:, started], truth).pooled
    grad_evals = checkpoints.grad_evals[healthy][:, started].mean(axis=0)
    curves["b2_mean_pooled"] = {"grad_evals": grad_evals.tolist(), "value": curve.tolist()}
    return {"grad_evals_to_b2_below_0.01": float(gradient_evaluations_to_threshold(curve, grad_evals, B2_THRESHOLD))}


def _of_samples(samples, truth) -> dict[str, float]:
    chains, draws, dim = samples.shape
    metrics = {}
    if chains * draws > dim + 1:
        try:
            metrics["kl_truth_to_fit"] = kl_to_fit(truth, samples)
        except ValueError:  # a singular fit: chains that collapsed or grew beyond float64's squares
            metrics["kl_truth_to_fit"] = np.nan
        metrics["covariance_mse"] = covariance_mse(samples, truth)
    if draws >= 4:
        metrics["ess_bulk_min"] = float(np.min(ess(samples, "bulk")))
        metrics["ess_tail_min"] = float(np.min(ess(samples, "tail")))
        if chains >= 2:
            metrics["split_rhat_max"] = float(np.max(split_rhat(samples)))
    return metrics
