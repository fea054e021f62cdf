"""``sgbench design-bias [--suite quick|full] [--groups G] [--remeasure] [--sampler NAME]``: measure the
gate cells' design biases into reference/data/gate_design_bias.json."""

from __future__ import annotations

from sgbench.base.arguments import integer_at_least
from sgbench.bench.cli._common import command_line, progress
from sgbench.bench.gate.cells import GATE_SUITES


def add_parser(commands) -> None:
    design = commands.add_parser("design-bias", help="measure each gate cell's design bias (reference/data)")
    design.add_argument("--suite", choices=GATE_SUITES, default="quick", help="suite (default: quick; full holds it)")
    design.add_argument("--groups", type=int, default=32,
                        help="runs of each cell's chains that measure its bias (default: 32)")
    design.add_argument("--remeasure", action="store_true", help="measure every cell, not only those missing")
    design.add_argument("--sampler", metavar="NAME", help="only the cells of this sampler")
    design.set_defaults(handler=execute, heartbeat=True)


def execute(args, argv) -> int:
    from sgbench.bench.gate import design_bias

    integer_at_least("--groups", args.groups, 1)
    measured = []  # a "[k/N] CELL: ..." line follows each cell written to the file

    def told(line: str) -> None:
        if line.startswith("["):
            measured.append(line)
        progress(line)

    try:
        path = design_bias.build(args.suite, args.groups, command=command_line(argv), remeasure=args.remeasure,
                                 sampler=args.sampler, progress=told)
    except KeyboardInterrupt:
        raise KeyboardInterrupt(f"sgbench: design-bias interrupted: the {len(measured)} cells it measured are written "
                                f"to {design_bias.PATH}; the same command without --remeasure measures only the "
                                "others") from None
    print(f"design bias written: {path}")
    return 0
