"""The four outcomes of a verification, and their exit statuses.

- ``PASSED`` (exit 0): every check passed, the chains forgot their start, and every check could detect
  the bias the user cares about (``sgbench.bench.gate.resolution``);
- ``FAILED`` (exit 1): a check found a disagreement, the chains do not move, or the sampler diverged where
  its reference did not;
- ``INCONCLUSIVE`` (exit 3): nothing was found wrong, but the run could not have found it: the chains did
  not forget their start, a check could not detect the bias asked for, or the claimed reference cannot be
  held to truth at these settings. Each says what would decide (more steps, more chains, another step).

- ``ERROR`` (exit 4): the sampler's own code broke (it raised, returned a state of another shape or dtype than it was
  given, cannot be traced by the JAX driver, or gave a non-finite start): nothing was measured about its law. The
  reason names its file, function and line (``sgbench.bench.running.sampler_fault``).

Exit status 2 stays bad input, reported before anything runs.
"""

from __future__ import annotations

import enum


class Outcome(enum.Enum):
    """A verdict; its value is the exit status."""

    PASSED = 0
    FAILED = 1
    INCONCLUSIVE = 3
    ERROR = 4

    @property
    def exit_status(self) -> int:
        return self.value


def combined(outcomes) -> Outcome:
    """The outcome of several parts (targets, cells): ERROR if any part's code broke, else FAILED if any failed, else
    INCONCLUSIVE if any is, else PASSED (also for no parts)."""
    outcomes = list(outcomes)
    for outcome in (Outcome.ERROR, Outcome.FAILED, Outcome.INCONCLUSIVE):
        if outcome in outcomes:
            return outcome
    return Outcome.PASSED
