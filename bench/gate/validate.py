r"""``sgbench validate MODULE:OBJECT``: is a sampler someone wrote correct, and how fast is it?

The object is a :class:`samplers.Sampler` in the suite's contract, or an adapter of another library's
sampler (:mod:`sgbench.bench.adapters`). It runs on the validation targets (``sgbench.bench.gate.validation_targets``:
Gaussian, non-Gaussian analytic, and a NUTS-referenced data posterior), from overdispersed starts, for a
warm-up and then the scored steps (``sgbench.bench.gate.start``), and is held, per target, to:

- *another implementation of a suite sampler* (``sgbench.bench.gate.validation_claim``): the suite's implementation at
  the same (translated) hyperparameters, run from the same start law on 4 times the chains; that reference is
  itself held to truth by its exact discrete-time law, its stored design bias, or by halving its step
  (``sgbench.bench.gate.step_halving``), and the candidate is also checked against truth on its own;
- *the suite's sampler itself*: its exact discrete-time law where one exists (``sgbench.bench.gate.exact_law``),
  else its stored design bias, else exact truth;
- *no claim* (``claims="none"``, or an unregistered sampler): exact truth, :math:`\mathcal N(\mu, T\Sigma)`
  at ``temperature`` :math:`T` on the Gaussian targets; the non-Gaussian ones have a truth at T = 1 only, so
  at another temperature nothing there is held to truth (INCONCLUSIVE).

``sgbench.bench.gate.validation_plan`` says per target what runs and what the candidate is held to. Against truth, a
failed check is followed by the same run at half the step for twice the steps: an error that shrinks as a
discretisation bias does cannot be told from one (INCONCLUSIVE), one that does not is a mistake (FAILED).
``sgbench.bench.gate.verdict`` turns the evidence into PASSED, FAILED or INCONCLUSIVE per target.

**Error budget.** A correct candidate with a correct reference is FAILED by chance with probability at
most ``ALPHA_RUN`` = 1e-3: Bonferroni over every statistical check the plan may make (candidate and
reference, every target).

:func:`validate` computes: it returns a :class:`Validation` (the verdict, and what the page needs besides);
``sgbench.bench.gate.validate_page.write`` renders it as the HTML report ``validate_<name>.html``.

The claims, the rules and the measured error rates: docs/gates.md, section sgbench.bench.gate.validate.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from pathlib import Path

import numpy as np
import pandas as pd

from sgbench.base.arguments import integer_at_least
from sgbench.bench.adapters import AdaptedSampler
from sgbench.bench.gate import cells as gate_cells, validation_targets as vt
from sgbench.bench.gate.replicates import Replicates, run_replicates
from sgbench.bench.gate.resolution import DEFAULT_CHAINS, Resolution
from sgbench.bench.gate.runner import ALPHA_RUN
from sgbench.bench.gate.step_halving import STEP, halved, halving_check
from sgbench.bench.gate.truth import finite_check, truth_checks
from sgbench.bench.gate.validation_claim import Claim, resolve_claim, split_params
from sgbench.bench.gate.validation_plan import (
    HALF_STEP_GROUPS,
    REFERENCE_GROUPS,
    Plan,
    described,
    plan,
    truth_kind,
)
from sgbench.bench.gate.verdict import Evidence, Verdict, decide
from sgbench.reference.checks import CheckResult
from sgbench.reference.metrics import ksd_of_target

KSD_DRAWS = 1000
SEED_OFFSETS = {"reference": 1000, "half_step": 2000, "own_half_step": 3000}  # independent of each other
THOROUGH = {"chains": 4, "steps": 2}  # --thorough multiplies the chains and steps by these


def _as_one_run(rep: Replicates) -> Replicates:
    """All groups' chains of ``rep`` as one run (one group)."""
    return dataclasses.replace(rep, mean_error=rep.mean_error.reshape(1, -1, rep.mean_error.shape[-1]),
                               second_moment_error=rep.second_moment_error.reshape(1, -1, rep.mean_error.shape[-1]),
                               diverged=rep.diverged.reshape(1, -1), start=None)


def _at_temperature(rep: Replicates, temperature: float, tempered: bool) -> Replicates:
    r"""``rep``'s errors against the target at ``temperature`` :math:`T`: on a Gaussian target
    (``tempered``) :math:`\mathcal N(\mu, T\Sigma)`, so :math:`m/\sqrt T` and :math:`(1 + r)/T - 1`; elsewhere
    unchanged (their truth is at T = 1)."""
    if not tempered or temperature == 1.0:
        return rep
    return dataclasses.replace(rep, mean_error=rep.mean_error / np.sqrt(temperature),
                               second_moment_error=(1 + rep.second_moment_error) / temperature - 1)


def _healthy_chains(rep: Replicates, temperature: float, tempered: bool) -> dict:
    """Per statistic, the values (chains, dim) of ``rep``'s healthy chains against the tempered truth."""
    one = _as_one_run(_at_temperature(rep, temperature, tempered))
    healthy = ~one.diverged[0]
    return {"mean_error": one.mean_error[0][healthy], "second_moment_error": one.second_moment_error[0][healthy]}


def _metrics_row(label: str, rep: Replicates, target, key: str) -> dict:
    result = rep.results[0]
    samples = result.trace.samples
    ksd_value = np.nan
    if samples is not None:
        pooled = samples[~result.trace.diverged].reshape(-1, samples.shape[-1])
        finite = pooled[np.all(np.isfinite(pooled), axis=1)]
        if len(finite) > 1:
            ksd_value = float(ksd_of_target(finite[:: max(1, len(finite) // KSD_DRAWS)][:KSD_DRAWS], target))
    evals = rep.grad_evals_per_chain * result.config.num_chains
    healthy = ~rep.diverged.reshape(-1)
    r = rep.second_moment_error.reshape(-1, rep.second_moment_error.shape[-1])[healthy]
    return {"sampler": label, "target": key, "max |r|": float(np.max(np.abs(r.mean(axis=0)))) if len(r) else np.nan,
            "b2_mean_pooled": result.metrics.get("b2_mean_pooled"), "ksd": ksd_value,
            "diverged_chains": int(rep.diverged.sum()), "grad_evals_per_chain": rep.grad_evals_per_chain,
            "microseconds_per_grad_eval": 1e6 * result.trace.run_seconds / evals if evals else np.nan}


def _halving_check(cell, at_step: Replicates, temperature: float, tempered: bool, run, label: str,
                   seed_offset: int, alpha: float, name: str = "step_halving", **options) -> list:
    """[the half-step run's ``finite`` check, and, when it did not diverge, the step-halving check of
    ``at_step`` against it] (``run(cell, label, seed_offset, **options)`` makes the run at h/2 for twice the
    steps and warm-up)."""
    half = run(halved(cell), label, seed_offset, **options)
    finite = finite_check(half.diverged.ravel())
    if not finite.passed:
        return [finite]
    return [finite, halving_check(_healthy_chains(at_step, temperature, tempered),
                                  _healthy_chains(half, temperature, tempered), alpha=alpha, name=name)]


def _hold_to_truth(p: Plan, claim: Claim, reference: Replicates, travel, run,
                   alpha: float) -> tuple[list, bool, str]:
    """The claimed reference's checks against truth at rate ``alpha`` each (its law or stored design
    bias, or the step-halving check with ``run(cell, label, seed_offset, groups=...)`` making the
    half-step run), given how far its chains travelled (``travel``): (checks, held, why not in words)."""
    if truth_kind(p.reference_temperature, p.target) == "none":
        return [], False, f"this target has no truth at temperature {p.reference_temperature:g}"
    if not travel.forgot:
        return [], False, f"for the suite's {claim.name} {travel.describe()}"
    if p.reference_design is not None:
        checks = truth_checks(_as_one_run(reference), p.reference_design, alpha, quadrature=True)
        failed = sorted(c.name for c in checks if not c.passed)
        return checks, not failed, (f"the suite's {claim.name} disagrees with {described(p.reference_design, '')} "
                                    f"({', '.join(failed)} failed)")
    if p.halved is None:
        why = ("has heavy-tailed chains here, where the step-halving check's CLT fails," if p.cell.heavy_tailed
               else f"has no {STEP} to halve")
        note = f"the suite's {claim.name} {why} and no exact law or design bias for these settings"
        return [CheckResult(name="step_halving", passed=False, alpha=0.0, statistic=np.nan, threshold=np.nan,
                            details={"note": note})], False, note
    checks = _halving_check(p.reference, reference, p.reference_temperature, p.target.gaussian, run,
                            f"suite {claim.name} at half the step", SEED_OFFSETS["half_step"], alpha,
                            groups=HALF_STEP_GROUPS)
    if len(checks) == 1:
        return checks, False, (f"the suite's {claim.name} diverged in {int(checks[0].statistic)} chains at half "
                               "the step")
    check = checks[1]
    return checks, check.passed, (
        f"halving the suite's {claim.name}'s step does not halve its error ({check.details['note']}; z = "
        f"{check.statistic:.3g} against {check.threshold:.3g})")


def _check_rows(key: str, of: str, checks) -> list[dict]:
    return [{"target": key, "of": of, **c.as_row(),
             "largest_detectable": float(np.nanmax(np.atleast_1d(c.detectable))) if np.size(c.detectable) else np.nan}
            for c in checks]


def _travel_row(key: str, label: str, travel) -> dict:
    return {"target": key, "sampler": label, "warm-up steps": travel.warmup, "scored steps": travel.scored,
            "median distance travelled (sd)": travel.displacement,
            "autocorrelation time (steps)": travel.autocorrelation_steps, "forgot start": travel.forgot,
            "finding": travel.describe()}


@dataclasses.dataclass(frozen=True)
class Validation:
    """What one validation computed: its verdict and what its page shows besides
    (``sgbench.bench.gate.validate_page``).

    Attributes:
        verdict: per target the outcome, its reason and basis; the checks, travel and metrics tables; the page's
            path.
        params: the candidate's hyperparameters as given (None: none given).
        alpha: the per-check false-failure rate (``ALPHA_RUN`` split over the plan's statistical checks).
        resolution: the bias the checks must resolve (``--detect``).
        temperatures: the distinct temperatures of the targets' runs, sorted.
        series: per run label (the candidate, ``suite NAME``), the targets it ran on, and per target the relative
            variance error per coordinate against the target at its temperature and its standard errors.
        differences: what an adapter says still differs from its reference ("" for a sampler that is not an
            adapter).
    """

    verdict: Verdict
    params: dict | None
    alpha: float
    resolution: Resolution
    temperatures: tuple[float, ...]
    series: dict[str, tuple[tuple, tuple, tuple]]
    differences: str = ""


def validate(sampler, params: dict | None = None, claims: str | None = None, targets: str = "default",
             seed: int = 0, num_chains: int = DEFAULT_CHAINS, num_steps: int = gate_cells.NUM_STEPS,
             warmup: int | None = None, detect: float = Resolution().relative_variance, thorough: bool = False,
             rename: dict | None = None, reference_params: dict | None = None,
             out: Path = Path("reports") / "latest", progress=print) -> Validation:
    """Validate ``sampler`` (module docstring); its page is written by ``validate_page.write``.

    Args:
        sampler: a ``samplers.Sampler`` (or an AdaptedSampler).
        params: its hyperparameters; ``TARGET:NAME`` keys apply to one target only.
        claims: the suite sampler it implements, "none", or None (an adapter's claim, or its own name if
            registered).
        targets: comma-separated keys of ``sgbench.bench.gate.validation_targets``, ``default`` or ``all``.
        seed: the runs' seed.
        num_chains: chains per target (fewer for a sampler that only the one-chain NumPy driver can run,
            such as a torch adapter); ``thorough`` multiplies them by 4.
        num_steps: scored steps per chain; ``thorough`` doubles them.
        warmup: steps run before the scored ones (default: ``num_steps``).
        detect: the relative variance error r the checks must resolve (``sgbench.bench.gate.resolution``).
        thorough: more chains and steps, and every target under ``default``.
        rename: candidate hyperparameter names to the claimed sampler's.
        reference_params: hyperparameters of the claimed sampler the candidate has no name for.
        out: the report's folder (the verdict's ``report`` is ``out/validate_<name>.html``).
        progress: called with a line per run.

    Returns:
        The Validation. ValueError (naming the parameter) on bad input, before anything runs.
    """
    resolution = Resolution(detect)
    chosen = vt.select(targets, thorough)
    if thorough:
        num_chains, num_steps = num_chains * THOROUGH["chains"], num_steps * THOROUGH["steps"]
    integer_at_least("num_chains (--chains)", num_chains, 2)
    integer_at_least("num_steps (--steps)", num_steps, 4)
    warmup = num_steps if warmup is None else integer_at_least("warmup (--warmup)", warmup, 0)
    claim = resolve_claim(sampler, claims, rename, reference_params)
    per_target = split_params(dict(params or {}), [t.key for t in chosen])
    plans = [plan(sampler, claim, t, per_target[t.key], num_chains, num_steps, warmup) for t in chosen]
    alpha = ALPHA_RUN / max(1, sum(p.statistical_checks for p in plans))
    session = _Session(sampler, claim, alpha, seed, progress)
    progress(f"validating {getattr(sampler, 'name', sampler)} on {', '.join(p.key for p in plans)}")
    outcomes, reasons = {}, {}
    for p in plans:
        evidence = session.examine(p)
        outcomes[p.key], reasons[p.key] = decide(evidence, resolution)
        progress(f"on {p.key}: {outcomes[p.key].name}: {reasons[p.key]}")
    safe_name = re.sub(r"[^A-Za-z0-9_.-]+", "_", sampler.name)
    verdict = Verdict(sampler.name, claim.name, outcomes, reasons, pd.DataFrame(session.rows),
                      pd.DataFrame(session.reference_rows), {p.key: p.basis(claim) for p in plans},
                      pd.DataFrame(session.travel_rows), pd.DataFrame(session.metric_rows),
                      Path(out) / f"validate_{safe_name}.html")
    series = {label: tuple(map(tuple, values)) for label, values in session.series.items()}
    differences = sampler.differences if isinstance(sampler, AdaptedSampler) else ""
    return Validation(verdict, params, alpha, resolution, tuple(sorted({p.temperature for p in plans})), series,
                      differences)


class _Session:
    """One validation's runs and what they showed: the check rows, the reference's rows, the travel and metric
    rows and the plotted series, filled as :meth:`examine` goes through the plans."""

    def __init__(self, sampler, claim: Claim, alpha: float, seed: int, progress):
        self.sampler, self.claim, self.alpha, self.seed, self.progress = sampler, claim, alpha, seed, progress
        self.backend = sampler.backend if isinstance(sampler, AdaptedSampler) else "jax"  # its driver
        self.rows, self.reference_rows, self.metric_rows, self.travel_rows, self.series = [], [], [], [], {}

    def runner(self, key: str):
        """``run(cell, label, seed_offset, **options)``: ``cell``'s chains on target ``key``
        (``run_replicates``, keeping 100 draws per chain), with its metrics row."""
        return functools.partial(self._run, key)

    def _run(self, key: str, cell, label: str, seed_offset: int, **options) -> Replicates:
        self.progress(f"on {key}: running {label} ({options.get('groups', 1) * cell.num_chains} chains, "
                      f"{cell.num_burnin} warm-up + {cell.num_steps} scored steps)")
        rep = run_replicates(cell, seed=self.seed + seed_offset, keep_samples=True,
                             thin=cell.thin, **options)
        self.metric_rows.append(_metrics_row(label, rep, cell.make_target(), key))
        return rep

    def _plot(self, label, key, rep, temperature, tempered) -> None:
        summary = _at_temperature(_as_one_run(rep), temperature, tempered).summary()
        if summary["num_chains"]:
            names, means, ses = self.series.setdefault(label, ([], [], []))
            names.append(key)
            means.append(summary["second_moment_error"])
            ses.append(summary["second_moment_error_se"])

    def _own_halving(self, p: Plan, candidate: Replicates):
        """The candidate's own step-halving check, or its half-step run's ``finite`` check where that diverged
        (None where its step cannot be halved)."""
        if STEP not in p.cell.params:
            return None
        checks = _halving_check(p.cell, candidate, p.temperature, p.target.gaussian, self.runner(p.key),
                                f"{p.cell.sampler} at half the step", SEED_OFFSETS["own_half_step"], self.alpha,
                                name="own_step_halving", sampler=self.sampler, backend=self.backend)
        self.rows += _check_rows(p.key, "its own half step", checks[-1:])
        return checks[-1]

    def examine(self, p: Plan) -> Evidence:
        """Run target ``p``'s candidate (and reference) and gather the evidence ``sgbench.bench.gate.verdict``
        decides on."""
        name = self.sampler.name
        candidate = self._run(p.key, p.cell, name, 0, backend=self.backend, sampler=self.sampler)
        travel = candidate.travel()
        self.travel_rows.append(_travel_row(p.key, name, travel))
        self._plot(name, p.key, candidate, p.temperature, p.target.gaussian)
        evidence = dict(name=name, against=p.against, chains=p.cell.num_chains,
                        diverged=int(candidate.diverged.sum()), travel=travel)
        if p.reference is None:
            return Evidence(**evidence, **self._against_law_or_truth(p, candidate, travel))
        return Evidence(**evidence, **self._against_reference(p, candidate, travel))

    def _against_law_or_truth(self, p: Plan, candidate: Replicates, travel) -> dict:
        if p.kind == "none":
            return dict(agreement=())
        against_truth = _at_temperature(candidate, p.temperature, p.target.gaussian)
        checks = truth_checks(candidate if p.kind == "law" else against_truth, p.design, self.alpha, quadrature=True)
        self.rows += _check_rows(p.key, p.against.split(" (")[0], checks)
        halving = None
        if p.kind == "truth" and not all(c.passed for c in checks) and travel.forgot and not candidate.diverged.any():
            halving = self._own_halving(p, candidate)
        return dict(agreement=tuple(checks), halving=halving)

    def _against_reference(self, p: Plan, candidate: Replicates, travel) -> dict:
        name, gaussian = self.claim.name, p.target.gaussian
        truth = None
        if truth_kind(p.temperature, p.target) == "truth":
            truth = tuple(truth_checks(_at_temperature(candidate, p.temperature, gaussian), p.design, self.alpha,
                                       quadrature=True))
            self.rows += _check_rows(p.key, "truth", truth)
        found = dict(truth=truth, reference=name, reference_chains=REFERENCE_GROUPS * p.cell.num_chains,
                     agreement=(), held=(False, "not run"))
        if travel.still:  # FAILED whatever the reference does
            return found
        reference = self._run(p.key, p.reference, f"suite {name}", SEED_OFFSETS["reference"],
                              groups=REFERENCE_GROUPS)
        reference_travel = reference.travel()
        self.travel_rows.append(_travel_row(p.key, f"suite {name}", reference_travel))
        self._plot(f"suite {name}", p.key, reference, p.reference_temperature, gaussian)
        found["reference_diverged"] = int(reference.diverged.sum())
        if found["reference_diverged"]:
            found["held"] = (False, f"it diverged in {found['reference_diverged']} chains")
        else:
            agreement = truth_checks(candidate, reference.summary(), self.alpha, quadrature=True)
            self.rows += _check_rows(p.key, f"suite {name}", agreement)
            held_checks, held, why = _hold_to_truth(p, self.claim, reference, reference_travel,
                                                    self.runner(p.key), self.alpha)
            self.reference_rows += _check_rows(p.key, f"suite {name}", held_checks)
            found.update(agreement=tuple(agreement), held=(held, why))
        unexplained = found["reference_diverged"] or not (found["held"][0] or all(c.passed for c in found["agreement"]))
        if (unexplained and travel.forgot and not candidate.diverged.any() and truth is not None
                and not all(c.passed for c in truth)):
            found["halving"] = self._own_halving(p, candidate)
        return found
