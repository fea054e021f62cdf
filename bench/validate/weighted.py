"""``sgbench validate`` of an importance sampler: an adapter with a ``log_weight`` (blackjax's contour SGLD), whose
draws follow another density than the target, is held to truth through its weights.

Per target, the weighted check (``sgbench.bench.validate.weighted_truth``) with its remedies, within the validation's
budget shared over the targets as ``validate``'s is; each target's share of the run's false-failure rate is
``ALPHA_RUN`` over the targets (the check splits it over its statistics, coordinates and looks). A target without
an exact truth at the sampler's temperature (``logreg``'s truth is a NUTS reference, ``gmm``'s is at T = 1 only) is
INCONCLUSIVE, saying so. An importance sampler claims no suite sampler: no suite sampler draws from its flattened
density, so a claim is refused before anything runs.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

from sgbench.bench.gate.outcome import Outcome
from sgbench.bench.gate.resolution import Resolution
from sgbench.bench.gate.runner import ALPHA_RUN
from sgbench.bench.running.sampler_fault import SamplerFault, guarded
from sgbench.bench.validate import targets as vt
from sgbench.bench.validate.budget import Account, Budget
from sgbench.bench.validate.claim import split_params
from sgbench.bench.validate.result import Interrupted, Validation, page_path
from sgbench.bench.validate.verdict import Verdict
from sgbench.bench.validate.weighted_truth import check_weighted

BASIS = "truth, through its importance weights (the weighted check)"


def _exact_truth(sampler, key: str, params: dict) -> tuple[bool, float]:
    """(whether ``key`` has an exact truth at the sampler's temperature at ``params``, that temperature); ValueError
    naming a bad hyperparameter."""
    target = _target(key)
    temperature = float(getattr(sampler.params_for(target, **params), "temperature", 1.0))
    return target.truth is not None and (temperature == 1.0 or vt.get(key).gaussian), temperature


def _target(key: str):
    from sgbench import targets

    spec = vt.get(key)
    return targets.get(spec.target, **spec.params)


def validate_weighted(sampler, params: dict | None, claims: str | None, chosen: list, seed: int, num_chains: int,
                      num_steps: int, warmup: int, resolution: Resolution, budget: Budget, out: Path,
                      progress) -> Validation:
    """The weighted validation of ``sampler`` on the validation targets ``chosen`` (module docstring); ValueError
    naming the parameter on bad input (a claim, a hyperparameter), before anything runs."""
    if claims not in (None, "none"):
        raise ValueError(f"claims (--claims): {sampler.name} is an importance sampler (its draws carry weights), "
                         f"held to truth through them; no suite sampler draws what it draws, so it claims none, got "
                         f"{claims!r}: leave --claims out")
    per_target = split_params(dict(params or {}), [t.key for t in chosen])
    exact = {t.key: _exact_truth(sampler, t.key, per_target[t.key]) for t in chosen}
    alpha = ALPHA_RUN / len(chosen)
    account = Account(budget, len(chosen))
    progress(f"validating {sampler.name} (an importance sampler: its weighted estimates) on "
             f"{', '.join(t.key for t in chosen)} within a budget of {budget}")
    outcomes, reasons, costs, faults, rows, travel, metrics, series = {}, {}, {}, {}, [], [], [], ([], [], [])

    def validation() -> Validation:
        """What the targets decided so far (an interrupted target's rows are left out: a target's rows are added only
        once it is decided)."""
        verdict = Verdict(sampler.name, None, dict(outcomes), dict(reasons), pd.DataFrame(rows), pd.DataFrame(),
                          {key: BASIS for key in outcomes}, pd.DataFrame(travel), pd.DataFrame(metrics),
                          page_path(out, sampler.name), dict(costs), dict(faults),
                          tuple(t.key for t in chosen if t.key not in outcomes))
        return Validation(verdict, params, alpha, resolution, tuple(sorted({e[1] for e in exact.values()})),
                          {sampler.name: tuple(map(tuple, series))} if series[0] else {}, sampler.differences,
                          str(budget), seed)

    def decide(t) -> None:
        """One target's check, its outcome, reason, cost and rows recorded."""
        account.start_target()
        has_truth, temperature = exact[t.key]
        if not has_truth:
            outcomes[t.key] = Outcome.INCONCLUSIVE
            reasons[t.key] = (f"{sampler.name}'s weighted estimates cannot be checked on {t.key}: it has no exact "
                              f"truth at temperature {temperature:g} (the weighted check needs one)")
            progress(f"on {t.key}: {outcomes[t.key].name}: {reasons[t.key]}")
            return
        seconds, evals = account.seconds, account.grad_evals
        target = _target(t.key)
        check = guarded(sampler, target, sampler.params_for(target, **per_target[t.key]), target.truth.mean, "jax",
                        seed, lambda key=t.key: check_weighted(
                            sampler, per_target[key], target_key=key, num_chains=num_chains, num_steps=num_steps,
                            warmup=warmup, seed=seed, detect=resolution.relative_variance, alpha=alpha,
                            progress=progress, account=account))
        costs[t.key] = (account.seconds - seconds, account.grad_evals - evals)
        if isinstance(check, SamplerFault):
            outcomes[t.key], reasons[t.key], faults[t.key] = Outcome.ERROR, check.line, check
            progress(f"on {t.key}: ERROR: {check.line}")
            return
        outcomes[t.key], reasons[t.key] = check.outcome, check.reason
        progress(f"on {t.key}: {check.outcome.name}: {check.reason}")
        rows.extend({"target": t.key, "of": "truth (weighted)", **c.as_row(),
                     "largest_detectable": float(np.nanmax(np.atleast_1d(c.detectable)))} for c in check.checks)
        travel.append(check.travel.row(t.key, sampler.name))
        errors = np.asarray(check.variance_error, dtype=float)
        metrics.append({"sampler": sampler.name, "target": t.key, "chains": check.num_chains,
                        "max |r| (weighted)": float(np.max(np.abs(errors))) if errors.size else math.nan,
                        "weight_ess": check.weight_ess, "ratio_bias": check.ratio_bias,
                        "diverged_chains": check.diverged, "grad_evals_per_s": check.grad_evals_per_second})
        if np.all(np.isfinite(errors)):
            series[0].append(t.key)
            series[1].append(errors)
            series[2].append(np.asarray(check.variance_error_se, dtype=float))

    try:
        for t in chosen:
            decide(t)
    except KeyboardInterrupt as stopped:
        raise Interrupted(validation()) from stopped
    return validation()
