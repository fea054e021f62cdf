"""SGMCMCJax's Adam-preconditioned SGLD keeps its bias as the step shrinks: a direct measurement at small steps.

    python docs/reproductions/sgmcmcjax_adam_bias.py

runs the adapter ``sgbench.bench.adapters.sgmcmcjax:sgld_adam`` (the library's ``sgldAdam`` diffusion, unchanged) at
dt = 0.01 and at dt/32 on the conformance targets icg and gmm, 512 chains started at exact draws of the target, with
a warm-up and scored window of the same span of the dynamics at both steps (dt/32 runs 32 times the steps), and
prints the relative variance error r per coordinate against truth with its standard error over chains. A consistent
sampler's r shrinks towards 0 with the step; this one's does not (docs/defects_sgmcmcjax.md, 7). It is the second
method behind the conformance report's FAILED row, measured without the step ladder's fit. About 3 minutes on 2
cores.
"""

from __future__ import annotations

import jax
import numpy as np

from sgbench import targets
from sgbench.bench.adapters import load
from sgbench.bench.running import run as running
from sgbench.bench.validate import targets as validation_targets

CHAINS, STEPS, STEP = 512, 2000, 0.01


def relative_variance_error(target_key: str, step: float, seed: int = 0):
    """r per coordinate over the chains' scored window, and its standard error over the chains."""
    spec = validation_targets.get(target_key)
    target = targets.get(spec.target, **spec.params)
    scale = round(STEP / step)
    with jax.enable_x64(True):
        start = np.asarray(target.sample(jax.random.key(seed), CHAINS))
    result = running.run(load("sgbench.bench.adapters.sgmcmcjax:sgld_adam"), target, params={"step_size": step},
                         num_chains=CHAINS, num_steps=scale * STEPS, num_burnin=scale * STEPS, seed=seed + 1,
                         initial_position=start)
    truth = target.truth
    mu, var = np.asarray(truth.mean), np.diag(np.asarray(truth.covariance))
    m = result.moments
    r = (m.mean_sq - 2 * mu * m.mean + mu**2) / var - 1  # (chains, dim)
    return r.mean(axis=0), r.std(axis=0, ddof=1) / np.sqrt(CHAINS)


def main():
    for key in ("icg", "gmm"):
        for step in (STEP, STEP / 32):
            r, se = relative_variance_error(key, step)
            print(f"{key}, dt = {step:g}: r = {np.array2string(r, precision=3)} (se {np.max(se):.3f})", flush=True)


if __name__ == "__main__":
    main()
