"""``sgbench reproduce sglrw-table1 [--particles N] [--iterations N] [--seed S] [--out DIR]``: a paper's
table at reduced scale, printed and written as HTML with its figure."""

from __future__ import annotations

from base.arguments import integer_at_least
from bench.cli._common import output_folder
from bench.cli._report_folders import add_out_option


def add_parser(commands) -> None:
    reproduce = commands.add_parser("reproduce", help="reproduce a paper's table at reduced scale")
    reproduce.add_argument("table", choices=["sglrw-table1"], help="sglrw-table1: Table 1 of the SGLRW paper")
    reproduce.add_argument("--particles", type=int, default=500, help="parallel particles (default: 500; paper: 2000)")
    reproduce.add_argument("--iterations", type=int, default=10_000, help="iterations (default: the paper's 10000)")
    reproduce.add_argument("--seed", type=int, default=0, help="random seed (default: 0)")
    add_out_option(reproduce, "sglrw_table1.html and .png")
    reproduce.add_argument("--no-progress", action="store_true", help="no progress bar")
    reproduce.set_defaults(handler=execute)


def execute(args, argv) -> int:
    from markupsafe import Markup

    from bench.html import render_page
    from bench.reproduce import sglrw_table1

    from bench.running.config import MAX_CHAINS, MAX_SEED, MAX_TOTAL_STEPS

    integer_at_least("--particles", args.particles, 23, MAX_CHAINS)  # the exact-sampling KL in d = 20 needs n > 22
    integer_at_least("--iterations", args.iterations, 1, MAX_TOTAL_STEPS)
    integer_at_least("--seed", args.seed, 0, MAX_SEED)
    output_folder(args.out)
    table = sglrw_table1.reproduce(num_particles=args.particles, num_iterations=args.iterations, seed=args.seed,
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
