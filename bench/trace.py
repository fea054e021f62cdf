"""What a driver hands back for the chains of one parameter setting."""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from reference.metrics import Moments


class ChainTrace(NamedTuple):
    """Per-chain streaming moments and diagnostics (leading axis: chains).

    ``nonfinite_steps`` counts steps after which a chain's position had a non-finite entry;
    ``first_nonfinite_step`` is the first such step (-1: never). Non-finite positions never
    enter the moments. ``samples`` (chains, num_kept, dim) only when asked for.
    """

    moments: Moments
    grad_evals: Any
    nonfinite_steps: Any
    first_nonfinite_step: Any
    samples: Any
    compile_seconds: float
    run_seconds: float

    @property
    def diverged(self) -> np.ndarray:
        return np.asarray(self.nonfinite_steps) > 0

    @classmethod
    def stack(cls, traces: list[ChainTrace]) -> ChainTrace:
        """Stack single-chain traces along a new leading chain axis."""
        first = traces[0]
        return cls(
            moments=Moments(*(np.stack([np.asarray(t.moments[i]) for t in traces]) for i in range(len(first.moments)))),
            grad_evals=np.stack([t.grad_evals for t in traces]),
            nonfinite_steps=np.stack([t.nonfinite_steps for t in traces]),
            first_nonfinite_step=np.stack([t.first_nonfinite_step for t in traces]),
            samples=None if first.samples is None else np.stack([t.samples for t in traces]),
            compile_seconds=sum(t.compile_seconds for t in traces),
            run_seconds=sum(t.run_seconds for t in traces),
        )
