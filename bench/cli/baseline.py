"""``sgbench baseline update --why TEXT [--suite quick|full] [--seeds K] [--cell NAME ... | --sampler NAME
[--groups G]]``: regenerate the gate's regression baselines on purpose (a new sampler's: its missing
design biases first)."""

from __future__ import annotations

from pathlib import Path

from sgbench.base.arguments import integer_at_least
from sgbench.bench.cli._common import command_line, progress
from sgbench.bench.gate import baseline as baselines
from sgbench.bench.gate.cells import GATE_SUITES


def add_parser(commands) -> None:
    baseline = commands.add_parser("baseline", help="regenerate the gate's baselines on purpose")
    actions = baseline.add_subparsers(dest="action", required=True)
    update = actions.add_parser("update", help="rerun the suite over K seeds and store its metrics' spread")
    update.add_argument("--why", required=True, help="why the baselines change (stored with them)")
    update.add_argument("--suite", choices=GATE_SUITES, default="quick", help="suite (default: quick)")
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
    baseline.set_defaults(handler=execute, heartbeat=True)


def execute(args, argv) -> int:
    from sgbench.bench.gate import design_bias
    from sgbench.bench.gate.runner import update_baseline

    integer_at_least("--seeds", args.seeds, 2)  # a baseline is the spread over them
    integer_at_least("--groups", args.groups, 1)
    command = command_line(argv)
    if args.sampler is not None:  # a new sampler: its design biases first, which its gate cells need
        baselines.checked_why(args.why)
        path = design_bias.build(args.suite, args.groups, command=command, sampler=args.sampler, progress=progress)
        print(f"design bias written: {path}")
    try:
        path = update_baseline(args.suite, args.why, command, seeds=args.seeds, path=args.path, names=args.cell,
                               sampler=args.sampler, progress=progress)
    except KeyboardInterrupt:
        raise KeyboardInterrupt("sgbench: baseline update interrupted: the baselines are written only when every cell "
                                "is measured, so none changed (design biases measured before are kept); run it "
                                "again") from None
    print(f"baselines written: {path}")
    return 0
