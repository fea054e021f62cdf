"""The quick gate's measured false-failure and INCONCLUSIVE rates (docs/gates_derivations.md, "Measured false-failure
rate").

Reseeds every cell of the quick suite ``N`` times (``sgbench.bench.gate.runner.reseed``, one cell at a time, each at
the whole suite's per-check rate), in batches of 20 runs seeded 1, 21, 41, ...: the g-th run of every cell is
the g-th run of the suite. Each finished batch of a cell is appended to ``records.jsonl`` beside this script,
so a rerun resumes where it stopped, and a larger ``N`` adds batches to the runs already made (the whole suite
gets each batch before any cell gets the next). The summary (runs FAILED and INCONCLUSIVE with Clopper-Pearson
95 % bounds over the runs every cell has, check failures per cell) is printed from the records alone. Run from
the repository root:

    python reports/gate_reseed/measure.py [N]          # N = 20 by default, a multiple of 20
    python reports/gate_reseed/measure.py --summary
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

RECORDS = Path(__file__).with_name("records.jsonl")


BATCH = 20


def recorded() -> dict[str, list[dict]]:
    """Each cell's recorded batches, in the order of their first seeds."""
    if not RECORDS.exists():
        return {}
    cells: dict[str, list[dict]] = {}
    for row in map(json.loads, RECORDS.read_text().splitlines()):
        cells.setdefault(row["cell"], []).append(row)
    return {cell: sorted(rows, key=lambda row: row["first_seed"]) for cell, rows in cells.items()}


def measure(num_runs: int) -> None:
    from sgbench.bench.cli._common import progress
    from sgbench.bench.gate.cells import suite
    from sgbench.bench.gate.runner import reseed

    done = {(cell, row["first_seed"]) for cell, rows in recorded().items() for row in rows}
    for first_seed in range(1, num_runs + 1, BATCH):
        for cell in suite("quick"):
            if (cell.name, first_seed) in done:
                continue
            per_check, runs = reseed("quick", BATCH, first_seed=first_seed, names=[cell.name], progress=progress)
            row = {"cell": cell.name, "runs": BATCH, "first_seed": first_seed, "failed": runs["failed"].tolist(),
                   "inconclusive": runs["inconclusive"].tolist(), "checks": per_check.to_dict("records")}
            with RECORDS.open("a") as file:
                file.write(json.dumps(row, default=float) + "\n")


def summary() -> str:
    import numpy as np

    from sgbench.reference.checks import rate_upper_bound

    cells = recorded()
    if not cells:
        return "no records yet"
    rows = [{"cell": cell, "failed": sum((b["failed"] for b in batches), []),
             "inconclusive": sum((b["inconclusive"] for b in batches), [])} for cell, batches in cells.items()]
    runs = min(len(row["failed"]) for row in rows)
    failed = np.any([row["failed"][:runs] for row in rows], axis=0)
    inconclusive = np.any([row["inconclusive"][:runs] for row in rows], axis=0) & ~failed
    checks = [c for batches in cells.values() for b in batches for c in b["checks"]]
    per_check: dict[tuple[str, str], list[int]] = {}
    for c in checks:
        counts = per_check.setdefault((c["cell"], c["check"]), [0, 0])
        counts[0] += c["failures"]
        counts[1] += c["runs"]
    failures = [(cell, check, count, of) for (cell, check), (count, of) in per_check.items() if count]
    lines = [f"{len(rows)} cells reseeded {runs} times: {int(failed.sum())} runs FAILED (95 % bound "
             f"{rate_upper_bound(int(failed.sum()), runs):.3g}), {int(inconclusive.sum())} INCONCLUSIVE (bound "
             f"{rate_upper_bound(int(inconclusive.sum()), runs):.3g}); {sum(f[2] for f in failures)} failures in "
             f"{sum(c['runs'] for c in checks)} check evaluations (95 % bound per check "
             f"{rate_upper_bound(sum(f[2] for f in failures), sum(c['runs'] for c in checks)):.3g})"]
    lines += [f"  {cell} {check}: {count} of {of}" for cell, check, count, of in failures]
    undecided = [(row["cell"], sum(row["inconclusive"]), len(row["inconclusive"])) for row in rows
                 if sum(row["inconclusive"])]
    lines += [f"  {cell}: INCONCLUSIVE in {count} of {of}" for cell, count, of in undecided]
    return "\n".join(lines)


def runs_argument(arguments: list[str]) -> int:
    """``N`` from the command line (20 when absent); a clear message and exit 2 when it is not a positive
    multiple of the batch."""
    text = arguments[0] if arguments else str(BATCH)
    if len(arguments) > 1 or not text.isdigit() or int(text) == 0 or int(text) % BATCH:
        print(f"measure.py: N must be a positive multiple of {BATCH} (or --summary alone), got {' '.join(arguments)}",
              file=sys.stderr)
        sys.exit(2)
    return int(text)


if __name__ == "__main__":
    if sys.argv[1:] != ["--summary"]:
        before = sum(map(len, recorded().values()))
        try:
            measure(runs_argument(sys.argv[1:]))
        except KeyboardInterrupt:
            kept = sum(map(len, recorded().values()))
            print(f"\ninterrupted: {kept - before} finished batches added, {kept} in all kept in {RECORDS.name}; "
                  "the same command resumes", file=sys.stderr)
            sys.exit(130)
    print(summary())
