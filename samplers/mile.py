r"""Microcanonical Langevin Ensembles (MILE; the MILE paper): MCLMC (eq. 3) with
Robnik et al.'s three tuning phases (section 2.2) as MILE changes them (section 3.2), each chain of
the ensemble tuning itself from its own deep-ensemble start (section 3.1). The step is
``sgbench.samplers.mclmc``'s with its online tuning (``sgbench.samplers._mclmc_tuning``); this module only sets
MILE's parameters and starting points:

- start: ``initial_positions`` fits a deep ensemble of ``num_chains`` members (``sgbench.samplers._deep_ensemble``)
  on data targets with a validation split (``bnn``), member :math:`k` starting chain :math:`k`;
- initial step size (section 3.2.1): the ensemble's learning rate (``step_size``, default 1e-3);
  the initial :math:`L` is Robnik's :math:`\sqrt d`;
- EEVPD (section 3.2.2): linear from 0.5 to 0.1 over phase I, ``desired_energy_variance=(0.5, 0.1)``;
- effective samples of the step-size predictor (section 3.2.3): :math:`\max(100,\ 0.1\,S/\text{thin})`;
- phase III bottleneck (section 3.2.4): at most 2000 coordinates and :math:`10^4` draws enter the FFT;
- budget (section 3.3): ``tuning_steps`` (40 000, 5000, 5000), then ``sampling_steps`` = 10 000
  sampling steps, ``thin`` = 10.

Two gradient evaluations per step (minimal-norm integrator), as in the paper, plus one at the start.
Where the authors' code differs from the paper, the paper is followed.

Derivation and notes: docs/derivations.md, section sgbench.samplers.mile.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from sgbench import samplers
from sgbench.base.arguments import integer_at_least, one_of
from sgbench.samplers._contract import hyperparameters, static_field
from sgbench.samplers._mclmc_tuning import check_tuning
from sgbench.samplers._microcanonical import INTEGRATORS
from sgbench.samplers.mclmc import State, draw_spec, init, optimized_step, prime, reference_step  # noqa: F401

MIN_EFFECTIVE_SAMPLES = 100  # MILE appendix "Optimization & sampling": the lower bound of the ESS target


@hyperparameters
class Params:
    """``step_size`` > 0, the initial step size (None: the deep ensemble's default learning rate);
    ``L`` the initial decoherence length in (0, inf] (None: :math:`\\sqrt d`); ``tuning_steps`` (n1,
    n2, n3) integers >= 0 (n2, n3 not 1); ``desired_energy_variance`` > 0 or a pair (start, end);
    ``sampling_steps`` >= 1 and ``thin`` in [1, sampling_steps], which set
    ``num_effective_samples`` = max(100, 0.1 sampling_steps / thin); ``trust_in_estimate`` > 0,
    ``l_factor`` > 0; ``integrator`` in ``INTEGRATORS``."""

    step_size: Any = None
    L: Any = None
    tuning_steps: tuple = static_field((40_000, 5000, 5000))
    desired_energy_variance: Any = (0.5, 0.1)
    sampling_steps: int = static_field(10_000)
    thin: int = static_field(10)
    trust_in_estimate: Any = 1.5
    l_factor: Any = 0.4
    integrator: str = static_field("minimal_norm")

    def __post_init__(self):
        one_of("integrator", self.integrator, INTEGRATORS)
        integer_at_least("sampling_steps", self.sampling_steps, 1)
        integer_at_least("thin", self.thin, 1)
        if self.thin > self.sampling_steps:
            raise ValueError(f"thin must be an integer in [1, sampling_steps={self.sampling_steps}], got {self.thin}")
        if self.step_size is None:
            from sgbench.samplers._deep_ensemble import LEARNING_RATE

            object.__setattr__(self, "step_size", LEARNING_RATE)
        check_tuning(self)

    @property
    def num_effective_samples(self) -> float:
        """MILE section 3.2.3: 10 % of the posterior samples, at least 100."""
        return max(float(MIN_EFFECTIVE_SAMPLES), 0.1 * self.sampling_steps / self.thin)


def initial_positions(target, num_chains: int, seed: int) -> np.ndarray:
    """(num_chains, dim) starts: MILE's deep ensemble (section 3.1) of ``num_chains`` members fitted
    with ``seed`` on a data target with a validation split, else the target's initial position.

    Args:
        target: the Target the chains run on.
        num_chains: the number of chains, an integer >= 1.
        seed: the deep ensemble's seed.

    Returns:
        float64 array of shape (num_chains, dim).

    Raises:
        ValueError: ``num_chains`` < 1, or a deep-ensemble argument outside its range.
    """
    num_chains = integer_at_least("num_chains", num_chains, 1)
    from sgbench.samplers._deep_ensemble import deep_ensemble, has_validation_split

    if has_validation_split(target):
        return deep_ensemble(target, num_chains, seed).positions
    return np.tile(np.asarray(target.initial_position(), dtype=np.float64), (num_chains, 1))


# A full-batch method (no linreg cell) whose tuner, fed noisy energies, shrinks the step to 0
# (samplers/mclmc.py): its gate cells and asv's quality runs get exact gradients. Equivalence: MILE's
# EEVPD (0.5 -> 0.1) tunes the icg to 0.85 (chaotic); a smaller one keeps 0.4-0.55. Timings: short tuning
# phases (the paper's are 40 000, 5000, 5000); on the bnn MILE's own initial step and L.
_TIMING_TUNING = (2000, 1000, 1000)
benchmarks = samplers.BenchmarkSettings(
    gate=samplers.GateSettings(
        icg4={"step_size": 0.1, "L": 1.0, "tuning_steps": (300, 200, 200), "desired_energy_variance": (5e-3, 5e-4)},
        exact_gradients=True,
    ),
    equivalence=(
        dict(step_size=0.1, L=1.0, tuning_steps=(300, 300, 300), desired_energy_variance=(5e-3, 5e-4)),
    ),
    speed={"step_size": 0.1, "L": 3.0, "tuning_steps": _TIMING_TUNING},
    asv={"linreg": {"step_size": 0.03, "L": 0.2, "tuning_steps": _TIMING_TUNING},
         "bnn": {"tuning_steps": _TIMING_TUNING}},
)

SAMPLER = samplers.register(samplers.Sampler.from_namespace(
    "mile", "MILE paper, sections 2.2, 3.1-3.3; Robnik et al. (2023) tuning", globals()))
