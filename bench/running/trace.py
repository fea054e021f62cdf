"""What a driver hands back for the chains of one parameter setting."""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from sgbench.reference.metrics import Moments


class Checkpoints(NamedTuple):
    """Running moments recorded during a run: after ``steps[k]`` steps (burn-in included),
    per chain: ``moments`` fields and ``grad_evals`` have shape (chains, checkpoints, ...)."""

    steps: np.ndarray
    moments: Moments
    grad_evals: np.ndarray

    @classmethod
    def stack(cls, steps, snapshots: list, axis: int) -> Checkpoints:
        """From per-checkpoint ``(moments, grad_evals)`` snapshots, stacked along ``axis``."""
        moments = Moments.stack([m for m, _ in snapshots], axis=axis)
        return cls(np.asarray(steps), moments, np.stack([np.asarray(g) for _, g in snapshots], axis=axis))

    def select(self, index) -> Checkpoints:
        """The checkpoints of ``index`` along the leading axis (a grid point)."""
        return Checkpoints(self.steps, Moments(*(field[index] for field in self.moments)), self.grad_evals[index])


class ChainTrace(NamedTuple):
    """Per-chain streaming moments and diagnostics (leading axis: chains).

    ``nonfinite_steps`` counts steps after which a chain's position had a non-finite entry;
    ``first_nonfinite_step`` is the first such step (-1: never). Non-finite positions never
    enter the moments. ``samples`` (chains, num_kept, dim) only when asked for; ``checkpoints``
    (running moments) only with ``num_checkpoints`` > 0; ``final_state`` the sampler's states after the
    last step (its ``State``, each field with the leading chain axis; None where a driver gives none), for
    what a state accumulates that the moments of the positions do not hold (an importance sampler's weighted
    sums, ``sgbench.bench.validate.weighted_truth``).
    """

    moments: Moments
    grad_evals: Any
    nonfinite_steps: Any
    first_nonfinite_step: Any
    samples: Any
    checkpoints: Checkpoints | None
    compile_seconds: float
    run_seconds: float
    final_state: Any = None

    @property
    def diverged(self) -> np.ndarray:
        """Per chain: a non-finite position at some step, or streamed moments that overflowed (a
        chain so far out that its x^2 or x^4 is not finite in the run's dtype)."""
        overflowed = ~np.all([np.all(np.isfinite(np.asarray(field)), axis=-1) for field in self.moments[1:]], axis=0)
        return (np.asarray(self.nonfinite_steps) > 0) | overflowed

    @classmethod
    def stack(cls, traces: list[ChainTrace]) -> ChainTrace:
        """Stack single-chain traces along a new leading chain axis."""
        first = traces[0]
        return cls(
            moments=Moments.stack([t.moments for t in traces]),
            grad_evals=np.stack([t.grad_evals for t in traces]),
            nonfinite_steps=np.stack([t.nonfinite_steps for t in traces]),
            first_nonfinite_step=np.stack([t.first_nonfinite_step for t in traces]),
            samples=None if first.samples is None else np.stack([t.samples for t in traces]),
            checkpoints=None if first.checkpoints is None else Checkpoints.stack(
                first.checkpoints.steps, [(t.checkpoints.moments, t.checkpoints.grad_evals) for t in traces], axis=0),
            compile_seconds=sum(t.compile_seconds for t in traces),
            run_seconds=sum(t.run_seconds for t in traces),
            final_state=None if first.final_state is None else _stack_states([t.final_state for t in traces]),
        )


def _stack_states(states: list):
    """Per-chain states (NamedTuples of arrays, possibly nested) as one state with a leading chain axis."""
    first = states[0]
    if isinstance(first, tuple) and hasattr(first, "_fields"):
        return type(first)(*(_stack_states([getattr(s, f) for s in states]) for f in first._fields))
    try:
        return np.stack([np.asarray(s) for s in states])
    except (TypeError, ValueError):  # a field that is no array of one shape: the per-chain values, listed
        return list(states)
