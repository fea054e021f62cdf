"""``sgbench tune SAMPLER --target T [--budget-grads N | --budget-seconds S] [--metric ksd|fssd] [--eta 3]
[--arm NAME=VALUES ...] [--baselines]``: MAMBA's successive halving over a grid of hyperparameters, each
round printed, every arm's run stored, and a page with the halving tree."""

from __future__ import annotations

import sys
from pathlib import Path

from sgbench.bench.cli._common import (
    DEFAULT_DB,
    UsageError,
    command_line,
    output_folder,
    parse_key_values,
    progress,
    store_file,
)
from sgbench.bench.cli._report_folders import add_out_option

DEFAULT_BUDGET_GRADS = 20_000


def add_parser(commands) -> None:
    tune = commands.add_parser("tune", help="tune a sampler's step size, batch size and friction with MAMBA")
    tune.add_argument("sampler", help="sampler name (see `sgbench list samplers`)")
    tune.add_argument("--target", required=True, help="target name (see `sgbench list targets`)")
    budget = tune.add_mutually_exclusive_group()
    budget.add_argument("--budget-grads", type=float, metavar="N",
                        help=f"total budget in full-data gradient evaluations (default: {DEFAULT_BUDGET_GRADS:,}; "
                             "a minibatch gradient counts its batch fraction; reproducible bit for bit)")
    budget.add_argument("--budget-seconds", type=float, metavar="S",
                        help="total budget in seconds of sampling (the paper's; depends on the machine)")
    tune.add_argument("--metric", default="ksd", help="reward: minus ksd (IMQ kernel) or fssd (FSSD-opt) "
                      "(default: ksd)")
    tune.add_argument("--eta", type=int, default=3, help="pruning rate: keep the best 1/eta each round (default: 3)")
    tune.add_argument("--arm", action="append", metavar="NAME=VALUES",
                      help="one axis of the grid (repeatable): NAME=V1,V2,... or NAME=LOW:HIGH:COUNT (COUNT "
                           "log-spaced values); NAME is step_size, batch_fraction or a numeric hyperparameter; "
                           "one value fixes it. Axes not given keep their defaults: half decades of step size around "
                           "1/N, batch fractions 1, 0.1, 0.01, 0.001, friction (where the sampler has one) at its "
                           "default and 10 times it")
    tune.add_argument("--target-param", action="append", metavar="KEY=VALUE", help="target parameter (repeatable)")
    tune.add_argument("--sampler-param", action="append", metavar="KEY=VALUE",
                      help="fixed sampler hyperparameter (repeatable), e.g. convention=welling_teh")
    tune.add_argument("--num-chains", type=int, default=1, help="chains per arm, sharing its budget (default: 1, "
                      "as the paper)")
    tune.add_argument("--reward-draws", type=int, metavar="N",
                      help="score at most N draws of an arm, all chains (its draws thinned by 10, or more; default: "
                           "1000): each costs a full-data gradient, and the KSD's cost grows as N^2")
    tune.add_argument("--seed", type=int, default=0, help="random seed (default: 0)")
    tune.add_argument("--baselines", action="store_true",
                      help="also run grid search (every arm, an equal share of the budget) and the heuristic "
                           "(h = 1/N, 10 %% batch, the whole budget), each with the same budget")
    tune.add_argument("--db", type=Path, default=DEFAULT_DB, help=f"results store for every arm's runs "
                      f"(default: {DEFAULT_DB})")
    add_out_option(tune, "tune.html")
    tune.add_argument("--no-progress", action="store_true", help="no per-round lines on stderr")
    tune.set_defaults(handler=execute, heartbeat=True)


def _budget(args):
    from sgbench.bench.tune.budget import Budget

    if args.budget_seconds is not None:
        return Budget("seconds", args.budget_seconds)
    return Budget("grads", DEFAULT_BUDGET_GRADS if args.budget_grads is None else args.budget_grads)


def _axes(args):
    from sgbench.bench.tune.arms import parse_axis

    axes = {}
    for text in args.arm or ():
        name, values = parse_axis(text)
        if name in axes:
            raise UsageError(f"--arm {name} is given twice; give each axis once")
        axes[name] = values
    return axes or None


def print_round(method: str, round_index: int, budget: float, records, problem) -> None:
    """Print one round: its budget per arm and each arm's discrepancy, best first."""
    metric = problem.metric.upper()
    ordered = sorted(records, key=lambda r: (r.discrepancy, r.arm))
    print(f"{method} round {round_index}: {len(records)} arms, {budget:.4g} {problem.budget.unit} each")
    for record in ordered:
        value = f"{record.discrepancy:.4g}" if record.discrepancy != float("inf") else "diverged"
        print(f"  {metric} {value:>10}  {record.steps:>9,} steps  {problem.arms[record.arm].label}")
    sys.stdout.flush()


def execute(args, argv) -> int:
    from sgbench.base.arguments import integer_at_least, one_of
    from sgbench.bench.sweeps.store import ResultsStore
    from sgbench.bench.tune import mamba as tuner
    from sgbench.bench.tune.arm_runs import MIN_STEPS
    from sgbench.bench.tune.page import winner_line, write_page
    from sgbench.bench.tune.rewards import METRICS

    one_of("--metric", args.metric, METRICS)
    integer_at_least("--eta", args.eta, 2)
    reward_draws = tuner.DEFAULT_MAX_DRAWS if args.reward_draws is None else integer_at_least(
        "--reward-draws", args.reward_draws, 2 * MIN_STEPS)
    budget = _budget(args)
    axes = _axes(args)
    target_params = parse_key_values(args.target_param, "--target-param")
    sampler_params = parse_key_values(args.sampler_param, "--sampler-param")
    for name in ("step_size", "batch_fraction"):
        if name in sampler_params:
            raise UsageError(f"--sampler-param {name} is tuned: give its values with --arm {name}=...")
    store_file(args.db)
    output_folder(args.out)
    problems = []

    def build(**kwargs):
        problem = tuner.Problem.build(args.sampler, args.target, budget=budget, metric=args.metric,
                                      sampler_params=sampler_params, target_params=target_params,
                                      num_chains=args.num_chains, seed=args.seed, max_draws=reward_draws,
                                      store=store, **kwargs)
        problem.on_round = lambda *a: print_round(*a, problem)
        if not args.no_progress:
            progress(f"{problem.sampler.name} on {args.target}: {len(problem.arms)} arms"
                     + (f" ({len(problem.skipped)} refused by the sampler: {problem.skipped[0][1]})"
                        if problem.skipped else ""))
        problems.append(problem)
        return problem

    with ResultsStore(args.db) as store:
        before = len(store)
        try:
            tunings = [tuner.mamba(build(axes=axes), eta=args.eta)]
            if args.baselines:
                tunings.append(tuner.grid_search(build(axes=axes)))
                first = problems[0]
                arm = tuner.heuristic_arm(first.runner.target_by_arm[0])
                tunings.append(tuner.heuristic(build(arms=[arm])))
            for tuning in tunings:
                print(winner_line(tuning))
            print(f"report: {write_page(args.out / 'tune.html', tunings, command_line(argv))}")
        except KeyboardInterrupt:  # in the tuning or while writing its page
            raise KeyboardInterrupt(f"sgbench: tune interrupted: {len(store) - before} arm runs were stored in "
                                    f"{args.db} before it stopped; the tuning itself is not resumed (run it "
                                    "again)") from None
    return 0
