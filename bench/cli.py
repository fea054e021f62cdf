"""The ``sgbench`` command line: list registered names, run suites or ad-hoc sweeps, write reports.

    sgbench list samplers|targets|metrics|suites
    sgbench run [--suite NAME | --sampler S --target T --step-size H [H ...] [options]]
    sgbench report [--db PATH] [--out DIR]
    sgbench reference build|check TARGET [--param KEY=VALUE ...] [options]
    sgbench gate [--suite quick|full] [--baseline PATH | --no-baseline] [--reseed N]
    sgbench baseline update --why TEXT
    sgbench design-bias
    sgbench validate MODULE:OBJECT [--param KEY=VALUE ...]
    sgbench asv [--quick] [--bench REGEX ...] [--config PATH] [--machine NAME] [-- ASV_ARG ...]
    sgbench speed [--steps N] [--numpy-steps N] [--grid-steps N] [--no-bnn] [--sampler S ...]
    sgbench dashboard [--config PATH] [--out DIR] [--offline [--assets DIR]] [--serve [--port N]]

``gate`` and ``validate`` exit with status 1 when a check fails; ``asv`` exits with asv's status.

Bad input (unknown names, parameters out of range) prints one line to stderr and exits with
status 2.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import pandas as pd

import reference.metrics
import samplers
import targets
from bench.sweeps import suites
from bench import asv_commands
from bench.gate import commands as gate_commands
from bench.running.config import BACKENDS, DTYPES, RunConfig
from bench.sweeps import store as store_module
from bench.sweeps.store import ResultsStore, StoreError

DEFAULT_DB = Path("reports") / "results.sqlite"
DEFAULT_OUT = Path("reports") / "latest"
LISTS = {"samplers": samplers.names, "targets": targets.names, "metrics": reference.metrics.names,
         "suites": suites.names}


GATE_COMMANDS = ("gate", "baseline", "design-bias", "validate")


class UsageError(ValueError):
    """A command line that asks for something inconsistent."""


def parse_value(text: str):
    """``text`` as JSON if it starts with ``{`` or ``[`` (a schedule, a vector), else an int, else a
    float, else the string itself."""
    if text.startswith(("{", "[")):
        try:
            return json.loads(text)
        except json.JSONDecodeError as error:
            raise UsageError(f"{text!r} is not valid JSON: {error}") from None
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def parse_key_values(pairs, option: str) -> dict:
    """``["KEY=VALUE", ...]`` as a dict of parsed values."""
    params = {}
    for pair in pairs or ():
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise UsageError(f"{option} must be KEY=VALUE, got {pair!r}")
        params[key] = parse_value(value)
    return params


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="sgbench", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)

    listing = commands.add_parser("list", help="list registered names, one per line")
    listing.add_argument("kind", choices=sorted(LISTS))

    run = commands.add_parser("run", help="run a suite (default: quick) or an ad-hoc step-size sweep")
    run.add_argument("--suite", help=f"named suite, one of {', '.join(suites.names())} (default: quick)")
    adhoc = run.add_argument_group("ad-hoc sweep (instead of a suite)")
    adhoc.add_argument("--sampler", help="sampler name (see `sgbench list samplers`)")
    adhoc.add_argument("--target", help="target name (see `sgbench list targets`)")
    adhoc.add_argument("--step-size", type=float, nargs="+", metavar="H", help="step sizes, one run each")
    adhoc.add_argument("--target-param", action="append", metavar="KEY=VALUE",
                       help="target parameter (repeatable); VALUE is read as int, float or string")
    adhoc.add_argument("--sampler-param", action="append", metavar="KEY=VALUE",
                       help="sampler hyperparameter besides the step size (repeatable); VALUE as for --target-param, "
                            "or JSON, e.g. schedule='{\"kind\": \"cyclical\", \"cycle_length\": 5000}'")
    adhoc.add_argument("--num-chains", type=int, help="chains per step size (RunConfig default otherwise)")
    adhoc.add_argument("--num-steps", type=int, help="recorded steps per chain")
    adhoc.add_argument("--seed", type=int, help="random seed")
    adhoc.add_argument("--num-burnin", type=int, help="discarded steps per chain before the recorded ones")
    adhoc.add_argument("--thin", type=int, help="record every THIN-th step")
    adhoc.add_argument("--num-checkpoints", type=int, help="record the running b^2 at about this many steps")
    adhoc.add_argument("--block-size", type=int, help="steps of random numbers the JAX driver draws at once "
                       "(default 1024; smaller for many chains in high dimension)")
    adhoc.add_argument("--dtype", help=f"chain dtype, one of {', '.join(DTYPES)}")
    adhoc.add_argument("--backend", help=f"driver, one of {', '.join(BACKENDS)} (numpy: the float64 reference)")
    for sub in (run, commands.add_parser("report", help="write the HTML report of an existing store")):
        sub.add_argument("--db", type=Path, default=DEFAULT_DB, help=f"results store (default: {DEFAULT_DB})")
        sub.add_argument("--out", type=Path, default=DEFAULT_OUT,
                         help=f"report folder (default: {DEFAULT_OUT})")
    run.add_argument("--no-progress", action="store_true", help="no progress bar")
    add_reference_parser(commands)
    gate_commands.add_parsers(commands)
    asv_commands.add_parsers(commands)
    add_speed_parser(commands)
    return parser


def add_speed_parser(commands) -> None:
    """``sgbench speed``: per-chain-step times, floors and implementations side by side (bench/perf/speed.py)."""
    speed = commands.add_parser("speed", help="time every sampler against its random-number floor, SGLD against "
                                "blackjax, posteriors and NumPy, a 22-step-size grid and the bnn overhead")
    speed.add_argument("--steps", type=int, default=1_000_000, help="JAX steps per run (default: 10^6)")
    speed.add_argument("--numpy-steps", type=int, default=2000, help="steps of the Python loops (default: 2000)")
    speed.add_argument("--grid-steps", type=int, default=1_000_000,
                       help="steps of the SGLD 22-step-size grid (default: 10^6; 0 leaves it out)")
    speed.add_argument("--no-bnn", action="store_true", help="leave out the 10^5-parameter bnn overhead")
    speed.add_argument("--sampler", action="append", help="only these samplers in the per-sampler table (repeatable)")
    speed.add_argument("--repeats", type=int, default=3, help="timed runs, the best is kept (default: 3)")
    speed.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"folder for speed.html (default: {DEFAULT_OUT})")


def add_reference_parser(commands) -> None:
    """``sgbench reference build|check``: gold-standard NUTS references in reference/data/."""
    from reference.contract import Contract

    defaults = Contract()
    reproduce = commands.add_parser("reproduce", help="reproduce a paper's table at reduced scale")
    reproduce.add_argument("table", choices=["sglrw-table1"], help="sglrw-table1: Table 1 of the SGLRW paper")
    reproduce.add_argument("--particles", type=int, default=500, help="parallel particles (default: 500; paper: 2000)")
    reproduce.add_argument("--iterations", type=int, default=10_000, help="iterations (default: the paper's 10000)")
    reproduce.add_argument("--seed", type=int, default=0, help="random seed (default: 0)")
    reproduce.add_argument("--out", type=Path, default=DEFAULT_OUT,
                           help=f"folder for sglrw_table1.html and .png (default: {DEFAULT_OUT})")
    reproduce.add_argument("--no-progress", action="store_true", help="no progress bar")
    reference_parser = commands.add_parser("reference", help="build or check a stored NUTS reference")
    actions = reference_parser.add_subparsers(dest="action", required=True)
    build = actions.add_parser("build", help="run NUTS, apply the posteriordb contract, store the draws")
    check = actions.add_parser("check", help="rebuild with another seed and z-test against the stored reference")
    for sub, seed in ((build, 0), (check, 1)):
        sub.add_argument("target", help="target name (see `sgbench list targets`)")
        sub.add_argument("--param", action="append", metavar="KEY=VALUE", help="target parameter (repeatable)")
        sub.add_argument("--backend", default="numpyro", help="numpyro (default) or blackjax")
        sub.add_argument("--chains", type=int, default=4, help="NUTS chains (default: 4)")
        sub.add_argument("--warmup", type=int, default=1000, help="adaptation steps per chain (default: 1000)")
        sub.add_argument("--draws", type=int, default=2500, help="kept draws per chain (default: 2500)")
        sub.add_argument("--seed", type=int, default=seed, help=f"random seed (default: {seed})")
        sub.add_argument("--stored", type=int, default=defaults.num_stored,
                         help=f"thinned draws stored, all chains (default: {defaults.num_stored})")
        sub.add_argument("--min-ess", type=float, default=defaults.min_ess,
                         help=f"bulk and tail ESS required after thinning (default: {defaults.min_ess:g})")
        sub.add_argument("--target-accept", type=float, default=0.8,
                         help="NUTS target acceptance rate in (0, 1) (default: 0.8)")
        sub.add_argument("--dir", type=Path, default=None, help="reference folder (default: reference/data)")
        sub.add_argument("--progress", action="store_true", help="show NumPyro's progress bar")
        sub.add_argument("--alpha", type=float, default=1e-3,
                         help="family-wise false-failure rate of the agreement z-tests (default: 1e-3)")
    build.add_argument("--no-cross-check", action="store_true",
                       help="skip the cross-check run with the other NUTS implementation")


def _reference(args, argv) -> int:
    from reference.build import build
    from reference.check import check
    from reference.contract import Contract

    target = targets.get(args.target, **parse_key_values(args.param, "--param"))
    contract = Contract(num_stored=args.stored, min_ess=args.min_ess)
    options = dict(backend=args.backend, num_chains=args.chains, num_warmup=args.warmup, num_draws=args.draws,
                   seed=args.seed, contract=contract, directory=args.dir, target_accept=args.target_accept)
    if args.action == "build":
        command = "sgbench " + " ".join(sys.argv[1:] if argv is None else argv)
        npz, header = build(target, command=command, progress=args.progress, cross_check=not args.no_cross_check,
                            alpha=args.alpha, **options)
        print(f"stored {npz} and {header}")
        cross = json.loads(header.read_text()).get("cross_check")
        if cross:
            print(f"cross-check with {cross['backend']} (seed {cross['seed']}) agrees: max |z| = "
                  f"{cross['max_abs_z']:.2f} at {cross['worst']}, threshold {cross['threshold']:.2f}")
        return 0
    result = check(target, alpha=args.alpha, **options)
    verdict = "agrees with" if result.passed else "DISAGREES with"
    print(f"rebuild (seed {args.seed}) {verdict} the stored reference: max |z| = {result.max_abs_z:.2f} at "
          f"{result.worst}, threshold {result.threshold:.2f} (family-wise alpha {args.alpha:g})")
    return 0 if result.passed else 1


_CONFIG_OPTIONS = ("num_chains", "num_steps", "num_burnin", "thin", "seed", "dtype", "backend", "num_checkpoints",
                   "block_size")
_ADHOC_ONLY = ("step_size", "target_param", "sampler_param", *_CONFIG_OPTIONS)


def entries_from_args(args) -> tuple[list[suites.Entry], str | None]:
    """The entries the ``run`` arguments ask for and the suite name to tag them with."""
    adhoc_given = [name for name in _ADHOC_ONLY if getattr(args, name) is not None]
    if args.sampler is None and args.target is None:
        if adhoc_given:
            raise UsageError(f"--{adhoc_given[0].replace('_', '-')} needs --sampler and --target")
        name = args.suite or "quick"
        return suites.get(name), name
    if args.suite is not None:
        raise UsageError("give either --suite or --sampler/--target, not both")
    if args.sampler is None or args.target is None or args.step_size is None:
        raise UsageError("an ad-hoc sweep needs --sampler, --target and --step-size")
    given = {name: getattr(args, name) for name in _CONFIG_OPTIONS}
    config = RunConfig(**{name: value for name, value in given.items() if value is not None})
    sampler_params = parse_key_values(args.sampler_param, "--sampler-param")
    entry = suites.Entry(args.sampler, args.target, parse_key_values(args.target_param, "--target-param"),
                         suites.step_size_grid(args.step_size, **sampler_params), config)
    return [entry], None


def _run(args) -> int:
    from bench.sweeps.report import format_table, write_report
    from bench.sweeps.sweep import points, run_suite

    entries, suite_name = entries_from_args(args)
    keys = {(p.config_hash, p.seed) for entry in entries for p in points(entry)}
    with ResultsStore(args.db) as store:
        try:
            new = run_suite(entries, store, suite_name, progress=not args.no_progress)
        except KeyboardInterrupt:
            print(f"sgbench: interrupted; finished runs are saved in {args.db}, run again to resume",
                  file=sys.stderr)
            return 130
        frame = store.to_frame()
    asked = frame.apply(lambda row: (row["config_hash"], row["seed"]) in keys, axis=1).astype(bool)
    frame = frame[asked & (frame["git_commit"] == store_module.git_commit())]
    print(f"{len(new)} new runs, {len(keys) - len(new)} already in {args.db}")
    print(format_table(frame))
    print(f"report: {write_report(frame, args.out)}")
    return 0


def _report(args) -> int:
    from bench.sweeps.report import write_report

    if not args.db.is_file():
        raise UsageError(f"no results store at {args.db}; run `sgbench run --db {args.db}` first")
    with ResultsStore(args.db) as store:
        print(f"report: {write_report(store, args.out)}")
    return 0


def _reproduce(args) -> int:
    from bench.reproduce import sglrw_table1

    table = sglrw_table1.reproduce(num_particles=args.particles, num_iterations=args.iterations, seed=args.seed,
                                   progress=not args.no_progress)
    print(sglrw_table1.render(table))
    args.out.mkdir(parents=True, exist_ok=True)
    sglrw_table1.plot(table, args.out / "sglrw_table1.png")
    page = args.out / "sglrw_table1.html"
    page.write_text('<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>SGLRW Table 1</title></head>'
                    "<body><h1>SGLRW paper, Table 1, at reduced scale</h1>\n" + sglrw_table1.render(table, fmt="html")
                    + '<img alt="KL against minibatch size" src="sglrw_table1.png"></body></html>\n', encoding="utf-8")
    print(f"report: {page}")
    return 0


def _speed(args) -> int:
    from bench.perf import speed

    for option in ("steps", "numpy_steps", "repeats"):
        if getattr(args, option) < 1:
            raise UsageError(f"--{option.replace('_', '-')} must be an integer >= 1, got {getattr(args, option)}")
    if args.grid_steps < 0:
        raise UsageError(f"--grid-steps must be an integer >= 0 (0 leaves the grid out), got {args.grid_steps}")
    names = args.sampler or samplers.names()
    for name in names:
        samplers.get(name)  # an unknown name lists the registered ones
    report = speed.measure(names, args.steps, args.numpy_steps, args.grid_steps or None, not args.no_bnn,
                           args.repeats, progress=lambda line: print(line, file=sys.stderr, flush=True))
    print(report.sgld.round(4).to_string())
    print(report.samplers.round(4).to_string())
    for part in (report.grid, report.bnn):
        if part is not None:
            print(pd.Series(part).to_string())
    args.out.mkdir(parents=True, exist_ok=True)
    report.samplers.to_csv(args.out / "speed_samplers.csv")
    report.sgld.to_csv(args.out / "speed_sgld.csv")
    print(f"report: {report.write(args.out / 'speed.html')}")
    return 0


def main(argv=None) -> int:
    """Run ``sgbench`` with ``argv`` (default: the process arguments); return the exit status."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:
        return exit_.code
    try:
        if args.command == "list":
            print("\n".join(LISTS[args.kind]()))
            return 0
        if args.command == "reference":
            return _reference(args, argv)
        if args.command == "reproduce":
            return _reproduce(args)
        if args.command in GATE_COMMANDS:
            return gate_commands.run(args, argv)
        if args.command in asv_commands.COMMANDS:
            return asv_commands.run(args)
        if args.command == "speed":
            return _speed(args)
        return _run(args) if args.command == "run" else _report(args)
    except (ValueError, TypeError, LookupError, StoreError) as error:
        print(f"sgbench: error: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
