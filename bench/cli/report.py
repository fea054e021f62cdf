"""``sgbench report [--db PATH] [--out DIR]``: the HTML report of an existing results store."""

from __future__ import annotations

from sgbench.bench.cli._common import UsageError, output_folder
from sgbench.bench.cli.run import add_store_options


def add_parser(commands) -> None:
    report = commands.add_parser("report", help="write the HTML report of an existing store")
    add_store_options(report)
    report.set_defaults(handler=execute)


def execute(args, argv) -> int:
    from sgbench.bench.sweeps.report import write_report
    from sgbench.bench.sweeps.store import ResultsStore

    if not args.db.is_file():
        raise UsageError(f"no results store at {args.db}; run `sgbench run --db {args.db}` first")
    output_folder(args.out)
    with ResultsStore(args.db) as store:
        print(f"report: {write_report(store, args.out)}")
    return 0
