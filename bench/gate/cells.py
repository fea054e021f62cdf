r"""The gate's cells: fixed (sampler, target, noise, hyperparameters, chains, steps) settings.

Every cell starts its chains at exact draws of the target, so its statistics carry no burn-in
bias, and reads each chain's time averages of :math:`x_i` and :math:`(x_i - \mu_i)^2`: chains are
independent replicates, so the checks' standard errors come from the spread over chains.

``quick`` (the CI gate): every registered sampler once on ``icg4`` (4-d ICG, condition number 4,
rotated, isotropic gradient noise of variance 1; the PX samplers on it as one 1 x 4 layer,
:func:`samplers.px.single_layer`; MILE, a full-batch method, with exact
gradients), and SGLD, SGHMC and SGLD-CV on ``linreg`` with minibatch noise
(8 of 40 points), where a missing N/B factor shows. 64 chains x 4000 steps each, steps where the
slowest coordinate relaxes in 100 steps or less. ``full`` adds the Gaussian cells again at twice
the step (where the design bias is larger) and the exact-gradient icg.
"""

from __future__ import annotations

import dataclasses
import functools

from samplers import px

NUM_CHAINS = 64
NUM_STEPS = 4000
ICG4 = {"dim": 4, "condition_number": 4.0, "rotation_seed": 0, "noise": "isotropic", "noise_variance": 1.0}
ICG4_EXACT = {"dim": 4, "condition_number": 4.0, "rotation_seed": 0, "noise": "none"}
LINREG = {"num_data": 40, "dim": 2, "noise": "minibatch", "noise_batch_size": 8}
WRAPPERS = {"single_layer": px.single_layer}


@dataclasses.dataclass(frozen=True)
class Cell:
    """One gate setting. ``wrapper`` names a target adapter of ``WRAPPERS`` (the PX samplers need
    layer matrices); ``num_burnin`` steps (adaptation) are not averaged; ``heavy_tailed`` cells
    (chains that make rare huge excursions) are checked without the CLT (``bench.gate.truth``)."""

    sampler: str
    params: dict
    target: str = "icg"
    target_params: dict = dataclasses.field(default_factory=lambda: dict(ICG4))
    num_chains: int = NUM_CHAINS
    num_steps: int = NUM_STEPS
    num_burnin: int = 0
    wrapper: str | None = None
    heavy_tailed: bool = False

    @property
    def name(self) -> str:
        """A stable identifier: ``sampler@target-noise-hSTEP``, used as the baseline's key (the step
        is omitted for a sampler whose step size has another name)."""
        noise = self.target_params.get("noise", "none")
        step = self.params.get("step_size")
        return (f"{self.sampler}@{self.target}{self.target_params.get('dim', '')}-{noise}"
                + ("" if step is None else f"-h{step:g}"))

    def make_target(self):
        import targets

        target = targets.get(self.target, **self.target_params)
        return target if self.wrapper is None else WRAPPERS[self.wrapper](target)


_CYCLICAL = {"kind": "cyclical", "cycle_length": 100}
# Hyperparameters per sampler on icg4 (largest precision 2): step sizes where the slowest
# coordinate (precision 1/2) relaxes within ~100 steps and no chain diverges.
_ICG_PARAMS = {
    "sgld": {"step_size": 0.02},
    "psgld": {"step_size": 0.02},
    "sgld_cv": {"step_size": 0.02},
    "csgld": {"step_size": 0.04, "schedule": _CYCLICAL},
    "clipped_sgld": {"step_size": 0.02},
    "sglrw": {"step_size": 0.02},
    "sghmc": {"step_size": 0.1, "form": "practical", "friction": 1.0},
    "sghmc_cv": {"step_size": 0.1, "form": "practical", "friction": 1.0},
    "sghmc_sa": {"step_size": 0.05},
    "sgnht": {"step_size": 0.1, "form": "practical", "diffusion": 1.0},
    "sgnht_cv": {"step_size": 0.1, "form": "practical", "diffusion": 1.0},
    "px_sgld": {"step_size": 0.005},
    "px_sghmc": {"step_size": 0.005},
    "mclmc": {"step_size": 0.3, "L": 2.0},
    "mile": {"step_size": 0.1, "L": 1.0, "tuning_steps": (300, 200, 200), "desired_energy_variance": (5e-3, 5e-4)},
    "smile_naive": {"step_size": 0.2},
    "psmile_naive": {"step_size": 0.2},
    "smile": {"step_size": 0.2},
    "psmile": {"step_size": 0.2},
}
_BURNIN = {"sghmc_sa": 500}  # its burn-in adapts the preconditioner and friction
# Adaptive pSGLD's chains are heavy-tailed: when a chain's RMSprop average of g^2 is small its
# preconditioner is large and the chain makes a huge excursion (over 4096 chains at h = 0.02, the
# excess kurtosis of the per-chain variance error is about 360 in one coordinate).
HEAVY_TAILED = ("psgld",)
# With exact gradients (the full suite) these are heavy-tailed too: the design runs' excess
# kurtosis of a per-chain statistic is 145 (smile), 10.7 (sghmc_sa), 7.8 (psmile), 6.9
# (psmile_naive) against at most 2.5 for every other cell but pSGLD's.
HEAVY_TAILED_EXACT = ("smile", "sghmc_sa", "psmile", "psmile_naive")
# MCLMC's tuner is full-batch: fed noisy energies it shrinks the step to 0 (samplers/mclmc.py), so
# MILE's cell has exact gradients.
_EXACT_GRADIENTS = ("mile",)
_LINREG_PARAMS = {"sgld": {"step_size": 1e-3}, "sghmc": {"step_size": 5e-3, "form": "practical", "friction": 1.0},
                  "sgld_cv": {"step_size": 1e-3}}


def _icg_cell(sampler: str, scale: float = 1.0, target_params=ICG4) -> Cell:
    target_params = ICG4_EXACT if sampler in _EXACT_GRADIENTS else target_params
    params = dict(_ICG_PARAMS[sampler])
    params["step_size"] *= scale
    wrapper = "single_layer" if sampler.startswith("px_") else None
    return Cell(sampler, params, target_params=dict(target_params), num_burnin=_BURNIN.get(sampler, 0),
                wrapper=wrapper, heavy_tailed=sampler in HEAVY_TAILED
                or (target_params.get("noise") == "none" and sampler in HEAVY_TAILED_EXACT))


@functools.cache
def suite(name: str) -> tuple[Cell, ...]:
    """The cells of suite ``name`` (``quick`` or ``full``)."""
    import samplers

    if name not in SUITES:
        raise ValueError(f"unknown gate suite {name!r}; known suites: {', '.join(SUITES)}")
    missing = sorted(set(samplers.names()) - set(_ICG_PARAMS))
    if missing:
        raise ValueError(f"registered samplers without gate settings in bench/gate/cells.py: {', '.join(missing)}")
    cells = [_icg_cell(s) for s in sorted(_ICG_PARAMS)]
    cells += [Cell(s, p, target="linreg", target_params=dict(LINREG)) for s, p in _LINREG_PARAMS.items()]
    if name == "full":
        cells += [_icg_cell(s, 2.0) for s in sorted(_ICG_PARAMS)]
        cells += [_icg_cell(s, 1.0, ICG4_EXACT) for s in sorted(_ICG_PARAMS) if s not in _EXACT_GRADIENTS]
    return tuple(cells)


SUITES = ("quick", "full")
