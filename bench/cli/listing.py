"""``sgbench list samplers|targets|metrics|suites``: registered names, one per line."""

from __future__ import annotations

import importlib

# kind -> the module whose names() lists it (imported when listed: `sgbench --help` does not load JAX)
LISTS = {"metrics": "sgbench.reference.metrics", "samplers": "sgbench.samplers",
         "suites": "sgbench.bench.sweeps.run_suites", "targets": "sgbench.targets"}


def add_parser(commands) -> None:
    listing = commands.add_parser("list", help="list registered names, one per line")
    listing.add_argument("kind", choices=sorted(LISTS))
    listing.set_defaults(handler=execute)


def execute(args, argv) -> int:
    print("\n".join(importlib.import_module(LISTS[args.kind]).names()))
    return 0
