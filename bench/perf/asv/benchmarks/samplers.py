"""Speed and memory of every registered sampler (``samplers.names()``) and of the other libraries'
implementations that claim one, across dimensions, numbers of chains and two targets.

Parameters ``(sampler, backend, dim, chains, target)``: ``backend`` in ``jax`` (the optimized
implementation, JAX driver, float32), ``numpy`` (the reference implementation, NumPy driver,
float64), ``blackjax``, ``posteriors``, ``posteriors_baoa`` (adapters, ``bench/adapters``); ``dim`` in
10, 1000, 10^5; ``chains`` in 1, 10, 1000; ``target`` ``icg`` or ``bnn``. Targets, hyperparameters
(``_workloads.asv_params``: each sampler's speed settings or its own asv entry), the run-length rule and the
memory rule are in ``_workloads.py``. Chains start at the target's initial position, seed 0. Compilation is
excluded from every time (``setup`` compiles and runs once).

- ``TimeStep.time_step``: one step of every chain. JAX-driver implementations: one call of a
  compiled ``jax.vmap`` over chains of ``optimized_step`` from the chains' initial states with one
  step's random numbers drawn in ``setup`` (so the time is the step's arithmetic, without the
  driver's random-number generation, moments and per-call bookkeeping; a 1-step driver call would
  time mostly those). NumPy-driver implementations: ``chains`` calls of ``reference_step`` (the
  reference driver's loop runs one chain at a time), each from the chains' common initial state
  with one prepared draw. At small sizes (1 chain, d = 10) the JAX figure is mostly the call's
  dispatch overhead; ``TimeRun`` gives the cost amortised in the driver's loop. An adapter's step
  is its library's step: blackjax's SGHMC makes 10 integration steps (10 gradients) in one.
- ``TimeRun.time_run``: one whole run of the driver: ``chains`` x ``_workloads.run_steps(...)`` steps
  (JAX: ``CompiledGrid``, its block size lowered by ``_workloads.block_size``; NumPy:
  ``numpy_driver.run_chains``). Divide by chains x steps for the time per chain-step.
- ``PeakMemRun``: peak RSS of a process that makes one whole ``bench.run`` (compile, run, score) of
  10 chains on the 10-d icg for 10^3 to 10^6 steps (``peakmem_run``), beside the same process
  without the run (``peakmem_setup``): streaming moments keep it flat in the number of steps.

Skipped (NotImplementedError in ``setup``, reported by asv as skipped with the reason): a backend
without an implementation of the sampler; the bnn at d = 10 (no digits network is that small);
combinations whose estimated memory exceeds 4 GiB (``_workloads.check_memory``: e.g. a whole JAX
run of 1000 chains x 10^5 coordinates, whose float64 running moments alone take 6 GB, and the PX
samplers on the icg at d = 10^5, whose expanded layer is a 10^5 x 10^5 matrix). A registered
sampler without benchmark settings makes its benchmarks fail (an error naming it and what to declare).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from sgbench import samplers
from sgbench.base.draws import jax_draws, numpy_draws
from sgbench.bench.running import numpy_driver, run as running
from sgbench.bench.running.config import RunConfig
from sgbench.bench.running.jax_driver import CompiledGrid
from sgbench.samplers._contract import GradientOracle

from . import _workloads as workloads

TIMING_PARAMS = (samplers.names(), workloads.BACKENDS, workloads.DIMS, workloads.CHAINS, workloads.TIMING_TARGETS)
TIMING_PARAM_NAMES = ("sampler", "backend", "dim", "chains", "target")


def _workload(name: str, backend: str, dim: int, target_kind: str):
    """``(implementation, target, params)`` of one timing combination; NotImplementedError to skip."""
    implementation = workloads.implementation(name, backend)
    target = workloads.for_sampler(implementation, workloads.timing_target(target_kind, dim))
    return implementation, target, implementation.params(target_kind, target, timing=True)


def _compiled_step(implementation, target, params, chains: int):
    """A call of one compiled step of every chain (JAX), from their initial states and fixed draws."""
    workloads.check_memory(*workloads.step_memory(implementation, target, params, chains))
    sampler, dtype = implementation.sampler, jnp.dtype(implementation.dtype)
    leaves = jax.tree.map(lambda v: jnp.asarray(v, dtype=dtype), params)
    positions = jnp.broadcast_to(jnp.asarray(target.initial_position(), dtype=dtype), (chains, target.dim))
    start = jax.vmap(lambda p, x: sampler.start(x, p, GradientOracle.exact(target)), in_axes=(None, 0))
    states = jax.jit(start)(leaves, positions)
    spec = {"sampler": sampler.draw_spec(target.dim, params), "gradient": target.draw_spec}
    draws = jax_draws(jax.random.key(workloads.SEED), spec, (chains,), dtype)

    def step(p, state, draw):
        return sampler.optimized_step(state, GradientOracle(target, draw["gradient"]), draw["sampler"], p)

    compiled = jax.jit(jax.vmap(step, in_axes=(None, 0, 0))).lower(leaves, states, draws).compile()
    return lambda: jax.block_until_ready(compiled(leaves, states, draws))


def _reference_steps(implementation, target, params, chains: int):
    """A call of ``reference_step`` once per chain (NumPy), from the chains' common initial state."""
    workloads.check_memory(*workloads.step_memory(implementation, target, params, chains))
    sampler = implementation.sampler
    state = sampler.start(np.array(target.initial_position(), dtype=np.float64), params, GradientOracle.exact(target))
    rng = np.random.default_rng(workloads.SEED)
    draws = numpy_draws(rng, sampler.draw_spec(target.dim, params))
    oracle = GradientOracle(target, numpy_draws(rng, target.draw_spec))

    def step_of_one_chain():
        with np.errstate(over="ignore", invalid="ignore"):
            sampler.reference_step(state, oracle, draws, params)

    def step_of_every_chain():
        for _ in range(chains):
            step_of_one_chain()

    step_of_one_chain()  # first-call costs (lazy imports, torch's set-up) stay out of the timings
    return step_of_every_chain


def _whole_run(implementation, target, params, chains: int):
    """A call of one whole run of the driver (JAX: compiled here), ``run_steps`` steps long."""
    workloads.check_memory(*workloads.run_memory(implementation, target, params, chains))
    sampler = implementation.sampler
    steps = workloads.run_steps(implementation.driver, chains, target.dim)
    positions = np.broadcast_to(target.initial_position(), (chains, target.dim))
    if implementation.driver == "numpy":
        config = RunConfig(num_chains=chains, num_steps=steps, seed=workloads.SEED, backend="numpy")
        return lambda: numpy_driver.run_chains(sampler, target, params, config, positions)
    config = RunConfig(num_chains=chains, num_steps=steps, seed=workloads.SEED, dtype=implementation.dtype,
                             block_size=workloads.run_block_size(implementation, target, params, chains))
    program = CompiledGrid(sampler, target, [params], config, positions)
    program()
    return program


class TimeStep:
    """One step of every chain, compile excluded (see the module docstring)."""

    params = TIMING_PARAMS
    param_names = TIMING_PARAM_NAMES
    rounds = 1  # one process per combination: its setup (compilation) costs more than the timings
    repeat = (1, 5, 10.0)
    warmup_time = 0.0
    timeout = 600

    def setup(self, name, backend, dim, chains, target_kind):
        implementation, target, params = _workload(name, backend, dim, target_kind)
        if implementation.driver == "jax":
            self.step = _compiled_step(implementation, target, params, chains)
            self.step()  # compiled already; the first call allocates
        else:
            self.step = _reference_steps(implementation, target, params, chains)

    def time_step(self, name, backend, dim, chains, target_kind):
        self.step()


class TimeRun:
    """A whole run of ``chains`` x ``_workloads.run_steps(driver, chains, dim)`` steps, compile excluded."""

    params = TIMING_PARAMS
    param_names = TIMING_PARAM_NAMES
    rounds = 1
    number = 1
    repeat = (1, 5, 10.0)
    warmup_time = 0.0
    timeout = 600

    def setup(self, name, backend, dim, chains, target_kind):
        implementation, target, params = _workload(name, backend, dim, target_kind)
        self.run = _whole_run(implementation, target, params, chains)

    def time_run(self, name, backend, dim, chains, target_kind):
        self.run()


PEAKMEM_SAMPLERS = ("sgld", "sghmc", "mclmc", "psmile", "px_sghmc")  # one of each family
PEAKMEM_STEPS = {"jax": (10**4, 10**5, 10**6), "numpy": (10**3, 10**4)}
PEAKMEM_CHAINS = 10
PEAKMEM_DIM = 10


class PeakMemRun:
    """Peak RSS of a whole ``bench.run`` (compile, run, score) of 10 chains on the 10-d icg; flat in
    ``num_steps`` (JAX 10^4 to 10^6 steps, NumPy 10^3 and 10^4; other lengths are skipped)."""

    params = (PEAKMEM_SAMPLERS, ("jax", "numpy"), sorted({n for steps in PEAKMEM_STEPS.values() for n in steps}))
    param_names = ("sampler", "backend", "num_steps")
    timeout = 300

    def setup(self, name, backend, num_steps):
        if num_steps not in PEAKMEM_STEPS[backend]:
            raise NotImplementedError(f"the {backend} driver's peak memory is measured at {PEAKMEM_STEPS[backend]} "
                                      "steps (PEAKMEM_STEPS: the NumPy driver's loop makes longer runs take minutes)")
        self.implementation, target, self.sampler_params = _workload(name, backend, PEAKMEM_DIM, "icg")
        self.target = target

    def peakmem_setup(self, name, backend, num_steps):
        pass

    def peakmem_run(self, name, backend, num_steps):
        running.run(self.implementation.sampler, self.target, params=self.sampler_params, num_chains=PEAKMEM_CHAINS,
                    num_steps=num_steps, seed=workloads.SEED, backend=self.implementation.driver,
                    dtype=self.implementation.dtype)
