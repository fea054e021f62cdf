r"""The MAMBA tuner and the paper's two baselines (MAMBA paper: Algorithm 1,
section 4 and appendix B.1).

- :func:`mamba`: successive halving (:mod:`sgbench.bench.tune.halving`) over the grid of arms
  (:mod:`sgbench.bench.tune.arms`), reward -KSD or -FSSD-opt (:mod:`sgbench.bench.tune.rewards`), budget in gradient
  evaluations or seconds (:mod:`sgbench.bench.tune.budget`).
- :func:`grid_search`: every arm of the same grid with an equal share :math:`T/M` of the same budget,
  the best reward wins: one round of uniform allocation, the search MAMBA improves on. (The paper's grid
  search fixes the batch at 10 % and ranks by a test-set loss, appendix C.1.2; ours ranks like MAMBA so
  that only the allocation differs.)
- :func:`heuristic`: no search: :math:`h = 1/N` (Brosse et al. 2018) and a 10 % batch (appendix B.1),
  run for the whole budget.

Every chain starts at the target's ``initial_position`` (the MAP for the data targets: the paper starts
its samplers there). Control-variate samplers get their centre once, for all arms.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable

import numpy as np

from sgbench import samplers, targets
from sgbench.base.arguments import integer_at_least
from sgbench.bench.tune import arms as arm_grid
from sgbench.bench.tune.arm_runs import MIN_STEPS, ArmRun, ArmRunner
from sgbench.bench.tune.budget import Budget, StepCost
from sgbench.bench.tune.halving import (
    DEFAULT_ETA,
    Halving,
    best_first,
    check_arms_and_eta,
    num_rounds,
    successive_halving,
)
from sgbench.bench.tune.rewards import discrepancy

HEURISTIC_BATCH_FRACTION = 0.1
CALIBRATION_STEPS = 200
CALIBRATION_SECONDS = 0.2  # the second calibration run lasts about this long: per-call overhead amortised
DEFAULT_MAX_DRAWS = 1000


def _refuse_values_refused_everywhere(arms, skipped) -> None:
    """ValueError naming an arm value (``name=value``) that the sampler refuses in every combination it is in: a
    value out of range on its own (a negative step size), not a combination the sampler cannot run (a friction
    too large for one step size), which is left out and listed."""
    reason = dict(skipped)  # arm -> why the sampler refuses it
    for pair in dict.fromkeys(pair for arm in arms for pair in arm.values):
        with_pair = [arm for arm in arms if pair in arm.values]
        if all(arm in reason for arm in with_pair):
            name, value = pair
            raise ValueError(f"arm value {name}={value} is refused by the sampler: {reason[with_pair[0]]}")


@dataclasses.dataclass(frozen=True)
class ArmRecord:
    """One arm in one round: ``steps`` run so far, budget ``charged`` for this round's steps, the
    ``discrepancy`` (KSD or FSSD; inf if diverged), ``reward`` = -discrepancy, non-finite steps."""

    round: int
    arm: int
    steps: int
    charged: float
    discrepancy: float
    reward: float
    nonfinite_steps: int


@dataclasses.dataclass(frozen=True)
class Tuning:
    """The outcome of one tuning method.

    Attributes:
        method: "mamba", "grid" or "heuristic".
        metric: "ksd" or "fssd".
        sampler, target: their names; target_params: the target's parameters (without the batch size).
        arms: the grid (one arm for the heuristic).
        budget: the Budget.
        eta: the pruning rate (MAMBA), else None.
        records: every arm in every round.
        winner: the index of the chosen arm.
        halving: MAMBA's rounds, else None.
        winner_run: the chosen arm's last run (its draws, for further scores).
    """

    method: str
    metric: str
    sampler: str
    target: str
    target_params: dict
    arms: tuple
    budget: Budget
    eta: int | None
    records: tuple[ArmRecord, ...]
    winner: int
    halving: Halving | None
    winner_run: ArmRun

    @property
    def winner_arm(self) -> arm_grid.Arm:
        return self.arms[self.winner]

    @property
    def spent(self) -> float:
        return float(sum(r.charged for r in self.records))

    def table(self):
        """Every arm of every round as a pandas DataFrame."""
        import pandas as pd

        return pd.DataFrame([{"round": r.round, **dict(self.arms[r.arm].values), "steps": r.steps,
                              "charged": r.charged, self.metric: r.discrepancy, "reward": r.reward,
                              "nonfinite_steps": r.nonfinite_steps} for r in self.records])


@dataclasses.dataclass
class Problem:
    """A tuning problem: a sampler, a target, a grid of arms and how their chains run (see :func:`mamba`)."""

    sampler: object
    target_name: str
    target_params: dict
    arms: list
    runner: ArmRunner
    costs: list
    budget: Budget
    metric: str
    base_target: object  # the target without an arm's batch size: the full-batch scores of every reward
    store: object = None
    on_round: Callable | None = None
    progress: Callable | None = None
    skipped: tuple = ()

    @classmethod
    def build(cls, sampler, target, *, axes=None, arms=None, budget: Budget, metric="ksd", sampler_params=None,
              target_params=None, num_chains=1, seed=0, max_draws=DEFAULT_MAX_DRAWS, dtype="float64",
              initial_position=None, store=None, on_round=None, progress=None) -> Problem:
        """Validate everything and prepare the arms' targets, hyperparameters and step costs.

        ``arms`` (a list of :class:`~sgbench.bench.tune.arms.Arm`) gives the grid, or else the axes of
        :func:`sgbench.bench.tune.arms.default_axes` with those of ``axes`` (name -> values) in their place (one value
        fixes a hyperparameter). Every chain starts at ``initial_position`` (default: the target's). Arms
        whose hyperparameters the sampler refuses (a friction too large for the step size, say) are left out
        and listed in ``skipped``.
        """
        sampler = samplers.get(sampler) if isinstance(sampler, str) else sampler
        target_params = dict(target_params or {})
        if "noise_batch_size" in target_params:
            raise ValueError("noise_batch_size is set by each arm's batch_fraction; do not give it as a target "
                             "parameter")
        base_target = targets.get(target, **target_params)
        integer_at_least("--num-chains", num_chains, 1, 1024)
        integer_at_least("--seed", seed, 0, 2**32 - 1)
        integer_at_least("max_draws", max_draws, 2 * MIN_STEPS)
        base = dict(sampler_params or {})
        for name in ("step_size", arm_grid.BATCH_FRACTION):
            base.pop(name, None)
        smallest = dict(step_size=1e-12, **base)
        first = sampler.params_for(base_target, **smallest)  # validates the overrides, fills a CV centre
        if sampler.prepare is not None:
            base = {k: v for k, v in sampler.prepare(base_target, smallest).items() if k != "step_size"}
        if arms is None:
            axes = {**arm_grid.default_axes(sampler, base_target, first), **(axes or {})}
            axes = arm_grid.check_axes(sampler, base_target, {k: tuple(v) for k, v in axes.items()}, first)
            arms = arm_grid.grid(axes)
        targets_by_fraction, kept, params, skipped = {}, [], [], []
        for arm in arms:
            fraction = arm.batch_fraction
            if fraction not in targets_by_fraction:
                size = arm_grid.minibatch_size(base_target, fraction)
                targets_by_fraction[fraction] = (base_target if size is None or size == base_target.noise.batch_size
                                                 else targets.get(target, **target_params, noise_batch_size=size))
            try:
                params.append(sampler.params_for(targets_by_fraction[fraction], **base, **arm.sampler_params()))
            except ValueError as error:
                skipped.append((arm, str(error)))
                continue
            kept.append(arm)
        if not kept:
            raise ValueError("the sampler refuses every arm of the grid; the first: "
                             f"{skipped[0][0].label}: {skipped[0][1]}")
        _refuse_values_refused_everywhere(arms, skipped)
        runner = ArmRunner(sampler, params, [targets_by_fraction[a.batch_fraction] for a in kept],
                           base_target.initial_position() if initial_position is None else
                           base_target.check_positions(initial_position, 1)[0], num_chains, seed, max_draws, dtype)
        problem = cls(sampler, target, dict(base_target.params), kept, runner, [], budget, metric, base_target,
                      store, on_round, progress, tuple(skipped))
        problem.costs = problem._step_costs()
        return problem

    def _step_costs(self) -> list[StepCost]:
        runner, chains = self.runner, self.runner.num_chains
        if self.budget.kind == "grads":
            costs, probed = [], {}
            for arm, target in enumerate(runner.target_by_arm):
                key = id(target)
                if key not in probed:
                    probed[key] = runner.probe_grad_evals(arm)
                priming, per_step = probed[key]
                size = getattr(getattr(target, "noise", None), "batch_size", None)
                fraction = 1.0 if size is None else size / target.num_data
                costs.append(StepCost(chains * per_step * fraction, float(chains * priming)))
            return costs
        return [None] * len(self.arms)  # measured at the start of each round: see _calibrate

    def _calibrate(self, arms: list[int]) -> None:
        """Seconds per step of each of ``arms`` run together as in the round about to start (a vmapped program's
        time is shared by its arms, so the share depends on who else runs): a short run sets the length of a
        second one that lasts about ``CALIBRATION_SECONDS``, which amortises the per-call overhead."""
        short = self.runner.run(dict.fromkeys(arms, CALIBRATION_STEPS))
        longer = {a: max(CALIBRATION_STEPS, round(CALIBRATION_SECONDS / short[a].seconds_per_step)) for a in arms}
        for arm, run in self.runner.run(longer).items():
            self.costs[arm] = StepCost(run.seconds_per_step)

    def check_budget(self, first_round_budget: float, rounds_label: str) -> None:
        """Refuse a budget that gives some arm fewer than ``MIN_STEPS`` steps in its first round, naming the
        smallest budget that does not (a seconds budget is checked against a calibration of all arms)."""
        if self.budget.kind == "seconds":
            self._calibrate(list(range(len(self.arms))))
        short = [(a, c) for a, c in enumerate(self.costs) if c.steps_within(first_round_budget, True) < MIN_STEPS]
        if short:
            arm, cost = max(short, key=lambda pair: pair[1].cost(MIN_STEPS, True))
            needed = self.budget.total * cost.cost(MIN_STEPS, True) / first_round_budget
            flag = "--budget-grads" if self.budget.kind == "grads" else "--budget-seconds"
            raise ValueError(
                f"{flag} {self.budget.total:g} is too small: {rounds_label} each arm gets {first_round_budget:.4g} "
                f"{self.budget.unit} in its first round, and arm {self.arms[arm].label} needs "
                f"{cost.cost(MIN_STEPS, True):.4g} for the {MIN_STEPS} steps a reward needs; {flag} must be at "
                f"least {math.ceil(needed):d} here")

    def evaluator(self, method: str):
        """``evaluate(round, arms, budget) -> rewards`` for :func:`sgbench.bench.tune.halving.successive_halving`, and
        the records and last runs it fills in."""
        steps_so_far: dict[int, int] = {}
        records: list[ArmRecord] = []
        last_runs: dict[int, ArmRun] = {}

        def evaluate(round_index: int, arms: list[int], budget: float) -> list[float]:
            if self.budget.kind == "seconds" and round_index > 0:  # round 0: calibrated by check_budget
                self._calibrate(arms)
            first = {a: a not in steps_so_far for a in arms}
            new = {a: self.costs[a].steps_within(budget, first[a]) for a in arms}
            totals = {a: steps_so_far.get(a, 0) + new[a] for a in arms}
            runs = self.runner.run(totals, self.progress)
            rewards, this_round = [], []
            for a in arms:
                steps_so_far[a] = totals[a]
                result = runs[a]
                if self.budget.kind == "grads":
                    charged = self.costs[a].cost(new[a], first[a])
                else:  # charged what the steps took
                    charged = new[a] * result.seconds_per_step
                value = discrepancy(self.metric, result.samples, self.base_target, self.runner.seed)
                record = ArmRecord(round_index, a, totals[a], charged, value, -value, result.nonfinite_steps)
                records.append(record)
                this_round.append(record)
                last_runs[a] = result
                rewards.append(-value)
                if self.store is not None:
                    self._store(method, record, result)
            if self.on_round is not None:
                self.on_round(method, round_index, budget, this_round)
            return rewards

        return evaluate, records, last_runs

    def _store(self, method: str, record: ArmRecord, run: ArmRun) -> None:
        from sgbench.bench.sweeps.store import DuplicateRunError

        metrics = {**run.result.metrics, f"tune_{self.metric}": record.discrepancy, "tune_round": record.round,
                   "tune_method": method, "tune_batch_fraction": self.arms[record.arm].batch_fraction}
        result = dataclasses.replace(run.result, metrics=metrics)
        try:
            self.store.add(result, suite=f"tune-{method}")
        except DuplicateRunError:
            pass  # the same run (same code, configuration and seed) is stored already: runs are deterministic

    def outcome(self, method, eta, records, winner, halving, last_runs) -> Tuning:
        return Tuning(method, self.metric, self.sampler.name, self.target_name, self.target_params,
                      tuple(self.arms), self.budget, eta, tuple(records), winner, halving, last_runs[winner])


def check_mamba_budget(problem: Problem, eta: int = DEFAULT_ETA) -> None:
    """Refuse a budget that leaves an arm of ``problem`` too few steps in MAMBA's first round (before any run)."""
    num_arms, eta = check_arms_and_eta(len(problem.arms), eta)
    rounds = num_rounds(num_arms, eta)
    problem.check_budget(problem.budget.total / (num_arms * rounds),
                         f"with {num_arms} arms, eta={eta} and {rounds} round{'s' if rounds > 1 else ''},")


def mamba(problem: Problem, eta: int = DEFAULT_ETA) -> Tuning:
    """Algorithm 1 of MAMBA on ``problem`` (:meth:`Problem.build`) with pruning rate ``eta`` (default 3).

    Returns:
        the :class:`Tuning` (method "mamba"), its rounds in ``halving``.
    """
    check_mamba_budget(problem, eta)
    evaluate, records, last_runs = problem.evaluator("mamba")
    halving = successive_halving(len(problem.arms), problem.budget.total, evaluate, eta)
    return problem.outcome("mamba", eta, records, halving.winner, halving, last_runs)


def grid_search(problem: Problem) -> Tuning:
    """Every arm with budget T/M; the best reward wins (ties: the lower index)."""
    num_arms = len(problem.arms)
    share = problem.budget.total / num_arms
    problem.check_budget(share, f"with {num_arms} arms sharing it equally,")
    evaluate, records, last_runs = problem.evaluator("grid")
    rewards = evaluate(0, list(range(num_arms)), share)
    return problem.outcome("grid", None, records, best_first(range(num_arms), rewards)[0], None, last_runs)


def heuristic_arm(target) -> arm_grid.Arm:
    """:math:`h = 1/N` and a 10 % batch (appendix B.1); other hyperparameters at their defaults.

    Raises:
        ValueError: ``target`` has no minibatch noise (no N to scale by).
    """
    if target.params.get("noise") != "minibatch":
        raise ValueError(f"the heuristic h = 1/N needs a data target with minibatch noise; target {target.name!r} "
                         f"has noise {target.params.get('noise')!r}")
    return arm_grid.Arm((("step_size", 1.0 / target.num_data), (arm_grid.BATCH_FRACTION, HEURISTIC_BATCH_FRACTION)))


def heuristic(problem: Problem) -> Tuning:
    """The heuristic arm (the problem's only arm, see :func:`heuristic_arm`) run for the whole budget."""
    if len(problem.arms) != 1:
        raise ValueError(f"the heuristic runs one arm, the problem has {len(problem.arms)}")
    problem.check_budget(problem.budget.total, "with one arm,")
    evaluate, records, last_runs = problem.evaluator("heuristic")
    evaluate(0, [0], problem.budget.total)
    return problem.outcome("heuristic", None, records, 0, None, last_runs)


def summary(tuning: Tuning) -> dict:
    """The winner's hyperparameters and scores as a flat dict (for tables)."""
    last = [r for r in tuning.records if r.arm == tuning.winner][-1]
    return {"method": tuning.method, "sampler": tuning.sampler, **dict(tuning.winner_arm.values),
            tuning.metric: last.discrepancy, "steps": last.steps, "spent": tuning.spent,
            "nonfinite_steps": last.nonfinite_steps, "draws": int(np.prod(tuning.winner_run.samples.shape[:2]))}
