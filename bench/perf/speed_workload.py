"""The speed figure's workload (issue 10): every sampler on the 10-d ill-conditioned Gaussian (icg) of SMILE
appendix C with isotropic gradient noise of variance 256, 10 chains started at the mean, seed 0; the JAX
driver in float32, the NumPy reference in float64 over 1/``NUMPY_STEPS_DIVISOR`` of the steps.

A sampler's hyperparameters are those its file declares (``BenchmarkSettings.speed``), on the icg as its
``wrapper`` adapts it; the gradient evaluations of a step are what the step itself reports
(:func:`gradient_evaluations`). Used by ``sgbench speed`` (``bench/perf/speed.py``) and the pytest-benchmark
files (``tests/benchmarks``); a registered sampler without settings fails both, naming what to declare.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from sgbench import samplers, targets
from sgbench.base.draws import jax_draws, numpy_draws
from sgbench.samplers._contract import GradientOracle

NUM_CHAINS = 10
SEED = 0
TARGET = "icg"
TARGET_PARAMS = {"dim": 10, "noise": "isotropic", "noise_variance": 256.0}
BACKENDS = ("jax", "numpy")
JAX_DTYPE = "float32"
NUMPY_STEPS_DIVISOR = 100


def problem(name: str, icg=None):
    """The workload of sampler ``name``.

    Args:
        name: a registered sampler.
        icg: the workload's icg (built here when None).

    Returns:
        ``(sampler, target, params, positions)``: the sampler, the icg as its ``wrapper`` adapts it, its
        validated ``speed`` hyperparameters and ``NUM_CHAINS`` starts at the mean.
    """
    settings = samplers.benchmark_settings(name)
    sampler = samplers.get(name)
    target = targets.adapted(targets.get(TARGET, **TARGET_PARAMS) if icg is None else icg, settings.wrapper)
    params = sampler.params_for(target, **settings.speed)
    return sampler, target, params, target.check_positions(target.initial_position(), NUM_CHAINS)


def gradient_evaluations(sampler, target, params, driver: str = "numpy", seed: int = SEED) -> tuple[int, int]:
    """The gradient evaluations of one chain at the target's initial position: those ``Sampler.start``
    makes (priming a cached log density and gradient), and those of one step (its ``Info.num_grad_evals``).

    Args:
        sampler: a registered sampler or an adapter (anything with ``start``, ``draw_spec`` and the steps).
        target: the target it runs on.
        params: its validated hyperparameters.
        driver: ``"numpy"`` (``reference_step`` on NumPy draws) or ``"jax"`` (``optimized_step``).
        seed: of the step's draws.

    Returns:
        ``(priming, per_step)``.
    """
    spec = {"sampler": sampler.draw_spec(target.dim, params), "gradient": target.draw_spec}
    if driver == "jax":
        draws = jax_draws(jax.random.key(seed), spec, (), "float64")
        position, step = jnp.asarray(target.initial_position()), sampler.optimized_step
    else:
        rng = np.random.default_rng(seed)
        draws = {"sampler": numpy_draws(rng, spec["sampler"]), "gradient": numpy_draws(rng, spec["gradient"])}
        position, step = np.asarray(target.initial_position()), sampler.reference_step
    priming = []
    state = sampler.start(position, params, GradientOracle.exact(target, lambda: priming.append(1)))
    _, info = step(state, GradientOracle(target, draws["gradient"]), draws["sampler"], params)
    return len(priming), int(info.num_grad_evals)
