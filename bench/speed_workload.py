"""The speed figure's workload (issue 10): every sampler on the 10-d ill-conditioned Gaussian (icg) of SMILE
appendix C with isotropic gradient noise of variance 256, 10 chains started at the mean, seed 0; the JAX
driver in float32, the NumPy reference in float64 over 1/``NUMPY_STEPS_DIVISOR`` of the steps.

``SETTINGS[name]``: the sampler's hyperparameters (``params``), the gradient evaluations one step makes
(``grads_per_step``; ``priming_evals`` more at the start for samplers that cache a gradient), and a
``target`` wrapper where the sampler needs one. Used by ``sgbench speed`` (``bench/speed.py``) and the
pytest-benchmark files (``tests/benchmarks``); a registered sampler without an entry fails both.
"""

from __future__ import annotations

import samplers
import targets
from samplers import px

NUM_CHAINS = 10
STEP_SIZE = 1e-2
SEED = 0
TARGET = "icg"
TARGET_PARAMS = {"dim": 10, "noise": "isotropic", "noise_variance": 256.0}
BACKENDS = ("jax", "numpy")
JAX_DTYPE = "float32"
NUMPY_STEPS_DIVISOR = 100
CYCLE_LENGTH = 10_000

# Hyperparameters of each sampler in the benchmark, and the gradient evaluations one step makes.
SETTINGS: dict[str, dict] = {
    "sgld": {"params": {"step_size": STEP_SIZE}, "grads_per_step": 1},
    "psgld": {"params": {"step_size": STEP_SIZE}, "grads_per_step": 1},
    "sgld_cv": {"params": {"step_size": STEP_SIZE}, "grads_per_step": 2},
    "csgld": {"params": {"step_size": STEP_SIZE, "schedule": {"kind": "cyclical", "cycle_length": CYCLE_LENGTH}},
              "grads_per_step": 1},
    "clipped_sgld": {"params": {"step_size": STEP_SIZE}, "grads_per_step": 1},
    "sglrw": {"params": {"step_size": STEP_SIZE}, "grads_per_step": 1},
    "sghmc": {"params": {"step_size": STEP_SIZE}, "grads_per_step": 1},
    "sghmc_cv": {"params": {"step_size": STEP_SIZE}, "grads_per_step": 2},
    "sghmc_sa": {"params": {"step_size": STEP_SIZE}, "grads_per_step": 1},
    # the Chen form's thermostat cannot balance this noise at h = 1e-2 (h^2 V > hT): practical form
    # PX samplers on the icg as one 1 x 10 layer (px.single_layer; 111 expanded coordinates): smaller steps,
    # since the expansion's preconditioning makes 1e-2 diverge (PX-SGLD at 1e-3 too, within 10^5 steps);
    # the BNN overhead figure is bench/px_overhead.py
    "px_sgld": {"params": {"step_size": 1e-4}, "grads_per_step": 1, "target": px.single_layer},
    "px_sghmc": {"params": {"step_size": 1e-3}, "grads_per_step": 1, "target": px.single_layer},
    "sgnht": {"params": {"step_size": STEP_SIZE, "form": "practical", "diffusion": 1.0}, "grads_per_step": 1},
    "sgnht_cv": {"params": {"step_size": STEP_SIZE, "form": "practical", "diffusion": 1.0}, "grads_per_step": 2},
    "mclmc": {"params": {"step_size": 0.1, "L": 3.0}, "grads_per_step": 2, "priming_evals": 1},
    "mile": {"params": {"step_size": 0.1, "L": 3.0, "tuning_steps": (2000, 1000, 1000)}, "grads_per_step": 2,
             "priming_evals": 1},
    "smile_naive": {"params": {"step_size": 0.03}, "grads_per_step": 3},
    "psmile_naive": {"params": {"step_size": 0.03}, "grads_per_step": 3},
    "smile": {"params": {"step_size": 0.1}, "grads_per_step": 3},
    "psmile": {"params": {"step_size": 0.1}, "grads_per_step": 3},
}


def problem(name: str, icg=None):
    """``(sampler, target, params, positions)`` of sampler ``name`` on the workload: the icg (``icg``, or built
    here), wrapped where ``SETTINGS`` says, the validated parameters and ``NUM_CHAINS`` starts at the mean."""
    if name not in SETTINGS:
        raise LookupError(f"sampler {name!r} has no speed settings: add it to SETTINGS in bench/speed_workload.py")
    sampler = samplers.get(name)
    icg = targets.get(TARGET, **TARGET_PARAMS) if icg is None else icg
    target = SETTINGS[name].get("target", lambda wrapped: wrapped)(icg)
    params = sampler.params_for(target, **SETTINGS[name]["params"])
    return sampler, target, params, target.check_positions(target.initial_position(), NUM_CHAINS)
