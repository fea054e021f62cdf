"""The result of running one sampler with one set of hyperparameters on one target."""

from __future__ import annotations

import dataclasses
import hashlib
import json

import numpy as np

from sgbench.bench.running.config import RunConfig
from sgbench.bench.running.trace import ChainTrace
from sgbench.samplers.schedules import describe


def params_dict(params) -> dict:
    """Hyperparameters as plain JSON-able values."""
    return {f.name: _plain(getattr(params, f.name)) for f in dataclasses.fields(params)}


def _plain(value):
    if dataclasses.is_dataclass(value):  # a step-size schedule
        return describe(value)
    if isinstance(value, np.generic) or getattr(value, "shape", None) == ():
        return value.item()
    return np.asarray(value).tolist() if hasattr(value, "shape") else value


def config_hash(sampler: str, params: dict, target: str, target_params: dict, config: RunConfig) -> str:
    """sha256 (16 hex digits) of everything that defines a run except its seed."""
    described = dataclasses.asdict(config)
    described.pop("seed")
    described.pop("keep_samples")
    described.pop("keep_every")
    payload = json.dumps(
        {"sampler": sampler, "params": params, "target": target, "target_params": target_params,
         "config": described},
        sort_keys=True, default=float,
    )
    return hashlib.sha256(payload.encode()).hexdigest()[:16]


@dataclasses.dataclass(frozen=True)
class RunResult:
    """Moments, metrics, diagnostics and timings of one run (all chains of one parameter setting).

    ``trace`` holds per-chain moments (and samples, checkpoints if asked for); ``metrics`` the
    scores against the target's truth; ``curves`` running metrics against gradient evaluations
    (``sgbench.bench.running.scoring``); ``diagnostics`` per-chain divergence and gradient counts.
    """

    sampler: str
    params: dict
    target: str
    target_params: dict
    config: RunConfig
    trace: ChainTrace
    metrics: dict
    curves: dict = dataclasses.field(default_factory=dict)

    @property
    def config_hash(self) -> str:
        return config_hash(self.sampler, self.params, self.target, self.target_params, self.config)

    @property
    def moments(self):
        return self.trace.moments

    @property
    def samples(self):
        return self.trace.samples

    @property
    def grad_evals(self) -> int:
        """Gradient evaluations over all chains (burn-in included)."""
        return int(np.sum(self.trace.grad_evals))

    @property
    def diagnostics(self) -> dict:
        return {
            "diverged": self.trace.diverged.tolist(),
            "nonfinite_steps": np.asarray(self.trace.nonfinite_steps).tolist(),
            "first_nonfinite_step": np.asarray(self.trace.first_nonfinite_step).tolist(),
            "grad_evals": np.asarray(self.trace.grad_evals).tolist(),
        }

    @property
    def timings(self) -> dict:
        chain_steps = self.config.num_chains * self.config.total_steps
        seconds = self.trace.run_seconds
        return {
            "compile_seconds": self.trace.compile_seconds,
            "run_seconds": self.trace.run_seconds,
            "chain_steps_per_second": chain_steps / seconds if seconds > 0 else float("nan"),
        }
