"""``sgbench nuts-speed [--draws N] [--out PNG]``: bulk ESS per second of NumPyro and BlackJAX NUTS on
the breast-cancer logistic regression, side by side (``sgbench.reference.nuts_speed``)."""

from __future__ import annotations

from pathlib import Path

from sgbench.bench.cli._common import DEFAULT_OUT, UsageError


def add_parser(commands) -> None:
    speed = commands.add_parser("nuts-speed", help="bulk ESS per second of NumPyro and BlackJAX NUTS")
    speed.add_argument("--draws", type=int, default=5000, help="kept draws per chain (default: 5000)")
    speed.add_argument("--out", type=Path, default=DEFAULT_OUT / "nuts_ess_per_second.png",
                       help=f"the figure (default: {DEFAULT_OUT / 'nuts_ess_per_second.png'})")
    speed.set_defaults(handler=execute)


def execute(args, argv) -> int:
    from sgbench import targets
    from sgbench.reference.nuts_speed import bulk_ess_per_second, plot

    if args.draws < 1:
        raise UsageError(f"--draws must be an integer >= 1, got {args.draws}")
    target = targets.get("logreg", dataset="breast_cancer")
    rows = bulk_ess_per_second(target, num_draws=args.draws)
    for name, row in rows.items():
        print(f"{name}: bulk ESS/s min {row['min']:.0f}, median {row['median']:.0f} ({row['seconds']:.1f} s)")
    print(f"figure: {plot(rows, 'NUTS on breast-cancer logistic regression', args.out)}")
    return 0
