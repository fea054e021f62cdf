"""Statistical quality of every registered sampler at a fixed gradient budget, tracked over commits,
so that a change that keeps the speed but loses accuracy shows.

Parameters ``(sampler, backend)``: every registered sampler with ``backend`` ``jax`` (the optimized
implementation, JAX driver, float32), and the adapters that claim it (``blackjax``, ``posteriors``,
``posteriors_baoa``; see ``_workloads.py``); a pair without an implementation is skipped. The
reference (``numpy``) implementation is not run here: it is checked draw for draw against the
optimized one by the tests, and at this budget its Python loop would take 5 to 25 minutes per run
(30 to 140 us per chain-step, docs/performance.md).

Each (sampler, backend, target) is one run of 5 x 10 chains (seed 0, from the target's initial
position; the driver gives every chain its own key, so each group of 10 is a run with its own
seed, as in ``bench/gate/replicates.py``) of ``GRADIENT_BUDGET // g`` steps, g the gradient
evaluations of one step: 2 x 10^5 gradient evaluations per chain. The posteriors adapters, which
run on the NumPy driver at about 1 ms per step (``tests/test_adapters.py``), get
``REDUCED_BUDGET`` = 10^3 (their values are only comparable with themselves). MILE runs with exact
gradients (its file's ``gate.exact_gradients``, as in the gate). Every tracked value is the median
over the 5 groups of the metric ``sgbench.bench.running.scoring.score`` computes for that group (``RunResult.metrics``
names), a group that failed (all chains diverged, or the threshold never reached) counting as worse
than any other. Hyperparameters: ``_workloads.asv_params`` on ``icg``, ``rosenbrock`` and ``linreg``.

- ``TrackICG`` (the 10-d icg with isotropic noise of variance 256, SMILE appendix C):
  ``track_b2`` (``b2_mean_chain_average``: b^2 averaged over dimensions and over the group's chains,
  SMILE Table 1), ``track_gradient_evaluations_to_b2_below_0_01``
  (``grad_evals_to_b2_below_0.01``: gradient evaluations per chain at the first of 50 log-spaced
  checkpoints after which the pooled running b^2 stays below 0.01 up to the last; NaN if the
  median group never gets there within the budget), ``track_diverged_chains`` (of all 50).
- ``TrackRosenbrock`` (10-d, Q = 0.1, isotropic noise of variance 256): ``track_b2``,
  ``track_diverged_chains``.
- ``TrackLinreg`` (the SGLRW paper's Bayesian linear regression, N = 1000, d = 20, minibatches of 32):
  ``track_kl_gaussian_fit`` (``kl_truth_to_fit``: KL from the exact posterior to the full-covariance
  Gaussian fit of the group's kept draws, 1000 per chain), ``track_diverged_chains``.

The runs are shared between a class's methods through asv's ``setup_cache``: it only makes a
directory (asv runs every benchmark of the classes in it); ``setup`` makes the one run its
parameters need, unless an earlier benchmark (another method, or an earlier round) already left its
results there, and saves them as JSON. So only the selected parameters run, each once.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import numpy as np

from sgbench import samplers, targets
from sgbench.bench.perf.speed_workload import gradient_evaluations
from sgbench.bench.running import run as running
from sgbench.bench.running.scoring import score
from sgbench.bench.running.trace import Checkpoints
from sgbench.reference.metrics import Moments

from . import _workloads as workloads

GRADIENT_BUDGET = 200_000  # gradient evaluations per chain
REDUCED_BUDGET = 1000  # for the NumPy-driver adapters
GROUPS = 5
CHAINS_PER_GROUP = 10
NUM_CHECKPOINTS = 50
KEPT_DRAWS = 1000  # per chain, for the full-covariance Gaussian fit on linreg
QUALITY_BACKENDS = ("jax", "blackjax", "posteriors", "posteriors_baoa")
QUALITY_TARGETS = {  # target name and parameters, gradient noise apart
    "icg": ("icg", dict(dim=10)),
    "rosenbrock": ("rosenbrock", dict(dim=10, Q=0.1)),
    "linreg": ("linreg", {}),
}
GRADIENT_NOISE = {"icg": workloads.ISOTROPIC_NOISE, "rosenbrock": workloads.ISOTROPIC_NOISE,
                  "linreg": {}}  # linreg: its default, minibatches of 32
RUN_OPTIONS = {  # RunConfig fields the metrics need
    "icg": dict(num_checkpoints=NUM_CHECKPOINTS),
    "rosenbrock": {},
    "linreg": dict(keep_samples=True),
}
METRICS = {  # what is kept per group: metric name -> value when the metric is missing
    "b2_mean_chain_average": math.nan,
    "grad_evals_to_b2_below_0.01": math.inf,
    "kl_truth_to_fit": math.nan,
}


def chain_group(trace, group: int):
    """The ChainTrace of chains ``group * CHAINS_PER_GROUP`` to the next group's first."""
    chains = slice(group * CHAINS_PER_GROUP, (group + 1) * CHAINS_PER_GROUP)

    def take(values):
        return None if values is None else np.asarray(values)[chains]

    checkpoints = trace.checkpoints
    if checkpoints is not None:
        checkpoints = Checkpoints(checkpoints.steps, Moments(*map(take, checkpoints.moments)),
                                  take(checkpoints.grad_evals))
    return trace._replace(moments=Moments(*map(take, trace.moments)), grad_evals=take(trace.grad_evals),
                          nonfinite_steps=take(trace.nonfinite_steps),
                          first_nonfinite_step=take(trace.first_nonfinite_step), samples=take(trace.samples),
                          checkpoints=checkpoints)


def measure(target_kind: str, name: str, backend: str) -> dict:
    """One run of ``GROUPS`` x ``CHAINS_PER_GROUP`` chains; per group the ``METRICS``, and the total
    of diverged chains. NotImplementedError where the backend has no implementation of ``name``."""
    if backend not in QUALITY_BACKENDS:
        raise ValueError(f"backend must be one of {', '.join(QUALITY_BACKENDS)}, got {backend!r}")
    implementation = workloads.implementation(name, backend)
    target_name, target_params = QUALITY_TARGETS[target_kind]
    # MCLMC's tuner is full-batch: fed noisy energies it shrinks MILE's step to 0 and freezes the chains
    # (b^2 ~ 0.5 and a singular Gaussian fit), so MILE's file asks for exact gradients.
    exact = samplers.benchmark_settings(name).gate.exact_gradients
    noise = {"noise": "none"} if exact else GRADIENT_NOISE[target_kind]
    target = workloads.for_sampler(implementation, targets.get(target_name, **target_params, **noise))
    params = implementation.params(target_kind, target, timing=False)
    budget = GRADIENT_BUDGET if implementation.driver == "jax" else REDUCED_BUDGET
    steps = budget // gradient_evaluations(implementation.sampler, target, params, implementation.driver,
                                           workloads.SEED)[1]
    options = dict(RUN_OPTIONS[target_kind])
    if options.get("keep_samples"):
        options["thin"] = max(1, steps // KEPT_DRAWS)
    result = running.run(implementation.sampler, target, params=params, num_chains=GROUPS * CHAINS_PER_GROUP,
                         num_steps=steps, seed=workloads.SEED, backend=implementation.driver,
                         dtype=implementation.dtype, **options)
    groups = []
    for group in range(GROUPS):
        metrics, _ = score(chain_group(result.trace, group), target.truth)
        groups.append({key: float(metrics.get(key, missing)) for key, missing in METRICS.items()})
    return {"steps": steps, "groups": groups, "diverged_chains": int(result.trace.diverged.sum())}


def median_of_groups(values) -> float:
    """The median, a NaN (a failed group) counting as +inf; NaN when the median itself is not finite."""
    median = float(np.median([math.inf if math.isnan(v) else v for v in values]))
    return median if math.isfinite(median) else math.nan


class _QualityRuns:
    """Shared by the classes below: the run of ``target_kind`` for the benchmark's parameters,
    cached as JSON in the ``setup_cache`` directory."""

    target_kind = ""
    params = (samplers.names(), QUALITY_BACKENDS)
    param_names = ("sampler", "backend")
    timeout = 900

    def setup_cache(self):
        directory = Path("quality_runs").resolve()
        directory.mkdir(exist_ok=True)
        return str(directory)

    setup_cache.timeout = 60

    def setup(self, directory, name, backend):
        path = Path(directory) / f"{self.target_kind}-{name}-{backend}.json"
        if not path.exists():
            values = measure(self.target_kind, name, backend)  # raises NotImplementedError to skip
            partial = path.with_suffix(".partial")
            partial.write_text(json.dumps(values))
            os.replace(partial, path)
        self.values = json.loads(path.read_text())

    def median(self, metric: str) -> float:
        return median_of_groups([group[metric] for group in self.values["groups"]])

    def track_diverged_chains(self, directory, name, backend):
        """Chains (of 50) with a non-finite position at any step."""
        return self.values["diverged_chains"]

    track_diverged_chains.unit = "chains"


class _B2Runs(_QualityRuns):
    """Runs on a target with an analytic truth: b^2 (mean over dimensions, chain average)."""

    def track_b2(self, directory, name, backend):
        return self.median("b2_mean_chain_average")

    track_b2.unit = "b^2"


class TrackICG(_B2Runs):
    """The 10-d icg with isotropic noise of variance 256 (see the module docstring)."""

    target_kind = "icg"

    def track_gradient_evaluations_to_b2_below_0_01(self, directory, name, backend):
        return self.median("grad_evals_to_b2_below_0.01")

    track_gradient_evaluations_to_b2_below_0_01.unit = "gradient evaluations"


class TrackRosenbrock(_B2Runs):
    """The 10-d Rosenbrock (Q = 0.1) with isotropic noise of variance 256."""

    target_kind = "rosenbrock"


class TrackLinreg(_QualityRuns):
    """The SGLRW paper's Bayesian linear regression (minibatches of 32 of 1000)."""

    target_kind = "linreg"

    def track_kl_gaussian_fit(self, directory, name, backend):
        return self.median("kl_truth_to_fit")

    track_kl_gaussian_fit.unit = "nats"
