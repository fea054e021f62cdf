r"""SMILE-naive (section 3.1, eq. 3 of the SMILE paper).

The deterministic microcanonical dynamics driven by the stochastic gradient, with no explicit
noise and a fixed step size.
Equations, defaults, the choices where the paper is silent and the cost (three gradient
evaluations per step) are in ``sgbench.samplers._stochastic_microcanonical``.
"""

from __future__ import annotations

from sgbench import samplers
from sgbench.samplers._stochastic_microcanonical import (  # noqa: F401  (parts of SAMPLER)
    NaiveParams as Params,
    State,
    draw_spec,
    init,
    optimized_step,
    reference_step,
)

# Equivalence: without refreshment and noise the microcanonical flow is chaotic (rounding differences grow
# past 1e-10 within 1000 steps at larger steps); these settings keep the noise-free paths comparable.
benchmarks = samplers.BenchmarkSettings(
    gate=samplers.GateSettings(icg4={"step_size": 0.2}, linreg={"step_size": 0.02},
                               posteriors={"mesquite": {"step_size": 0.0288}, "gauss_mix": {"step_size": 0.00828}}),
    equivalence=(
        dict(step_size=0.1),
        dict(step_size=0.2, integrator="leapfrog"),
    ),
    speed={"step_size": 0.03},
    asv={"linreg": {"step_size": 0.01}, "bnn": {"step_size": 1e-3}},
)

SAMPLER = samplers.register(samplers.Sampler.from_namespace(
    "smile_naive", "SMILE paper (2025), sec. 3.1, eq. 3; appendix F.2", globals()))
