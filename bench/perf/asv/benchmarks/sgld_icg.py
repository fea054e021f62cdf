"""SGLD on the 10-d ill-conditioned Gaussian (icg) with isotropic gradient noise.

The workload of the speed figure, ``sgbench.bench.perf.speed_workload`` (10 chains, float32, SGLD's declared
speed step size 1e-2, seed 0; chains start at the mean; the icg rotation is seeded by its default
``rotation_seed=0``).

- ``TimeJaxDriver``: execution of the optimized JAX driver, compilation excluded (it compiles in
  ``setup``, runs once there, and the timed call is the second one).
- ``TimeNumpyDriver``: the NumPy reference driver on a short run (nothing to compile).
- ``TrackSGLDICG``: non-time quantities of one fixed-seed JAX run shared through ``setup_cache``:
  b^2 against the analytic truth, throughput, compile time.
- ``PeakMemJaxDriver``: peak memory of a whole ``bench.run`` at two run lengths; streaming moments
  keep it flat in the number of steps.
"""

from __future__ import annotations

from sgbench import samplers
from sgbench.bench.perf import speed_workload
from sgbench.bench.perf.speed_workload import JAX_DTYPE as DTYPE, NUM_CHAINS, SEED, TARGET, TARGET_PARAMS
from sgbench.bench.running import numpy_driver, run as running
from sgbench.bench.running.config import RunConfig
from sgbench.bench.running.jax_driver import CompiledGrid

SAMPLER = "sgld"


def _problem():
    return speed_workload.problem(SAMPLER)


def _compile_jax_run(num_steps: int):
    """The JAX driver's compiled program for one grid point, reusable."""
    sampler, target, params, positions = _problem()
    config = RunConfig(num_chains=NUM_CHAINS, num_steps=num_steps, seed=SEED, dtype=DTYPE)
    return CompiledGrid(sampler, target, [params], config, positions)


def _bench_run(num_steps: int, **kwargs):
    return running.run(SAMPLER, TARGET, params=samplers.benchmark_settings(SAMPLER).speed, num_chains=NUM_CHAINS,
                       num_steps=num_steps, seed=SEED, target_params=TARGET_PARAMS, **kwargs)


class TimeJaxDriver:
    """10 chains x ``num_steps`` steps of the optimized driver, float32, compile excluded."""

    params = (10_000, 100_000)
    param_names = ("num_steps",)
    number = 1
    repeat = (1, 5, 10.0)
    warmup_time = 0.0
    timeout = 180

    def setup(self, num_steps):
        self.run = _compile_jax_run(num_steps)
        self.run()

    def time_run(self, num_steps):
        self.run()


class TimeNumpyDriver:
    """10 chains x ``num_steps`` steps of the reference driver (float64, a Python loop)."""

    params = (1_000,)
    param_names = ("num_steps",)
    number = 1
    repeat = (1, 5, 10.0)
    warmup_time = 0.0
    timeout = 120

    def setup(self, num_steps):
        self.sampler, self.target, self.sampler_params, self.positions = _problem()
        self.config = RunConfig(num_chains=NUM_CHAINS, num_steps=num_steps, seed=SEED, backend="numpy")

    def time_run(self, num_steps):
        numpy_driver.run_chains(self.sampler, self.target, self.sampler_params, self.config, self.positions)


class TrackSGLDICG:
    """One fixed-seed run of 10 chains x 2e5 steps (float32, step size 1e-2) through ``bench.run``."""

    num_steps = 200_000
    timeout = 300

    def setup_cache(self):
        result = _bench_run(self.num_steps, dtype=DTYPE)
        return {
            "metrics": {k: float(v) for k, v in result.metrics.items()},
            "timings": {k: float(v) for k, v in result.timings.items()},
            "grad_evals": result.grad_evals,
        }

    setup_cache.timeout = 300

    def track_b2_mean_chain_average(self, cache):
        """b^2 averaged over dimensions, chain-averaged (appendix C of the SMILE paper)."""
        return cache["metrics"]["b2_mean_chain_average"]

    track_b2_mean_chain_average.unit = "b^2"

    def track_chain_steps_per_second(self, cache):
        """Throughput of the JAX driver, compile excluded."""
        return cache["timings"]["chain_steps_per_second"]

    track_chain_steps_per_second.unit = "chain-steps/s"

    def track_compile_seconds(self, cache):
        return cache["timings"]["compile_seconds"]

    track_compile_seconds.unit = "seconds"

    def track_num_diverged_chains(self, cache):
        return cache["metrics"]["num_diverged_chains"]

    track_num_diverged_chains.unit = "chains"

    def track_grad_evals_per_chain_step(self, cache):
        return cache["grad_evals"] / (NUM_CHAINS * self.num_steps)

    track_grad_evals_per_chain_step.unit = "gradients"


class PeakMemJaxDriver:
    """Peak RSS of a whole ``bench.run`` (compile, run, score) of 10 chains; flat in ``num_steps``."""

    params = (100_000, 1_000_000)
    param_names = ("num_steps",)
    timeout = 300

    def peakmem_run(self, num_steps):
        _bench_run(num_steps, dtype=DTYPE)
