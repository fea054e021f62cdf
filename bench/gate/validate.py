r"""``sgbench validate MODULE:OBJECT``: is a sampler someone wrote correct, and how fast is it?

The object is a :class:`samplers.Sampler` in the suite's contract, or an adapter of another
library's sampler (:mod:`bench.adapters`). It runs on the gate's targets (``icg4``, ``linreg``) with the
gate's chains and steps, from exact draws, and is checked with the gate's tier-2 checks
(``bench.gate.truth``) against what it claims (:func:`resolve_claim`):

- *another implementation of a suite sampler*: truth shifted by the bias of the suite's implementation
  at this step (8 times the chains), the reference itself held to truth by the stored design bias or by
  halving its step (``bench.gate.step_halving``);
- *the suite's sampler itself*: the stored design bias of the gate cell with these settings, or else
  exact truth;
- *no claim*: exact truth, :math:`\mathcal N(\mu, T\Sigma)` at ``temperature`` :math:`T`.

**Error budget.** The validation fails by chance with probability at most ``ALPHA_RUN`` = 1e-3
(Bonferroni over all its statistical checks). The HTML report is ``validate_<name>.html``. Exit status 0
only on a pass.

The claims, the error budget and the report in full: docs/gates.md, section bench.gate.validate.
"""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import numpy as np
import pandas as pd

import samplers
from bench.gate import cells as gate_cells
from bench.gate import design_bias
from bench.gate.replicates import Replicates, run_replicates
from bench.gate.runner import ALPHA_RUN, TRUTH_CHECKS
from bench.gate.step_halving import STEP, halved, halving_check
from bench.gate.truth import finite_check, truth_checks
from reference.checks import CheckResult
from reference.metrics import ksd_of_target
from base.arguments import integer_at_least

REFERENCE_GROUPS = 8  # the reference runs 8 x the chains: its bias estimate has 1/sqrt(8) of the candidate's se
KSD_DRAWS = 1000
TARGETS = {"icg": ("icg", gate_cells.ICG4), "linreg": ("linreg", gate_cells.LINREG)}
STEP_PARTS = ("optimized_step", "reference_step")
SEED_OFFSETS = {"reference": 1000, "half_step": 2000}  # independent of the candidate's run and of each other
SUMMARY_COLUMNS = ("target", "name", "passed", "statistic", "threshold", "estimate", "expected", "standard_error",
                   "detectable")


@dataclasses.dataclass(frozen=True)
class Claim:
    """The suite sampler ``name`` a candidate claims (None: none) with its hyperparameters
    ``params``; ``itself``: the candidate is that sampler (``why`` says how), so it is not
    compared with it."""

    name: str | None
    params: dict
    itself: bool = False
    why: str = ""


def resolve_claim(sampler, params: dict, claims: str | None = None) -> Claim:
    """The claim of ``sampler`` with hyperparameters ``params``: ``claims``, else an adapter's
    ``claims`` (its ``to_reference`` translates ``params``), else its own name if registered.

    Returns:
        The Claim; ``itself`` when the registered sampler of that name is ``sampler`` or its
        ``optimized_step`` and ``reference_step`` come from the same modules as ``sampler``'s.

    Raises:
        ValueError: ``claims`` names no suite sampler.
    """
    adapted = getattr(sampler, "claims", None)
    name = claims or adapted or (sampler.name if sampler.name in samplers.names() else None)
    if name is None:
        return Claim(None, params)
    if name not in samplers.names():
        raise ValueError(f"claims must name a suite sampler ({', '.join(samplers.names())}), got {name!r}")
    registered = samplers.get(name)
    modules = [getattr(sampler, part).__module__ for part in STEP_PARTS]
    if registered is sampler:
        why = f"it is the suite's registered {name!r} itself (module {modules[0]})"
    elif modules == [getattr(registered, part).__module__ for part in STEP_PARTS]:
        why = f"its steps come from the module of the suite's registered {name!r} ({modules[0]})"
    else:
        return Claim(name, sampler.to_reference(params) if name == adapted else params)
    return Claim(name, params, itself=True, why=why)


def stored_design(cell: gate_cells.Cell) -> dict | None:
    """The stored design bias of ``cell`` if it was measured with exactly its sampler,
    hyperparameters, target and steps (``bench.gate.design_bias``); None otherwise."""
    try:
        entry = design_bias.of_cell(cell, design_bias.load())
    except design_bias.DesignBiasError:
        return None
    same_target = (entry.get("target") == cell.target
                   and entry.get("target_params") == json.loads(json.dumps(cell.target_params)))
    return entry if same_target else None


@dataclasses.dataclass(frozen=True)
class Plan:
    """What one target's validation runs and checks against. ``cell``: the candidate's run;
    ``design``: the bias allowed it when no reference runs (None: exact truth at ``temperature``);
    ``reference``: the suite's run (None: none; ``REFERENCE_GROUPS`` groups of the cell's chains)
    and ``reference_design`` its stored design bias
    (None: ``halved``, the step-halving run, or None where its step cannot be halved);
    ``reference_temperature``: the law the reference samples."""

    key: str
    cell: gate_cells.Cell
    design: dict | None = None
    temperature: float = 1.0
    reference: gate_cells.Cell | None = None
    reference_design: dict | None = None
    halved: gate_cells.Cell | None = None
    reference_temperature: float = 1.0

    @property
    def statistical_checks(self) -> int:
        """How many checks with a false-failure rate it makes (``finite`` is deterministic)."""
        if self.reference is None:
            return TRUTH_CHECKS
        return TRUTH_CHECKS + (TRUTH_CHECKS if self.reference_design is not None else int(self.halved is not None))

    def basis(self, claim: Claim) -> str:
        """What the candidate is compared with, in words."""
        if self.reference is not None:
            held = ("its stored design bias" if self.reference_design is not None else
                    "halving its step" if self.halved is not None else "nothing (it cannot be)")
            return (f"compared with the suite's {claim.name!r} (hyperparameters {claim.params}, "
                    f"{REFERENCE_GROUPS} x {self.reference.num_chains} chains), itself held to truth by {held}")
        truth = (f"the stored design bias of gate cell {self.cell.name}" if self.design is not None else
                 f"exact truth (temperature {self.temperature:g}), no bias allowed"
                 + (" (no stored design bias for this configuration)" if claim.name else ""))
        if claim.itself:
            return f"{claim.why}: it is not compared with itself; checked against {truth}"
        return f"no reference claimed: checked against {truth}"


def _temperature(sampler, cell: gate_cells.Cell) -> float:
    """The ``temperature`` of ``sampler``'s hyperparameters ``cell.params`` (1 without one);
    ValueError naming a bad hyperparameter."""
    return float(getattr(sampler.params_for(cell.make_target(), **cell.params), "temperature", 1.0))


def plan(sampler, claim: Claim, key: str, params: dict, num_chains: int, num_steps: int) -> Plan:
    """The :class:`Plan` of target ``key`` (a key of ``TARGETS``); ValueError naming a bad
    hyperparameter, before anything runs."""
    name, target_params = TARGETS[key]
    # the claimed sampler's own gate settings where it declares them (a sampler being written may not yet)
    settings = None if claim.name is None else samplers.get(claim.name).benchmarks
    cell = gate_cells.Cell(sampler.name, params, target=name, target_params=dict(target_params),
                           wrapper=None if settings is None else settings.wrapper,
                           heavy_tailed=settings is not None and "icg4" in settings.gate.heavy_tailed,
                           num_chains=num_chains, num_steps=num_steps)
    temperature = _temperature(sampler, cell)
    if claim.name is None:
        return Plan(key, cell, temperature=temperature)
    claimed = dataclasses.replace(cell, sampler=claim.name, params=claim.params)
    if claim.itself:
        return Plan(key, cell, design=stored_design(claimed), temperature=temperature)
    reference_design = stored_design(claimed)
    return Plan(key, cell, reference=claimed, reference_design=reference_design,
                halved=halved(claimed) if reference_design is None and STEP in claim.params
                and not claimed.heavy_tailed else None,
                reference_temperature=_temperature(samplers.get(claim.name), claimed))


def _as_one_run(rep: Replicates) -> Replicates:
    """All groups' chains of ``rep`` as one run (one group)."""
    return dataclasses.replace(rep, mean_error=rep.mean_error.reshape(1, -1, rep.mean_error.shape[-1]),
                               second_moment_error=rep.second_moment_error.reshape(1, -1, rep.mean_error.shape[-1]),
                               diverged=rep.diverged.reshape(1, -1))


def _at_temperature(rep: Replicates, temperature: float) -> Replicates:
    r"""``rep``'s errors against :math:`\mathcal N(\mu, T\Sigma)`: :math:`m/\sqrt T` and :math:`(1 + r)/T - 1`."""
    return dataclasses.replace(rep, mean_error=rep.mean_error / np.sqrt(temperature),
                               second_moment_error=(1 + rep.second_moment_error) / temperature - 1)


def _healthy_chains(rep: Replicates, temperature: float) -> dict:
    """Per statistic, the values (chains, dim) of ``rep``'s healthy chains against the tempered truth."""
    one = _as_one_run(_at_temperature(rep, temperature))
    healthy = ~one.diverged[0]
    return {"mean_error": one.mean_error[0][healthy], "second_moment_error": one.second_moment_error[0][healthy]}


def _row(label, rep, target, cell) -> dict:
    result = rep.results[0]
    samples = result.trace.samples
    ksd_value = np.nan
    if samples is not None:
        pooled = samples[~result.trace.diverged].reshape(-1, samples.shape[-1])
        finite = pooled[np.all(np.isfinite(pooled), axis=1)]
        if len(finite) > 1:
            ksd_value = float(ksd_of_target(finite[:: max(1, len(finite) // KSD_DRAWS)][:KSD_DRAWS], target))
    evals = rep.grad_evals_per_chain * result.config.num_chains
    return {"sampler": label, "target": cell.name.split("@")[1], "b2_mean_pooled": result.metrics.get("b2_mean_pooled"),
            "kl_diagonal_truth_to_fit": result.metrics.get("kl_diagonal_truth_to_fit"), "ksd": ksd_value,
            "diverged_chains": int(result.metrics.get("num_diverged_chains", 0)),
            "grad_evals_per_chain": rep.grad_evals_per_chain,
            "microseconds_per_grad_eval": 1e6 * result.trace.run_seconds / evals if evals else np.nan}


def _hold_to_truth(p: Plan, claim: Claim, reference: Replicates, run, alpha: float) -> tuple[list, str | None]:
    """The claimed reference's checks against truth at rate ``alpha`` each (its stored design
    bias, or the step-halving check with ``run(cell, label, seed_offset, groups=...)`` making the half-step
    run), and why it fails in words (None if it passes)."""
    doubt = f"the claimed configuration does not sample the target: the suite's {claim.name} at these parameters"
    if p.reference_design is not None:
        checks = truth_checks(_as_one_run(reference), p.reference_design, alpha)
        failed = sorted(c.name for c in checks if not c.passed)
        return checks, (f"{doubt} disagrees with its stored design bias ({', '.join(failed)} failed)" if failed
                        else None)
    if p.halved is None:
        why = (f"has no {STEP} to halve" if STEP not in claim.params else
               "has heavy-tailed chains, where the step-halving check's CLT fails")
        note = (f"the claimed reference cannot be held to truth: the suite's {claim.name} {why}, and no design bias "
                "is stored for these parameters")
        return [CheckResult(name="step_halving", passed=False, alpha=0.0, statistic=np.nan, threshold=np.nan,
                            details={"note": note})], note
    half = run(p.halved, f"suite {claim.name} at half the step", SEED_OFFSETS["half_step"], groups=REFERENCE_GROUPS)
    finite = finite_check(np.concatenate([reference.diverged.ravel(), half.diverged.ravel()]))
    if not finite.passed:
        return [finite], f"{doubt} diverged in {int(finite.statistic)} chains (at h or h/2)"
    at_step = _healthy_chains(reference, p.reference_temperature)
    check = halving_check(at_step, _healthy_chains(half, p.reference_temperature), alpha=alpha)
    if check.passed:
        return [finite, check], None
    s, i = np.unravel_index(check.details["worst"], check.details["at_step"].shape)
    label = "r" if check.details["statistics"][s] == "second_moment_error" else "mean error"
    b2 = reference.results[0].metrics.get("b2_mean_pooled", np.nan)  # as in the metrics table
    return [finite, check], (
        f"{doubt} has b^2 = {b2:.3g} at this step, and halving the step (with twice the steps) does not shrink its "
        f"bias ({label} {check.details['at_step'][s, i]:.3g} -> {check.details['at_half_step'][s, i]:.3g} in "
        f"coordinate {i}; z = {check.statistic:.3g} against {check.threshold:.3g})")


@dataclasses.dataclass
class Verdict:
    """What validation found: the candidate's ``checks``, the claimed reference's checks against
    truth (``reference_checks``), what the candidate was compared with per target (``basis``),
    why it failed (``reasons``, empty on a pass), the metrics beside the reference's, the report."""

    name: str
    claims: str | None
    checks: pd.DataFrame
    reference_checks: pd.DataFrame
    basis: dict
    reasons: list
    metrics: pd.DataFrame
    report: Path

    @property
    def passed(self) -> bool:
        return not self.reasons

    def headline(self) -> str:
        """The verdict in one line: PASSED, or FAILED and why."""
        total = len(self.checks) + len(self.reference_checks)
        failed = int((~self.checks["passed"]).sum()) + (int((~self.reference_checks["passed"]).sum())
                                                        if len(self.reference_checks) else 0)
        count = f"{total - failed} of {total} checks passed"
        if self.passed:
            return f"{self.name}: PASSED ({count})"
        return f"{self.name}: FAILED: {'; '.join(self.reasons)} ({count})"

    def summary(self) -> str:
        """The headline, what each target was compared with, the metrics, every check (estimate and
        expected at the worst coordinate) and the report's path."""
        lines = [self.headline()] + [f"on {key}: {text}" for key, text in self.basis.items()]
        lines.append(self.metrics.to_string(index=False))
        for title, frame in (("checks of the candidate", self.checks),
                             ("checks of the claimed reference against truth", self.reference_checks)):
            if len(frame):
                lines.append(f"{title}:\n" + frame[[c for c in SUMMARY_COLUMNS if c in frame]].to_string(index=False))
        return "\n".join(lines + [f"report: {self.report}"])


def validate(sampler, params: dict | None = None, claims: str | None = None, targets: str = "all", seed: int = 0,
             num_chains: int = gate_cells.NUM_CHAINS, num_steps: int = gate_cells.NUM_STEPS,
             out: Path = Path("reports") / "latest", progress=print) -> Verdict:
    """Validate ``sampler`` (module docstring).

    Args:
        sampler: a ``samplers.Sampler`` (or adapter).
        params: its hyperparameters.
        claims: the suite sampler it implements (default: an adapter's claim, or its own name if registered).
        targets: ``icg``, ``linreg`` or ``all``.
        seed: the runs' seed.
        num_chains: chains per target (the gate's by default; fewer for a sampler that only the
            one-chain NumPy driver can run, such as a torch adapter).
        num_steps: steps per chain (the gate's by default).
        out: the report's folder.
        progress: called with a line per run.

    Returns:
        The Verdict. ValueError (naming the parameter) on bad input, before anything runs.
    """
    from bench.html import error_bar_figure, write_page

    params = dict(params or {})
    chosen = list(TARGETS) if targets == "all" else [targets]
    if not set(chosen) <= set(TARGETS):
        raise ValueError(f"targets must be one of {', '.join(TARGETS)} or 'all', got {targets!r}")
    integer_at_least("num_chains (--chains)", num_chains, 2)
    integer_at_least("num_steps (--steps)", num_steps, 1)
    claim = resolve_claim(sampler, params, claims)
    plans = [plan(sampler, claim, key, params, num_chains, num_steps) for key in chosen]
    alpha = ALPHA_RUN / sum(p.statistical_checks for p in plans)
    backend = getattr(sampler, "backend", "jax")
    rows, reference_rows, metric_rows, series, reasons = [], [], [], {}, []

    def run(cell, label, seed_offset=0, **options):
        progress(f"{cell.name}: running {label}")
        rep = run_replicates(cell, seed=seed + seed_offset, keep_samples=True, thin=max(1, cell.num_steps // 100),
                             **options)
        metric_rows.append(_row(label, rep, cell.make_target(), cell))
        summary = rep.summary()
        for store, value in zip(series.setdefault(label, ([], [], [])), (
                cell.name, summary["second_moment_error"], summary["second_moment_error_se"])):
            store.append(value)
        return rep

    for p in plans:
        candidate = run(p.cell, sampler.name, sampler=sampler, backend=backend)
        if p.reference is None:
            checked = candidate if p.design is not None else _at_temperature(candidate, p.temperature)
            candidate_checks, reference_checks = truth_checks(checked, p.design, alpha), []
            against = "its stored design bias" if p.design is not None else "exact truth"
        else:
            reference = run(p.reference, f"suite {claim.name}", SEED_OFFSETS["reference"], groups=REFERENCE_GROUPS)
            candidate_checks = truth_checks(candidate, reference.summary(), alpha)
            reference_checks, doubt = _hold_to_truth(p, claim, reference, run, alpha)
            reasons += [f"on {p.key}: {doubt}"] if doubt else []
            against = f"the suite's {claim.name!r}"
        failed = sorted(c.name for c in candidate_checks if not c.passed)
        if failed:
            reasons.append(f"on {p.key}: {sampler.name} disagrees with {against} ({', '.join(failed)} failed)")
        rows += [{"target": p.key, **c.as_row()} for c in candidate_checks]
        reference_rows += [{"target": p.key, **c.as_row()} for c in reference_checks]
    checks, reference_frame, metrics = pd.DataFrame(rows), pd.DataFrame(reference_rows), pd.DataFrame(metric_rows)
    basis = {p.key: p.basis(claim) for p in plans}
    safe_name = re.sub(r"[^A-Za-z0-9_.-]+", "_", sampler.name)
    verdict = Verdict(sampler.name, claim.name, checks, reference_frame, basis, reasons, metrics,
                      Path(out) / f"validate_{safe_name}.html")
    outcome = "PASSED" if verdict.passed else "FAILED"
    figures = {"Relative second-moment error beside the reference": error_bar_figure(
        {label: tuple(v) for label, v in series.items()}, f"{sampler.name}: {outcome}")}
    write_page(verdict.report, f"Validation of {sampler.name}", verdict.headline(), verdict.passed,
               {"Checks of the candidate": checks, "Checks of the claimed reference against truth": reference_frame,
                "Metrics beside the reference": metrics}, figures,
               notes=" ".join(f"On {key}: {text}." for key, text in basis.items())
               + f" Hyperparameters {params}; per-check false-failure rate {alpha:.2g}. "
               + getattr(sampler, "differences", ""))
    return verdict
