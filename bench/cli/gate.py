"""``sgbench gate``: a gate suite's cells against truth and the stored baselines, each cell and the run
PASSED (exit 0), FAILED (1) or INCONCLUSIVE (3; 2 is bad input); ``--reseed N``: each check's empirical
failure rate over N fresh runs; ``--power``: which layer catches each planted bug.

    sgbench gate [--suite quick|full] [--baseline PATH | --no-baseline] [--seed S] [--reseed N [--cell NAME ...]]
                 [--executor local|dask [--scheduler ADDRESS | --workers N]]
    sgbench gate --power [--bug NAME ...] [--no-tests]
"""

from __future__ import annotations

from pathlib import Path

from sgbench.base.arguments import integer_at_least
from sgbench.bench.cli._common import DEFAULT_DB, MAX_GATE_SEED, output_folder, progress, store_file
from sgbench.bench.cli._executor import add_executor_options, executor_client
from sgbench.bench.cli._report_folders import add_out_option
from sgbench.bench.gate.cells import GATE_SUITES
from sgbench.bench.gate.outcome import Outcome

MAX_RESEED = 10_000
EPILOG = """outcomes (exit status), per cell and for the run: PASSED (0) every check passed and the chains forgot
their overdispersed start; FAILED (1) a check failed (against truth, its design bias or its baseline) or the
chains do not move; INCONCLUSIVE (3) every check passed but a cell's chains did not forget their start within
its warm-up: the output gives the warm-up that would decide; 2 bad input. See docs/gates.md."""


def add_parser(commands) -> None:
    gate = commands.add_parser("gate", help="check a suite's cells against truth and stored baselines", epilog=EPILOG)
    gate.add_argument("--suite", choices=GATE_SUITES, default="quick", help="cells to run (default: quick)")
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
                      help="plant each bug of sgbench.bench.gate.planted and report which layer (gate, fast tests) "
                           "catches it")
    gate.add_argument("--bug", action="append", metavar="NAME", help="with --power: only this planted bug (repeatable)")
    gate.add_argument("--no-tests", action="store_true", help="with --power: the gate layer only")
    gate.add_argument("--db", type=Path, default=DEFAULT_DB, help=f"results store (default: {DEFAULT_DB})")
    add_out_option(gate, "the gate's pages")
    add_executor_options(gate)
    gate.set_defaults(handler=execute, heartbeat=True)


def execute(args, argv) -> int:
    from sgbench.bench.gate import cell_record

    integer_at_least("--seed", args.seed, 0, MAX_GATE_SEED)
    integer_at_least("--reseed", args.reseed, 0, MAX_RESEED)
    output_folder(args.out)
    use_baseline = not args.no_baseline
    if args.executor != "local" and (args.power or args.reseed):
        raise ValueError("--executor dask runs the gate's cells; --reseed and --power run in this process")
    if args.power or args.reseed:
        mode = "--power" if args.power else "--reseed"
        try:
            return _power(args) if args.power else _reseed(args, use_baseline)
        except KeyboardInterrupt:
            raise KeyboardInterrupt(f"sgbench: gate {mode} interrupted: nothing was kept (its rates are counted and "
                                    "written once every cell has run); run it again, or a part of it with "
                                    f"{'--bug' if args.power else '--cell'} NAME") from None
    store_file(args.db)
    outcome = resumable_gate(args, args.db, args.seed, args.baseline, use_baseline)
    verdict, page, _ = record_gate(outcome, args.db, args.out, echo=True)
    cell_record.clear(cell_record.record_path(args.db, args.suite))
    print(verdict)
    print(f"report: {page}")
    return outcome.outcome.exit_status


CHECK_COLUMNS = ("cell", "name", "passed", "alpha", "statistic", "threshold", "estimate", "expected",
                 "standard_error", "detectable", "worst_coordinate")
CHECK_LEGEND = {
    "name": "finite: no chain diverged; mean: standardised mean error; second_moment: relative variance error r; "
            "b2: mean over coordinates of r squared; magnitude: log variance ratio (heavy-tailed cells); moves: the "
            "chains moved from their start; baseline: the stored baselines' seed-to-seed tolerance",
    "alpha": "the check's false-failure rate (0: deterministic)",
    "statistic": "the standardised statistic at the worst coordinate; moves: median distance from start to end "
                 "in target standard deviations",
    "threshold": "the critical value (moves: the least distance that counts as moving)",
    "estimate": "the estimate at the worst coordinate; moves: the chains' autocorrelation time in steps",
    "expected": "the design bias or law at that coordinate; moves: the longest autocorrelation time the warm-up "
                "allows",
    "detectable": "the smallest deviation the check finds with probability 0.9 (docs/gates_derivations.md for its "
                  "units)",
}
CELL_LEGEND = {"outcome": "PASSED, FAILED or INCONCLUSIVE (see --help)",
               "failed": "the checks that failed; moves: the chains stayed where they started",
               "travel": "how far the chains travelled: whether they forgot their start within the warm-up, "
                         "from their autocorrelation time (docs/gates_derivations.md, sgbench.bench.gate.start)"}


def resumable_gate(args, db: Path, seed: int = 0, baseline: Path | None = None, use_baseline: bool = True):
    """``args.suite``'s gate run, its finished cells kept as they finish: their runs in ``db``, their checks in the
    cell record beside it (``sgbench.bench.gate.cell_record``), which the same command resumes from; on an
    interruption one line on stderr says how many cells are kept and where.

    Args:
        args: the command line: ``command`` (named in the interruption line), ``suite`` and the executor options.
        db: the results store.
        seed: the run's seed (``run_gate``).
        baseline: the baselines (``run_gate``'s ``baseline_path``).
        use_baseline: False for truth checks only (``run_gate``).

    Returns:
        the GateOutcome.

    Raises:
        KeyboardInterrupt: interrupted, with the line saying what was kept (``sgbench.bench.cli.main`` prints it).
    """
    from sgbench.bench.gate import cell_record
    from sgbench.bench.gate.runner import record_settings, run_gate, suite
    from sgbench.bench.sweeps.store import ResultsStore

    suite_name = args.suite
    record = cell_record.record_path(db, suite_name)
    label = f"gate-{suite_name}"
    with ResultsStore(db) as store:
        def store_runs(rep) -> None:
            for result in rep.results:
                if not store.has(result.config_hash, result.config.seed):
                    store.add(result, suite=label)

        try:
            with executor_client(args) as client:
                return run_gate(suite_name, seed, baseline, use_baseline, progress=progress, client=client,
                                record=record, on_cell=store_runs)
        except KeyboardInterrupt:
            kept = len(cell_record.finished_cells(record, record_settings(suite_name, seed, baseline, use_baseline)))
            raise KeyboardInterrupt(f"sgbench: {args.command} interrupted: {kept} of the {len(suite(suite_name))} gate "
                                    f"cells finished and are kept in {record} (their runs in {db}); the same command "
                                    "resumes from them") from None


def record_gate(outcome, db: Path, out: Path, echo: bool = False):
    """Store a gate run's checks in ``db`` (its runs are stored as each cell finishes) and write its page into
    ``out``; the caller then removes the record of its finished cells (``sgbench.bench.gate.cell_record.clear``).

    Args:
        outcome: a ``sgbench.bench.gate.runner.GateOutcome``.
        db: the results store.
        out: the folder of the page ``gate_SUITE.html``.
        echo: print the failed checks and what moved.

    Returns:
        (the verdict line, the page's path, the checks that failed).
    """
    import pandas as pd

    from sgbench.bench.html import error_bar_figure, write_page
    from sgbench.bench.sweeps.store import ResultsStore

    with ResultsStore(db) as store:
        store.add_checks(outcome.checks.to_dict("records"), suite=f"gate-{outcome.suite}", seed=outcome.seed)
    checks = outcome.checks
    failed = checks[~checks["passed"]]
    moved = outcome.moved
    if len(moved):
        moved = moved[moved["moved_from_fixed_seed"] | ~moved["within_tolerance"]]
    counts = outcome.cells["outcome"].value_counts()
    verdict = (f"gate '{outcome.suite}' {outcome.outcome.name}: {len(outcome.cells)} cells "
               f"({', '.join(f'{counts.get(o.name, 0)} {o.name}' for o in Outcome)}), {len(checks)} checks, "
               f"{len(failed)} failed, in {outcome.seconds:.0f} s"
               + (f" ({outcome.reused} cells kept from an interrupted run)" if outcome.reused else ""))
    undecided = outcome.cells[outcome.cells["outcome"] == Outcome.INCONCLUSIVE.name]
    if echo:
        pd.set_option("display.width", 200)
        if len(failed):
            print("failed checks:\n" + failed.to_string(index=False))
        if len(undecided):
            print("inconclusive cells:\n" + undecided[["cell", "travel"]].to_string(index=False))
        print("what moved:\n" + (moved.to_string(index=False) if len(moved) else "nothing moved from the baselines' "
                                                                                 "fixed-seed values"))
    figure = error_bar_figure({"this run": outcome.errors},
                              "relative second-moment error per cell and coordinate")
    passed = {Outcome.PASSED: True, Outcome.FAILED: False}.get(outcome.outcome)
    shown = [c for c in CHECK_COLUMNS if c in checks]
    page = write_page(Path(out) / f"gate_{outcome.suite}.html", f"Gate '{outcome.suite}'", verdict, passed,
                      {"Failed checks": failed[shown], "Outcome per cell": outcome.cells, "What moved": moved,
                       "All checks": checks[shown]},
                      {"Relative second-moment error per cell": figure},
                      legends={"Outcome per cell": CELL_LEGEND, "Failed checks": CHECK_LEGEND,
                               "All checks": CHECK_LEGEND})
    return verdict, page, failed


def _reseed(args, use_baseline: bool) -> int:
    """``sgbench gate --reseed N``: each check's empirical failure rate over N fresh seeds; exit 0 (a
    measurement)."""
    from sgbench.bench.gate.runner import reseed
    from sgbench.bench.html import write_page
    from sgbench.reference.checks import rate_upper_bound

    per_check, runs = reseed(args.suite, args.reseed, args.baseline, use_baseline, first_seed=args.seed + 1,
                             names=args.cell, progress=progress)
    failed, inconclusive = int(runs["failed"].sum()), int(runs["inconclusive"].sum())
    verdict = (f"{failed} of {len(runs)} reseeded gate runs FAILED (95% upper bound on the run failure "
               f"rate {rate_upper_bound(failed, len(runs)):.3g}), {inconclusive} INCONCLUSIVE (bound "
               f"{rate_upper_bound(inconclusive, len(runs)):.3g}); {int(per_check['failures'].sum())} check "
               f"failures in all")
    print(per_check.to_string(index=False))
    print(verdict)
    page = write_page(args.out / f"gate_{args.suite}_reseed.html",
                      f"Gate '{args.suite}': {len(runs)} reseeded runs", verdict, failed == 0,
                      {"Failure rate per check": per_check}, {})
    print(f"report: {page}")
    return 0


def _power(args) -> int:
    """``sgbench gate --power``: exit 0 when the gate alone catches at least ``POWER_AIM`` of the
    planted bugs that change a cell's law."""
    import pandas as pd

    from sgbench.bench.gate.power import POWER_AIM, gate_share, measure_power
    from sgbench.bench.html import write_page

    frame = measure_power(args.bug, args.suite, with_tests=not args.no_tests, progress=progress)
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
