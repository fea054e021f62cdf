r"""The runs of one ``sgbench validate`` and the remedies it applies within its budget.

Per target (a :class:`~sgbench.bench.validate.plan.Plan`) the candidate runs once (and the claimed
reference, on 4 times the chains); the evidence is checked (``sgbench.bench.validate.verdict``); while the outcome is
INCONCLUSIVE and names a remedy (``verdict.remedy``) whose predicted cost fits in the target's share of the
budget (``sgbench.bench.validate.budget``), the remedy runs and the evidence is checked again:

- *chains*: more chains for the candidate (and 4 times as many for the reference, where the candidate is resolved
  against it; none where the candidate is resolved against truth on its own), to the number predicted from the
  measured standard errors;
- *warm-up*: both runs again with the warm-up the autocorrelation time asks for; chains whose variance error
  grew as the warm-up grew have no stationary law (FAILED);
- *the step ladder* (``sgbench.bench.validate.step_ladder``) for a candidate held to truth whose checks failed, and for
  a claimed reference no exact law or design bias holds; an undecided ladder gets more chains on every rung or a
  finer rung;
- *a smaller step* where the candidate and the reference both diverged.

Every look at the evidence spends a share of each check's false-failure rate: look :math:`j` tests at
:math:`\alpha/2^j` (``look_alpha``), so that over all looks a correct candidate is FAILED with probability at most
:math:`\alpha` per check (the union bound), whatever the looks decided; a step ladder's *vanishes* spends its
miss rate alike (look :math:`j` at ``MISS``:math:`/2^j`), so that an error that tends to ``detect`` is declared
vanishing with probability at most ``MISS`` over all looks.
"""

from __future__ import annotations

import dataclasses
import math
import time

import numpy as np
import scipy.stats

from sgbench.bench.gate.outcome import Outcome
from sgbench.bench.gate.replicates import Replicates, run_replicates
from sgbench.bench.gate.resolution import Resolution
from sgbench.bench.gate.truth import truth_checks
from sgbench.bench.validate.budget import Account, Rates
from sgbench.bench.validate.plan import REFERENCE_GROUPS, Plan, described, truth_kind
from sgbench.bench.validate.step_ladder import (
    FIRST_RUNGS,
    MAX_RUNGS,
    STEP,
    Ladder,
    healthy_values,
    rung,
    rung_cost,
    tails_too_heavy,
)
from sgbench.bench.validate.verdict import Evidence, LadderFinding, Remedy, decide, remedy
from sgbench.reference.checks import standard_error
from sgbench.reference.checks.vanishing_bias import MISS, PERSISTS, UNDECIDED, VANISHES

CHAINS_MARGIN = 1.2  # more chains: this many times the number predicted to decide
MAX_LOOKS = 8
MAX_STEP_HALVINGS = 3


def look_alpha(alpha: float, look: int) -> float:
    """The rate of look ``look`` (1, 2, ...) of a check whose rate over all looks is ``alpha``."""
    return alpha / 2**look


def merged(a: Replicates, b: Replicates) -> Replicates:
    """The chains of ``a`` and ``b`` (runs of cells that differ at most in their chains) as one run."""
    def flat(x):
        return None if x is None else x.reshape(1, -1, *x.shape[2:])

    def joined(x, y):
        return None if x is None or y is None else np.concatenate([flat(x), flat(y)], axis=1)

    chains_a, chains_b = a.diverged.size, b.diverged.size
    return dataclasses.replace(
        a, cell=dataclasses.replace(a.cell, num_chains=chains_a + chains_b),
        mean_error=joined(a.mean_error, b.mean_error), second_moment_error=joined(a.second_moment_error,
                                                                                  b.second_moment_error),
        diverged=joined(a.diverged, b.diverged), start=joined(a.start, b.start),
        samples=joined(a.samples, b.samples), results=a.results + b.results, seconds=a.seconds + b.seconds,
        grad_evals_per_chain=(a.grad_evals_per_chain * chains_a + b.grad_evals_per_chain * chains_b)
        / (chains_a + chains_b))


def as_one_run(rep: Replicates) -> Replicates:
    """All groups' chains of ``rep`` as one run (one group)."""
    dim = rep.mean_error.shape[-1]
    return dataclasses.replace(rep, mean_error=rep.mean_error.reshape(1, -1, dim),
                               second_moment_error=rep.second_moment_error.reshape(1, -1, dim),
                               diverged=rep.diverged.reshape(1, -1), start=None)


def at_temperature(rep: Replicates, temperature: float, tempered: bool) -> Replicates:
    r"""``rep``'s errors against the target at ``temperature`` :math:`T`: on a Gaussian target (``tempered``)
    :math:`\mathcal N(\mu, T\Sigma)`, so :math:`m/\sqrt T` and :math:`(1 + r)/T - 1`; elsewhere unchanged (their
    truth is at T = 1)."""
    if not tempered or temperature == 1.0:
        return rep
    return dataclasses.replace(rep, mean_error=rep.mean_error / np.sqrt(temperature),
                               second_moment_error=(1 + rep.second_moment_error) / temperature - 1)


@dataclasses.dataclass
class _Runs:
    """What one target has run so far: the plan (replaced by a longer warm-up's or a smaller step's, made by
    ``replan(params, num_steps=, warmup=)``), the candidate's and the reference's runs, the warm-ups tried with the
    candidate's mean variance error at each, the ladders, and the look being made (1, 2, ...)."""

    plan: Plan
    replan: object = None
    candidate: Replicates | None = None
    reference: Replicates | None = None
    warmups: list = dataclasses.field(default_factory=list)
    ladder: Ladder | None = None
    reference_ladder: Ladder | None = None
    halvings: int = 0
    look: int = 0
    notes: list = dataclasses.field(default_factory=list)


class Session:
    """One validation's runs and what they showed: the check rows, the reference's rows, the travel and metric
    rows and the plotted series, filled as :meth:`examine` goes through the plans; ``costs`` per target the
    seconds and gradient evaluations spent."""

    def __init__(self, sampler, claim, alpha: float, seed: int, progress, account: Account, resolution: Resolution,
                 backend: str, metrics_row):
        self.sampler, self.claim, self.alpha, self.seed, self.progress = sampler, claim, alpha, seed, progress
        self.account, self.resolution, self.backend, self.metrics_row = account, resolution, backend, metrics_row
        self.rows, self.reference_rows, self.metric_rows, self.travel_rows, self.series = [], [], [], [], {}
        self.costs = {}
        self._offset = 0

    # -- runs -----------------------------------------------------------------------------------------------

    def _run(self, key: str, cell, label: str, candidate: bool, groups: int = 1) -> Replicates:
        """``groups`` x ``cell.num_chains`` chains of ``cell`` on target ``key``, from a seed no other run of the
        validation used, charged to the budget."""
        self._offset += 1
        self.progress(f"on {key}: running {label} ({groups * cell.num_chains} chains, {cell.num_burnin} warm-up + "
                      f"{cell.num_steps} scored steps)")
        options = dict(sampler=self.sampler, backend=self.backend) if candidate else {}
        started = time.perf_counter()
        rep = run_replicates(cell, groups=groups, seed=self.seed + 1000 * self._offset, keep_samples=True,
                             thin=cell.thin, **options)
        self.account.charge(time.perf_counter() - started, rep.grad_evals_per_chain * rep.diverged.size)
        self.metric_rows.append(self.metrics_row(label, rep, cell.make_target(), key))
        return rep

    @staticmethod
    def _rates(rep: Replicates) -> Rates:
        chain_steps = rep.diverged.size * (rep.cell.num_burnin + rep.cell.num_steps)
        return Rates(rep.seconds / chain_steps, rep.grad_evals_per_chain * rep.diverged.size / chain_steps)

    # -- one target -----------------------------------------------------------------------------------------

    def examine(self, p: Plan, replan) -> tuple[Outcome, str]:
        """Decide target ``p`` (module docstring): its outcome and reason. ``replan(params, num_steps=, warmup=)``
        makes the plan of the same target at other settings (its laws and design biases with them)."""
        self.account.start_target()
        spent = (self.account.seconds, self.account.grad_evals)
        runs = _Runs(p, replan)
        self._first_runs(runs)
        while True:
            runs.look += 1
            evidence, rows, reference_rows = self._evidence(runs, look_alpha(self.alpha, runs.look))
            outcome, reason = decide(evidence, self.resolution)
            fix = remedy(evidence, self.resolution) if outcome is Outcome.INCONCLUSIVE else None
            if fix is None:
                break
            if runs.look >= MAX_LOOKS:
                reason += f"; {fix.words} would decide, but this target has had its {MAX_LOOKS} looks"
                break
            cost = self._cost(runs, fix)
            if cost is None:
                reason += (f"; {fix.words} would be next, beyond the ladder's {MAX_RUNGS} rungs or the "
                           f"{MAX_STEP_HALVINGS} halvings of the step that validate makes")
                break
            if not self.account.affords(*cost):
                reason += (f"; {fix.words} would decide, at a predicted {cost[0]:.0f} s and {cost[1]:.3g} gradient "
                           f"evaluations: beyond this target's share of the budget ({self.account.budget}); "
                           f"--budget {self.account.would_decide(*cost)} would run it")
                break
            self.progress(f"on {p.key}: {fix.words} (predicted {cost[0]:.0f} s)")
            self._apply(runs, fix)
        self.rows += rows
        self.reference_rows += reference_rows
        self._record_travel_and_series(runs)
        if runs.notes:
            reason = f"{'; '.join(runs.notes)}; {reason}"
        self.costs[p.key] = (self.account.seconds - spent[0], self.account.grad_evals - spent[1])
        return outcome, reason

    def _first_runs(self, runs: _Runs) -> None:
        p = runs.plan
        runs.candidate = self._run(p.key, p.cell, self.sampler.name, candidate=True)
        if p.reference is not None and not runs.candidate.travel().still:
            runs.reference = self._run(p.key, p.reference, f"suite {self.claim.name}", candidate=False,
                                       groups=REFERENCE_GROUPS)
        runs.warmups.append((p.cell.num_burnin, self._variance_errors(runs),
                             dataclasses.replace(runs.candidate.travel(), strict=True).forgot,
                             p.cell.num_burnin + p.cell.num_steps / 2))  # the scored window's middle

    def _variance_errors(self, runs: _Runs):
        """The candidate's per-coordinate r over its healthy chains and their standard errors."""
        values, _ = healthy_values(runs.candidate, self._at_truth(runs.plan, runs.plan.temperature))
        r = values["second_moment_error"]
        return (r.mean(axis=0), standard_error(r)) if len(r) > 1 else None

    def _at_truth(self, p: Plan, temperature: float):
        return lambda rep: as_one_run(at_temperature(rep, temperature, p.target.gaussian))

    # -- evidence -------------------------------------------------------------------------------------------

    def _evidence(self, runs: _Runs, alpha: float) -> tuple[Evidence, list, list]:
        p, candidate = runs.plan, runs.candidate
        travel = dataclasses.replace(candidate.travel(), strict=True)
        found = dict(name=self.sampler.name, against=p.against, chains=int(candidate.diverged.size),
                     diverged=int(candidate.diverged.sum()), travel=travel,
                     unstationary=self._unstationary(runs, alpha))
        rows, reference_rows = [], []
        if p.reference is None:
            found.update(self._against_law_or_truth(runs, travel, alpha, rows))
        else:
            found.update(self._against_reference(runs, travel, alpha, rows, reference_rows))
        return Evidence(**found), rows, reference_rows

    def _unstationary(self, runs: _Runs, alpha: float) -> str | None:
        r"""Whether the candidate's variance error grew significantly as the warm-up grew (one-sided z-test per
        coordinate between the first and the last warm-up tried, Bonferroni) in a way no relaxing chain's does: after
        its chains forgot their start at the first warm-up, or at least half as fast as a random walk's, whose
        variance grows in proportion to the time (:math:`(1 + r_1)/(1 + r_0) - 1 \ge \frac12 (t_1/t_0 - 1)`,
        :math:`t = W + N/2` the middle of each run's scored window): then it has no stationary law. A chain still
        relaxing towards a wider stationary law than its start (a slow mode, minibatch noise that heats it) grows
        more slowly, ever more so. Not made on heavy-tailed chains, where the z-test's CLT fails."""
        if (len(runs.warmups) < 2 or runs.warmups[0][1] is None or runs.warmups[-1][1] is None
                or runs.plan.cell.heavy_tailed):
            return None
        (w0, (r0, se0), forgot, t0), (w1, (r1, se1), _, t1) = runs.warmups[0], runs.warmups[-1]
        z = (r1 - r0) / np.hypot(se0, se1)
        critical = float(scipy.stats.norm.isf(alpha / z.size))
        worst = int(np.argmax(z))
        if z[worst] <= critical:
            return None
        if not forgot and (1 + r1[worst]) / (1 + r0[worst]) - 1 < 0.5 * (t1 / t0 - 1):
            return None
        return (f"its variance keeps growing as the warm-up grows: r {r0[worst]:.3g} after {w0} warm-up steps, "
                f"{r1[worst]:.3g} after {w1} in coordinate {worst} (z = {z[worst]:.3g} against {critical:.3g}): "
                "it has no stationary law")

    def _check_rows(self, key: str, of: str, checks) -> list[dict]:
        return [{"target": key, "of": of, **c.as_row(), "largest_detectable":
                 float(np.nanmax(np.atleast_1d(c.detectable))) if np.size(c.detectable) else np.nan} for c in checks]

    def _against_law_or_truth(self, runs: _Runs, travel, alpha: float, rows: list) -> dict:
        p, candidate = runs.plan, runs.candidate
        if p.kind == "none":
            return dict(agreement=())
        against_truth = at_temperature(candidate, p.temperature, p.target.gaussian)
        checks = truth_checks(as_one_run(candidate if p.kind == "law" else against_truth), p.design, alpha,
                              quadrature=True)
        rows += self._check_rows(p.key, p.against.split(" (")[0], checks)
        ladder = None
        if (p.kind == "truth" and not all(c.passed for c in checks) and travel.forgot
                and not candidate.diverged.any() and STEP in p.cell.params):
            ladder = self._ladder_finding(runs, "ladder", p.cell, p.temperature, alpha, rows, candidate=True)
        return dict(agreement=tuple(checks), ladder=ladder)

    def _against_reference(self, runs: _Runs, travel, alpha: float, rows: list, reference_rows: list) -> dict:
        p, candidate, name = runs.plan, runs.candidate, self.claim.name
        truth = None
        if truth_kind(p.temperature, p.target) == "truth":
            truth = tuple(truth_checks(as_one_run(at_temperature(candidate, p.temperature, p.target.gaussian)),
                                       p.design, alpha, quadrature=True))
            rows += self._check_rows(p.key, "truth", truth)
        found = dict(truth=truth, reference=name, reference_chains=REFERENCE_GROUPS * p.cell.num_chains,
                     agreement=(), held=(False, "not run"))
        if runs.reference is None:  # the candidate does not move: FAILED whatever the reference does
            return found
        reference = runs.reference
        reference_travel = dataclasses.replace(reference.travel(), strict=True)
        found.update(reference_chains=int(reference.diverged.size), reference_travel=reference_travel,
                     reference_diverged=int(reference.diverged.sum()))
        if found["reference_diverged"]:
            found["held"] = (False, f"it diverged in {found['reference_diverged']} chains")
        else:
            agreement = truth_checks(as_one_run(candidate), as_one_run(reference).summary(), alpha, quadrature=True)
            rows += self._check_rows(p.key, f"suite {name}", agreement)
            needed = not (truth and all(c.passed for c in agreement) and all(c.passed for c in truth))
            held_checks, held, why, reference_ladder = self._hold_to_truth(runs, reference_travel, alpha, rows,
                                                                           ladder=needed)
            reference_rows += self._check_rows(p.key, f"suite {name}", held_checks)
            found.update(agreement=tuple(agreement), held=(held, why), reference_ladder=reference_ladder)
        unexplained = found["reference_diverged"] or not found["held"][0]
        if (unexplained and travel.forgot and not candidate.diverged.any() and truth is not None
                and not all(c.passed for c in truth) and STEP in p.cell.params):
            found["ladder"] = self._ladder_finding(runs, "ladder", p.cell, p.temperature, alpha, rows, candidate=True)
        return found

    def _hold_to_truth(self, runs: _Runs, travel, alpha: float, rows: list, ladder: bool):
        """The claimed reference's checks against truth (its law or stored design bias, or its step ladder, run
        only if ``ladder``: not where the candidate agrees with it and with truth on its own, which decides without
        it), given how far its chains travelled: (checks, held, why not in words, the ladder's finding or None)."""
        p, name = runs.plan, self.claim.name
        if truth_kind(p.reference_temperature, p.target) == "none":
            return [], False, f"this target has no truth at temperature {p.reference_temperature:g}", None
        if not travel.forgot:
            return [], False, f"for the suite's {name} {travel.describe()}", None
        if p.reference_design is not None:
            checks = truth_checks(as_one_run(runs.reference), p.reference_design, alpha, quadrature=True)
            failed = sorted(c.name for c in checks if not c.passed)
            return checks, not failed, (f"the suite's {name} disagrees with {described(p.reference_design, '')} "
                                        f"({', '.join(failed)} failed)"), None
        if STEP not in p.reference.params:
            return [], False, f"the suite's {name} has no {STEP} to shrink and no exact law or design bias for these " \
                "settings", None
        if not ladder:
            return [], False, f"the suite's {name} has no exact law or design bias here, and its step ladder was " \
                "not needed", None
        finding = self._ladder_finding(runs, "reference_ladder", p.reference, p.reference_temperature, alpha, rows,
                                       candidate=False)
        return [], finding.outcome == VANISHES, f"for the suite's {name}, {finding.words}", finding

    # -- the step ladder ------------------------------------------------------------------------------------

    def _ladder_finding(self, runs: _Runs, which: str, cell, temperature: float, alpha: float, rows: list,
                        candidate: bool) -> LadderFinding:
        """The fit of ``runs``' ladder ``which`` ("ladder": the candidate's, "reference_ladder"), its first rungs
        run if they were not and the budget allows."""
        ladder = getattr(runs, which)
        if ladder is None:
            first = runs.candidate if candidate else runs.reference
            chains = first.diverged.size
            values, diverged = healthy_values(first, self._at_truth(runs.plan, temperature))
            heavy = tails_too_heavy(values)
            if heavy:
                return LadderFinding(UNDECIDED, heavy)
            cost = self._ladder_cost(first, [rung_cost(cell, k, chains) for k in range(1, FIRST_RUNGS)])
            if not self.account.affords(*cost):
                return LadderFinding(UNDECIDED, f"the step ladder ({FIRST_RUNGS} rungs, to h/{2 ** (FIRST_RUNGS - 1)}) "
                                     f"was not run: at a predicted {cost[0]:.0f} s it is beyond this target's share "
                                     f"of the budget; --budget {self.account.would_decide(*cost)} would run it")
            ladder = Ladder(cell, [values], [diverged])
            setattr(runs, which, ladder)
            while len(ladder.rungs) < FIRST_RUNGS and self._add_rung(runs, which, candidate, temperature):
                pass
        return self._fit(runs.plan.key, ladder, alpha, look_alpha(MISS, runs.look), rows, "its step ladder"
                         if candidate else f"suite {self.claim.name}'s step ladder", runs.plan.design)

    def _add_rung(self, runs: _Runs, which: str, candidate: bool, temperature: float) -> bool:
        ladder = getattr(runs, which)
        values, diverged = self._rung_run(runs, ladder, len(ladder.rungs), ladder.chains(0), candidate, temperature)
        ladder.add_rung(values, diverged)
        return diverged == 0

    def _rung_run(self, runs: _Runs, ladder: Ladder, k: int, chains: int, candidate: bool, temperature: float):
        """``chains`` new chains (in the candidate's groups, or the reference's) on rung ``k`` of ``ladder``: their
        values against truth and the number that diverged (``step_ladder.healthy_values``)."""
        groups = 1 if candidate else REFERENCE_GROUPS
        cell = dataclasses.replace(rung(ladder.cell, k), num_chains=max(2, math.ceil(chains / groups)))
        label = (self.sampler.name if candidate else f"suite {self.claim.name}") + f" at h/{2 ** k}"
        rep = self._run(runs.plan.key, cell, label, candidate=candidate, groups=groups)
        return healthy_values(rep, self._at_truth(runs.plan, temperature))

    def _fit(self, key: str, ladder: Ladder, alpha: float, miss: float, rows: list, of: str,
             truth: dict | None) -> LadderFinding:
        """The ladder's finding at the look's rates ``alpha`` and ``miss`` (``vanishing_bias.ladder_fit``)."""
        diverged = [(k, n) for k, n in enumerate(ladder.diverged) if n]
        if diverged:
            k, n = diverged[0]
            words = f"it diverged in {n} chains at h/{2 ** k} = {ladder.steps[k]:.3g}"
            return LadderFinding(PERSISTS, words, diverged=True)
        if len(ladder.rungs) < 3:
            return LadderFinding(UNDECIDED, "the step ladder has fewer than 3 rungs")
        fit = ladder.fit(alpha, miss, self.resolution.relative_variance, truth)
        series = fit.series[fit.worst]
        rows.append({"target": key, "of": of, "name": "step_ladder", "passed": fit.outcome != PERSISTS,
                     "alpha": alpha, "statistic": series.smallest_t, "threshold": float("nan"),
                     "estimate": series.b0, "expected": 0.0, "standard_error": series.b0_se,
                     "detectable": float("nan"), "largest_detectable": float("nan"), "order": series.p,
                     "error_at_step": series.error_at_step, "rungs": len(ladder.rungs), "outcome": fit.outcome})
        return LadderFinding(fit.outcome, fit.describe(), fit=fit, rungs=len(ladder.rungs))

    # -- remedies -------------------------------------------------------------------------------------------

    def _ladder_cost(self, first: Replicates, chain_steps) -> tuple[float, float]:
        return self._rates(first).cost(float(sum(chain_steps)))

    def _cost(self, runs: _Runs, fix: Remedy) -> tuple[float, float] | None:
        """The predicted (seconds, gradient evaluations) of ``fix`` on ``runs`` (None: it cannot be applied)."""
        p, candidate, reference = runs.plan, runs.candidate, runs.reference
        span = p.cell.num_burnin + p.cell.num_steps
        per_call = self.claim.steps_per_call(p.cell.params) if p.reference is not None else 1
        if fix.kind in ("chains", "candidate_chains"):
            extra = self._new_groups(runs, fix) * p.cell.num_chains
            cost = self._rates(candidate).cost(extra * span)
            if reference is not None and fix.kind == "chains":
                cost = np.add(cost, self._rates(reference).cost(REFERENCE_GROUPS * extra * span * per_call))
            return tuple(cost)
        if fix.kind in ("warmup", "step"):
            if fix.kind == "step" and (runs.halvings >= MAX_STEP_HALVINGS or STEP not in p.cell.params):
                return None
            longer = (fix.steps or p.cell.num_steps) + fix.amount if fix.kind == "warmup" else 2 * span
            cost = self._rates(candidate).cost(candidate.diverged.size * longer)
            if reference is not None:
                cost = np.add(cost, self._rates(reference).cost(reference.diverged.size * longer * per_call))
            return tuple(cost)
        ladder = runs.ladder if fix.kind.startswith("ladder") else runs.reference_ladder
        first = candidate if fix.kind.startswith("ladder") else reference
        if fix.kind.endswith("rung"):
            k = len(ladder.rungs)
            return None if k >= MAX_RUNGS else self._ladder_cost(first, [rung_cost(ladder.cell, k, ladder.chains(0))])
        factor = CHAINS_MARGIN * fix.amount
        return self._ladder_cost(first, [rung_cost(ladder.cell, k, math.ceil(ladder.chains(k) * (factor - 1)))
                                         for k in range(len(ladder.rungs))])

    @staticmethod
    def _new_groups(runs: _Runs, fix: Remedy) -> int:
        """The groups of the cell's chains that "more chains" adds: to ``CHAINS_MARGIN`` times the number
        predicted (at this look's critical value; the next look's is larger), in whole groups, at least one."""
        extra = math.ceil(CHAINS_MARGIN * fix.amount) - runs.candidate.diverged.size
        return max(1, math.ceil(extra / runs.plan.cell.num_chains))

    def _apply(self, runs: _Runs, fix: Remedy) -> None:
        p = runs.plan
        if fix.kind in ("chains", "candidate_chains"):
            groups = self._new_groups(runs, fix)
            runs.candidate = merged(runs.candidate, self._run(p.key, p.cell, self.sampler.name, True, groups))
            if runs.reference is not None and fix.kind == "chains":
                runs.reference = merged(runs.reference, self._run(p.key, p.reference, f"suite {self.claim.name}",
                                                                  False, REFERENCE_GROUPS * groups))
        elif fix.kind == "warmup":
            runs.plan = runs.replan(p.cell.params, num_steps=fix.steps or p.cell.num_steps,
                                    warmup=int(math.ceil(fix.amount)))
            runs.ladder = runs.reference_ladder = None
            self._first_runs(runs)
        elif fix.kind == "step":
            runs.notes.append(f"at {p.cell.params[STEP]:g} both {self.sampler.name} and the suite's "
                              f"{self.claim.name} diverged, so it is checked at {p.cell.params[STEP] / 2:g}")
            runs.plan = runs.replan({**p.cell.params, STEP: p.cell.params[STEP] / 2}, num_steps=2 * p.cell.num_steps,
                                    warmup=2 * p.cell.num_burnin)
            runs.ladder, runs.reference_ladder, runs.warmups = None, None, []
            runs.halvings += 1
            self._first_runs(runs)
        else:
            candidate = fix.kind.startswith("ladder")
            which = "ladder" if candidate else "reference_ladder"
            temperature = p.temperature if candidate else p.reference_temperature
            ladder = getattr(runs, which)
            if fix.kind.endswith("rung"):
                self._add_rung(runs, which, candidate, temperature)
                return
            for k in range(len(ladder.rungs)):
                extra = math.ceil(ladder.chains(k) * (CHAINS_MARGIN * fix.amount - 1))
                ladder.add_chains(k, *self._rung_run(runs, ladder, k, extra, candidate, temperature))

    # -- what the page shows --------------------------------------------------------------------------------

    def _record_travel_and_series(self, runs: _Runs) -> None:
        p = runs.plan
        for label, rep, temperature in ((self.sampler.name, runs.candidate, p.temperature),
                                        (f"suite {self.claim.name}", runs.reference, p.reference_temperature)):
            if rep is None:
                continue
            travel = dataclasses.replace(rep.travel(), strict=True)
            self.travel_rows.append(travel.row(p.key, label))
            summary = as_one_run(at_temperature(rep, temperature, p.target.gaussian)).summary()
            if summary["num_chains"]:
                names, means, ses = self.series.setdefault(label, ([], [], []))
                names.append(p.key)
                means.append(summary["second_moment_error"])
                ses.append(summary["second_moment_error_se"])

