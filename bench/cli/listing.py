"""``sgbench list samplers|targets|metrics|suites``: registered names, one per line."""

from __future__ import annotations

import reference.metrics
import samplers
import targets
from bench.sweeps import run_suites

LISTS = {"samplers": samplers.names, "targets": targets.names, "metrics": reference.metrics.names,
         "suites": run_suites.names}


def add_parser(commands) -> None:
    listing = commands.add_parser("list", help="list registered names, one per line")
    listing.add_argument("kind", choices=sorted(LISTS))
    listing.set_defaults(handler=execute)


def execute(args, argv) -> int:
    print("\n".join(LISTS[args.kind]()))
    return 0
