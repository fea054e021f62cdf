"""The metrics a run reports, computed from streamed per-chain moments and the target's truth.

Diverged chains (any non-finite position) are left out and counted; b^2 follows appendix C of
the SMILE paper: mean over dimensions (``b2_mean_*``) and max over dimensions (``b2_max_*``).
"""

from __future__ import annotations

import numpy as np

from bench.trace import ChainTrace
from reference.metrics import b2_summary


def score(trace: ChainTrace, truth) -> dict[str, float]:
    """Metric name -> value; NaN b^2 when every chain diverged, {} without truth."""
    healthy = ~trace.diverged
    metrics = {"num_diverged_chains": float((~healthy).sum())}
    if truth is None:
        return metrics
    for over_dims in ("mean", "max"):
        if healthy.any():
            summary = b2_summary(trace.moments.second_moment[healthy], truth, over_dims)
            metrics.update(summary.as_dict(f"b2_{over_dims}"))
        else:
            metrics.update({f"b2_{over_dims}_{k}": np.nan for k in (
                "chain_average", "chain_average_bootstrap_std", "pooled", "pooled_bootstrap_std")})
    return metrics
