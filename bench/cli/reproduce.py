"""``sgbench reproduce NAME [--scale quick|paper] [--db PATH] [--out DIR] [its own options]`` and
``sgbench reproduce --list``: a paper's table or figure, printed as the paper's claims with their verdicts
(``sgbench.bench.reproduce.claims``), then ours beside the paper's with a verdict per cell, and written as an HTML
page; exit status 1 when a claim is contradicted. The reproductions are those registered in
``sgbench.bench.reproduce`` (one module each). Interrupted (SIGINT: 130, SIGTERM: 143), it says in one
line how many finished units are kept and where (the reproduction's record beside the results store), counted
there, or that nothing was kept; the same command resumes from what is kept."""

from __future__ import annotations

import argparse
from pathlib import Path

from sgbench.bench.cli._common import DEFAULT_DB, UsageError, output_folder, store_file
from sgbench.bench.cli._report_folders import add_out_option


class _ListReproductions(argparse.Action):
    """``--list``: print every reproduction (name, source, what each scale runs) and exit 0."""

    def __init__(self, option_strings, dest, **kwargs):
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None):
        from sgbench.bench.reproduce import _registry

        for name in _registry.names():
            entry = _registry.get(name)
            print(f"{name}: {entry.summary} ({entry.source})")
            for scale, what in entry.scales.items():
                print(f"    --scale {scale}: {what}")
        parser.exit(0)


def _owners() -> dict:
    """Option flag -> (the option, the names of the reproductions that take it)."""
    from sgbench.bench.reproduce import _registry

    owners: dict = {}
    for name in _registry.names():
        for option in _registry.get(name).options:
            owners.setdefault(option.flag, (option, []))[1].append(name)
    return owners


def add_parser(commands) -> None:
    from sgbench.bench.reproduce._registry import SCALES

    reproduce = commands.add_parser("reproduce", help="reproduce a paper's table or figure",
                                    description=__doc__.split("\n\n")[0])
    reproduce.add_argument("name", nargs="?", metavar="NAME", help="the reproduction (--list says what each runs)")
    reproduce.add_argument("--list", action=_ListReproductions, help="list the reproductions and exit")
    reproduce.add_argument("--scale", choices=SCALES, default="quick",
                           help="quick: minutes on 2 cores (default); paper: the paper's chains, steps and grids")
    reproduce.add_argument("--db", type=Path, default=DEFAULT_DB,
                           help=f"results store every run lands in, so a rerun resumes (default: {DEFAULT_DB})")
    add_out_option(reproduce, "the reproduction's HTML page")
    reproduce.add_argument("--no-progress", action="store_true", help="no progress output")
    reproduce.complete_later(_add_reproductions)  # their modules load JAX: only when this command runs
    reproduce.set_defaults(handler=execute)


def _add_reproductions(reproduce) -> None:
    """Name the known reproductions in NAME's help and add each one's options, grouped by the reproductions that
    take them."""
    from sgbench.bench.reproduce import _registry

    name = next(action for action in reproduce._actions if action.dest == "name")
    name.help = f"the reproduction: {', '.join(_registry.names())} (--list says what each runs)"
    groups: dict = {}
    for flag, (option, names) in _owners().items():
        key = tuple(names)
        if key not in groups:
            groups[key] = reproduce.add_argument_group(f"options of {', '.join(names)}")
        groups[key].add_argument(flag, type=option.type, action="append" if option.repeatable else "store",
                                 help=option.help)


def _kept(entry, db: Path) -> tuple[int, Path]:
    """``(finished units kept, where)`` for reproduction ``entry`` with the results store ``db``: the complete lines
    of its record (``sgbench.bench.reproduce._record.record_path``)."""
    from sgbench.base.unit_record import entries
    from sgbench.bench.reproduce._record import record_path

    path = record_path(db, entry.name)
    return sum(1 for _ in entries(path)), path


def interruption_line(entry, db: Path, before: int) -> str:
    """The one line ``sgbench reproduce`` prints when interrupted: the finished units kept now (``before``: as many
    as when it started) and where, or that nothing was kept, and how to resume."""
    kept, where = _kept(entry, db)
    head = f"sgbench: reproduce {entry.name} interrupted: "
    if kept == 0:
        return head + f"nothing was kept: no unit had finished (finished units are kept in {where}); the same " \
                      "command starts again"
    counted = "1 finished unit is" if kept == 1 else f"{kept} finished units are"
    return head + (f"{counted} kept in {where} ({kept - before} finished in this invocation); the same command "
                   "resumes from them")


def execute(args, argv) -> int:
    from sgbench.bench.reproduce import _registry

    if args.name is None:
        raise UsageError("give a reproduction NAME (sgbench reproduce --list shows them)")
    entry = _registry.get(args.name)
    own = {option.dest for option in entry.options}
    options = {}
    for flag, (option, names) in _owners().items():
        value = getattr(args, option.dest)
        if value is None:
            continue
        if option.dest not in own:
            raise UsageError(f"{flag} is an option of {', '.join(names)}, not of {args.name}")
        options[option.dest] = value
    output_folder(args.out)
    store_file(args.db)
    before = _kept(entry, args.db)[0]
    try:
        outcome = entry.run(args.scale, options, db=args.db, out=args.out, progress=not args.no_progress)
    except KeyboardInterrupt:  # main prints the line last, after the summary of warnings, and exits 130
        raise KeyboardInterrupt(interruption_line(entry, args.db, before)) from None
    print(outcome.text(), end="")
    print(f"report: {outcome.write_page(args.out)}")
    return 1 if outcome.failed else 0
