"""The drivers: gradient counting, divergence as a measured outcome, thinning, grids, memory."""

from __future__ import annotations

import numpy as np
import pytest

from sgbench import samplers, targets
from sgbench.bench.running import run as running
from sgbench.bench.running.config import RunConfig, dividing_block_size
from sgbench.bench.running.jax_driver import CompiledGrid

ICG = dict(noise="isotropic", noise_variance=256.0)


@pytest.mark.parametrize("backend", ["jax", "numpy"])
def test_gradient_evaluations_are_counted(backend):
    result = running.run("sgld", "icg", params={"step_size": 1e-3}, target_params=ICG, num_chains=3,
                         num_steps=200, num_burnin=40, backend=backend)
    assert result.diagnostics["grad_evals"] == [240] * 3
    assert result.grad_evals == 720


@pytest.mark.parametrize("backend", ["jax", "numpy"])
def test_divergence_is_measured_not_raised(backend):
    # h = 0.05 > 2 / lambda_max(precision) = 0.02: every chain blows up on icg.
    result = running.run("sgld", "icg", params={"step_size": 5e-2}, num_chains=2, num_steps=3000, backend=backend)
    diagnostics = result.diagnostics
    assert diagnostics["diverged"] == [True, True]
    assert all(0 < s < 3000 for s in diagnostics["first_nonfinite_step"])
    assert all(n == 3000 - s for n, s in zip(diagnostics["nonfinite_steps"], diagnostics["first_nonfinite_step"]))
    assert result.metrics["num_diverged_chains"] == 2
    assert np.isnan(result.metrics["b2_mean_chain_average"])


def test_diverged_chains_are_left_out_of_metrics():
    start = np.zeros((3, 10))
    start[1] = 1e307  # the gradient overflows to inf at the first step
    result = running.run("sgld", "icg", params={"step_size": 1e-3}, num_chains=3, num_steps=500,
                         initial_position=start)
    assert result.diagnostics["diverged"] == [False, True, False]
    assert result.metrics["num_diverged_chains"] == 1
    assert np.isfinite(result.metrics["b2_mean_chain_average"])


def test_a_chain_whose_moments_overflow_is_diverged_not_a_crash():
    start = np.zeros((3, 10))
    start[2] = 1e80  # finite positions and gradients, but the streamed x^4 overflows float64
    result = running.run("sgld", "icg", params={"step_size": 1e-3}, num_chains=3, num_steps=200,
                         initial_position=start)
    assert result.diagnostics["nonfinite_steps"] == [0, 0, 0]
    assert result.diagnostics["diverged"] == [False, False, True]
    assert result.metrics["num_diverged_chains"] == 1
    assert np.isfinite(result.metrics["std_relative_error"])


def test_thinning_and_burnin_decide_what_enters_the_moments():
    result = running.run("sgld", "icg", params={"step_size": 1e-3}, num_chains=2, num_steps=1001,
                         num_burnin=77, thin=10, block_size=128)
    assert result.moments.count.tolist() == [100, 100]


@pytest.mark.parametrize("backend", ["jax", "numpy"])
def test_keep_every_keeps_some_draws_and_averages_every_step(backend):
    """``keep_every`` = 10 keeps steps 10, 20, .. of the recorded ones, the same draws as ``thin`` = 10 keeps,
    while the moments still average every step (deterministic given the seed)."""
    common = dict(params={"step_size": 1e-3}, num_chains=2, num_steps=100, num_burnin=7, keep_samples=True,
                  backend=backend, seed=3, block_size=17 if backend == "jax" else None)
    every = running.run("sgld", "icg", keep_every=10, **common)
    thinned = running.run("sgld", "icg", thin=10, **common)
    assert every.samples.shape == (2, 10, every.samples.shape[-1]) and every.moments.count.tolist() == [100, 100]
    np.testing.assert_array_equal(every.samples, thinned.samples)
    assert every.config_hash == running.run("sgld", "icg", **{**common, "keep_samples": False}).config_hash


def test_keep_every_bad_input():
    with pytest.raises(ValueError, match="keep_every"):
        RunConfig(num_steps=100, keep_every=101)


def test_a_grid_point_equals_the_same_run_alone():
    grid = running.run_grid("sgld", "icg", params_grid=[{"step_size": 1e-3}, {"step_size": 4e-3}],
                            target_params=ICG, num_chains=3, num_steps=500, seed=9)
    alone = running.run("sgld", "icg", params={"step_size": 4e-3}, target_params=ICG, num_chains=3,
                        num_steps=500, seed=9)
    for a, b in zip(grid[1].moments, alone.moments):
        np.testing.assert_allclose(a, b, rtol=1e-12)
    assert not np.allclose(grid[0].moments.mean_sq, alone.moments.mean_sq)


def test_block_size_does_not_change_the_law_only_the_stream():
    runs = [running.run("sgld", "icg", params={"step_size": 1e-3}, num_chains=2, num_steps=300, block_size=b)
            for b in (7, 300)]
    assert runs[0].moments.count.tolist() == runs[1].moments.count.tolist() == [300, 300]


@pytest.mark.parametrize("total_steps, most, expected", [
    (4000, 1024, 1000), (4500, 1024, 900), (1_000_000, 1024, 1000), (100, 1024, 100), (2**20, 1024, 1024),
    (10_007, 1024, 1024),  # a prime: no divisor of a useful size, a final short block instead
    (4000, 7, 5)])
def test_a_dividing_block_size_leaves_no_final_short_block(total_steps, most, expected):
    assert dividing_block_size(total_steps, most) == expected


def test_a_run_config_blocks_divide_its_steps_unless_told_otherwise():
    assert RunConfig(num_steps=10_000).block_size == 1000
    assert RunConfig(num_steps=3000, num_burnin=1500).block_size == 900
    assert RunConfig(num_steps=10_000, block_size=1024).block_size == 1024


def test_a_dividing_block_size_refuses_what_is_not_a_step_count():
    with pytest.raises(ValueError, match="total_steps must be an integer"):
        dividing_block_size(0)


def test_memory_of_the_compiled_run_does_not_grow_with_steps():
    sampler, target = samplers.get("sgld"), targets.get("icg", **ICG)
    positions = target.check_positions(target.initial_position(), 10)
    sizes = []
    for num_steps in (20 * 1024, 2000 * 1024):  # same remainder block
        config = RunConfig(num_chains=10, num_steps=num_steps, dtype="float32")
        analysis = CompiledGrid(sampler, target, [sampler.params(step_size=1e-3)], config, positions).memory_analysis()
        sizes.append((analysis.temp_size_in_bytes, analysis.output_size_in_bytes))
    assert sizes[0] == sizes[1]


def test_reference_and_optimized_drivers_agree_in_law():
    """Same sampler, different streams: per-dimension E[x^2] over independent chains must agree
    (two-sample t-test per dimension, Bonferroni over 4 dimensions, false-failure rate 1e-3)."""
    import scipy.stats

    kwargs = dict(params={"step_size": 0.3}, target_params=dict(dim=4, condition_number=10.0),
                  num_chains=24, num_steps=1500)
    a = running.run("sgld", "icg", backend="numpy", seed=1, **kwargs).moments.second_moment
    b = running.run("sgld", "icg", backend="jax", seed=2, **kwargs).moments.second_moment
    p = scipy.stats.ttest_ind(a, b, axis=0).pvalue
    assert np.all(p > 1e-3 / 4), p


@pytest.mark.parametrize("backend", ["jax", "numpy"])
def test_checkpoints_hold_the_running_moments_of_the_draws_so_far(backend):
    result = running.run("sgld", "icg", params={"step_size": 1e-2}, target_params=ICG, num_chains=2, num_steps=3000,
                         num_burnin=100, thin=2, backend=backend, num_checkpoints=6, block_size=256, keep_samples=True)
    checkpoints = result.trace.checkpoints
    np.testing.assert_array_equal(checkpoints.steps, RunConfig(num_steps=3000, num_burnin=100, thin=2, block_size=256,
                                                               num_checkpoints=6).checkpoint_steps)
    assert checkpoints.steps[-1] == 3100 and checkpoints.moments.mean_sq.shape == (2, len(checkpoints.steps), 10)
    for k, steps in enumerate(checkpoints.steps):
        kept = (steps - 100) // 2 if steps > 100 else 0
        np.testing.assert_array_equal(checkpoints.moments.count[:, k], kept)
        np.testing.assert_array_equal(checkpoints.grad_evals[:, k], steps)
        if kept:
            expected = (result.samples[:, :kept] ** 2).mean(axis=1)
            np.testing.assert_allclose(checkpoints.moments.mean_sq[:, k], expected, rtol=1e-10)


@pytest.mark.parametrize("backend", ["jax", "numpy"])
def test_sampler_without_draws_on_exact_gradients_runs(backend):
    """SMILE draws nothing and an exact-gradient target neither: the step scan has no inputs. From
    rest at the mode its chains never move, so the diagonal-fit KL is NaN, not an error."""
    result = running.run("smile", "icg", target_params=dict(dim=4, condition_number=4.0), params={"step_size": 0.2},
                         num_chains=2, num_steps=50, backend=backend)
    assert result.metrics["num_diverged_chains"] == 0
    assert np.isnan(result.metrics["kl_diagonal_truth_to_fit"])


def test_a_block_too_large_for_memory_is_refused_with_the_block_size_that_fits():
    """1000 chains x 1024 steps x (200 coordinates + 400 normals) = 6.1e8 numbers in one block: refused
    before anything is compiled or allocated, naming block_size and the largest that fits (2^28 / 6e5 = 447)."""
    import re

    with pytest.raises(ValueError, match=r"block_size must be an integer in \[1, 447\]") as error:
        running.run("sgld", "icg", params={"step_size": 1e-3}, num_chains=1000, num_steps=2048, block_size=1024,
                    target_params={"dim": 200, "noise": "isotropic"})
    assert re.search(r"block_size=1024 makes one block hold 6.14e\+08 numbers", str(error.value))


def test_the_default_block_shrinks_to_one_that_fits(monkeypatch):
    """Without a block_size, run takes the largest divisor of the steps that fits the limit (here lowered to 1e6:
    10 chains x 400 numbers a step fit 250 steps; of 1200 steps, blocks of 240), so that validate's many chains on
    a 31-d target run where the default block of 1024 steps would be refused (a run that fits keeps its block, and
    so its draws, which depend on the block size)."""
    from sgbench.bench.running import jax_driver

    monkeypatch.setattr(jax_driver, "BLOCK_NUMBERS_LIMIT", 10**6)
    options = dict(params={"step_size": 1e-3}, num_chains=10, num_steps=1200, target_params={"dim": 200})
    shrunk = running.run("sgld", "icg", **options)
    assert shrunk.config.block_size == 240
    with pytest.raises(ValueError, match=r"block_size must be an integer in \[1, 250\]"):
        running.run("sgld", "icg", block_size=600, **options)
    assert np.isfinite(shrunk.moments.mean).all()
    monkeypatch.undo()
    assert running.run("sgld", "icg", **options).config.block_size == 600


def test_run_names_an_argument_that_is_neither_a_name_nor_an_object():
    for args, word in ((("sgld", 42), "target"), ((42, "icg"), "sampler")):
        with pytest.raises(TypeError, match=f"{word} must be a registered name"):
            running.run(*args, params={"step_size": 0.1}, num_chains=2, num_steps=10)
