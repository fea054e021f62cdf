r"""The gate's cells: fixed (sampler, target, noise, hyperparameters, chains, steps) settings.

Every cell starts its chains away from the target, at :math:`\mu + 2(x - \mu)` with :math:`x` an exact draw
(``sgbench.bench.gate.start``), so that a chain that never moves cannot look perfect, and reads each chain's time
averages of :math:`x_i` and :math:`(x_i - \mu_i)^2` over its scored steps: chains are independent
replicates. No cell sits at a setting where a factor of an update vanishes (gradient-noise variance 2,
T = 0.5, frictions and diffusions not 1). ``quick`` (the CI gate), 64 chains x 4000 scored steps per cell
after a warm-up of ``WARMUP`` = 4000 steps (or the longer ``num_burnin`` a sampler's settings declare)
unless said otherwise:

- every registered sampler once on ``icg4`` (MILE with exact gradients);
- variants: SGLD in Welling & Teh's convention, SGHMC in Chen's form with a noise estimate and a
  momentum refresh, Clipped-SGLD and SGLRW where the clip binds;
- every minibatch-capable sampler on ``linreg``;
- exact-law cells (``exact_law``), 1024 chains and no warm-up, checked against the law their sampler declares
  (``sgbench.bench.gate.exact_law``) from their own start (the transient is part of the law);
- reference cells (``backend="numpy"``), 64 chains x 500 scored steps, checked against the JAX cell of
  identical settings (their design twin: the same law, start and warm-up, measured on many chains).

The measured cells (the first three groups, and ``full``'s) must forget their start within the warm-up
(``Cell.must_forget``): their stored design bias is the method's bias at stationarity. The exact-law and
reference cells are compared with a law that has the same start and warm-up, so only "the chains move"
is asked of them.

``full`` adds every minibatch-capable sampler on two posteriordb posteriors with minibatches (``EXTERNAL_TARGETS``:
the log-log mesquite regression, 8 of 46 data a step, and the two-component mixture, 50 of 1000; their truth is
posteriordb's reference draws, with its standard errors; a warm-up of ``EXTERNAL_WARMUP`` = 8000 steps, or the
longer ``posteriors_burnin`` a sampler declares), and the ``icg4`` cells again at a larger step and with exact
gradients. Each sampler's file
declares its cells (``sgbench.samplers._benchmarks.GateSettings``) and the target wrapper it needs; this module
holds what every cell shares: the targets, the temperature, the start, the chains and steps. Each group of
a suite lists the samplers in the order of ``samplers.names()``.

Why each setting, and the cells in full: docs/gates_derivations.md, section sgbench.bench.gate.cells.
"""

from __future__ import annotations

import dataclasses

from sgbench.bench.gate.start import START_SCALE, thin_for

NUM_CHAINS = 64
NUM_STEPS = 4000
WARMUP = 4000
EXTERNAL_WARMUP = 8000  # the external cells: design autocorrelation times up to 1655 steps (pSGLD, mesquite)
EXACT_LAW_CHAINS = 1024
REFERENCE_CHAINS, REFERENCE_STEPS = 64, 500
TEMPERATURE = 0.5
ICG4 = {"dim": 4, "condition_number": 4.0, "rotation_seed": 0, "noise": "isotropic", "noise_variance": 2.0}
ICG4_EXACT = {"dim": 4, "condition_number": 4.0, "rotation_seed": 0, "noise": "none"}
ICG4_STIFF = {"dim": 4, "condition_number": 16.0, "rotation_seed": 0, "noise": "isotropic", "noise_variance": 16.0}
LINREG = {"num_data": 40, "dim": 2, "noise": "minibatch", "noise_batch_size": 8}
EXTERNAL_TARGETS = {  # key: (posteriordb target parameters, the largest eigenvalue of -Hessian at the mean)
    "mesquite": ({"posterior": "mesquite-logmesquite", "noise": "minibatch", "noise_batch_size": 8}, 929.0),
    "gauss_mix": ({"posterior": "low_dim_gauss_mix-low_dim_gauss_mix", "noise": "minibatch", "noise_batch_size": 50},
                  1.12e4),
}
TARGET_PRESETS = {"icg4": ICG4, "icg4_stiff": ICG4_STIFF}  # by the names of sgbench.samplers._benchmarks.GATE_TARGETS


@dataclasses.dataclass(frozen=True)
class Cell:
    """One gate setting. ``wrapper`` names a target adapter of
    ``targets.ADAPTERS`` (the PX samplers need layer matrices); ``num_burnin``
    steps (adaptation) are not averaged; ``heavy_tailed`` cells (chains that make rare huge
    excursions) are checked without the CLT (``sgbench.bench.gate.truth``); ``label`` tells apart cells of
    one sampler, target and step; ``backend`` the driver ("numpy": the reference step);
    ``exact_law``: the design bias is the exact discrete law (``sgbench.bench.gate.exact_law``), not a
    measured one; ``start_scale`` k: chains start at mu + k (x - mu), x a draw of the target (1: exact
    draws; the gate and ``sgbench validate`` start at ``START_SCALE``, ``sgbench.bench.gate.start``); ``stationary``:
    False for a sampler whose step adapts through the run (``GateSettings.stationary``); ``thin``: every
    ``thin``-th scored step enters the chains' time averages (1 in the gate; ``sgbench validate`` reads about
    100 per chain)."""

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
    start_scale: float = START_SCALE
    stationary: bool = True
    thin: int = 1

    @property
    def keep_every(self) -> int:
        """Scored steps between the draws kept for ``sgbench.bench.gate.start.travel`` (about 100 per chain)."""
        return thin_for(self.num_steps)

    @property
    def must_forget(self) -> bool:
        """Whether the chains must forget their start before they are scored: a cell checked against a
        stationary design bias (a measured cell of a ``stationary`` sampler), not against a law from the
        same start and warm-up (an exact-law cell, a reference cell and its JAX design twin, or the cell of a
        sampler whose step adapts through the run)."""
        return (self.stationary and not self.exact_law and self.backend == "jax"
                and self.label.split("-")[0] != REFERENCE_LABEL)

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
        reference (NumPy) cell the JAX cell of identical settings (the same law from the same start and
        warm-up, measured on many chains)."""
        return self if self.backend == "jax" else dataclasses.replace(self, backend="jax")

    def make_target(self):
        from sgbench import targets

        target = targets.get(self.target, **self.target_params)
        return targets.adapted(target, self.wrapper)


def _at_temperature(sampler: str, params: dict) -> dict:
    """A copy of ``params`` with ``temperature`` ``TEMPERATURE`` added where ``sampler``'s
    hyperparameters have one and ``params`` give none."""
    from sgbench import samplers

    fields = {f.name for f in dataclasses.fields(samplers.get(sampler).Params)}
    return {**params, "temperature": TEMPERATURE} if "temperature" in fields and "temperature" not in params \
        else dict(params)


def _icg_cell(sampler: str, settings, scale: float = 1.0, target_params=ICG4) -> Cell:
    """``sampler``'s icg4 cell from its ``settings`` (``BenchmarkSettings``) at ``scale`` times its step,
    with exact gradients where ``target_params`` or the settings say so."""
    gate = settings.gate
    target_params = ICG4_EXACT if gate.exact_gradients else target_params
    params = _at_temperature(sampler, gate.icg4)
    params["step_size"] = round(params["step_size"] * scale, 12)
    heavy_tailed = "icg4" in gate.heavy_tailed or (target_params.get("noise") == "none"
                                                   and "icg4_exact" in gate.heavy_tailed)
    return Cell(sampler, params, target_params=dict(target_params), num_burnin=_warmup(gate),
                wrapper=settings.wrapper, heavy_tailed=heavy_tailed, stationary=gate.stationary)


def _warmup(gate) -> int:
    """The warm-up of a sampler's measured cells: ``WARMUP``, or the longer ``num_burnin`` its ``gate``
    settings declare (adaptation, or chains whose autocorrelation time needs more)."""
    return max(WARMUP, gate.num_burnin)


def _exact_law_cell(sampler: str, params: dict, wrapper: str | None) -> Cell:
    params = _at_temperature(sampler, params)
    parts = [str(params[k]) for k in ("convention", "form", "integrator") if k in params]
    label = "-".join(["exact", *parts] + (["frozen"] if "smoothing" in params else []))
    return Cell(sampler, params, target_params=dict(ICG4), num_chains=EXACT_LAW_CHAINS, label=label,
                wrapper=wrapper, exact_law=True)


def _unrecorded_steps(sampler: str, params: dict) -> int:
    """Steps a run of ``sampler`` spends before its first sample (MILE's tuning phases,
    scale-adapted SGHMC's burn-in), from ``params`` and the defaults of its ``Params``."""
    from sgbench import samplers

    values = {f.name: f.default for f in dataclasses.fields(samplers.get(sampler).Params)} | params
    return int(sum(values.get("tuning_steps") or ())) + int(values.get("burn_in_steps") or 0)


def _reference_cell(cell: Cell, settings) -> Cell:
    """The NumPy reference cell of ``cell`` (an ``icg4`` cell): ``REFERENCE_CHAINS`` x ``REFERENCE_STEPS``
    scored steps after the sampler's adaptation burn-in (at most half of them), labelled ``REFERENCE_LABEL``."""
    return dataclasses.replace(cell, backend="numpy", num_chains=REFERENCE_CHAINS,
                               num_steps=REFERENCE_STEPS + _unrecorded_steps(cell.sampler, cell.params),
                               num_burnin=min(settings.gate.num_burnin, REFERENCE_STEPS // 2),
                               label="-".join(filter(None, (REFERENCE_LABEL, cell.label))))


def suite(name: str) -> tuple[Cell, ...]:
    """The cells of suite ``name`` (``quick`` or ``full``), from every registered sampler's settings.

    Args:
        name: the suite.

    Returns:
        its cells, grouped as in the module docstring, each group in the order of ``samplers.names()``;
        MissingBenchmarkSettingsError names a registered sampler that declares no settings.
    """
    from sgbench import samplers

    if name not in GATE_SUITES:
        raise ValueError(f"unknown gate suite {name!r}; known suites: {', '.join(GATE_SUITES)}")
    settings = {sampler: samplers.benchmark_settings(sampler) for sampler in samplers.names()}
    icg = [_icg_cell(s, b) for s, b in settings.items()]
    cells = list(icg)
    cells += [Cell(s, _at_temperature(s, v.params), target_params=dict(TARGET_PRESETS[v.target]), label=v.label,
                   wrapper=b.wrapper, num_burnin=_warmup(b.gate), stationary=b.gate.stationary)
              for s, b in settings.items() for v in b.gate.variants]
    cells += [Cell(s, _at_temperature(s, b.gate.linreg), target="linreg", target_params=dict(LINREG),
                   heavy_tailed="linreg" in b.gate.heavy_tailed, wrapper=b.wrapper, num_burnin=_warmup(b.gate),
                   stationary=b.gate.stationary)
              for s, b in settings.items() if b.gate.linreg is not None]
    cells += [_exact_law_cell(s, p, b.wrapper) for s, b in settings.items() for p in b.gate.exact_law]
    cells += [_reference_cell(c, settings[c.sampler]) for c in icg]
    if name == "full":
        cells += [Cell(s, _at_temperature(s, params), target="posteriordb",
                       target_params=dict(EXTERNAL_TARGETS[key][0]), label=key, wrapper=b.wrapper,
                       num_burnin=max(EXTERNAL_WARMUP, _warmup(b.gate), b.gate.posteriors_burnin),
                       stationary=b.gate.stationary)
                  for s, b in settings.items() for key, params in (b.gate.posteriors or {}).items()]
        cells += [_icg_cell(s, b, b.gate.large_step_scale) for s, b in settings.items()]
        cells += [_icg_cell(s, b, 1.0, ICG4_EXACT) for s, b in settings.items() if not b.gate.exact_gradients]
    return tuple(cells)


def select(suite_name: str, names=None, sampler: str | None = None) -> tuple[Cell, ...]:
    """The cells of a suite, or some of them.

    Args:
        suite_name: the suite.
        names: only the cells of these names (ValueError naming unknown ones).
        sampler: only the cells of this registered sampler (UnknownNameError lists the registered ones).

    Returns:
        the cells, in the suite's order.
    """
    cells = suite(suite_name)
    if sampler is not None:
        from sgbench import samplers

        samplers.get(sampler)
        cells = tuple(c for c in cells if c.sampler == sampler)
    if not names:
        return cells
    unknown = sorted(set(names) - {c.name for c in cells})
    if unknown:
        raise ValueError(f"cells {unknown} are not in suite {suite_name!r}; "
                         f"its cells: {', '.join(c.name for c in cells)}")
    return tuple(c for c in cells if c.name in set(names))


GATE_SUITES = ("quick", "full")
REFERENCE_LABEL = "reference"
