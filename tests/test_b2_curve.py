r"""The running b^2 curve and the gradient evaluations until it stays below a threshold, on
hand-made cases.

Truth N(0, I_2): E[x^2] = 1 and Var[x^2] = 2 in each coordinate, so a running estimate
(1 + e_1, 1 + e_2) has b^2 = (e_1^2 + e_2^2)/4 (mean over dimensions) and max(e_i^2)/2 (max).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from sgbench.reference.metrics.b2 import b2
from sgbench.reference.metrics.b2_curve import b2_curve, gradient_evaluations_to_threshold
from sgbench.targets._truth import Truth

TRUTH = Truth.of_gaussian(np.zeros(2), np.eye(2))
# (chains=2, checkpoints=3, dim=2) running estimates of E[x^2].
RUNNING = np.array([
    [[3.0, 1.0], [1.3, 1.0], [1.0, 1.0]],
    [[1.0, 0.0], [0.8, 1.1], [1.0, 1.0]],
])


def test_b2_curve_by_hand_per_chain_and_pooled():
    curve = b2_curve(RUNNING, TRUTH)
    np.testing.assert_allclose(curve.per_chain, [[1.0, 0.0225, 0.0], [0.25, 0.0125, 0.0]], rtol=1e-12, atol=1e-16)
    # Pooled: b^2 of the chain average, (2, 0.5) -> 1.25/4; (1.05, 1.05) -> 0.005/4; (1, 1) -> 0.
    np.testing.assert_allclose(curve.pooled, [1.25 / 4, 0.005 / 4, 0.0], rtol=1e-12, atol=1e-16)
    maxed = b2_curve(RUNNING, TRUTH, over_dims="max")
    np.testing.assert_allclose(maxed.per_chain, [[2.0, 0.045, 0.0], [0.5, 0.02, 0.0]], rtol=1e-12, atol=1e-16)


def test_b2_curve_of_running_averages_equals_b2_of_each_prefix():
    rng = np.random.default_rng(0)
    draws = rng.standard_normal((3, 400, 2))
    checkpoints = np.array([10, 50, 100, 400])
    running = np.cumsum(draws**2, axis=1)[:, checkpoints - 1] / checkpoints[:, None]
    curve = b2_curve(running, TRUTH)
    for k, t in enumerate(checkpoints):
        np.testing.assert_allclose(curve.per_chain[:, k], b2((draws[:, :t] ** 2).mean(axis=1), TRUTH), rtol=1e-12)
        pooled_prefix = (draws[:, :t] ** 2).reshape(-1, 2).mean(axis=0)
        assert curve.pooled[k] == pytest.approx(float(b2(pooled_prefix, TRUTH)), rel=1e-12)


def test_threshold_counts_the_first_checkpoint_after_which_the_curve_stays_below():
    grad_evals = [10, 20, 30, 40, 50]
    # Below at 20, above again at 30, below from 40 on: "stays below" gives 40, not 20.
    assert gradient_evaluations_to_threshold([0.5, 0.005, 0.02, 0.008, 0.001], grad_evals) == 40.0
    assert gradient_evaluations_to_threshold([0.005, 0.004, 0.003, 0.002, 0.001], grad_evals) == 10.0
    # Never below at the last checkpoint: infinite; exactly at the threshold is not below.
    assert gradient_evaluations_to_threshold([0.5, 0.005, 0.004, 0.003, 0.02], grad_evals) == math.inf
    assert gradient_evaluations_to_threshold([0.5, 0.005, 0.004, 0.003, 0.01], grad_evals) == math.inf
    assert gradient_evaluations_to_threshold([0.5, 0.005, 0.004, 0.003, 0.02], grad_evals, threshold=0.05) == 20.0
    # A NaN is never below.
    assert gradient_evaluations_to_threshold([0.5, 0.005, np.nan, 0.003, 0.001], grad_evals) == 40.0
    assert gradient_evaluations_to_threshold([0.005, 0.005, 0.003, 0.003, np.nan], grad_evals) == math.inf


def test_threshold_per_chain_and_pooled():
    curve = b2_curve(RUNNING, TRUTH)
    # Per chain with per-chain gradient counts (chains, checkpoints); pooled with one count each.
    per_chain = gradient_evaluations_to_threshold(curve.per_chain, [[100, 200, 300], [110, 220, 330]])
    np.testing.assert_array_equal(per_chain, [300.0, 330.0])
    np.testing.assert_array_equal(gradient_evaluations_to_threshold(curve.per_chain, [100, 200, 300], 0.015),
                                  [300.0, 200.0])
    np.testing.assert_array_equal(gradient_evaluations_to_threshold(curve.per_chain, [100, 200, 300]), [300.0, 300.0])
    assert gradient_evaluations_to_threshold(curve.pooled, [100, 200, 300]) == 200.0


def test_bad_inputs_name_the_parameter():
    with pytest.raises(ValueError, match=r"running_second_moments must have shape \(chains, checkpoints, dim\)"):
        b2_curve(RUNNING[0], TRUTH)
    with pytest.raises(ValueError, match="over_dims must be one of"):
        b2_curve(RUNNING, TRUTH, over_dims="none")
    with pytest.raises(ValueError, match="dimensions"):
        b2_curve(RUNNING[..., :1], TRUTH)
    with_nan = RUNNING.copy()
    with_nan[1, 2, 0] = np.nan
    with pytest.raises(ValueError, match=r"NaN at 1 of 6 \(chain, checkpoint\) pairs, in chains \[1\]"):
        b2_curve(with_nan, TRUTH)
    with pytest.raises(ValueError, match="non-decreasing"):
        gradient_evaluations_to_threshold([0.5, 0.001], [20, 10])
    with pytest.raises(ValueError, match="does not broadcast"):
        gradient_evaluations_to_threshold([0.5, 0.001, 0.0], [10, 20])
    with pytest.raises(ValueError, match="threshold must be a finite number > 0"):
        gradient_evaluations_to_threshold([0.5, 0.001], [10, 20], threshold=0.0)


def test_b2_reduces_over_the_coordinates_the_truth_states():
    import dataclasses

    truth = Truth.of_gaussian(np.zeros(3), np.eye(3))  # E[x^2] = 1, Var[x^2] = 2
    estimate = np.array([1.2, 1.4, 9.0])
    partial = dataclasses.replace(truth, second_moment=np.array([1.0, 1.0, np.nan]),
                                  second_moment_var=np.array([2.0, 2.0, np.nan]))
    np.testing.assert_allclose(b2(estimate, partial), (0.2**2 + 0.4**2) / 2 / 2)
    np.testing.assert_allclose(b2(estimate, partial, "max"), 0.4**2 / 2)
    none = dataclasses.replace(truth, second_moment_var=np.full(3, np.nan))
    assert np.isnan(b2(estimate, none))
