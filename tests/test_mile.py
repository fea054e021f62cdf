"""MILE (``samplers/mile.py``; MILE paper, sections 3.1-3.3): its parameters and starting points, and
the effect of its tuning changes on the regression BNN: no NaN chains, where naive MCLMC (Robnik's
tuning from the same deep-ensemble starts) produces NaN and frozen chains (Table 5)."""

from __future__ import annotations

import numpy as np
import pytest

from sgbench import samplers, targets
from sgbench.bench.reproduce.mile_table5 import failure_counts
from sgbench.samplers import mclmc, mile
from sgbench.samplers._deep_ensemble import LEARNING_RATE, deep_ensemble


def test_parameters_follow_the_paper():
    params = samplers.get("mile").params()
    assert params.tuning_steps == (40_000, 5000, 5000)  # section 3.3
    assert params.desired_energy_variance == (0.5, 0.1)  # section 3.2.2, footnote 2
    assert params.step_size == LEARNING_RATE  # section 3.2.1: the optimiser's learning rate
    assert params.L is None and params.integrator == "minimal_norm"
    # section 3.2.3 and appendix "Optimization & sampling": 10 % of the posterior samples, at least 100
    assert params.num_effective_samples == 100  # 10k steps thinned by 10: 1000 samples
    assert samplers.get("mile").params(thin=100).num_effective_samples == 100  # 100 samples: the lower bound
    assert samplers.get("mile").params(sampling_steps=50_000).num_effective_samples == 500


def test_mile_is_mclmcs_step():
    sampler = samplers.get("mile")
    for part in ("State", "init", "prime", "draw_spec", "reference_step", "optimized_step"):
        assert getattr(sampler, part) is getattr(mclmc, part)


def test_initial_positions():
    bnn = targets.get("bnn", hidden=(8,), noise="none")
    ensemble = deep_ensemble(bnn, 3, seed=5)
    np.testing.assert_array_equal(mile.initial_positions(bnn, 3, 5), ensemble.positions)
    assert ensemble.learning_rate == samplers.get("mile").params().step_size
    icg = targets.get("icg")
    np.testing.assert_array_equal(mile.initial_positions(icg, 4, 0), np.tile(icg.initial_position(), (4, 1)))
    with pytest.raises(ValueError, match="num_chains"):
        mile.initial_positions(icg, 0, 0)


@pytest.mark.parametrize("name,value", [
    ("step_size", 0.0), ("step_size", -1e-3), ("L", 0.0), ("L", -2.0),
    ("tuning_steps", (-1, 5000, 5000)), ("tuning_steps", (40_000, 1, 5000)),
    ("desired_energy_variance", (0.5, -0.1)), ("desired_energy_variance", 0.0),
    ("sampling_steps", 0), ("thin", 0), ("thin", 20_000),
    ("trust_in_estimate", 0.0), ("l_factor", -1.0),
])
def test_bad_input(name, value):
    with pytest.raises(ValueError, match=name):
        samplers.get("mile").params(**{name: value})


# ---------------------------------------------------------------------------------------------
# Table 5: NaN chains of naive MCLMC, none of MILE


def _counts(num_chains, phases, sampling_steps):
    counts = failure_counts(num_chains, phases, sampling_steps)
    for name in ("mile", "naive"):  # tuning included: 2 gradients per step, 1 to start
        assert counts[name]["grad_evals"] == [2 * (sum(phases) + sampling_steps) + 1] * num_chains
    print(f"\n{num_chains} chains, phases {phases}, {sampling_steps} sampling steps: {counts}")
    return counts


@pytest.mark.integration
def test_naive_mclmc_fails_where_mile_does_not():
    """24 chains, phases (500, 100, 100), 100 sampling steps (about 20 s, mostly compilation). Naive
    MCLMC's first step of size sqrt(d) = 22 from a deep-ensemble mode has an energy error of 1e12 to
    1e80: where every weight of the step-size predictor underflows, the next step size is 0/0 (a NaN
    chain from phase III on), else it collapses to about 1e-19 (a frozen chain) or recovers. The fate
    is sealed at the first step, so the budget does not change the rates measured by
    ``test_table_5_failure_rates`` (48 chains): NaN 11/48 = 0.23, NaN or frozen 35/48 = 0.73. Over
    reseeds (new ensembles), the assertion of at least one NaN chain then fails with probability
    0.77^24 = 2e-3, that of at least 12 failed chains with P(Binomial(24, 0.73) < 12) = 5e-3. MILE: no
    NaN and no frozen chain (0 % in Table 5)."""
    counts = _counts(24, (500, 100, 100), 100)
    assert counts["mile"]["nan"] == 0 and counts["mile"]["frozen"] == 0
    assert counts["naive"]["nan"] >= 1
    assert counts["naive"]["nan"] + counts["naive"]["frozen"] >= 12


@pytest.mark.statistical
def test_table_5_failure_rates():
    """Phases (2000, 500, 500) and 1000 sampling steps over 48 chains (about 95 s): measured NaN 11/48,
    frozen 24/48, MILE 0 and 0 (Table 5: 78-86 % NaN, 0 %). The same assertions; with the rates above
    their false-failure probabilities are 0.77^48 = 4e-6 and P(Binomial(48, 0.73) < 24) = 2e-4."""
    counts = _counts(48, (2000, 500, 500), 1000)
    assert counts["mile"]["nan"] == 0 and counts["mile"]["frozen"] == 0
    assert counts["naive"]["nan"] >= 1
    assert counts["naive"]["nan"] + counts["naive"]["frozen"] >= 24
