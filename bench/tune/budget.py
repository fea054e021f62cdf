r"""The budgets of MAMBA's rounds: gradient evaluations (the default) or wall-clock seconds (the paper's,
MAMBA paper, section 3.3 "Time budgets").

Gradient evaluations are counted in full-data units: a step that evaluates a minibatch gradient of
:math:`n` of the :math:`N` data costs :math:`n/N` (SGLD-CV evaluates two minibatch gradients per step:
:math:`2n/N`), so a smaller batch buys proportionally more steps, the trade-off the paper's time budget
makes, and the steps an arm gets are a function of the budget alone: a tuning run is reproducible bit
for bit. On a target without minibatch noise every evaluation costs 1. A chain's priming evaluations
(the full gradient at its start, for samplers that cache it) cost 1 each, charged to round 0. All
chains of an arm share its budget.

With a seconds budget an arm's steps per round are its budget divided by its measured seconds per
step, measured at the start of each round by two calibration runs of the round's vmapped groups (a
program's time is shared by its arms; the second run is long enough to amortise the per-call
overhead; not charged), and the seconds it
is charged are those its steps took (its equal share of its group's time); the steps then depend on
the machine and its load.
"""

from __future__ import annotations

import dataclasses
import math

from sgbench.base.arguments import integer_at_least, one_of, positive_finite

KINDS = ("grads", "seconds")


@dataclasses.dataclass(frozen=True)
class Budget:
    """``total`` T > 0 of ``kind`` in ``KINDS``: full-data gradient evaluations or wall-clock seconds."""

    kind: str
    total: float

    def __post_init__(self):
        one_of("budget kind", self.kind, KINDS)
        flag = "--budget-grads" if self.kind == "grads" else "--budget-seconds"
        object.__setattr__(self, "total", positive_finite(flag, self.total))

    @property
    def unit(self) -> str:
        return "gradient evaluations" if self.kind == "grads" else "seconds"


@dataclasses.dataclass(frozen=True)
class StepCost:
    r"""What one arm's steps cost: ``per_step`` (budget units per step, all chains) and ``priming`` (once, at
    the start of the chains).

    For gradients: ``per_step`` = chains x (evaluations per step) x :math:`n/N`, ``priming`` = chains x
    (priming evaluations). For seconds: measured seconds per step of the arm, ``priming`` 0.
    """

    per_step: float
    priming: float = 0.0

    def __post_init__(self):
        positive_finite("per_step", self.per_step)
        if not (math.isfinite(self.priming) and self.priming >= 0):
            raise ValueError(f"priming must be a finite number >= 0, got {self.priming!r}")

    def steps_within(self, budget: float, first_round: bool) -> int:
        """The most steps whose cost (with the priming, in the first round) fits in ``budget``."""
        available = budget - (self.priming if first_round else 0.0)
        # a relative tolerance of 1e-9 keeps exact multiples exact despite the division's rounding
        return max(0, math.floor(available / self.per_step * (1 + 1e-9)))

    def cost(self, steps: int, first_round: bool) -> float:
        """What ``steps`` steps cost (with the priming, in the first round)."""
        integer_at_least("steps", steps, 0)
        return steps * self.per_step + (self.priming if first_round else 0.0)
