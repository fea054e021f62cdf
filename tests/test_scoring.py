"""What a run reports: streamed metrics always, the running b^2 curve with checkpoints, the
sample-based metrics with kept samples; diverged chains left out; no truth, no discrepancies."""

from __future__ import annotations

import numpy as np
import pytest

from sgbench.bench.running import run as running
from sgbench.reference.metrics import b2_curve, ess, gradient_evaluations_to_threshold, kl_to_fit

SMALL = dict(dim=3, condition_number=10.0)


@pytest.fixture(scope="module")
def result():
    return running.run("sgld", "icg", params={"step_size": 0.05}, target_params=SMALL, num_chains=4,
                       num_steps=20_000, thin=10, keep_samples=True, num_checkpoints=12, block_size=500)


def test_streamed_metrics_are_reported(result):
    m = result.metrics
    assert m["num_diverged_chains"] == 0
    assert 0 <= m["std_relative_error"] < 0.2  # h = 0.05 inflates variances by a few per cent
    assert m["kl_diagonal_truth_to_fit"] >= 0
    assert 0.98 < m["rhat_classic_max"] < 1.1


def test_checkpoints_give_the_running_b2_curve_and_its_threshold(result):
    checkpoints = result.trace.checkpoints
    curve = b2_curve(checkpoints.moments.second_moment, _truth()).pooled
    stored = result.curves["b2_mean_pooled"]
    np.testing.assert_allclose(stored["value"], curve)
    np.testing.assert_allclose(stored["grad_evals"], checkpoints.grad_evals.mean(axis=0))
    expected = gradient_evaluations_to_threshold(curve, checkpoints.grad_evals.mean(axis=0))
    assert result.metrics["grad_evals_to_b2_below_0.01"] == expected


def test_kept_samples_give_sample_metrics(result):
    m = result.metrics
    assert m["kl_truth_to_fit"] == pytest.approx(kl_to_fit(_truth(), result.samples))
    assert m["ess_bulk_min"] == pytest.approx(np.min(ess(result.samples, "bulk")))
    assert 0.99 < m["split_rhat_max"] < 1.1 and m["covariance_mse"] >= 0


def test_without_truth_only_divergence_is_reported():
    result = running.run("sgld", "logreg", params={"step_size": 1e-5}, num_chains=2, num_steps=50, backend="numpy")
    assert result.metrics == {"num_diverged_chains": 0.0} and result.curves == {}


def _truth():
    from sgbench import targets

    return targets.get("icg", **SMALL).truth
