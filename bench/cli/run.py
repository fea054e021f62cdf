"""``sgbench run [--suite NAME | --sampler S --target T --step-size H [H ...] [options]]``: a run suite
or an ad-hoc step-size sweep into the results store, then its table and HTML report."""

from __future__ import annotations

from pathlib import Path

from sgbench.bench.cli._common import (
    DEFAULT_DB,
    UsageError,
    output_folder,
    parse_key_values,
    positive_numbers,
    store_file,
)
from sgbench.bench.cli._executor import add_executor_options, executor_client
from sgbench.bench.cli._report_folders import add_out_option
from sgbench.bench.running.config import BACKENDS, DTYPES, RunConfig
from sgbench.bench.sweeps import run_suites

_CONFIG_OPTIONS = ("num_chains", "num_steps", "num_burnin", "thin", "seed", "dtype", "backend", "num_checkpoints",
                   "block_size")
_ADHOC_ONLY = ("step_size", "target_param", "sampler_param", *_CONFIG_OPTIONS)
DEFAULTS = RunConfig()  # what an ad-hoc sweep runs with, unless a flag says otherwise (printed by --help)


def add_store_options(parser) -> None:
    """``--db`` and ``--out``, shared with ``sgbench report``."""
    parser.add_argument("--db", type=Path, default=DEFAULT_DB, help=f"results store (default: {DEFAULT_DB})")
    add_out_option(parser, "the report")


def add_parser(commands) -> None:
    run = commands.add_parser("run", help="run a suite (default: quick) or an ad-hoc step-size sweep")
    run.add_argument("--suite", help=f"named suite, one of {', '.join(run_suites.names())} (default: quick)")
    adhoc = run.add_argument_group("ad-hoc sweep (instead of a suite)")
    adhoc.add_argument("--sampler", help="sampler name (see `sgbench list samplers`)")
    adhoc.add_argument("--target", help="target name (see `sgbench list targets`)")
    adhoc.add_argument("--step-size", type=float, nargs="+", metavar="H", help="step sizes, one run each")
    adhoc.add_argument("--target-param", action="append", metavar="KEY=VALUE",
                       help="target parameter (repeatable); VALUE is read as int, float or string. The target's "
                            "own defaults apply otherwise: no gradient noise unless noise=... is given (the "
                            "quick suite uses noise=isotropic)")
    adhoc.add_argument("--sampler-param", action="append", metavar="KEY=VALUE",
                       help="sampler hyperparameter besides the step size (repeatable); VALUE as for --target-param, "
                            "or JSON, e.g. schedule='{\"kind\": \"cyclical\", \"cycle_length\": 5000}'")
    adhoc.add_argument("--num-chains", type=int, help=f"chains per step size (default: {DEFAULTS.num_chains})")
    adhoc.add_argument("--num-steps", type=int, help=f"recorded steps per chain (default: {DEFAULTS.num_steps:,})")
    adhoc.add_argument("--seed", type=int, help=f"random seed (default: {DEFAULTS.seed})")
    adhoc.add_argument("--num-burnin", type=int, help="discarded steps per chain before the recorded ones "
                       f"(default: {DEFAULTS.num_burnin})")
    adhoc.add_argument("--thin", type=int, help=f"record every THIN-th step (default: {DEFAULTS.thin})")
    adhoc.add_argument("--num-checkpoints", type=int, help="record the running b^2 at about this many steps "
                       f"(default: {DEFAULTS.num_checkpoints}: none)")
    adhoc.add_argument("--block-size", type=int, help="steps of random numbers the JAX driver draws at once "
                       "(default: the largest up to 1024 that divides the steps; smaller for many chains in high "
                       "dimension)")
    adhoc.add_argument("--dtype", help=f"chain dtype, one of {', '.join(DTYPES)} (default: {DEFAULTS.dtype}; "
                       "the quick suite runs float32)")
    adhoc.add_argument("--backend", help=f"driver, one of {', '.join(BACKENDS)} (default: {DEFAULTS.backend}; "
                       "numpy: the float64 reference; batched: all chains in one step, for an adapter built for it)")
    add_store_options(run)
    add_executor_options(run, per_task=True)
    run.add_argument("--no-progress", action="store_true", help="no progress bar")
    run.set_defaults(handler=execute)


def _config(args) -> RunConfig:
    """The RunConfig of the config flags given (defaults otherwise); a bad value's error names its flag."""
    given = {name: getattr(args, name) for name in _CONFIG_OPTIONS if getattr(args, name) is not None}
    try:
        return RunConfig(**given)
    except ValueError as error:
        message = str(error)
        field = next((name for name in _CONFIG_OPTIONS if message.startswith(f"{name} ")), None)
        if field is None:
            raise
        raise UsageError(f"--{field.replace('_', '-')}{message[len(field):]}") from None


def entries_from_args(args) -> tuple[list[run_suites.Entry], str | None]:
    """The entries the ``run`` arguments ask for and the suite name to tag them with."""
    adhoc_given = [name for name in _ADHOC_ONLY if getattr(args, name) is not None]
    if args.sampler is None and args.target is None:
        if adhoc_given:
            raise UsageError(f"--{adhoc_given[0].replace('_', '-')} needs --sampler and --target")
        name = args.suite or "quick"
        return run_suites.get(name), name
    if args.suite is not None:
        raise UsageError("give either --suite or --sampler/--target, not both")
    if args.sampler is None or args.target is None or args.step_size is None:
        raise UsageError("an ad-hoc sweep needs --sampler, --target and --step-size")
    config = _config(args)
    sampler_params = parse_key_values(args.sampler_param, "--sampler-param")
    if "step_size" in sampler_params:
        raise UsageError("the step size is given twice: use --step-size alone, not --sampler-param step_size=...")
    positive_numbers(args.step_size, "--step-size")
    repeated = next((h for i, h in enumerate(args.step_size) if h in args.step_size[:i]), None)
    if repeated is not None:
        raise UsageError(f"--step-size lists {repeated:g} twice; give each step size once")
    entry = run_suites.Entry(args.sampler, args.target, parse_key_values(args.target_param, "--target-param"),
                         run_suites.step_size_grid(args.step_size, **sampler_params), config)
    return [entry], None


def execute(args, argv) -> int:
    from sgbench.bench.sweeps.report import format_table, write_report
    from sgbench.bench.sweeps.store import ResultsStore
    from sgbench.bench.sweeps.sweep import points, run_suite

    entries, suite_name = entries_from_args(args)
    store_file(args.db)
    output_folder(args.out)
    planned = [points(entry) for entry in entries]  # validated before the store is made
    keys = {(p.config_hash, p.seed) for entry_points in planned for p in entry_points}
    with executor_client(args) as client, ResultsStore(args.db) as store:
        try:  # the sweep, then its table and report: interrupted in either, the line counts what is stored
            outcome = run_suite(entries, store, suite_name, progress=not args.no_progress, planned=planned,
                                client=client, per_task=args.per_task)
            frame = store.runs_of(keys)
            print(f"{len(outcome.new)} new runs, {outcome.already_stored} already in {args.db}"
                  + (f", {outcome.by_others} computed meanwhile by another sgbench process" if outcome.by_others
                     else ""))
            print(format_table(frame))
            print(f"report: {write_report(frame, args.out)}")
        except KeyboardInterrupt:
            kept = len(store.runs_of(keys))
            raise KeyboardInterrupt(f"sgbench: run interrupted: {kept} of the {len(keys)} runs it asks for are in "
                                    f"{args.db}; the same command resumes") from None
    return 0
