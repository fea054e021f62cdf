r"""The gate's cells: fixed (sampler, target, noise, hyperparameters, chains, steps) settings.

Every cell starts its chains at exact draws of the target, so its statistics carry no burn-in
bias, and reads each chain's time averages of :math:`x_i` and :math:`(x_i - \mu_i)^2`: chains are
independent replicates, so the checks' standard errors come from the spread over chains.

No cell sits at a setting where a factor of an update vanishes (issue 18: a gate is only as good
as the bugs it can see): the gradient-noise variance is 2, not 1; every sampler that has a
temperature runs at T = 0.5; frictions and diffusions are not 1 (SGHMC's practical friction 3,
SGNHT's diffusion 2, PX-SGHMC's expanded friction 5); cyclical SGLD has an exploration stage;
Welling & Teh's convention has its own cell; the clipped samplers have a cell where the clip binds
(``icg4`` with condition number 16 and gradient-noise variance 16: about a third of the drift
components are clipped); and every minibatch-capable sampler runs on ``linreg`` (8 of 40 points, so
N/B = 5).

``quick`` (the CI gate), 64 chains x 4000 steps per cell unless said otherwise:

- every registered sampler once on ``icg4`` (4-d ICG, condition number 4, rotated, isotropic
  gradient noise of variance 2; the PX samplers on it as one 1 x 4 layer,
  :func:`samplers.px.single_layer`; MILE, a full-batch method, with exact gradients), at steps
  where the slowest coordinate relaxes in 100 steps or less;
- variants: SGLD in Welling & Teh's convention, SGHMC in Chen's form with a noise estimate and a
  momentum refresh, Clipped-SGLD and SGLRW where the clip binds;
- every minibatch-capable sampler on ``linreg``;
- exact-law cells (``exact_law``): the linear samplers (SGLD in both conventions, SGLD-CV, pSGLD
  with a frozen preconditioner, SGHMC and SGHMC-CV in both forms and integrators) checked against
  the exact expected time average of their discrete law (``reference.linear_laws``), not a
  measured design bias, with 1024 chains, so a change of 0.04 in r is detected;
- reference cells (``backend="numpy"``): every sampler's NumPy reference step on its ``icg4``
  setting, 16 chains x 500 steps, checked against the same design bias as the JAX cell.

``full`` adds the ``icg4`` cells again at twice the step (where the design bias is larger; 1.5
times for SGNHT, which diverges at twice) and with exact gradients.
"""

from __future__ import annotations

import dataclasses
import functools

from samplers import px

NUM_CHAINS = 64
NUM_STEPS = 4000
EXACT_LAW_CHAINS = 1024
REFERENCE_CHAINS, REFERENCE_STEPS = 16, 500
TEMPERATURE = 0.5
ICG4 = {"dim": 4, "condition_number": 4.0, "rotation_seed": 0, "noise": "isotropic", "noise_variance": 2.0}
ICG4_EXACT = {"dim": 4, "condition_number": 4.0, "rotation_seed": 0, "noise": "none"}
ICG4_STIFF = {"dim": 4, "condition_number": 16.0, "rotation_seed": 0, "noise": "isotropic", "noise_variance": 16.0}
LINREG = {"num_data": 40, "dim": 2, "noise": "minibatch", "noise_batch_size": 8}
WRAPPERS = {"single_layer": px.single_layer}


@dataclasses.dataclass(frozen=True)
class Cell:
    """One gate setting. ``wrapper`` names a target adapter of ``WRAPPERS`` (the PX samplers need
    layer matrices); ``num_burnin`` steps (adaptation) are not averaged; ``heavy_tailed`` cells
    (chains that make rare huge excursions) are checked without the CLT (``bench.gate.truth``);
    ``label`` tells apart cells of one sampler, target and step; ``backend`` the driver ("numpy":
    the reference step); ``exact_law``: the design bias is the exact discrete law
    (``bench.gate.exact_law``), not a measured one."""

    sampler: str
    params: dict
    target: str = "icg"
    target_params: dict = dataclasses.field(default_factory=lambda: dict(ICG4))
    num_chains: int = NUM_CHAINS
    num_steps: int = NUM_STEPS
    num_burnin: int = 0
    wrapper: str | None = None
    heavy_tailed: bool = False
    label: str = ""
    backend: str = "jax"
    exact_law: bool = False

    @property
    def name(self) -> str:
        """A stable identifier: ``sampler@target-noise-hSTEP[-label][-numpy]``, used as the
        baseline's key (the step is omitted for a sampler whose step size has another name)."""
        noise = self.target_params.get("noise", "none")
        step = self.params.get("step_size")
        return (f"{self.sampler}@{self.target}{self.target_params.get('dim', '')}-{noise}"
                + ("" if step is None else f"-h{step:g}") + (f"-{self.label}" if self.label else "")
                + ("" if self.backend == "jax" else f"-{self.backend}"))

    @property
    def design_twin(self) -> Cell:
        """The cell whose stored design bias this one is checked against: itself, or for a
        reference (NumPy) cell the JAX cell of the same setting (same law, more chains)."""
        if self.backend == "jax":
            return self
        return dataclasses.replace(self, backend="jax", num_chains=NUM_CHAINS, num_steps=NUM_STEPS)

    def make_target(self):
        import targets

        target = targets.get(self.target, **self.target_params)
        return target if self.wrapper is None else WRAPPERS[self.wrapper](target)


_CYCLICAL = {"kind": "cyclical", "cycle_length": 100}
_T = {"temperature": TEMPERATURE}
# Hyperparameters per sampler on icg4 (largest precision 2): step sizes where the slowest
# coordinate (precision 1/2) relaxes within ~100 steps and no chain diverges.
_ICG_PARAMS = {
    "sgld": {"step_size": 0.02, **_T},
    "psgld": {"step_size": 0.02, **_T},
    "sgld_cv": {"step_size": 0.02, **_T},
    "csgld": {"step_size": 0.04, "schedule": _CYCLICAL, "exploration_fraction": 0.25, **_T},
    "clipped_sgld": {"step_size": 0.02, **_T},
    "sglrw": {"step_size": 0.02, **_T},
    "sghmc": {"step_size": 0.1, "form": "practical", "friction": 3.0, **_T},
    "sghmc_cv": {"step_size": 0.1, "form": "practical", "friction": 3.0, **_T},
    "sghmc_sa": {"step_size": 0.05, **_T},
    "sgnht": {"step_size": 0.1, "form": "practical", "diffusion": 2.0, **_T},
    "sgnht_cv": {"step_size": 0.1, "form": "practical", "diffusion": 2.0, **_T},
    "px_sgld": {"step_size": 0.005, **_T},
    "px_sghmc": {"step_size": 0.005, "friction": 50.0, "expanded_friction": 5.0, **_T},
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
# The full suite's larger step is twice the quick one, but practical SGNHT diverges there (1781 of
# 2048 chains at h = 0.2; none of 2048 at 0.15, 0.16, 0.175 or 0.185): 1.5 times.
_LARGE_STEP_SCALE = {"sgnht": 1.5}
# MCLMC's tuner is full-batch: fed noisy energies it shrinks the step to 0 (samplers/mclmc.py), so
# MILE's cell has exact gradients.
_EXACT_GRADIENTS = ("mile",)
# Variants where a setting the main cell does not exercise matters: (label, sampler, params, target).
_VARIANTS = (
    ("welling_teh", "sgld", {"step_size": 0.04, "convention": "welling_teh", **_T}, ICG4),
    ("chen_refresh", "sghmc", {"step_size": 0.01, "form": "chen", "friction": 0.2, "noise_estimate": 2.0,
                               "refresh_every": 3, **_T}, ICG4),
    ("stiff", "clipped_sgld", {"step_size": 0.05, **_T}, ICG4_STIFF),
    ("stiff", "sglrw", {"step_size": 0.05, **_T}, ICG4_STIFF),
)
# On linreg these have heavy-tailed chains too: the design runs' excess kurtosis of a per-chain
# statistic is 3800 (psgld), 110 (smile), 51 (psmile), 18 (px_sghmc), 11 (sghmc_sa) against at
# most 3 for every other linreg cell.
HEAVY_TAILED_LINREG = ("psgld", "smile", "psmile", "px_sghmc", "sghmc_sa")
# Every minibatch-capable sampler on linreg (N/B = 5); MCLMC and MILE are full-batch methods.
_LINREG_PARAMS = {
    "sgld": {"step_size": 1e-3, **_T},
    "psgld": {"step_size": 1e-3, **_T},
    "sgld_cv": {"step_size": 1e-3, **_T},
    "csgld": {"step_size": 2e-3, "schedule": _CYCLICAL, "exploration_fraction": 0.25, **_T},
    "clipped_sgld": {"step_size": 1e-3, **_T},
    "sglrw": {"step_size": 1e-3, **_T},
    "sghmc": {"step_size": 5e-3, "form": "practical", "friction": 3.0, **_T},
    "sghmc_cv": {"step_size": 5e-3, "form": "practical", "friction": 3.0, **_T},
    "sghmc_sa": {"step_size": 5e-3, **_T},
    "sgnht": {"step_size": 5e-3, "form": "practical", "diffusion": 2.0, **_T},
    "sgnht_cv": {"step_size": 5e-3, "form": "practical", "diffusion": 2.0, **_T},
    "px_sgld": {"step_size": 2e-4, **_T},
    "px_sghmc": {"step_size": 2e-4, "friction": 50.0, "expanded_friction": 5.0, **_T},
    "smile_naive": {"step_size": 0.02},
    "psmile_naive": {"step_size": 0.02},
    "smile": {"step_size": 0.02},
    "psmile": {"step_size": 0.02},
}
# The linear samplers, checked against their exact discrete law (label "exact").
_EXACT_LAW_PARAMS = (
    ("sgld", {"step_size": 0.02, **_T}),
    ("sgld", {"step_size": 0.04, "convention": "welling_teh", **_T}),
    ("sgld_cv", {"step_size": 0.02, **_T}),
    ("psgld", {"step_size": 0.02, "smoothing": 1.0, "initial_square_average": 4.0, **_T}),
    ("sghmc", {"step_size": 0.1, "form": "practical", "friction": 3.0, **_T}),
    # noise estimate 8 (h beta = 0.08 against 2 alpha T = 0.2): ignoring it moves r by 0.06, and a
    # refresh every 4 steps instead of 3 by 0.09, against the 0.04 these cells detect
    ("sghmc", {"step_size": 0.01, "form": "chen", "friction": 0.2, "noise_estimate": 8.0, "refresh_every": 3,
               **_T}),
    ("sghmc", {"step_size": 0.2, "form": "practical", "friction": 3.0, "integrator": "splitting", **_T}),
    ("sghmc_cv", {"step_size": 0.1, "form": "practical", "friction": 3.0, **_T}),
)


def _icg_cell(sampler: str, scale: float = 1.0, target_params=ICG4) -> Cell:
    target_params = ICG4_EXACT if sampler in _EXACT_GRADIENTS else target_params
    params = dict(_ICG_PARAMS[sampler])
    params["step_size"] = round(params["step_size"] * scale, 12)
    wrapper = "single_layer" if sampler.startswith("px_") else None
    return Cell(sampler, params, target_params=dict(target_params), num_burnin=_BURNIN.get(sampler, 0),
                wrapper=wrapper, heavy_tailed=sampler in HEAVY_TAILED
                or (target_params.get("noise") == "none" and sampler in HEAVY_TAILED_EXACT))


def _exact_law_cell(sampler: str, params: dict) -> Cell:
    parts = [str(params[k]) for k in ("convention", "form", "integrator") if k in params]
    label = "-".join(["exact", *parts] + (["frozen"] if "smoothing" in params else []))
    return Cell(sampler, dict(params), target_params=dict(ICG4), num_chains=EXACT_LAW_CHAINS, label=label,
                exact_law=True)


def _unrecorded_steps(sampler: str, params: dict) -> int:
    """Steps a run of ``sampler`` spends before its first sample (MILE's tuning phases,
    scale-adapted SGHMC's burn-in), from ``params`` and the defaults of its ``Params``."""
    import samplers

    values = {f.name: f.default for f in dataclasses.fields(samplers.get(sampler).Params)} | params
    return int(sum(values.get("tuning_steps") or ())) + int(values.get("burn_in_steps") or 0)


def _reference_cell(cell: Cell) -> Cell:
    return dataclasses.replace(cell, backend="numpy", num_chains=REFERENCE_CHAINS,
                               num_steps=REFERENCE_STEPS + _unrecorded_steps(cell.sampler, cell.params),
                               num_burnin=min(cell.num_burnin, REFERENCE_STEPS // 2))


@functools.cache
def suite(name: str) -> tuple[Cell, ...]:
    """The cells of suite ``name`` (``quick`` or ``full``)."""
    import samplers

    if name not in SUITES:
        raise ValueError(f"unknown gate suite {name!r}; known suites: {', '.join(SUITES)}")
    missing = sorted(set(samplers.names()) - set(_ICG_PARAMS))
    if missing:
        raise ValueError(f"registered samplers without gate settings in bench/gate/cells.py: {', '.join(missing)}")
    icg = [_icg_cell(s) for s in sorted(_ICG_PARAMS)]
    cells = list(icg)
    cells += [Cell(s, dict(p), target_params=dict(t), label=label) for label, s, p, t in _VARIANTS]
    cells += [Cell(s, dict(p), target="linreg", target_params=dict(LINREG), heavy_tailed=s in HEAVY_TAILED_LINREG,
                   wrapper="single_layer" if s.startswith("px_") else None)
              for s, p in _LINREG_PARAMS.items()]
    cells += [_exact_law_cell(s, p) for s, p in _EXACT_LAW_PARAMS]
    cells += [_reference_cell(c) for c in icg]
    if name == "full":
        cells += [_icg_cell(s, _LARGE_STEP_SCALE.get(s, 2.0)) for s in sorted(_ICG_PARAMS)]
        cells += [_icg_cell(s, 1.0, ICG4_EXACT) for s in sorted(_ICG_PARAMS) if s not in _EXACT_GRADIENTS]
    return tuple(cells)


SUITES = ("quick", "full")
