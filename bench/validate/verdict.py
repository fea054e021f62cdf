r"""How ``sgbench validate`` turns one target's evidence into PASSED, FAILED or INCONCLUSIVE, and the verdict
over all targets.

The evidence on a target (:class:`Evidence`): the candidate's divergences and travel (``sgbench.bench.gate.start``);
its agreement checks with what it is held to (the claimed reference's run, an exact discrete-time law, a
stored design bias, or exact truth); when a reference is claimed, the candidate's checks against truth on
its own and whether the reference itself is held to truth (``held``: by its law, its design bias, or its step
ladder); for a sampler held to truth whose checks failed, whether its error vanishes as the step shrinks (its
step ladder, ``ladder``: ``sgbench.bench.validate.step_ladder``). The rules, in order:

1. *Divergence.* The candidate diverged: FAILED, unless the claimed reference diverged too (INCONCLUSIVE:
   the settings are unstable on this target; the remedy is a smaller step).
2. *Does not move*: FAILED. *No stationary law* (its variance error grew as the warm-up grew): FAILED.
3. *Against a claimed reference* (run from the same starts, so the comparison holds whether or not the
   chains forgot them): disagreement is FAILED when the reference is held to truth, or when the candidate
   also disagrees with truth on its own (after forgetting its start) by an error that does not vanish as
   its step shrinks; otherwise INCONCLUSIVE. Agreement
   is PASSED when the chains forgot their start, the reference is held to truth (or the candidate agrees
   with truth on its own) and the checks resolve the bias asked for (``sgbench.bench.gate.resolution``). An
   agreeing candidate off truth, beside a reference that cannot be held to truth, is FAILED when its error does
   not vanish as its step shrinks (it samples another law, whatever it shares with the reference); else
   INCONCLUSIVE with the reason. A reference that diverged cannot be compared with: FAILED only if the
   candidate disagrees with truth on its own by an error that does not vanish, else INCONCLUSIVE.
4. *Against a law, a design bias or truth*: disagreement after forgetting is FAILED, except against
   truth, where the step ladder decides: an error that does not vanish is FAILED, one that vanishes (within
   the bias asked for) PASSED: a consistent discretisation, with its order and its bias at the step;
   disagreement before forgetting is INCONCLUSIVE (the start's memory may explain it). Agreement is
   PASSED when the chains forgot their start and the checks resolve the bias asked for.

Every INCONCLUSIVE that a computation could decide names it (:func:`remedy`): more chains, a longer warm-up,
chains or a finer rung for a step ladder (the chains that the fit predicts would decide it; a finer rung, which
costs as much as the ladder so far and moves the fit to smaller steps, where no number of chains would), a
smaller step; ``sgbench.bench.validate.session`` runs it within the budget.

Over targets: FAILED if any target failed, else INCONCLUSIVE if any is, else PASSED (``sgbench.bench.gate.outcome``).
"""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import pandas as pd

from sgbench.bench.gate.outcome import Outcome, combined
from sgbench.bench.gate.resolution import Resolution
from sgbench.bench.gate.start import Travel
from sgbench.reference.checks.vanishing_bias import PERSISTS, UNDECIDED, VANISHES

WARMUP_MARGIN = 1.5  # a longer warm-up is this many times what the autocorrelation time asks for

SUMMARY_COLUMNS = ("target", "name", "passed", "statistic", "threshold", "estimate", "expected", "standard_error",
                   "detectable")


@dataclasses.dataclass(frozen=True)
class LadderFinding:
    """What a step ladder showed: ``outcome`` (``vanishes``, ``persists`` or ``undecided``), in ``words``;
    ``fit`` (the ``LadderFit``; None where it did not run, or ``diverged``: a rung diverged), ``rungs`` run."""

    outcome: str
    words: str
    fit: object = None
    rungs: int = 0
    diverged: bool = False


@dataclasses.dataclass(frozen=True)
class Remedy:
    """What would decide an INCONCLUSIVE: ``kind`` ("chains": ``amount`` chains for the candidate, and the reference's
    chains grown with them; "candidate_chains": ``amount`` chains for the candidate alone, where it is resolved
    against truth on its own and the reference only has to agree; "warmup": ``amount`` warm-up steps; "ladder": the
    first rungs of a step ladder (the weighted check's); "ladder_chains" / "reference_ladder_chains": ``amount``
    times the chains on every rung of the candidate's or the reference's ladder; "ladder_rung" /
    "reference_ladder_rung": a finer rung; "step": half the step for both), in ``words``; ``steps``: for "warmup",
    the scored steps too, where the autocorrelation time was at the window's resolution (None: as they were)."""

    kind: str
    amount: float
    words: str
    steps: int | None = None


@dataclasses.dataclass(frozen=True)
class Evidence:
    """What one target's runs showed (module docstring). ``against``: what the candidate is held to, in
    words (an empty ``agreement`` with ``held`` None: there is nothing to hold it to, the reason in
    ``against``); ``truth``: its checks against truth on its own (None: no truth at its temperature on this
    target); ``reference``: the claimed suite sampler's name (None: none ran); ``held``: (whether the
    reference is held to truth, why not); ``ladder``: for a candidate held to truth whose check failed, its step
    ladder's :class:`LadderFinding` (None: not run); ``reference_ladder`` the reference's (None: held otherwise);
    ``reference_travel`` how far the reference's chains travelled; ``unstationary``: why the candidate has no
    stationary law, in words (None: no such finding)."""

    name: str
    against: str
    chains: int
    diverged: int
    travel: Travel
    agreement: tuple
    truth: tuple | None = ()
    reference: str | None = None
    reference_chains: int = 0
    reference_diverged: int = 0
    held: tuple[bool, str] | None = None
    ladder: LadderFinding | None = None
    reference_ladder: LadderFinding | None = None
    reference_travel: Travel | None = None
    unstationary: str | None = None


def _failed(checks) -> list[str]:
    return sorted(c.name for c in checks if not c.passed)


def _resolved(e: Evidence, checks, resolution: Resolution, claim: str) -> tuple[Outcome, str]:
    short = resolution.shortfalls(checks, e.chains)
    if short:
        return Outcome.INCONCLUSIVE, f"{claim}, but {'; '.join(short)}"
    return Outcome.PASSED, claim


def _off_truth(e: Evidence, finding: str) -> tuple[Outcome, str]:
    """A disagreement with truth at the step (``finding``, in words), decided by the candidate's step ladder: FAILED
    where its error does not vanish as the step shrinks (or no ladder can be run: no ``step_size``), PASSED where
    it vanishes (a consistent discretisation), else INCONCLUSIVE."""
    if e.ladder is None:
        return Outcome.FAILED, finding
    if e.ladder.outcome == VANISHES:
        return Outcome.PASSED, (f"{finding} at its step, a discretisation bias: {e.ladder.words} (a bias of the "
                                "right order but the wrong size is not seen without a claim: --claims)")
    if e.ladder.outcome == PERSISTS:
        return Outcome.FAILED, f"{finding}; {e.ladder.words}"
    return Outcome.INCONCLUSIVE, f"{finding}; {e.ladder.words}"


def _unconfirmed(decided: tuple[Outcome, str]) -> tuple[Outcome, str]:
    """A claim whose reference could not be compared with or held to truth is never PASSED on the candidate's
    ladder alone: its error vanishing makes it a consistent sampler, not the claimed one (INCONCLUSIVE)."""
    outcome, reason = decided
    if outcome is Outcome.PASSED:
        return Outcome.INCONCLUSIVE, reason + "; but the claim itself cannot be confirmed here"
    return outcome, reason


def decide(e: Evidence, resolution: Resolution) -> tuple[Outcome, str]:
    """The outcome on one target and its reason in words (module docstring)."""
    if e.diverged:
        lost = f"{e.name} diverged in {e.diverged} of {e.chains} chains"
        if e.reference and e.reference_diverged:
            return Outcome.INCONCLUSIVE, (
                f"{lost}, and the suite's {e.reference} in {e.reference_diverged} of {e.reference_chains}: these "
                "settings are unstable on this target; give a smaller step for it (--param TARGET:KEY=VALUE)")
        return Outcome.FAILED, lost + (f", where the suite's {e.reference} did not" if e.reference else "")
    if e.travel.still:
        return Outcome.FAILED, f"{e.name}: {e.travel.describe()}"
    if e.unstationary:
        return Outcome.FAILED, f"{e.name}: {e.unstationary}"
    forgot, memory = e.travel.forgot, e.travel.describe()
    failed, off_truth = _failed(e.agreement), _failed(e.truth or ())
    if e.held is None and not e.agreement:
        return Outcome.INCONCLUSIVE, f"{e.name} cannot be checked here: {e.against}"
    if e.held is None:
        if failed and not forgot:
            return Outcome.INCONCLUSIVE, (f"{e.name} disagrees with {e.against} ({', '.join(failed)} failed), "
                                          f"but {memory}")
        if failed:
            return _off_truth(e, f"{e.name} disagrees with {e.against} ({', '.join(failed)} failed)")
        if not forgot:
            return Outcome.INCONCLUSIVE, f"{e.name}: {memory}"
        return _resolved(e, e.agreement, resolution, f"{e.name} agrees with {e.against}")
    held, why_not = e.held
    if e.reference_diverged:
        lost = (f"the suite's {e.reference} diverged in {e.reference_diverged} of {e.reference_chains} chains at "
                "these settings, so the candidate cannot be compared with it")
        if off_truth and forgot:
            return _unconfirmed(_off_truth(e, f"{e.name} disagrees with truth on its own ({', '.join(off_truth)} "
                                              f"failed); {lost}"))
        agrees = e.truth is not None and not off_truth
        return Outcome.INCONCLUSIVE, lost + (f" ({e.name} agrees with truth on its own)" if agrees else "")
    if failed:
        disagreement = f"{e.name} disagrees with {e.against} ({', '.join(failed)} failed)"
        if held:
            return Outcome.FAILED, disagreement
        if off_truth and forgot:
            return _unconfirmed(_off_truth(e, f"{disagreement} and with truth on its own ({', '.join(off_truth)} "
                                              f"failed); the reference itself cannot be held to truth here: {why_not}"))
        return Outcome.INCONCLUSIVE, f"{disagreement}, but that reference cannot be held to truth here: {why_not}"
    if not forgot:
        return Outcome.INCONCLUSIVE, f"{e.name} agrees with {e.against}, but {memory}"
    if held:
        return _resolved(e, e.agreement, resolution, f"{e.name} agrees with {e.against}, itself held to truth")
    if e.truth is None:
        return Outcome.INCONCLUSIVE, (f"{e.name} agrees with {e.against}, but that reference cannot be held to "
                                      f"truth here ({why_not}), and this target has no truth at its temperature")
    if not off_truth:
        return _resolved(e, e.truth, resolution, f"{e.name} agrees with {e.against} and with truth on its own")
    shared = (f"{e.name} agrees with {e.against}, but that reference cannot be held to truth here ({why_not}), and "
              f"{e.name} disagrees with truth on its own ({', '.join(off_truth)})")
    if e.ladder is None:
        return Outcome.INCONCLUSIVE, f"{shared}: both may carry the same discretisation bias"
    return _unconfirmed(_off_truth(e, shared))


def remedy(e: Evidence, resolution: Resolution) -> Remedy | None:
    """What would decide the INCONCLUSIVE ``decide`` gives ``e`` (None: nothing a computation can decide, such as
    a target without truth at the temperature), in the order it should run: a smaller step where both runs
    diverged; a longer warm-up where the chains did not forget their start; the candidate's step ladder, then the
    reference's; more chains where a check cannot resolve the bias asked for."""
    if e.diverged:
        return Remedy("step", 0.5, "half the step for both runs") if e.reference and e.reference_diverged else None
    if e.travel.still or e.unstationary:
        return None
    slow = [t for t in (e.travel, e.reference_travel) if t is not None and not t.forgot]
    if slow:
        wanted = max(max(2 * t.warmup, WARMUP_MARGIN * t.warmup_needed) for t in slow)
        if not math.isfinite(wanted):
            return None
        blind = [t for t in slow if t.lower_bound]  # its window is too short to measure the time: lengthen it too
        if blind:
            steps = max(max(t.scored, math.ceil(2 * WARMUP_MARGIN * t.warmup_needed)) for t in blind)
            return Remedy("warmup", math.ceil(wanted), f"a warm-up of {math.ceil(wanted)} steps and {steps} scored "
                                                       "steps", steps=steps)
        return Remedy("warmup", math.ceil(wanted), f"a warm-up of {math.ceil(wanted)} steps")
    for kind, finding, whose in (("ladder", e.ladder, "its"), ("reference_ladder", e.reference_ladder,
                                                               "the reference's")):
        if finding is None or finding.outcome != UNDECIDED or finding.fit is None:
            continue
        factor = finding.fit.chains_factor
        if math.isfinite(factor):
            return Remedy(f"{kind}_chains", factor, f"{factor:.2g} times the chains on every rung of {whose} step "
                                                    "ladder")
        return Remedy(f"{kind}_rung", 0.0, f"a finer rung (h/{2 ** finding.rungs}) on {whose} step ladder")
    if e.held is None or e.held[0]:
        need = resolution.chains_needed(e.agreement, e.chains)
        return Remedy("chains", need, f"{need} chains") if need > e.chains else None
    need = resolution.chains_needed(e.truth or (), e.chains)
    return Remedy("candidate_chains", need, f"{need} chains for {e.name} (resolved against truth on its own; the "
                  "reference keeps its chains)") if need > e.chains else None


@dataclasses.dataclass
class Verdict:
    """What validation found: per target its ``outcomes`` and ``reasons``; the candidate's ``checks``
    (against what it is held to, and against truth on its own), the claimed reference's checks against
    truth (``reference_checks``), what the candidate was compared with per target (``basis``), how far
    the chains travelled (``travel``), the metrics beside the reference's, the report's path, per target
    what it cost (``costs``: seconds, gradient evaluations), and per target whose outcome is ERROR the
    ``sgbench.bench.running.sampler_fault.SamplerFault`` (``faults``); the targets an interruption left undecided
    (``unfinished``)."""

    name: str
    claims: str | None
    outcomes: dict
    reasons: dict
    checks: pd.DataFrame
    reference_checks: pd.DataFrame
    basis: dict
    travel: pd.DataFrame
    metrics: pd.DataFrame
    report: Path
    costs: dict = dataclasses.field(default_factory=dict)
    faults: dict = dataclasses.field(default_factory=dict)
    unfinished: tuple = ()

    @property
    def outcome(self) -> Outcome:
        return combined(self.outcomes.values())

    @property
    def passed(self) -> bool:
        return self.outcome is Outcome.PASSED

    def headline(self) -> str:
        """The verdict in one line: the outcome, then the reasons of the targets that decided it."""
        if self.unfinished:
            so_far = dataclasses.replace(self, unfinished=()).headline() if self.outcomes else "no target decided"
            return f"{self.name}: interrupted before {', '.join(self.unfinished)} was decided; so far {so_far}"
        deciding = [key for key, outcome in self.outcomes.items() if outcome is self.outcome]
        if self.outcome is Outcome.PASSED:
            return f"{self.name}: PASSED on {', '.join(self.outcomes)}"
        return f"{self.name}: {self.outcome.name}: " + "; ".join(f"on {k}: {self.reasons[k]}" for k in deciding)

    def summary(self) -> str:
        """The headline, each target's outcome, reason and basis, how far the chains travelled, the metrics,
        every check and the report's path."""
        lines = [self.headline()]
        for key, outcome in self.outcomes.items():
            lines.append(f"on {key}: {outcome.name}: {self.reasons[key]}")
            lines.append(f"  held to: {self.basis[key]}")
            if key in self.costs:
                seconds, evals = self.costs[key]
                lines.append(f"  cost: {seconds:.0f} s, {evals:.3g} gradient evaluations")
        if len(self.travel):
            lines.append("how far the chains travelled:\n" + self.travel.to_string(index=False))
        if len(self.metrics):
            lines.append(self.metrics.to_string(index=False))
        for title, frame in (("checks of the candidate", self.checks),
                             ("checks of the claimed reference against truth", self.reference_checks)):
            if len(frame):
                lines.append(f"{title}:\n" + frame[[c for c in SUMMARY_COLUMNS if c in frame]].to_string(index=False))
        return "\n".join(lines + ([f"report: {self.report}"] if self.report is not None else []))
