r"""MAMBA (``sgbench.bench.tune``) picks the right arm where every arm's true quality is known exactly (issue 21).

Problem. SGLD on ICG (``targets/icg.py``): d = 2, condition number 4 (precision eigenvalues 1/2 and 2),
``rotation_seed`` 0, isotropic additive gradient noise of variance V = 30; 9 arms, step sizes
:math:`h = 0.01 \cdot 1.5^k`, k = 0..8 (batch fraction 1: ICG has no minibatches); budget 2e6 gradient
evaluations shared by 4 chains per arm; eta = 3, so 2 rounds (9 arms, then 3); KSD reward; the tuner's
defaults otherwise (``max_draws`` 1000).

True quality. SGLD on a Gaussian with additive Gaussian gradient noise is a linear recursion
:math:`x' = Ax + \eta`, :math:`A = I - hP`, :math:`Q = h^2 V + 2hI`
(:func:`sgbench.samplers._langevin.langevin_recursion`); its stationary law is :math:`\mathcal N(0, S_h)` with
:math:`S_h = A S_h A^\top + Q`, solved here with ``scipy.linalg.solve_discrete_lyapunov`` exactly as
``tests/test_langevin_exact_laws.py`` does (the library has the recursion, not a solver). An arm's quality is
the exact stationary :math:`b^2` of :func:`sgbench.reference.metrics.b2.b2`: :math:`b^2 = \mathrm{mean}_i
(S_{h,ii} - \Sigma_{ii})^2 / \mathrm{Var}[x_i^2]`, the squared second-moment bias of an infinitely long chain.
It grows with h (about :math:`h^2 (V + p)^2 / 8` per eigendirection of precision p), so the smallest step is the
best arm; each grid step multiplies it by 2.26 to 2.58:

==========  =======  =======  =======  =======  =======  =======  =======  =======  =======
h           0.01     0.015    0.0225   0.0338   0.0506   0.0759   0.114    0.171    0.256
exact b^2   0.01229  0.02781  0.06315  0.1441   0.3311   0.7696   1.823    4.452    11.50
==========  =======  =======  =======  =======  =======  =======  =======  =======  =======

The largest step is a quarter of the stability limit (:math:`hp \le 0.51 < 2`), but its stationary variance
is 5.2 to 6.5 times the target's in the eigendirections. How the reward relates: the round-0 KSD of the chains
(mean over seeds 0..299) is 0.096, 0.112, 0.143, 0.189, 0.252, 0.336, 0.443, 0.577, 0.747 (sd 0.015 to 0.022),
and the KSD of 1000 independent draws from each stationary law :math:`\mathcal N(0, S_h)` (mean of 20 sets) is
0.086, 0.109, 0.140, 0.196, 0.250, 0.346, 0.441, 0.583, 0.746: the same increasing order as :math:`b^2`, with a
floor of about 0.08 from the 1000 draws the reward sees. So the chains' reward measures the bias of their
stationary law; the common random numbers of the arms (one seed for all) make the differences between
neighbouring arms much sharper than these spreads suggest.

Premises, checked deterministically (``test_each_arms_true_quality_is_its_exact_stationary_b2``, in the default
run): the table above; the arms are the grid in order; every arm is stable; every arm mixes in its round-0 budget
(27777 steps per chain, 139 relaxation times of the slowest direction at the smallest step): the chains start at
the mean, and the deficit of the expected second moment of the round-0 draws against the stationary one (exact:
:math:`E[x_j x_j^\top] = S_h - A^j S_h A^{j\top}`) is at most 1.5 % of the stationary bias (asserted:
below 5 %), so the stationary bias dominates what the reward sees; and the best arm's :math:`b^2` is above the
reward's resolution (12 times :math:`1/n` for the n = 992 draws the reward sees; :math:`1/n` is :math:`E[b^2]`
of n exact draws). With V = 10
instead (exact :math:`b^2` 0.0016, 0.0036, 0.0081, 0.019, ...: the bottom arms within a few :math:`1/n` of each
other) the tuner chose arms 0/1/2 in 218/65/17 of 300 runs: it cannot resolve differences of a few
:math:`1/n`, hence the noise variance here.

Tolerance: the chosen arm's exact :math:`b^2` is at most ``TOLERANCE`` = 2 times the grid's smallest. On this
grid that is the best arm only (the next has 2.26 times its :math:`b^2`; asserted), which is what the
measurement supports: in 600 runs (seeds 0..599) the tuner chose arm 0 in 598 and arm 1 twice (seeds 219 and
425), a measured error rate of 2/600 = 0.0033 (one-sided 99.9 % upper bound 0.019).

Statistic and false-failure rate. ``RUNS`` = 100 independent tunings (seeds 0..99); the number of failures
(chosen arm outside the tolerance) is Binomial(100, p) with p the true error rate. The check fails when it
exceeds ``THRESHOLD`` = 7, the 1 - 1e-3 quantile of Binomial(100, ``ERROR_RATE``), ``ERROR_RATE`` = p0 = 0.02
(the measured rate rounded up past its 99.9 % upper bound): if the true error rate is at most 0.02, a fresh set
of seeds fails with probability at most 1e-3 (9.3e-4; at the measured 0.0033, 2e-9). The seeds are fixed, so
the test is deterministic: seeds 0..99 give 0 failures.

Power (the same check, 1 - 1e-3 quantile of Binomial(``CONTROL_RUNS`` = 10, 0.02) = 2 failures, must fail):

- the reward reversed (+KSD: prefers the largest step, the sign of the reward wrong): 10 failures of 10;
- a reward that ignores the draws (uniform random: a tuner that learns nothing; 8/9 failures expected): 8 of 10
  (a fresh seed would let it pass with probability 8.5e-7);
- the winner taken as the worst arm of the last round (pruning right, final choice wrong): 10 of 10.

It detects a tuner whose chosen arm is not the arm of smallest stationary bias more than about 2 % of the time:
a wrong reward sign, a reward that does not see the bias of the stationary law (the KSD computed on the wrong
target or draws, say), rewards paired with other arms than their own, or a wrong final choice. It is not meant
to see an error that keeps the best arm in front, for example a budget not reallocated to the surviving arms
(the best arm leads by a wide margin from round 0).

Runtime: 3 minutes on 2 cores (measured 174 s: 1.4 s per tuning; each tuning builds two XLA programs that differ
between seeds only in their arguments, compiled once through a temporary persistent compilation cache, so
tracing dominates). Run with::

    python -m pytest tests/test_tune_icg.py -m statistical -q
"""

from __future__ import annotations

import jax
import numpy as np
import pytest
import scipy.linalg
import scipy.stats
from jax.experimental.compilation_cache import compilation_cache

from sgbench import targets
from sgbench.bench.tune import mamba as tuner
from sgbench.bench.tune.arm_runs import thinning
from sgbench.bench.tune.budget import Budget
from sgbench.bench.tune.halving import Halving, best_first, num_rounds
from sgbench.bench.tune.rewards import discrepancy
from sgbench.reference.metrics.b2 import b2
from sgbench.samplers._langevin import langevin_recursion

ALPHA = 1e-3
TARGET = dict(dim=2, condition_number=4.0, rotation_seed=0, noise="isotropic", noise_variance=30.0)
STEP_SIZES = tuple(0.01 * 1.5**k for k in range(9))
# the exact stationary b^2 of each arm (module docstring)
EXACT_B2 = (0.012286, 0.02781, 0.063146, 0.14406, 0.33106, 0.76961, 1.8225, 4.4521, 11.502)
BUDGET = Budget("grads", 2e6)
NUM_CHAINS = 4
ETA = 3
TOLERANCE = 2.0  # the chosen arm's exact b^2 may be at most this times the grid's smallest
ERROR_RATE = 0.02  # p0: measured 2/600
RUNS = 100
CONTROL_RUNS = 10
THRESHOLD = int(scipy.stats.binom.ppf(1 - ALPHA, RUNS, ERROR_RATE))
CONTROL_THRESHOLD = int(scipy.stats.binom.ppf(1 - ALPHA, CONTROL_RUNS, ERROR_RATE))
MAX_TRANSIENT = 0.05  # round-0 draws' transient deficit, at most this fraction of the stationary bias
MIN_RESOLUTIONS = 10  # the best arm's b^2 in units of 1/n, n the draws the reward sees


def icg():
    return targets.get("icg", **TARGET)


def stationary_covariance(target, step):
    r"""SGLD's stationary covariance :math:`S = ASA^\top + Q` (as in ``tests/test_langevin_exact_laws.py``)."""
    noise = target.noise.covariance(np.zeros(target.dim))
    return scipy.linalg.solve_discrete_lyapunov(*langevin_recursion(target.precision, step, 1.0, noise))


def exact_b2(target, step) -> float:
    """The exact stationary b^2 of SGLD with ``step`` on ``target`` (mean over dimensions)."""
    return float(b2(np.diag(stationary_covariance(target, step)), target.truth))


def build(seed):
    return tuner.Problem.build("sgld", "icg", axes={"step_size": STEP_SIZES}, budget=BUDGET, target_params=TARGET,
                               seed=seed, num_chains=NUM_CHAINS)


def round0_steps_and_thin(problem):
    """Steps per chain and thinning of every arm's round-0 run (all arms cost the same on ICG)."""
    budget = BUDGET.total / (len(STEP_SIZES) * num_rounds(len(STEP_SIZES), ETA))
    steps = {cost.steps_within(budget, True) for cost in problem.costs}
    assert len(steps) == 1
    steps = steps.pop()
    return steps, thinning(steps, NUM_CHAINS, tuner.DEFAULT_MAX_DRAWS)


def test_each_arms_true_quality_is_its_exact_stationary_b2():
    target = icg()
    values = [exact_b2(target, h) for h in STEP_SIZES]
    np.testing.assert_allclose(values, EXACT_B2, rtol=1e-4)
    assert all(b > a for a, b in zip(values, values[1:]))  # the smallest step is the best arm
    best = min(values)
    assert [v <= TOLERANCE * best for v in values] == [True] + [False] * 8  # the tolerance: the best arm only

    problem = build(0)
    assert not problem.skipped
    assert [arm.sampler_params() for arm in problem.arms] == [{"step_size": h} for h in STEP_SIZES]
    np.testing.assert_array_equal(target.initial_position(), np.zeros(2))  # chains start at the mean
    steps, thin = round0_steps_and_thin(problem)
    noise = target.noise.covariance(np.zeros(target.dim))
    for h in STEP_SIZES:
        a, _ = langevin_recursion(target.precision, h, 1.0, noise)
        assert h * np.max(np.linalg.eigvalsh(target.precision)) < 0.52  # stable (< 2), far from the edge
        s = stationary_covariance(target, h)
        # the round-0 draws are x_j for j = thin, 2 thin, ...: E[x_j x_j^T] = S - A^j S A^j^T from x_0 = 0
        deficit = np.zeros(target.dim)
        kept = range(thin, steps + 1, thin)
        for j in kept:
            power = np.linalg.matrix_power(a, j)
            deficit += np.diag(power @ s @ power.T)
        deficit /= len(kept)
        bias = np.diag(s) - np.diag(target.covariance)
        assert np.all(bias > 0) and np.all(deficit <= MAX_TRANSIENT * bias), (h, deficit / bias)
    assert best * len(range(thin, steps + 1, thin)) * NUM_CHAINS >= MIN_RESOLUTIONS


@pytest.fixture(scope="module")
def compile_once(tmp_path_factory):
    """A persistent XLA compilation cache in a temporary folder for this module: every tuning compiles the same
    two programs (only their arguments differ by seed), which then compile once; restored afterwards."""
    names = ("jax_compilation_cache_dir", "jax_persistent_cache_min_compile_time_secs",
             "jax_persistent_cache_min_entry_size_bytes")
    saved = {name: getattr(jax.config, name) for name in names}
    jax.config.update("jax_compilation_cache_dir", str(tmp_path_factory.mktemp("xla_cache")))
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)
    compilation_cache.reset_cache()
    yield
    for name, value in saved.items():
        jax.config.update(name, value)
    compilation_cache.reset_cache()


def chosen_step_sizes(seeds):
    return [tuner.mamba(build(seed), eta=ETA).winner_arm.sampler_params()["step_size"] for seed in seeds]


def failures(chosen) -> int:
    """Chosen arms whose exact b^2 exceeds ``TOLERANCE`` times the grid's smallest."""
    target = icg()
    best = min(exact_b2(target, h) for h in STEP_SIZES)
    return sum(exact_b2(target, h) > TOLERANCE * best for h in chosen)


def describe(chosen) -> str:
    counts = {h: chosen.count(h) for h in STEP_SIZES}
    return ", ".join(f"h={h:.3g}: {n}" for h, n in counts.items())


@pytest.mark.statistical
def test_mamba_picks_the_arm_of_smallest_exact_b2(compile_once):
    chosen = chosen_step_sizes(range(RUNS))
    count = failures(chosen)
    assert count <= THRESHOLD, (
        f"{count} of {RUNS} tunings chose an arm whose exact b^2 exceeds {TOLERANCE:g} x the best's; at most "
        f"{THRESHOLD} (the 1 - {ALPHA:g} quantile of Binomial({RUNS}, {ERROR_RATE:g})) allowed. Chosen: "
        f"{describe(chosen)}")


def reversed_reward(monkeypatch):
    monkeypatch.setattr(tuner, "discrepancy", lambda metric, samples, target, seed=0: -discrepancy(
        metric, samples, target, seed))


def random_reward(monkeypatch):
    rng = np.random.default_rng(2024)
    monkeypatch.setattr(tuner, "discrepancy", lambda metric, samples, target, seed=0: float(rng.random()))


def worst_of_last_round(monkeypatch):
    halving = tuner.successive_halving

    def wrong(num_arms, total_budget, evaluate, eta):
        result = halving(num_arms, total_budget, evaluate, eta)
        last = result.rounds[-1]
        return Halving(result.rounds, best_first(last.arms, [-r for r in last.rewards])[0])

    monkeypatch.setattr(tuner, "successive_halving", wrong)


@pytest.mark.statistical
@pytest.mark.parametrize("bug", [reversed_reward, random_reward, worst_of_last_round], ids=lambda f: f.__name__)
def test_the_check_fails_for_a_wrong_tuner(compile_once, monkeypatch, bug):
    bug(monkeypatch)
    chosen = chosen_step_sizes(range(CONTROL_RUNS))
    count = failures(chosen)
    assert count > CONTROL_THRESHOLD, (
        f"with {bug.__name__}, {count} of {CONTROL_RUNS} tunings failed, not more than {CONTROL_THRESHOLD}: the check "
        f"did not detect it. Chosen: {describe(chosen)}")
