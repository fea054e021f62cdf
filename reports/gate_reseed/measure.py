"""The quick gate's measured false-failure and INCONCLUSIVE rates (docs/gates.md, "Measured false-failure rate").

Reseeds every cell of the quick suite ``N`` times (``sgbench.bench.gate.runner.reseed``, one cell at a time, each at
the whole suite's per-check rate): the g-th run of every cell is the g-th run of the suite. Each finished
cell is appended to ``records.jsonl`` beside this script, so a rerun resumes where it stopped; the summary
(runs FAILED and INCONCLUSIVE with Clopper-Pearson 95 % bounds, check failures per cell) is printed from the
records alone. Run from the repository root:

    python reports/gate_reseed/measure.py [N]          # N = 20 by default
    python reports/gate_reseed/measure.py --summary
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

RECORDS = Path(__file__).with_name("records.jsonl")


def recorded() -> dict:
    if not RECORDS.exists():
        return {}
    return {row["cell"]: row for row in map(json.loads, RECORDS.read_text().splitlines()) if row}


def measure(num_runs: int) -> None:
    from sgbench.bench.cli._common import progress
    from sgbench.bench.gate.cells import suite
    from sgbench.bench.gate.runner import reseed

    done = recorded()
    for cell in suite("quick"):
        if cell.name in done and done[cell.name]["runs"] == num_runs:
            continue
        per_check, runs = reseed("quick", num_runs, names=[cell.name], progress=progress)
        row = {"cell": cell.name, "runs": num_runs, "first_seed": 1, "failed": runs["failed"].tolist(),
               "inconclusive": runs["inconclusive"].tolist(), "checks": per_check.to_dict("records")}
        with RECORDS.open("a") as file:
            file.write(json.dumps(row, default=float) + "\n")


def summary() -> str:
    import numpy as np

    from sgbench.reference.checks import rate_upper_bound

    rows = list(recorded().values())
    if not rows:
        return "no records yet"
    runs = min(row["runs"] for row in rows)
    failed = np.any([row["failed"][:runs] for row in rows], axis=0)
    inconclusive = np.any([row["inconclusive"][:runs] for row in rows], axis=0) & ~failed
    checks = [c for row in rows for c in row["checks"]]
    failures = [(c["cell"], c["check"], c["failures"]) for c in checks if c["failures"]]
    lines = [f"{len(rows)} cells reseeded {runs} times: {int(failed.sum())} runs FAILED (95 % bound "
             f"{rate_upper_bound(int(failed.sum()), runs):.3g}), {int(inconclusive.sum())} INCONCLUSIVE (bound "
             f"{rate_upper_bound(int(inconclusive.sum()), runs):.3g}); {sum(f[2] for f in failures)} failures in "
             f"{sum(c['runs'] for c in checks)} check evaluations (95 % bound per check "
             f"{rate_upper_bound(sum(f[2] for f in failures), sum(c['runs'] for c in checks)):.3g})"]
    lines += [f"  {cell} {check}: {count} of {runs}" for cell, check, count in failures]
    undecided = [(row["cell"], sum(row["inconclusive"])) for row in rows if sum(row["inconclusive"])]
    lines += [f"  {cell}: INCONCLUSIVE in {count} of {runs}" for cell, count in undecided]
    return "\n".join(lines)


if __name__ == "__main__":
    if sys.argv[1:] != ["--summary"]:
        measure(int(sys.argv[1]) if len(sys.argv) > 1 else 20)
    print(summary())
