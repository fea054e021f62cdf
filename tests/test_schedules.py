"""Step-size schedules (samplers/schedules.py): their values, their JSON form, one formula on
NumPy and JAX, and a grid of step sizes with a schedule running as one vmapped call."""

from __future__ import annotations

import json

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from sgbench.bench.running import run as running
from sgbench.bench.sweeps.store import ResultsStore
from sgbench.samplers.schedules import Constant, Cyclical, PolynomialDecay, as_schedule, describe


def test_polynomial_decay_is_the_sglrw_schedule():
    schedule = PolynomialDecay()
    steps = np.arange(5)
    np.testing.assert_allclose(schedule(1e-3, steps), 1e-3 * (1 + steps) ** -0.55)


def test_cyclical_schedule_restarts_at_the_peak_and_reaches_its_floor():
    schedule = Cyclical(cycle_length=4)
    np.testing.assert_allclose(schedule(2.0, np.arange(9)),
                               [2.0, 1 + np.cos(np.pi / 4), 1.0, 1 - np.cos(np.pi / 4), 2.0,
                                1 + np.cos(np.pi / 4), 1.0, 1 - np.cos(np.pi / 4), 2.0])
    floored = Cyclical(cycle_length=100, final_fraction=0.02)
    assert floored(5e-5, 0) == pytest.approx(5e-5)
    assert floored(5e-5, 99) == pytest.approx(5e-5 * (0.02 + 0.98 * (np.cos(np.pi * 0.99) + 1) / 2))
    assert np.all(floored(5e-5, np.arange(100)) >= 1e-6)
    np.testing.assert_allclose(floored.phase(np.array([0, 50, 99, 100])), [0.0, 0.5, 0.99, 0.0])


def test_constant_schedule():
    assert Constant()(0.3, 10**9) == 0.3


@pytest.mark.parametrize("schedule", [Constant(), PolynomialDecay(offset=2.0, exponent=0.8), Cyclical(cycle_length=7)],
                         ids=lambda s: s.kind)
def test_json_form_round_trips_and_jax_agrees_with_numpy(schedule):
    assert as_schedule(json.loads(json.dumps(describe(schedule)))) == schedule
    steps = np.arange(0, 10**7, 999_983)
    np.testing.assert_allclose(jax.jit(lambda t: schedule(0.1, t, jnp))(jnp.asarray(steps)),
                               np.broadcast_to(schedule(0.1, steps), steps.shape), rtol=1e-14)


def test_cycle_phase_is_exact_in_float32_chains_at_large_step_counts():
    """The counter is an integer and the cycle length static, so mod() is exact at 10^9 steps."""
    schedule = Cyclical(cycle_length=5000)
    step = jnp.asarray(10**9 + 1, dtype=jnp.int64)
    assert float(schedule.phase(step, jnp)) == pytest.approx(1 / 5000)
    value = schedule(jnp.float32(1e-3), step, jnp)
    assert value.dtype == jnp.float32 and float(value) == pytest.approx(1e-3 * (np.cos(np.pi / 5000) + 1) / 2)


def test_a_step_size_grid_with_a_schedule_runs_and_is_stored(tmp_path):
    grid = [{"step_size": h, "schedule": {"kind": "cyclical", "cycle_length": 50}} for h in (1e-3, 2e-3)]
    results = running.run_grid("sgld", "icg", params_grid=grid, target_params={"dim": 3}, num_chains=2, num_steps=200)
    assert [r.params["schedule"] for r in results] == [{"kind": "cyclical", "cycle_length": 50,
                                                        "final_fraction": 0.0}] * 2
    assert results[0].config_hash != results[1].config_hash
    with ResultsStore(tmp_path / "results.sqlite") as store:
        for result in results:
            store.add(result)
        table = store.to_frame()
    assert list(table["param_step_size"]) == [1e-3, 2e-3]
    with pytest.raises(ValueError, match="may differ only in numeric fields"):
        running.run_grid("sgld", "icg", params_grid=[grid[0], {"step_size": 1e-3}], target_params={"dim": 3},
                         num_chains=2, num_steps=20)
