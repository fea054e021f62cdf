r"""The step ladder of ``sgbench validate``: a sampler held to truth runs again at :math:`h/2, h/4, \dots`, and the
fit of its errors (``sgbench.reference.checks.vanishing_bias``) says whether they vanish as the step shrinks.

Rung :math:`k` is the first run's cell at step :math:`h 2^{-k}` for :math:`2^k` times its warm-up and scored steps
(and its ``thin``: as many draws kept), every other hyperparameter as given, so that every rung covers the same
span of the dynamics and its chains' time averages have about the first run's spread. The series are, per
coordinate, the standardised mean error and the relative variance error :math:`r` against truth at the sampler's
temperature. The ladder starts with ``FIRST_RUNGS`` rungs (the user's step and three below it: the fit uses the
finest three, so the user's step, often where the bias is largest and furthest from its leading term, informs
only the bias reported at the step); a finer rung or more chains on every rung are the remedies of an undecided
fit.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import scipy.stats

from sgbench.bench.gate.cells import Cell
from sgbench.bench.gate.replicates import Replicates
from sgbench.reference.checks import standard_error
from sgbench.reference.checks.vanishing_bias import LadderFit, ladder_fit

STEP = "step_size"  # the hyperparameter the ladder shrinks
FIRST_RUNGS = 4
MAX_RUNGS = 7  # the finest at h/64: 64 times the first run's steps
STATISTICS = {"mean_error": "mean error", "second_moment_error": "r"}
HEAVY_TAILS = 4**2 * (4**2 - 3) / 24  # z^2 (z^2 - 3) / 24 at z = 4: the kurtosis term's relative weight in a tail


def rung(cell: Cell, k: int) -> Cell:
    """``cell`` at step :math:`h 2^{-k}` for :math:`2^k` times its steps, warm-up and ``thin``; ValueError naming
    ``step_size`` if the cell has none."""
    if STEP not in cell.params:
        raise ValueError(f"{cell.sampler} has no {STEP} hyperparameter to shrink, got {sorted(cell.params)}")
    scale = 2**k
    return dataclasses.replace(cell, params={**cell.params, STEP: cell.params[STEP] / scale},
                               num_steps=scale * cell.num_steps, num_burnin=scale * cell.num_burnin,
                               thin=scale * cell.thin)


def rung_cost(cell: Cell, k: int, chains: int) -> float:
    """The chain-steps of ``chains`` chains on rung ``k`` of ``cell``."""
    return float(chains) * 2**k * (cell.num_burnin + cell.num_steps)


@dataclasses.dataclass
class Ladder:
    """A ladder's runs: ``cell`` (rung 0's), ``rungs`` (per rung, the healthy chains' values per statistic,
    (chains, dim) each; rung 0 is the first run) and ``diverged`` (per rung, the chains that diverged)."""

    cell: Cell
    rungs: list
    diverged: list

    @property
    def steps(self) -> tuple:
        return tuple(self.cell.params[STEP] / 2**k for k in range(len(self.rungs)))

    def add_rung(self, values: dict, diverged: int) -> None:
        self.rungs.append(values)
        self.diverged.append(diverged)

    def add_chains(self, k: int, values: dict, diverged: int) -> None:
        """More chains on rung ``k``."""
        self.rungs[k] = {key: np.concatenate([self.rungs[k][key], values[key]]) for key in STATISTICS}
        self.diverged[k] += diverged

    def chains(self, k: int) -> int:
        return int(self.rungs[k]["mean_error"].shape[0])

    def fit(self, alpha: float, miss: float, detect: float, truth: dict | None = None) -> LadderFit:
        """:func:`fit_rungs` of this ladder."""
        return fit_rungs(self.steps, self.rungs, alpha, miss, detect, truth)


def fit_rungs(steps, rungs: list, alpha: float, miss: float, detect: float, truth: dict | None = None) -> LadderFit:
    """The fit of every (statistic, coordinate) series of ``rungs`` (per rung, the chains' values per statistic,
    (chains, dim) each) at ``steps``, at the rates ``alpha`` (persists) and ``miss`` (vanishes); ``truth`` the
    standard errors of an estimated truth (``gold_standard.allowance``; None: analytic)."""
    errors = [np.concatenate([values[key].mean(axis=0) for key in STATISTICS]) for values in rungs]
    se = [np.concatenate([standard_error(values[key]) for key in STATISTICS]) for values in rungs]
    dim = rungs[0]["mean_error"].shape[1]
    labels = [f"{words} in coordinate {i}" for words in STATISTICS.values() for i in range(dim)]
    common = None if truth is None else np.concatenate([np.asarray(truth[f"{key}_se"]) for key in STATISTICS])
    return ladder_fit(steps, np.array(errors), np.maximum(np.array(se), 1e-300), alpha=alpha, miss=miss,
                      detect=detect, labels=labels, common_se=common)


def tails_too_heavy(values: dict) -> str | None:
    r"""Where the normal approximation of the ladder's z-statistics fails on ``values`` (per statistic, the chains'
    values (chains, dim)), the largest excess kurtosis and the chains, in words; None where it holds. The kurtosis
    term of the Edgeworth expansion changes the tail of a z-test at its critical value z ~ 4 by a relative
    :math:`\kappa z^2 (z^2 - 3) / (24 n) \approx 8.7 \kappa / n` over :math:`n` chains (the term
    :math:`\varphi(z) \kappa He_3(z) / (24 n)` against the tail :math:`\varphi(z) / z`): the tails are too heavy where
    that exceeds one half (``HEAVY_TAILS``)."""
    chains = values["mean_error"].shape[0]
    kurtosis = max(float(np.nanmax(scipy.stats.kurtosis(values[key], axis=0))) for key in STATISTICS)
    if chains < 2 or kurtosis * HEAVY_TAILS <= 0.5 * chains:
        return None
    return (f"its chains' time averages are heavy-tailed here (excess kurtosis {kurtosis:.3g} over {chains} chains), "
            "where the step ladder's normal approximation fails (so no budget decides this)")


def healthy_values(rep: Replicates, at_truth) -> tuple[dict, int]:
    """(per statistic the values (chains, dim) of ``rep``'s healthy chains against truth, the diverged count);
    ``at_truth(rep)`` gives the run's errors against the target at the sampler's temperature."""
    one = at_truth(rep)
    healthy = ~one.diverged.reshape(-1)
    dim = one.mean_error.shape[-1]
    return ({key: getattr(one, key).reshape(-1, dim)[healthy] for key in STATISTICS},
            int((~healthy).sum()))
