r"""The compute budget of a verification (``sgbench validate --budget``): what its remedies may spend.

A budget is wall-clock time (``"20min"``, ``"90s"``, ``"1.5h"``) or gradient evaluations (a plain number,
``"2e9"``: every evaluation of the oracle, by every chain, as the drivers count them). The first run of each
target is always made; each remedy an INCONCLUSIVE names (more chains, a longer warm-up, a rung of the step
ladder) has its cost predicted before it starts from the rates measured so far (seconds and evaluations per
chain-step of the runs already made, ``Rates``), and starts only if the cost fits in what is left. A remedy
that would not fit is not started: the outcome stays INCONCLUSIVE and names the budget that would have
decided it (what was spent plus the remedy's cost).

The budget is shared by the targets in turn: a target may spend its share of what is left (what is left over
the targets not yet examined), so an early target cannot starve the later ones.
"""

from __future__ import annotations

import dataclasses
import math
import re

DEFAULT = "20min"
UNITS = {"s": 1.0, "min": 60.0, "h": 3600.0}
_SPEC = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*(s|min|h)?\s*$")


@dataclasses.dataclass(frozen=True)
class Budget:
    """``seconds`` of wall-clock time or ``grad_evals`` gradient evaluations (exactly one is set)."""

    seconds: float | None = None
    grad_evals: float | None = None

    def __post_init__(self):
        if (self.seconds is None) == (self.grad_evals is None):
            raise ValueError("budget (--budget): give a time or a number of gradient evaluations, not both")
        value = self.seconds if self.seconds is not None else self.grad_evals
        if not (math.isfinite(value) and value > 0):
            raise ValueError(f"budget (--budget) must be > 0, got {value!r}")

    @classmethod
    def parse(cls, spec) -> Budget:
        """A budget from ``"20min"``, ``"90s"``, ``"1.5h"`` (time) or ``"2e9"`` (gradient evaluations); a
        Budget is returned as it is. ValueError naming ``--budget`` and the accepted forms."""
        if isinstance(spec, Budget):
            return spec
        match = _SPEC.match(str(spec))
        if match is None:
            raise ValueError(f"budget (--budget) must be a time such as 20min, 90s or 1.5h, or a number of gradient "
                             f"evaluations such as 2e9, got {spec!r}")
        value, unit = float(match.group(1)), match.group(2)
        return cls(seconds=value * UNITS[unit]) if unit else cls(grad_evals=value)

    def times(self, n: int) -> Budget:
        """``n`` times this budget, in its unit (a task's budget from its rows')."""
        return Budget(seconds=None if self.seconds is None else n * self.seconds,
                      grad_evals=None if self.grad_evals is None else n * self.grad_evals)

    @property
    def total(self) -> float:
        return self.seconds if self.seconds is not None else self.grad_evals

    def amount(self, seconds: float, grad_evals: float) -> float:
        """What ``seconds`` and ``grad_evals`` amount to in this budget's unit."""
        return seconds if self.seconds is not None else grad_evals

    def words(self, amount: float) -> str:
        """``amount`` of this budget's unit as ``--budget`` takes it."""
        if self.seconds is None:
            return f"{amount:.2g}"
        minutes = amount / 60
        return f"{math.ceil(minutes)}min" if minutes >= 1 else f"{math.ceil(amount)}s"

    def __str__(self) -> str:
        return (self.words(self.seconds) + " of wall-clock time" if self.seconds is not None
                else f"{self.grad_evals:.3g} gradient evaluations")


@dataclasses.dataclass(frozen=True)
class Rates:
    """Seconds and gradient evaluations per chain-step, as measured on a target's runs so far."""

    seconds: float
    grad_evals: float

    def cost(self, chain_steps: float) -> tuple[float, float]:
        """(seconds, gradient evaluations) that ``chain_steps`` chain-steps are predicted to take."""
        return self.seconds * chain_steps, self.grad_evals * chain_steps


class Account:
    """What a verification has spent of its :class:`Budget`, and what each target may still spend."""

    def __init__(self, budget: Budget, targets: int):
        self.budget, self.targets_left = budget, max(1, targets)
        self.seconds = self.grad_evals = 0.0
        self.share = budget.total / self.targets_left
        self.spent_on_target = 0.0

    @property
    def spent(self) -> float:
        return self.budget.amount(self.seconds, self.grad_evals)

    def start_target(self) -> None:
        """A new target: its share is what is left over the targets not yet examined."""
        self.share = max(0.0, self.budget.total - self.spent) / self.targets_left
        self.targets_left = max(1, self.targets_left - 1)
        self.spent_on_target = 0.0

    def charge(self, seconds: float, grad_evals: float) -> None:
        """Record a run's cost."""
        self.seconds += seconds
        self.grad_evals += grad_evals
        self.spent_on_target += self.budget.amount(seconds, grad_evals)

    def affords(self, seconds: float, grad_evals: float) -> bool:
        """Whether a remedy of that predicted cost fits in the target's share."""
        return self.spent_on_target + self.budget.amount(seconds, grad_evals) <= self.share

    def would_decide(self, seconds: float, grad_evals: float) -> str:
        """The ``--budget`` that would have let a remedy of that cost run on this target (the whole validation's,
        with every target given as much)."""
        needed = (self.spent_on_target + self.budget.amount(seconds, grad_evals)) * (
            self.budget.total / max(self.share, 1e-300))
        return self.budget.words(needed)
