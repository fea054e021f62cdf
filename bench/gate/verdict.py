r"""How ``sgbench validate`` turns one target's evidence into PASSED, FAILED or INCONCLUSIVE, and the verdict
over all targets.

The evidence on a target (:class:`Evidence`): the candidate's divergences and travel (``sgbench.bench.gate.start``);
its agreement checks with what it is held to (the claimed reference's run, an exact discrete-time law, a
stored design bias, or exact truth); when a reference is claimed, the candidate's checks against truth on
its own and whether the reference itself is held to truth (``held``); for a sampler held to truth, whether
its error halves with its step (``halving``). The rules, in order:

1. *Divergence.* The candidate diverged: FAILED, unless the claimed reference diverged too (INCONCLUSIVE:
   the settings are unstable on this target).
2. *Does not move*: FAILED.
3. *Against a claimed reference* (run from the same starts, so the comparison holds whether or not the
   chains forgot them): disagreement is FAILED when the reference is held to truth, or when the candidate
   also disagrees with truth on its own (after forgetting its start) by an error that does not halve with
   its step; otherwise INCONCLUSIVE. Agreement
   is PASSED when the chains forgot their start, the reference is held to truth (or the candidate agrees
   with truth on its own) and the checks resolve the bias asked for (``sgbench.bench.gate.resolution``); else
   INCONCLUSIVE with the reason. A reference that diverged cannot be compared with: FAILED only if the
   candidate disagrees with truth on its own by an error that does not halve, else INCONCLUSIVE.
4. *Against a law, a design bias or truth*: disagreement after forgetting is FAILED, except against
   truth when the error halves with the step (a discretisation bias: INCONCLUSIVE, with the error's size);
   disagreement before forgetting is INCONCLUSIVE (the start's memory may explain it). Agreement is
   PASSED when the chains forgot their start and the checks resolve the bias asked for.

Over targets: FAILED if any target failed, else INCONCLUSIVE if any is, else PASSED (``sgbench.bench.gate.outcome``).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pandas as pd

from sgbench.bench.gate.outcome import Outcome, combined
from sgbench.bench.gate.resolution import Resolution
from sgbench.bench.gate.start import Travel

SUMMARY_COLUMNS = ("target", "name", "passed", "statistic", "threshold", "estimate", "expected", "standard_error",
                   "detectable")


@dataclasses.dataclass(frozen=True)
class Evidence:
    """What one target's runs showed (module docstring). ``against``: what the candidate is held to, in
    words (an empty ``agreement`` with ``held`` None: there is nothing to hold it to, the reason in
    ``against``); ``truth``: its checks against truth on its own (None: no truth at its temperature on this
    target); ``reference``: the claimed suite sampler's name (None: none ran); ``held``: (whether the
    reference is held to truth, why not); ``halving``: for a candidate held to truth whose check failed,
    its own step-halving check (None: not run)."""

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
    halving: object = None


def _failed(checks) -> list[str]:
    return sorted(c.name for c in checks if not c.passed)


def _resolved(e: Evidence, checks, resolution: Resolution, claim: str) -> tuple[Outcome, str]:
    short = resolution.shortfalls(checks, e.chains)
    if short:
        return Outcome.INCONCLUSIVE, f"{claim}, but {'; '.join(short)}"
    return Outcome.PASSED, claim


def _off_truth(e: Evidence, finding: str) -> tuple[Outcome, str]:
    """A disagreement with truth (``finding``, in words): INCONCLUSIVE when the candidate's own error halves
    with its step (a discretisation bias), FAILED otherwise."""
    if e.halving is not None and e.halving.passed:
        return Outcome.INCONCLUSIVE, (
            f"{finding}; but at half its step its error shrinks as a discretisation bias does (step-halving "
            f"z = {e.halving.statistic:.3g} against {e.halving.threshold:.3g}), so this run cannot tell it from "
            "one; run a smaller step, or claim the suite sampler it implements (--claims)")
    return Outcome.FAILED, finding + ("; its error does not halve with its step" if e.halving is not None else "")


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
            return _off_truth(e, f"{e.name} disagrees with truth on its own ({', '.join(off_truth)} failed); {lost}")
        agrees = e.truth is not None and not off_truth
        return Outcome.INCONCLUSIVE, lost + (f" ({e.name} agrees with truth on its own)" if agrees else "")
    if failed:
        disagreement = f"{e.name} disagrees with {e.against} ({', '.join(failed)} failed)"
        if held:
            return Outcome.FAILED, disagreement
        if off_truth and forgot:
            return _off_truth(e, f"{disagreement} and with truth on its own ({', '.join(off_truth)} failed); "
                                 f"the reference itself cannot be held to truth here: {why_not}")
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
    return Outcome.INCONCLUSIVE, (f"{e.name} agrees with {e.against}, but that reference cannot be held to truth "
                                  f"here ({why_not}), and {e.name} disagrees with truth on its own "
                                  f"({', '.join(off_truth)}): both may carry the same discretisation bias")


@dataclasses.dataclass
class Verdict:
    """What validation found: per target its ``outcomes`` and ``reasons``; the candidate's ``checks``
    (against what it is held to, and against truth on its own), the claimed reference's checks against
    truth (``reference_checks``), what the candidate was compared with per target (``basis``), how far
    the chains travelled (``travel``), the metrics beside the reference's, and the report's path."""

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

    @property
    def outcome(self) -> Outcome:
        return combined(self.outcomes.values())

    @property
    def passed(self) -> bool:
        return self.outcome is Outcome.PASSED

    def headline(self) -> str:
        """The verdict in one line: the outcome, then the reasons of the targets that decided it."""
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
        lines.append("how far the chains travelled:\n" + self.travel.to_string(index=False))
        lines.append(self.metrics.to_string(index=False))
        for title, frame in (("checks of the candidate", self.checks),
                             ("checks of the claimed reference against truth", self.reference_checks)):
            if len(frame):
                lines.append(f"{title}:\n" + frame[[c for c in SUMMARY_COLUMNS if c in frame]].to_string(index=False))
        return "\n".join(lines + [f"report: {self.report}"])
