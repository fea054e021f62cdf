r"""What one target of ``sgbench validate`` runs and holds the candidate to (:class:`Plan`): the candidate's run
(overdispersed start, warm-up, scored steps), and either the claimed reference's run with what holds that
reference to truth (its exact discrete-time law, its stored design bias, or its step ladder),
or the law, design bias or truth the candidate is held to directly (docs/gates_derivations.md, section
sgbench.bench.validate.validate).
"""

from __future__ import annotations

import dataclasses
import json

from sgbench import samplers
from sgbench.bench.gate import cells as gate_cells, design_bias, exact_law, gold_standard
from sgbench.bench.gate.runner import TRUTH_CHECKS
from sgbench.bench.gate.start import START_SCALE, thin_for
from sgbench.bench.validate import targets as vt
from sgbench.bench.validate.claim import Claim
from sgbench.bench.validate.step_ladder import STEP

REFERENCE_GROUPS = 4  # the reference runs 4 x the chains: its bias estimate has half the candidate's se


def stored_design(cell: gate_cells.Cell) -> dict | None:
    """The design bias of ``cell``'s sampler, hyperparameters, target and scored steps: its exact
    discrete-time law (from ``cell``'s own start and warm-up) where one exists, else the stored design
    bias of the gate cell with those settings (measured after the gate's own start and warm-up: once the
    chains forgot their start, the bias is the method's at stationarity, whatever the start); None otherwise."""
    try:
        return exact_law.design(dataclasses.replace(cell, exact_law=True))
    except (ValueError, KeyError):
        pass
    try:
        entry = design_bias.of_cell(cell, design_bias.load(), any_start=True)
    except design_bias.DesignBiasError:
        return None
    same_target = (entry.get("target") == cell.target
                   and entry.get("target_params") == json.loads(json.dumps(cell.target_params)))
    return entry if same_target else None


def described(design: dict | None, truth_words: str) -> str:
    if design is None:
        return truth_words
    return "its exact discrete-time law" if design.get("exact_law") else "its stored design bias"


@dataclasses.dataclass(frozen=True)
class Plan:
    """What one target's validation runs and checks against. ``cell``: the candidate's run; ``kind``:
    "truth", "law" (design bias), "reference", or "none" (no truth at its temperature: INCONCLUSIVE);
    ``design``: its exact law or stored design bias, or the NUTS truth's allowance (None: analytic truth);
    ``reference``: the claimed suite sampler's run (None: none; ``REFERENCE_GROUPS`` groups of the cell's chains) with
    ``reference_design`` (its law or design bias; None: its step ladder where ``laddered``, or nothing where its
    step cannot be shrunk); the temperatures of both."""

    target: vt.ValidationTarget
    cell: gate_cells.Cell
    temperature: float
    kind: str = "truth"
    design: dict | None = None
    against: str = ""
    reference: gate_cells.Cell | None = None
    reference_design: dict | None = None
    laddered: bool = False
    reference_temperature: float = 1.0
    defaults: tuple = ()

    @property
    def key(self) -> str:
        return self.target.key

    @property
    def statistical_checks(self) -> int:
        """How many checks with a false-failure rate it may make (``finite`` is deterministic), each over all its
        looks: the checks against what it is held to, its step ladder, the test of a stationary law after a
        longer warm-up, and under a claim the reference's checks against truth or its ladder."""
        if self.kind == "none":
            return 0
        stationary = 1
        if self.kind == "truth":
            return TRUTH_CHECKS + int(STEP in self.cell.params) + stationary
        if self.kind == "law":
            return TRUTH_CHECKS + stationary
        holding = TRUTH_CHECKS if self.reference_design is not None else int(self.laddered)
        own = TRUTH_CHECKS + int(STEP in self.cell.params) if truth_kind(self.temperature, self.target) == "truth" \
            else 0  # its checks against truth and its own step ladder
        return TRUTH_CHECKS + holding + own + stationary

    def basis(self, claim: Claim) -> str:
        """What the candidate is held to, in words."""
        if self.reference is not None:
            held = (described(self.reference_design, "") if self.reference_design is not None else
                    "its step ladder" if self.laddered else "nothing (it cannot be)")
            left = (f"; left at its defaults: {', '.join(f'{k}={v!r}' for k, v in self.defaults)}"
                    if self.defaults else "")
            return (f"the suite's {claim.name!r} with {self.reference.params} ({REFERENCE_GROUPS} x "
                    f"{self.reference.num_chains} chains), itself held to truth by {held}{left}; and truth")
        if claim.itself:
            return f"{self.against} ({claim.why}: it is not compared with itself)"
        return f"{self.against} (no suite sampler claimed)"


def truth_kind(temperature: float, target: vt.ValidationTarget) -> str:
    """"truth", or "none" where the target has no truth at ``temperature`` (a non-Gaussian one at T != 1)."""
    return "truth" if temperature == 1.0 or target.gaussian else "none"


def _temperature(sampler, cell: gate_cells.Cell) -> float:
    """The temperature of ``sampler`` at its hyperparameters ``cell.params``, in the suite's convention: an
    adapter's own ``temperature(params)`` where it gives one, else the ``temperature`` hyperparameter (1 without
    one); ValueError naming a bad hyperparameter."""
    params = sampler.params_for(cell.make_target(), **cell.params)
    own = getattr(sampler, "temperature", None)
    return float(own(params) if callable(own) else getattr(params, "temperature", 1.0))


def plan(sampler, claim: Claim, target: vt.ValidationTarget, params: dict, num_chains: int, num_steps: int,
         warmup: int) -> Plan:
    """The :class:`Plan` on ``target``; ValueError naming a bad hyperparameter, before anything runs."""
    settings = None if claim.name is None else samplers.get(claim.name).benchmarks
    heavy_tailed = settings is not None and target.gate_cell in settings.gate.heavy_tailed
    cell = gate_cells.Cell(sampler.name, params, target=target.target, target_params=dict(target.params),
                           wrapper=None if settings is None else settings.wrapper, heavy_tailed=heavy_tailed,
                           num_chains=num_chains, num_steps=num_steps, num_burnin=warmup, start_scale=START_SCALE,
                           thin=thin_for(num_steps))
    temperature = _temperature(sampler, cell)
    made = cell.make_target()
    truth = gold_standard.truth_of(made)
    estimated = gold_standard.allowance(truth) if gold_standard.is_estimated(truth) else None
    held_to = "exact truth" if not estimated else "the NUTS gold standard" if made.truth is None else truth.source
    truth_words = f"{held_to} (temperature {temperature:g})"
    if temperature != 1.0 and not target.gaussian:
        truth_words = (f"no truth at temperature {temperature:g} on this non-Gaussian target (its truth is at "
                       f"temperature 1): claim the suite sampler it implements (--claims), or give "
                       f"--param {target.key}:temperature=1")
    if claim.name is None:
        return Plan(target, cell, temperature, kind=truth_kind(temperature, target), design=estimated,
                    against=truth_words)
    if claim.itself:
        design = stored_design(dataclasses.replace(cell, sampler=claim.name))
        if design is None:
            return Plan(target, cell, temperature, kind=truth_kind(temperature, target), design=estimated,
                        against=truth_words)
        return Plan(target, cell, temperature, kind="law", design=design, against=described(design, truth_words))
    reference_params = claim.translate(params)
    per_call = claim.steps_per_call(params)  # the reference covers the same span of the dynamics
    claimed = dataclasses.replace(cell, sampler=claim.name, params=reference_params, num_steps=num_steps * per_call,
                                  num_burnin=warmup * per_call, thin=thin_for(num_steps) * per_call)
    reference_temperature = _temperature(samplers.get(claim.name), claimed)
    if truth_kind(reference_temperature, target) == "none":  # nothing to hold the reference to
        return Plan(target, cell, temperature, kind="reference", design=estimated,
                    against=f"the suite's {claim.name!r}", reference=claimed,
                    reference_temperature=reference_temperature,
                    defaults=tuple(claim.defaults(reference_params).items()))
    reference_design = stored_design(claimed)
    return Plan(target, cell, temperature, kind="reference", design=estimated, against=f"the suite's {claim.name!r}",
                reference=claimed, reference_design=reference_design,
                laddered=reference_design is None and STEP in reference_params,
                reference_temperature=reference_temperature,
                defaults=tuple(claim.defaults(reference_params).items()))
