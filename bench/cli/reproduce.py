"""``sgbench reproduce sglrw-table1 [--particles N] [--iterations N] [--seed S]`` or ``sgbench reproduce
mamba-table1|mamba-table2|mamba-table3 [--runs N] [--num-data N] [--budget-grads N] [--final-grads N] [--sampler S ...]
[--method M ...] [--jobs N]``, each with ``[--out DIR]``: a paper's table at reduced scale, printed beside the paper's
and written as HTML."""

from __future__ import annotations

from base.arguments import integer_at_least
from bench.cli._common import UsageError, output_folder
from bench.cli._report_folders import add_out_option

TABLES = ("sglrw-table1", "mamba-table1", "mamba-table2", "mamba-table3")
MAMBA_OPTIONS = ("runs", "budget_grads", "final_grads", "sampler", "method", "jobs")
OWN_OPTIONS = {"sglrw-table1": ("particles", "iterations", "seed"), "mamba-table1": (*MAMBA_OPTIONS, "num_data"),
               "mamba-table2": MAMBA_OPTIONS, "mamba-table3": MAMBA_OPTIONS}


def add_parser(commands) -> None:
    reproduce = commands.add_parser("reproduce", help="reproduce a paper's table at reduced scale")
    reproduce.add_argument("table", choices=TABLES,
                           help="sglrw-table1: Table 1 of the SGLRW paper; mamba-table1, mamba-table2 and "
                                "mamba-table3: Tables 1 (logistic regression), 2 (matrix factorisation) and 3 "
                                "(Bayesian neural network) of the MAMBA paper")
    sglrw = reproduce.add_argument_group("sglrw-table1")
    sglrw.add_argument("--particles", type=int, help="parallel particles (default: 500; paper: 2000)")
    sglrw.add_argument("--iterations", type=int, help="iterations (default: the paper's 10000)")
    sglrw.add_argument("--seed", type=int, help="random seed (default: 0)")
    mamba = reproduce.add_argument_group("mamba-table1, mamba-table2 and mamba-table3")
    mamba.add_argument("--runs", type=int, help="independent tuning runs per cell, seeds 0.. (default: 10)")
    mamba.add_argument("--num-data", type=int, help="mamba-table1: N of the simulated data (default: 10000; paper: "
                       "10^6; needs a stored NUTS reference)")
    mamba.add_argument("--budget-grads", type=float, help="tuning budget in full-data gradient evaluations "
                       "(default: 10000)")
    mamba.add_argument("--final-grads", type=float, help="budget of the final run of the chosen hyperparameters "
                       "(default: 10000)")
    mamba.add_argument("--sampler", action="append", help="only these samplers (repeatable; default: the six)")
    mamba.add_argument("--method", action="append", help="only these methods (repeatable; default: the table's: "
                       "mamba-ksd, mamba-fssd (table 1 only), grid, heuristic)")
    mamba.add_argument("--jobs", type=int, help="cells computed at once, each in its own process (default: 1; "
                       "a tuning run's minibatch steps keep one core busy)")
    add_out_option(reproduce, "the table's HTML page and figure")
    reproduce.add_argument("--no-progress", action="store_true", help="no progress output")
    reproduce.set_defaults(handler=execute)


def _check_options(args) -> None:
    for table, names in OWN_OPTIONS.items():
        for name in names:
            if getattr(args, name) is not None and name not in OWN_OPTIONS[args.table]:
                raise UsageError(f"--{name.replace('_', '-')} is an option of {table}, not of {args.table}")


def execute(args, argv) -> int:
    _check_options(args)
    output_folder(args.out)
    if args.table == "sglrw-table1":
        return _sglrw_table1(args)
    return _mamba_table(args)


def _sglrw_table1(args) -> int:
    from markupsafe import Markup

    from bench.html import render_page
    from bench.reproduce import sglrw_table1

    from bench.running.config import MAX_CHAINS, MAX_SEED, MAX_TOTAL_STEPS

    particles = 500 if args.particles is None else args.particles
    iterations = 10_000 if args.iterations is None else args.iterations
    seed = 0 if args.seed is None else args.seed
    integer_at_least("--particles", particles, 23, MAX_CHAINS)  # the exact-sampling KL in d = 20 needs n > 22
    integer_at_least("--iterations", iterations, 1, MAX_TOTAL_STEPS)
    integer_at_least("--seed", seed, 0, MAX_SEED)
    table = sglrw_table1.reproduce(num_particles=particles, num_iterations=iterations, seed=seed,
                                   progress=not args.no_progress)
    print(sglrw_table1.render(table))
    args.out.mkdir(parents=True, exist_ok=True)
    sglrw_table1.plot(table, args.out / "sglrw_table1.png")
    figure = Markup('<img alt="KL against minibatch size" src="sglrw_table1.png">')
    page = render_page(args.out / "sglrw_table1.html", "SGLRW paper, Table 1, at reduced scale",
                       [("Table 1", Markup(sglrw_table1.render(table, fmt="html"))),
                        ("KL against minibatch size", figure)])
    print(f"report: {page}")
    return 0


def _mamba_table(args) -> int:
    from markupsafe import Markup, escape

    from bench.html import image, render_page, table as html_table
    from bench.reproduce import mamba_tables

    table = mamba_tables.TABLES[args.table]
    runs = 10 if args.runs is None else integer_at_least("--runs", args.runs, 1, 1000)
    jobs = 1 if args.jobs is None else integer_at_least("--jobs", args.jobs, 1, 256)
    if args.num_data is not None:
        integer_at_least("--num-data", args.num_data, 1, 1_000_000)
    budget = mamba_tables.DEFAULT_BUDGET if args.budget_grads is None else args.budget_grads
    final = mamba_tables.DEFAULT_BUDGET if args.final_grads is None else args.final_grads
    samplers = tuple(args.sampler or mamba_tables.SAMPLERS)
    methods = tuple(args.method or table.methods)
    for flag, chosen, allowed in (("--sampler", samplers, mamba_tables.SAMPLERS), ("--method", methods, table.methods)):
        for value in chosen:
            if value not in allowed:
                raise UsageError(f"{flag} must be one of {', '.join(allowed)}, got {value!r}")
    for flag, value in (("--budget-grads", budget), ("--final-grads", final)):
        if not value > 0 or value == float("inf"):
            raise UsageError(f"{flag} must be a finite number > 0, got {value:g}")
    mamba_tables.enable_compilation_cache()
    name = args.table.replace("-", "_")
    record = args.out / f"{name}_runs.jsonl"  # finished cells: an interrupted reproduction resumes from them
    frame = mamba_tables.reproduce(table, runs=runs, budget=budget, final_budget=final, samplers=samplers,
                                   methods=methods, num_data=args.num_data, progress=not args.no_progress,
                                   record=record, jobs=jobs)
    summary = mamba_tables.summarise(table, frame)
    shown = mamba_tables.render(table, summary)
    order = mamba_tables.orderings(table, summary)
    print(shown.to_string(index=False))
    if len(order):
        print(order.to_string(index=False))
    args.out.mkdir(parents=True, exist_ok=True)
    frame.to_csv(args.out / f"{name}_runs.csv", index=False)
    intro = (f"{runs} tuning run{'s' if runs > 1 else ''} per cell, tuning budget {budget:g} and final run "
             f"{final:g} full-data gradient evaluations (paper: seconds); mean ± std over runs (paper's value). "
             f"Code: {', '.join(sorted({c[:12] for c in frame['commit']}))}; finished runs are kept in "
             f"{record.name} and a rerun with the same settings reuses them.")
    page = render_page(args.out / f"{name}.html", table.title,
                       [("Scores", html_table(shown)),
                        ("Ours beside the paper's", image(mamba_tables.figure(table, summary), "scores per sampler")),
                        ("Differences from the paper",
                         Markup("<ul>" + "".join(f"<li>{escape(d)}</li>" for d in table.differences) + "</ul>")),
                        ("The paper's comparisons", html_table(order)),
                        (f"Every run (also in {name}_runs.csv)", html_table(frame))], intro=intro)
    print(f"report: {page}")
    return 0
