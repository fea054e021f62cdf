"""``sgbench.validate``: the Python API of ``sgbench validate``, for an author's own code and CI.

It takes the sampler as an object (a ``samplers.Sampler``, an adapter, a wrapped function:
``sgbench.bench.wrappers``) or as ``"MODULE:OBJECT"``, runs the same validation as the command with the same error
budget (a correct sampler is FAILED with probability at most 1e-3) and compute budget, and returns a
:class:`Result`: the outcome, per target the outcome, reason, what it was held to and its cost, and the full verdict.
The page is written only where ``out`` is given. ``Result.assert_passed()`` raises :class:`ValidationFailed` (an
``AssertionError``) with the verdict's first line unless the outcome is PASSED.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from sgbench.bench.gate.outcome import Outcome
from sgbench.bench.gate.resolution import DEFAULT_CHAINS, DEFAULT_DETECT
from sgbench.bench.validate.budget import DEFAULT as DEFAULT_BUDGET
from sgbench.bench.validate.verdict import Verdict


class ValidationFailed(AssertionError):
    """A validation whose outcome is not PASSED (the message: the verdict's first line)."""


@dataclasses.dataclass(frozen=True)
class TargetResult:
    """One target's ``outcome``, its ``reason``, what the sampler was held to (``basis``), and what it cost
    (``seconds``, ``grad_evals``: NaN where nothing ran)."""

    outcome: Outcome
    reason: str
    basis: str
    seconds: float
    grad_evals: float


@dataclasses.dataclass(frozen=True)
class Result:
    """What :func:`validate` found: the ``outcome`` over all targets, its first line (``headline``), per target
    a :class:`TargetResult`, the page (``report``; None where none was written) and the full ``verdict`` (its
    checks, travel and metrics tables)."""

    outcome: Outcome
    headline: str
    targets: dict
    report: Path | None
    verdict: Verdict

    @property
    def passed(self) -> bool:
        return self.outcome is Outcome.PASSED

    def assert_passed(self, allow_inconclusive: bool = False) -> Result:
        """This result; :class:`ValidationFailed` with the headline unless PASSED (or INCONCLUSIVE, where
        ``allow_inconclusive``)."""
        allowed = {Outcome.PASSED, Outcome.INCONCLUSIVE} if allow_inconclusive else {Outcome.PASSED}
        if self.outcome not in allowed:
            raise ValidationFailed(self.headline)
        return self

    def summary(self) -> str:
        """The command's printed summary: the headline, each target's outcome and reason, the tables."""
        return self.verdict.summary()


def validate(sampler, params: dict | None = None, *, claims: str | None = None, targets: str = "default",
             budget=DEFAULT_BUDGET, detect: float = DEFAULT_DETECT, chains: int = DEFAULT_CHAINS, steps: int = 4000,
             warmup: int | None = None, seed: int = 0, out: str | Path | None = None, progress=None) -> Result:
    """Validate ``sampler`` as ``sgbench validate`` does (docs/gates.md; its flags are these arguments).

    Args:
        sampler: a ``samplers.Sampler``, an adapter, a wrapped function, or ``"MODULE:OBJECT"``.
        params: its hyperparameters; ``TARGET:NAME`` keys apply to one target only.
        claims: the suite sampler it implements, "none", or None (an adapter's claim, or its name if registered).
        targets: comma-separated target keys, "default" or "all".
        budget: what the remedies of an INCONCLUSIVE may spend: "20min", "90s", or gradient evaluations ("2e9").
        detect: the relative variance error the checks must resolve.
        chains: chains per target; steps: scored steps per chain; warmup: steps before them (default: ``steps``).
        seed: the runs' seed.
        out: the folder of the page (None: no page).
        progress: called with a line per run (None: silent).

    Returns:
        the :class:`Result`. ValueError (naming the argument) on bad input, before anything runs.
    """
    import math
    import tempfile

    from sgbench.base.float64 import in_float64_mode
    from sgbench.bench.adapters import load_sampler
    from sgbench.bench.validate import page as validate_page
    from sgbench.bench.validate.validate import validate as compute

    if isinstance(sampler, str):
        sampler = load_sampler(sampler)
    folder = Path(out) if out is not None else Path(tempfile.gettempdir())
    validation = in_float64_mode(compute)(sampler, params, claims=claims, targets=targets, seed=seed,
                                          num_chains=chains, num_steps=steps, warmup=warmup, detect=detect,
                                          out=folder, progress=progress or (lambda line: None), budget=budget)
    report = validate_page.write(validation) if out is not None else None
    verdict = dataclasses.replace(validation.verdict, report=report)
    nan = (math.nan, math.nan)
    per_target = {key: TargetResult(outcome, verdict.reasons[key], verdict.basis.get(key, ""),
                                    *verdict.costs.get(key, nan)) for key, outcome in verdict.outcomes.items()}
    return Result(verdict.outcome, verdict.headline(), per_target, report, verdict)
