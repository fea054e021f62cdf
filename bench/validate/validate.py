r"""``sgbench validate MODULE:OBJECT``: is a sampler someone wrote correct, and how fast is it?

The object is a :class:`samplers.Sampler` in the suite's contract, or an adapter of another library's
sampler (:mod:`sgbench.bench.adapters`). It runs on the validation targets (``sgbench.bench.validate.targets``:
Gaussian, non-Gaussian analytic, and a NUTS-referenced data posterior), from overdispersed starts, for a
warm-up and then the scored steps (``sgbench.bench.gate.start``), and is held, per target, to:

- *another implementation of a suite sampler* (``sgbench.bench.validate.claim``): the suite's implementation at
  the same (translated) hyperparameters, run from the same start law on 4 times the chains; that reference is
  itself held to truth by its exact discrete-time law, its stored design bias, or by its step ladder
  (``sgbench.bench.validate.step_ladder``), and the candidate is also checked against truth on its own;
- *the suite's sampler itself*: its exact discrete-time law where one exists (``sgbench.bench.gate.exact_law``),
  else its stored design bias, else exact truth;
- *no claim* (``claims="none"``, or an unregistered sampler): exact truth, :math:`\mathcal N(\mu, T\Sigma)`
  at ``temperature`` :math:`T` on the Gaussian targets; the non-Gaussian ones have a truth at T = 1 only, so
  at another temperature nothing there is held to truth (INCONCLUSIVE).

An importance sampler (an adapter with a ``log_weight``, whose draws follow another density) is held to truth
through its weights instead (``sgbench.bench.validate.weighted``).

``sgbench.bench.validate.plan`` says per target what runs and what the candidate is held to. Against truth, a
failed check is followed by the step ladder (the same run at h/2, h/4, ... for proportionally more steps): an
error that vanishes as the step shrinks is a consistent discretisation (PASSED, with its order and its bias at
the step), one that does not is a mistake (FAILED). ``sgbench.bench.validate.verdict`` turns the evidence into PASSED,
FAILED or INCONCLUSIVE per target; while an INCONCLUSIVE names a remedy (more chains, a longer warm-up, a rung of
the ladder, a smaller step) that fits in the budget, ``sgbench.bench.validate.session`` runs it and looks
again.

**Error budget.** A correct candidate with a correct reference is FAILED by chance with probability at
most ``ALPHA_RUN`` = 1e-3: Bonferroni over every statistical check the plan may make (candidate and
reference, every target), and over the looks of each check (look j at a 2^-j share of its rate).

**Compute budget.** ``budget`` (default ``DEFAULT_BUDGET``, 20 minutes) caps what the remedies spend; a remedy
that would not fit is not started, and the INCONCLUSIVE names the budget that would run it.

:func:`validate` computes: it returns a :class:`Validation` (the verdict, and what the page needs besides);
``sgbench.bench.validate.page.write`` renders it as the HTML report ``validate_<name>.html``.

The claims, the rules and the measured error rates: docs/gates_derivations.md, section sgbench.bench.validate.validate.
"""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np
import pandas as pd

from sgbench.base.arguments import integer_at_least
from sgbench.bench.adapters import AdaptedSampler
from sgbench.bench.gate import cells as gate_cells, gold_standard
from sgbench.bench.gate.outcome import Outcome
from sgbench.bench.gate.replicates import Replicates
from sgbench.bench.gate.resolution import DEFAULT_CHAINS, Resolution
from sgbench.bench.gate.runner import ALPHA_RUN
from sgbench.bench.running.sampler_fault import SamplerFault, guarded
from sgbench.bench.validate import targets as vt
from sgbench.bench.validate.budget import DEFAULT as DEFAULT_BUDGET, Account, Budget
from sgbench.bench.validate.claim import resolve_claim, split_params
from sgbench.bench.validate.plan import plan
from sgbench.bench.validate.result import Interrupted, Validation, page_path
from sgbench.bench.validate.session import Session
from sgbench.bench.validate.verdict import Verdict
from sgbench.bench.validate.weighted import validate_weighted
from sgbench.reference.metrics import ksd_of_target

KSD_DRAWS = 1000
THOROUGH = {"chains": 4, "steps": 2}  # --thorough multiplies the chains and steps by these


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


def validate(sampler, params: dict | None = None, claims: str | None = None, targets: str = "default",
             seed: int = 0, num_chains: int = DEFAULT_CHAINS, num_steps: int = gate_cells.NUM_STEPS,
             warmup: int | None = None, detect: float = Resolution().relative_variance, thorough: bool = False,
             rename: dict | None = None, reference_params: dict | None = None,
             out: Path = Path("reports") / "latest", progress=print, budget=DEFAULT_BUDGET) -> Validation:
    """Validate ``sampler`` (module docstring); its page is written by ``validate_page.write``.

    Args:
        sampler: a ``samplers.Sampler`` (or an AdaptedSampler).
        params: its hyperparameters; ``TARGET:NAME`` keys apply to one target only.
        claims: the suite sampler it implements, "none", or None (an adapter's claim, or its own name if
            registered).
        targets: comma-separated keys of ``sgbench.bench.validate.targets``, ``default`` or ``all``.
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
        budget: what the remedies of an INCONCLUSIVE may spend (``sgbench.bench.validate.budget``: a time such
            as "20min", or a number of gradient evaluations; a ``Budget``).

    Returns:
        The Validation. ValueError (naming the parameter) on bad input, before anything runs.
    """
    resolution = Resolution(detect)
    budget = Budget.parse(budget)
    chosen = vt.select(targets, thorough)
    if thorough:
        num_chains, num_steps = num_chains * THOROUGH["chains"], num_steps * THOROUGH["steps"]
    integer_at_least("num_chains (--chains)", num_chains, 2)
    integer_at_least("num_steps (--steps)", num_steps, 4)
    warmup = num_steps if warmup is None else integer_at_least("warmup (--warmup)", warmup, 0)
    if getattr(sampler, "log_weight", None) is not None:  # an importance sampler: its weighted estimates
        return validate_weighted(sampler, params, claims, chosen, seed, num_chains, num_steps, warmup, resolution,
                                 budget, out, progress)
    claim = resolve_claim(sampler, claims, rename, reference_params)
    per_target = split_params(dict(params or {}), [t.key for t in chosen])
    plans = [plan(sampler, claim, t, per_target[t.key], num_chains, num_steps, warmup) for t in chosen]
    alpha = ALPHA_RUN / max(1, sum(p.statistical_checks for p in plans))
    backend = sampler.backend if isinstance(sampler, AdaptedSampler) else "jax"  # its driver
    session = Session(sampler, claim, alpha, seed, progress, Account(budget, len(plans)), resolution, backend,
                      _metrics_row)
    progress(f"validating {getattr(sampler, 'name', sampler)} on {', '.join(p.key for p in plans)} within a budget "
             f"of {budget}")
    outcomes, reasons, faults = {}, {}, {}

    def validation() -> Validation:
        """What the targets decided so far (their rows only: an interrupted target's are left out)."""
        def table(rows):
            return pd.DataFrame([row for row in rows if row.get("target") in outcomes])

        verdict = Verdict(sampler.name, claim.name, dict(outcomes), dict(reasons), table(session.rows),
                          table(session.reference_rows), {p.key: p.basis(claim) for p in plans if p.key in outcomes},
                          table(session.travel_rows), table(session.metric_rows),
                          page_path(out, sampler.name),
                          {k: v for k, v in session.costs.items() if k in outcomes}, dict(faults),
                          tuple(p.key for p in plans if p.key not in outcomes))
        series = {label: tuple(map(tuple, values)) for label, values in session.series.items()}
        differences = sampler.differences if isinstance(sampler, AdaptedSampler) else ""
        return Validation(verdict, params, alpha, resolution, tuple(sorted({p.temperature for p in plans})), series,
                          differences, str(budget), seed)

    try:
        for t, p in zip(chosen, plans):
            replan = functools.partial(plan, sampler, claim, t, num_chains=num_chains)  # (params, num_steps=, warmup=)
            target = p.cell.make_target()
            reached = guarded(sampler, target, sampler.params_for(target, **p.cell.params),
                              gold_standard.truth_of(target).mean, backend, seed,
                              lambda p=p, replan=replan: session.examine(p, replan))
            if isinstance(reached, SamplerFault):
                reached, faults[p.key] = (Outcome.ERROR, reached.line), reached
            outcomes[p.key], reasons[p.key] = reached
            progress(f"on {p.key}: {outcomes[p.key].name}: {reasons[p.key]}")
    except KeyboardInterrupt as stopped:
        raise Interrupted(validation()) from stopped
    return validation()


