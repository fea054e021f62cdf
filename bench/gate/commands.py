"""The gate's commands of the ``sgbench`` command line:

    sgbench gate [--suite quick|full] [--baseline PATH | --no-baseline] [--seed S] [--reseed N]
    sgbench gate --power [--bug NAME ...] [--no-tests]
    sgbench baseline update --why TEXT [--suite quick|full] [--seeds K] [--cell NAME ... | --sampler NAME [--groups G]]
    sgbench design-bias [--suite quick|full] [--groups G] [--remeasure] [--sampler NAME]
    sgbench validate MODULE:OBJECT [--param KEY=VALUE ...] [--claims NAME] [--targets icg|linreg|all]
                     [--chains C] [--steps N] [--seed S] [--out DIR]
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

from bench.gate import baseline as baselines
from bench.gate.cells import SUITES

GATE_STORE = Path("reports") / "results.sqlite"
GATE_OUT = Path("reports") / "latest"


def add_parsers(commands) -> None:
    gate = commands.add_parser("gate", help="check a suite's cells against truth and stored baselines")
    gate.add_argument("--suite", choices=SUITES, default="quick", help="cells to run (default: quick)")
    gate.add_argument("--baseline", type=Path, default=None,
                      help="baseline file (default: reports/baselines/SUITE.json)")
    gate.add_argument("--no-baseline", action="store_true", help="truth checks only")
    gate.add_argument("--seed", type=int, default=0,
                      help="the run's seed (default: 0, the baselines' fixed seed); with --reseed the runs are "
                           "seeded by SEED + 1, so another --seed adds fresh runs")
    gate.add_argument("--reseed", type=int, default=0, metavar="N",
                      help="run the gate N times with fresh seeds and report each check's failure rate")
    gate.add_argument("--cell", action="append", metavar="NAME", help="with --reseed: only this cell (repeatable)")
    gate.add_argument("--power", action="store_true",
                      help="plant each bug of bench.gate.planted and report which layer (gate, fast tests) catches it")
    gate.add_argument("--bug", action="append", metavar="NAME", help="with --power: only this planted bug (repeatable)")
    gate.add_argument("--no-tests", action="store_true", help="with --power: the gate layer only")
    gate.add_argument("--db", type=Path, default=GATE_STORE, help=f"results store (default: {GATE_STORE})")
    gate.add_argument("--out", type=Path, default=GATE_OUT, help=f"report folder (default: {GATE_OUT})")

    baseline = commands.add_parser("baseline", help="regenerate the gate's baselines on purpose")
    actions = baseline.add_subparsers(dest="action", required=True)
    update = actions.add_parser("update", help="rerun the suite over K seeds and store its metrics' spread")
    update.add_argument("--why", required=True, help="why the baselines change (stored with them)")
    update.add_argument("--suite", choices=SUITES, default="quick", help="suite (default: quick)")
    update.add_argument("--seeds", type=int, default=baselines.DEFAULT_SEEDS,
                        help=f"reseeded runs per cell (default: {baselines.DEFAULT_SEEDS})")
    update.add_argument("--path", type=Path, default=None, help="file (default: reports/baselines/SUITE.json)")
    only = update.add_mutually_exclusive_group()
    only.add_argument("--cell", action="append", metavar="NAME",
                      help="regenerate only this cell (repeatable); the others are kept")
    only.add_argument("--sampler", metavar="NAME",
                      help="a new sampler: measure its cells' missing design biases, then regenerate only its "
                           "cells' baselines; the others are kept")
    update.add_argument("--groups", type=int, default=64,
                        help="with --sampler: 64-chain runs per missing design bias (default: 64)")

    design = commands.add_parser("design-bias", help="measure each gate cell's design bias (reference/data)")
    design.add_argument("--suite", choices=SUITES, default="quick", help="suite (default: quick; full holds it)")
    design.add_argument("--groups", type=int, default=64, help="64-chain runs per cell (default: 64)")
    design.add_argument("--remeasure", action="store_true", help="measure every cell, not only those missing")
    design.add_argument("--sampler", metavar="NAME", help="only the cells of this sampler")

    validate = commands.add_parser("validate", help="validate a sampler (MODULE:OBJECT) against truth and "
                                                    "the suite's reference implementation")
    validate.add_argument("sampler", help="MODULE:OBJECT, a Sampler in the suite's contract or an adapter, "
                                          "e.g. bench.adapters.blackjax:sgld")
    validate.add_argument("--param", action="append", metavar="KEY=VALUE", help="hyperparameter (repeatable)")
    validate.add_argument("--claims", default=None,
                          help="the suite sampler it implements (default: the adapter's claim, or its name if "
                               "registered; the registered sampler itself is checked against its stored design "
                               "bias or exact truth, never against itself)")
    validate.add_argument("--targets", choices=("icg", "linreg", "all"), default="all",
                          help="which gate targets (default: all)")
    validate.add_argument("--seed", type=int, default=0, help="random seed (default: 0)")
    validate.add_argument("--chains", type=int, default=64, help="chains per target (default: 64)")
    validate.add_argument("--steps", type=int, default=4000, help="steps per chain (default: 4000)")
    validate.add_argument("--out", type=Path, default=GATE_OUT, help=f"report folder (default: {GATE_OUT})")


def _progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _command_line(argv) -> str:
    return "sgbench " + " ".join(sys.argv[1:] if argv is None else argv)


def run(args, argv) -> int:
    """Dispatch a gate command; returns the exit status (0 only when everything passed)."""
    from bench.cli import parse_key_values

    if args.command == "baseline":
        from bench.gate import design_bias
        from bench.gate.runner import update_baseline

        command = _command_line(argv)
        if args.sampler is not None:  # a new sampler: its design biases first, which its gate cells need
            baselines.checked_why(args.why)
            path = design_bias.build(args.suite, args.groups, command=command, sampler=args.sampler,
                                     progress=_progress)
            print(f"design bias written: {path}")
        path = update_baseline(args.suite, args.why, command, seeds=args.seeds, path=args.path, names=args.cell,
                               sampler=args.sampler, progress=_progress)
        print(f"baselines written: {path}")
        return 0
    if args.command == "design-bias":
        from bench.gate import design_bias

        path = design_bias.build(args.suite, args.groups, command=_command_line(argv), remeasure=args.remeasure,
                                 sampler=args.sampler, progress=_progress)
        print(f"design bias written: {path}")
        return 0
    if args.command == "validate":
        from bench.adapters import load_sampler
        from bench.gate.validate import validate

        verdict = validate(load_sampler(args.sampler), params=parse_key_values(args.param, "--param"),
                           claims=args.claims, targets=args.targets, seed=args.seed, num_chains=args.chains,
                           num_steps=args.steps, out=args.out,
                           progress=_progress)
        print(verdict.summary())
        return 0 if verdict.passed else 1
    return _gate(args)


def _gate(args) -> int:
    from bench.html import error_bar_figure, write_page
    from bench.gate.runner import reseed, run_gate
    from bench.sweeps.store import ResultsStore

    use_baseline = not args.no_baseline
    if args.power:
        return _power(args)
    if args.reseed:
        per_check, runs = reseed(args.suite, args.reseed, args.baseline, use_baseline, first_seed=args.seed + 1,
                                 names=args.cell, progress=_progress)
        failed = int(runs["failed"].sum())
        upper = _rate_upper_bound(failed, len(runs))
        verdict = (f"{failed} of {len(runs)} reseeded gate runs failed (95% upper bound on the run failure "
                   f"rate {upper:.3g}); {int(per_check['failures'].sum())} check failures in all")
        print(per_check.to_string(index=False))
        print(verdict)
        page = write_page(args.out / f"gate_{args.suite}_reseed.html",
                          f"Gate '{args.suite}': {len(runs)} reseeded runs", verdict, failed == 0,
                          {"Failure rate per check": per_check}, {})
        print(f"report: {page}")
        return 0
    outcome = run_gate(args.suite, args.seed, args.baseline, use_baseline, progress=_progress)
    with ResultsStore(args.db) as store:
        for rep in outcome.replicates:
            for result in rep.results:
                if not store.has(result.config_hash, result.config.seed):
                    store.add(result, suite=f"gate-{args.suite}")
        store.add_checks(outcome.checks.to_dict("records"), suite=f"gate-{args.suite}", seed=args.seed)
    checks = outcome.checks
    failed = checks[~checks["passed"]]
    moved = outcome.moved
    if len(moved):
        moved = moved[moved["moved_from_fixed_seed"] | ~moved["within_tolerance"]]
    verdict = (f"gate '{args.suite}' {'passed' if outcome.passed else 'FAILED'}: {len(checks)} checks on "
               f"{len(outcome.replicates)} cells, {len(failed)} failed, in {outcome.seconds:.0f} s")
    pd.set_option("display.width", 200)
    if len(failed):
        print("failed checks:\n" + failed.to_string(index=False))
    print("what moved:\n" + (moved.to_string(index=False) if len(moved) else "nothing moved from the baselines' "
                                                                             "fixed-seed values"))
    figure = error_bar_figure({"this run": _cell_means(outcome.replicates)},
                              "relative second-moment error per cell and coordinate")
    page = write_page(args.out / f"gate_{args.suite}.html", f"Gate '{args.suite}'", verdict, outcome.passed,
                      {"Failed checks": failed, "What moved": moved, "All checks": checks},
                      {"Relative second-moment error per cell": figure})
    print(verdict)
    print(f"report: {page}")
    return 0 if outcome.passed else 1


def _power(args) -> int:
    """``sgbench gate --power``: exit 0 when the gate alone catches at least ``POWER_AIM`` of the
    planted bugs that change a cell's law."""
    from bench.html import write_page
    from bench.gate.power import POWER_AIM, gate_share, measure_power

    frame = measure_power(args.bug, args.suite, with_tests=not args.no_tests, progress=_progress)
    caught, effect = gate_share(frame)
    share = caught / effect if effect else float("nan")
    tests = frame[frame["tests"] != "not run"]
    tests_caught = int((tests["tests"] == "caught").sum())
    verdict = (f"the '{args.suite}' gate alone caught {caught} of {effect} planted bugs that change a cell's law "
               f"({share:.0%}; aim {POWER_AIM:.0%}); {len(frame) - effect} of {len(frame)} cannot change any cell's law"
               + (f"; the fast tests caught {tests_caught} of {len(tests)}" if len(tests) else ""))
    shown = frame.assign(gate=[("caught" if g else "missed") if e else "no effect"
                               for g, e in zip(frame["gate"], frame["has_effect"])])
    pd.set_option("display.width", 250)
    pd.set_option("display.max_colwidth", 90)
    print(shown[["bug", "gate", "tests", "why_missed"]].to_string(index=False))
    print(verdict)
    layers = pd.DataFrame([{"layer": "gate alone (bugs with an effect)", "caught": caught, "of": effect},
                           {"layer": "fast tests (bugs run)", "caught": tests_caught, "of": len(tests)}])
    page = write_page(args.out / f"gate_{args.suite}_power.html", f"Gate '{args.suite}': power against planted bugs",
                      verdict, bool(effect) and share >= POWER_AIM,
                      {"Per layer": layers,
                       "Per bug": shown[["bug", "what", "gate", "tests", "why_missed"]],
                       "Where each bug acts and what caught it":
                           shown[["bug", "cells_run", "gate_failures", "closest", "tests_detail", "seconds"]]}, {})
    print(f"report: {page}")
    return 0 if effect and share >= POWER_AIM else 1


def _cell_means(replicates) -> tuple:
    """(cell names, per-cell mean relative second-moment errors, their standard errors)."""
    summaries = [rep.summary() for rep in replicates]
    return ([rep.cell.name for rep in replicates], [s["second_moment_error"] for s in summaries],
            [s["second_moment_error_se"] for s in summaries])


def _rate_upper_bound(failures: int, runs: int) -> float:
    """One-sided 95% Clopper-Pearson upper bound on a rate with ``failures`` of ``runs``."""
    import scipy.stats

    return 1.0 if failures >= runs else float(scipy.stats.beta.ppf(0.95, failures + 1, runs - failures))
