r"""Runs of a gate cell as independent replicates: ``groups`` runs of the cell's chains, all in one
compiled call (the driver gives every chain its own key, so a group is a run with its own seed).

Per chain ``j`` and coordinate ``i``, from the streamed time averages and the exact mean
:math:`\mu` and covariance :math:`\Sigma`:

- the standardised mean error :math:`m_{ij} = (\bar x_{ij} - \mu_i) / \sqrt{\Sigma_{ii}}`;
- the relative second-moment error :math:`r_{ij} = \overline{(x_i - \mu_i)^2}_j / \Sigma_{ii} - 1`,
  from ``mean_sq - 2 mu mean + mu^2`` (centring at the exact mean keeps the Monte Carlo noise of
  the mean out of the variance error).

On a centred Gaussian target :math:`\operatorname{mean}_i \bar r_i^2` is twice the b^2 of SMILE
appendix C (whose denominator is :math:`\operatorname{Var}[x_i^2] = 2\Sigma_{ii}^2`).
"""

from __future__ import annotations

import dataclasses
import time

import jax
import numpy as np
import scipy.stats

from sgbench.base.float64 import in_float64_mode
from sgbench.bench.gate import gold_standard
from sgbench.bench.gate.cells import Cell
from sgbench.bench.gate.start import Travel, overdispersed, travel
from sgbench.bench.running import run as running
from sgbench.reference.checks import standard_error

STATISTICS = ("mean_error", "second_moment_error", "log_variance_ratio")


@dataclasses.dataclass(frozen=True)
class Replicates:
    """Per-chain statistics of ``groups`` runs of a cell: arrays of shape (groups, chains, dim)
    (``diverged``: (groups, chains)); ``results`` the driver's results, one per chunk of groups;
    ``start`` (groups, chains, dim) the start positions; ``truth`` what the errors are measured against;
    ``samples`` (groups, chains, kept, dim) the kept draws of a run that kept them (else None), every
    ``sample_every``-th scored step (the run's ``RunConfig.sample_every``)."""

    cell: Cell
    mean_error: np.ndarray
    second_moment_error: np.ndarray
    diverged: np.ndarray
    grad_evals_per_chain: float
    seconds: float
    results: tuple
    start: np.ndarray | None = None
    truth: object = None
    samples: np.ndarray | None = None
    sample_every: int = 1

    @property
    def groups(self) -> int:
        return self.mean_error.shape[0]

    def summary(self) -> dict:
        """Over the healthy chains of all groups, per coordinate, for ``mean_error``,
        ``second_moment_error`` and ``log_variance_ratio``: the mean (key itself), its standard
        error (``_se``; chains are independent), the median (``_median``) and the excess kurtosis
        (``_kurtosis``), NaN with fewer than 2 healthy chains; and ``num_chains`` (healthy) and ``num_diverged``."""
        healthy = ~self.diverged.reshape(-1)
        out = {"num_chains": int(healthy.sum()), "num_diverged": int((~healthy).sum())}
        for key in STATISTICS:
            values = getattr(self, key)
            x = values.reshape(-1, values.shape[-1])[healthy]
            if len(x) < 2:  # nothing to summarise: every statistic NaN (no warnings from empty slices)
                nan = np.full(values.shape[-1], np.nan)
                out.update({key: nan, f"{key}_se": nan, f"{key}_median": nan, f"{key}_kurtosis": nan})
                continue
            out[key], out[f"{key}_se"] = x.mean(axis=0), standard_error(x)
            out[f"{key}_median"], out[f"{key}_kurtosis"] = np.median(x, axis=0), scipy.stats.kurtosis(x, axis=0)
        return out

    @property
    def log_variance_ratio(self) -> np.ndarray:
        r""":math:`\ell_{ij} = \log(1 + r_{ij})`, the log of a chain's variance over the target's: the
        magnitude of heavy-tailed chains' errors on a scale where rare huge excursions are tame."""
        return np.log(np.maximum(1 + self.second_moment_error, np.finfo(np.float64).tiny))

    def group(self, g: int) -> Replicates:
        """Group ``g`` alone (one run of the cell)."""
        return dataclasses.replace(self, mean_error=self.mean_error[g:g + 1],
                                   second_moment_error=self.second_moment_error[g:g + 1],
                                   diverged=self.diverged[g:g + 1],
                                   start=None if self.start is None else self.start[g:g + 1],
                                   samples=None if self.samples is None else self.samples[g:g + 1])

    def travel(self) -> Travel:
        """How far all groups' chains travelled (``sgbench.bench.gate.start``); needs a run that kept its draws
        (``keep_samples=True``)."""
        if self.start is None or self.samples is None:
            raise ValueError(f"{self.cell.name}: travel needs the start positions and the kept draws "
                             "(run_replicates(..., keep_samples=True))")
        variance = np.diag(np.asarray(self.truth.covariance, dtype=np.float64))
        dim = self.start.shape[-1]
        return travel(self.start.reshape(-1, dim), self.samples.reshape(-1, *self.samples.shape[2:]),
                      self.diverged.reshape(-1), np.asarray(self.truth.mean, dtype=np.float64), variance,
                      self.sample_every, self.cell.num_burnin, self.cell.num_steps)


@in_float64_mode
def run_replicates(cell: Cell, groups: int = 1, seed: int = 0, sampler=None, backend: str | None = None,
                   max_chains_per_call: int = 4096, progress=None, **config) -> Replicates:
    """Run ``groups`` x ``cell.num_chains`` chains of ``cell`` from draws of the target (exact, or of its
    NUTS reference; overdispersed by ``cell.start_scale``, ``sgbench.bench.gate.start``), seeded by ``seed``, in
    calls of at most ``max_chains_per_call`` chains. ``sampler`` (a Sampler object) replaces
    the registered sampler of the cell's name (``sgbench validate`` runs a user's sampler on the
    gate's cells); ``backend`` is the driver (default: the cell's; a torch adapter's own, "batched" or "numpy");
    ``config``: further :class:`sgbench.bench.running.config.RunConfig` fields (``keep_samples``, ``thin``)."""
    backend = cell.backend if backend is None else backend
    target = cell.make_target()
    truth = gold_standard.truth_of(target)
    mu, var = np.asarray(truth.mean, dtype=np.float64), np.diag(np.asarray(truth.covariance, dtype=np.float64))
    per_call = max(1, min(groups, max_chains_per_call // cell.num_chains))
    parts, seconds_total, results = [], 0.0, []
    for first in range(0, groups, per_call):
        count = min(per_call, groups - first)
        chains = count * cell.num_chains
        call_seed = seed * 1_000_003 + first  # distinct keys per chunk, reproducible from (seed, groups)
        start_positions = overdispersed(target, jax.random.fold_in(jax.random.key(call_seed), 1), chains, mu,
                                        cell.start_scale)
        started = time.perf_counter()
        result = running.run(cell.sampler if sampler is None else sampler, target, params=dict(cell.params),
                             num_chains=chains, num_steps=cell.num_steps, num_burnin=cell.num_burnin, seed=call_seed,
                             backend=backend, initial_position=start_positions, progress=progress, **config)
        seconds_total += time.perf_counter() - started
        results.append(result)
        moments = result.moments
        m = (moments.mean - mu) / np.sqrt(var)
        r = (moments.second_moment - 2 * mu * moments.mean + mu**2) / var - 1
        shape = (count, cell.num_chains, -1)
        kept = result.trace.samples
        parts.append((m.reshape(shape), r.reshape(shape), result.trace.diverged.reshape(count, cell.num_chains),
                      np.asarray(result.trace.grad_evals, dtype=np.float64).mean(), start_positions.reshape(shape),
                      None if kept is None else np.asarray(kept).reshape(count, cell.num_chains, *kept.shape[1:])))
    return Replicates(cell=cell, mean_error=np.concatenate([x[0] for x in parts]),
                      second_moment_error=np.concatenate([x[1] for x in parts]),
                      diverged=np.concatenate([x[2] for x in parts]),
                      grad_evals_per_chain=float(np.mean([x[3] for x in parts])), seconds=seconds_total,
                      results=tuple(results), start=np.concatenate([x[4] for x in parts]), truth=truth,
                      samples=None if parts[0][5] is None else np.concatenate([x[5] for x in parts]),
                      sample_every=results[0].config.sample_every)
