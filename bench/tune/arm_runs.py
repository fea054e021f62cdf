r"""Running MAMBA's arms (MAMBA paper, Algorithm 1: "Run each SGLD sampler ... for
time budget of :math:`r_i`").

An arm that survives round :math:`i` runs in round :math:`i+1` for :math:`r_{i+1}` more; its reward is
computed on all its draws so far. Here each round re-runs the arm's chains from the start for the
steps of all its rounds with the same seed, so its draws are those of one chain continued (the JAX
driver draws block :math:`b` from ``fold_in(key, b)``: the same numbers whatever the run's length,
except for a run's final short block). The budget is charged for the new steps only, as in
Algorithm 1; the re-run costs at most :math:`1/(\eta - 1)` more computation than continuing would.

The arms of one round that share a batch size and a step count (so one target and one program) run
as one vmapped JAX program (:func:`sgbench.bench.running.run.run_grid`): with a gradient budget, every arm
of a batch size gets the same steps.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from sgbench.bench.running.jax_driver import cached_block_size
from sgbench.bench.running.result import RunResult
from sgbench.bench.running.run import run, run_grid

PAPER_THIN = 10  # section 4.1 / appendix C.1.3: "we thin the samples by 10"
MIN_DRAWS = 10  # per chain: FSSD-opt holds out 80 % of the draws and needs 2 to train on
MIN_STEPS = 2 * MIN_DRAWS


def thinning(steps: int, num_chains: int, max_draws: int) -> int:
    """Every ``thin``-th step is kept: at least the paper's 10, more where the draws of all chains would exceed
    ``max_draws`` (the KSD is quadratic in them), fewer where fewer than ``MIN_DRAWS`` per chain would remain."""
    wanted = max(PAPER_THIN, math.ceil(steps * num_chains / max_draws))
    return max(1, min(wanted, steps // MIN_DRAWS))


@dataclasses.dataclass(frozen=True)
class ArmRun:
    """One arm's chains after ``steps`` steps: the stored-able ``result`` (its samples kept, thinned by
    :func:`thinning`) and the measured ``seconds_per_step`` (its share of its program's run time)."""

    arm: int
    steps: int
    result: RunResult

    @property
    def samples(self) -> np.ndarray:
        return np.asarray(self.result.samples)

    @property
    def seconds_per_step(self) -> float:
        return self.result.trace.run_seconds / self.steps

    @property
    def nonfinite_steps(self) -> int:
        return int(np.sum(self.result.trace.nonfinite_steps))


@dataclasses.dataclass
class ArmRunner:
    """Runs arms of one tuning problem.

    Args:
        sampler: the Sampler.
        params_by_arm: each arm's validated ``sampler.Params``.
        target_by_arm: each arm's Target (its batch size set).
        initial_position: every chain's start, (dim,).
        num_chains: chains per arm.
        seed: the chains' seed (the same for every arm: common random numbers).
        max_draws: at most this many kept draws per arm, all chains (see :func:`thinning`).
        dtype: the JAX driver's float type.
    """

    sampler: object
    params_by_arm: list
    target_by_arm: list
    initial_position: np.ndarray
    num_chains: int
    seed: int
    max_draws: int
    dtype: str = "float64"

    def probe_grad_evals(self, arm: int) -> tuple[int, int]:
        """(priming evaluations, evaluations per step) of one chain of ``arm``, counted by the reference driver
        over 1 and 2 steps."""
        counts = [run(self.sampler, self.target_by_arm[arm], params=self.params_by_arm[arm], num_chains=1,
                      num_steps=steps, backend="numpy", seed=self.seed,
                      initial_position=self.initial_position).grad_evals for steps in (1, 2)]
        return counts[0] - (counts[1] - counts[0]), counts[1] - counts[0]

    def block_size(self, arm: int) -> int:
        """The JAX driver's block size for ``arm``: 1024 steps, or fewer where a block of all the problem's arms
        at once would outgrow the caches (``CACHED_BLOCK_NUMBERS``; far within the driver's memory limit). For 11
        arms of MAMBA Table 2's pmf (2520 parameters) that is 37 steps: 1000-step blocks took 41 µs per
        chain-step there, 25 to 50 steps 20 to 23, and 6 to 12 steps 17. It does not depend on which arms run
        together, so a surviving arm's blocks, and draws, are the same every round."""
        return cached_block_size(self.sampler, self.target_by_arm[arm], self.params_by_arm, self.num_chains)

    def run(self, steps_by_arm: dict[int, int], progress=None) -> dict[int, ArmRun]:
        """Run every arm of ``steps_by_arm`` for its steps (each >= 1), grouped into vmapped programs by target
        and steps; ``progress(n)`` is told chain-steps as they complete."""
        groups: dict[tuple, list[int]] = {}
        for arm, steps in steps_by_arm.items():
            groups.setdefault((id(self.target_by_arm[arm]), steps), []).append(arm)
        runs = {}
        for (_, steps), arms in groups.items():
            thin = thinning(steps, self.num_chains, self.max_draws)
            target, grid = self.target_by_arm[arms[0]], [self.params_by_arm[a] for a in arms]
            results = run_grid(self.sampler, target, params_grid=grid, num_chains=self.num_chains, num_steps=steps,
                               seed=self.seed, thin=thin, keep_samples=True, dtype=self.dtype,
                               initial_position=self.initial_position, progress=progress,
                               block_size=min(steps, self.block_size(arms[0])))
            for arm, result in zip(arms, results):
                runs[arm] = ArmRun(arm, steps, result)
        return runs
