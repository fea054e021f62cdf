"""``sgbench conformance``: every adapter of blackjax, posteriors and SGMCMCJax at each of its settings,
validated (``sgbench.bench.conformance.conformance``); writes ``conformance.html`` and ``conformance.json``. Exit 0
(a measurement: FAILED adapters are findings about the libraries, not about this run), 2 bad input, 130 interrupted.

    sgbench conformance [--scale quick|default|full] [--library NAME ...] [--seed S] [--record FILE] [--out DIR]
                        [--executor local|dask [--scheduler ADDRESS | --workers N]]
"""

from __future__ import annotations

from pathlib import Path

from sgbench.base.arguments import integer_at_least
from sgbench.bench.cli._common import MAX_GATE_SEED, UsageError, output_folder, progress
from sgbench.bench.cli._executor import add_executor_options, executor_client
from sgbench.bench.cli._report_folders import add_out_option

EPILOG = """Each adapter's settings (its file, bench/adapters/) run through sgbench validate's rules: PASSED agrees
with the claimed suite sampler and with truth and resolves r = 0.1; FAILED found a disagreement that is not a
discretisation bias; INCONCLUSIVE could not decide (the page says why). Finished tasks are kept in --record as they
finish; the same command resumes. See docs/conformance.md."""


def add_parser(commands) -> None:
    from sgbench.bench.conformance.conformance import LIBRARIES, SCALES

    parser = commands.add_parser("conformance", help="validate every adapter of the public SG-MCMC libraries at its "
                                                     "settings; a report page and a JSON record", epilog=EPILOG)
    parser.add_argument("--scale", choices=SCALES, default="default",
                        help="quick: each adapter's first setting, few chains (CI); default: every setting, "
                             "about 20 minutes on 2 cores; full: 4 x the chains (the docs' report) (default: default)")
    parser.add_argument("--library", action="append", choices=LIBRARIES,
                        help="only this library's adapters (repeatable; default: all)")
    parser.add_argument("--seed", type=int, default=0, help="random seed (default: 0)")
    parser.add_argument("--record", type=Path, default=None,
                        help="the JSON-lines record of finished tasks, resumed from (default: "
                             "reports/conformance/records_SCALE.jsonl)")
    add_out_option(parser, "conformance.html and conformance.json")
    add_executor_options(parser)
    parser.set_defaults(handler=execute, heartbeat=True)


def execute(args, argv) -> int:
    from sgbench.bench.conformance import page as conformance_page
    from sgbench.bench.conformance.conformance import LIBRARIES, conformance, finished

    integer_at_least("--seed", args.seed, 0, MAX_GATE_SEED)
    output_folder(args.out)
    if args.record is not None and not args.record.parent.is_dir():
        raise UsageError(f"--record: the folder {args.record.parent} does not exist (create it first, or give a path "
                         "in an existing folder)")
    record = args.record or Path("reports") / "conformance" / f"records_{args.scale}.jsonl"
    libraries = tuple(dict.fromkeys(args.library or LIBRARIES))
    try:
        with executor_client(args) as client:
            rows, not_run = conformance(libraries, args.scale, args.seed, record, client=client, progress=progress)
    except KeyboardInterrupt:
        raise KeyboardInterrupt(f"sgbench: conformance interrupted: {len(finished(record))} finished tasks are kept in "
                                f"{record}; the same command resumes") from None
    json_path, page = conformance_page.write(rows, not_run, args.scale, args.seed, args.out)
    outcomes = [row["outcome"] for row in rows]
    print(f"conformance ({args.scale}): {len(rows)} rows: " +
          ", ".join(f"{outcomes.count(o)} {o}" for o in ("PASSED", "FAILED", "INCONCLUSIVE")))
    for library, why in not_run.items():
        print(f"{library}: not run: {why}")
    print(f"record: {json_path}\nreport: {page}")
    return 0
