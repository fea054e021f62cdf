"""The step ladder's rungs and its normal approximation (``sgbench.bench.validate.step_ladder``)."""

import numpy as np
import pytest

from sgbench.bench.gate.cells import ICG4, Cell
from sgbench.bench.validate.step_ladder import HEAVY_TAILS, rung, rung_cost, tails_too_heavy


def test_a_rung_covers_the_same_span_of_the_dynamics():
    cell = Cell("sgld", {"step_size": 0.02}, target="icg", target_params=dict(ICG4), num_chains=64, num_steps=1000,
                num_burnin=500, thin=2)
    third = rung(cell, 3)
    assert third.params["step_size"] == pytest.approx(0.0025)
    assert (third.num_steps, third.num_burnin, third.thin) == (8000, 4000, 16)
    assert rung_cost(cell, 3, 64) == 64 * 8 * 1500
    with pytest.raises(ValueError, match="step_size"):
        rung(Cell("sgld", {"lr": 0.1}, target="icg", target_params=dict(ICG4)), 1)


def _values(draw):
    return {"mean_error": draw[:, :2], "second_moment_error": draw[:, 2:]}


def test_gaussian_time_averages_keep_the_normal_approximation():
    rng = np.random.default_rng(0)
    assert tails_too_heavy(_values(rng.normal(size=(256, 4)))) is None
    # kurtosis 3 (Laplace): 8.7 x 3 / 256 = 0.1 of the tail, within the half allowed
    assert tails_too_heavy(_values(rng.laplace(size=(256, 4)))) is None


def test_time_averages_with_rare_huge_excursions_are_named_with_their_kurtosis():
    rng = np.random.default_rng(1)
    draw = rng.normal(size=(1024, 4))
    draw[:3, 3] = 300.0  # three chains in 1024 with an excursion of 300 sd: kurtosis ~ 1e3
    words = tails_too_heavy(_values(draw))
    assert words is not None and "heavy-tailed" in words and "over 1024 chains" in words
    assert "no budget decides" in words
    assert HEAVY_TAILS == pytest.approx(16 * 13 / 24)
