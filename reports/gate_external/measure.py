"""The full gate's cells on the external posteriors (``sgbench.bench.gate.cells.EXTERNAL_TARGETS``), measured: each
cell once as the gate runs it (seed 0, checked against its stored design bias and, where the baseline file holds
the cell, its baseline, at the full suite's per-check rate), then planted bugs of ``sgbench.bench.gate.planted``
on the cells they change (SGLD's noise variance doubled; minibatch gradients not scaled by N/B), caught where a
check fails. One JSON line a cell or a bug and cell in ``records.jsonl``.

    python reports/gate_external/measure.py [--only CASE ...] [--summary]
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RECORD = Path(__file__).with_name("measured.jsonl")
sys.path.insert(0, str(ROOT))

from reports.case_record import append, arguments, commit, finished  # noqa: E402

BUGS = ("sgld-noise-variance-doubled", "minibatch-scale-missing")


def check(cell, planted=None) -> dict:
    import contextlib
    import time

    from sgbench.bench.gate import baseline as baselines, design_bias
    from sgbench.bench.gate.cells import suite
    from sgbench.bench.gate.runner import alpha_per_check, check_group, run_cell

    document = baselines.load(baselines.path_for("full"))
    base = document if cell.name in document.get("cells", {}) else None
    alpha = alpha_per_check(len(suite("full")), True)
    started = time.perf_counter()
    with planted.planted() if planted is not None else contextlib.nullcontext():
        rows, _, outcome = check_group(run_cell(cell, seed=0), 0, design_bias.of_cell(cell, design_bias.load()),
                                       base, alpha)
    return {"outcome": outcome["outcome"], "failed": outcome["failed"], "travel": outcome["travel"],
            "baseline": base is not None, "seconds": round(time.perf_counter() - started, 1),
            "worst": max((abs(r["statistic"]) / r["threshold"], r["name"]) for r in rows
                         if r["threshold"] and r["alpha"] > 0)}


def main(argv=None) -> int:
    args = arguments(__doc__.split("\n\n")[0], argv)
    from sgbench.bench.gate import planted
    from sgbench.bench.gate.cells import suite

    cells = [c for c in suite("full") if c.target == "posteriordb"]
    cases = [(c, None) for c in cells] + [(c, planted.get(b)) for b in BUGS for c in cells
                                          if planted.get(b).acts_on(c) and not planted.get(b).vanishes(c)]
    rows = finished(RECORD)
    if not args.summary:
        for cell, bug in cases:
            case = cell.name if bug is None else f"{bug.name}@{cell.name}"
            if case in rows or (args.only and case not in args.only):
                continue
            row = {"case": case, "cell": cell.name, "bug": None if bug is None else bug.name, **check(cell, bug),
                   "commit": commit()}
            append(RECORD, row)
            rows[case] = row
            print(f"{case}: {row['outcome']} {row['failed']}", flush=True)
    correct = [r for r in rows.values() if r["bug"] is None]
    bugs = [r for r in rows.values() if r["bug"] is not None]
    for row in rows.values():
        print(f"{row['case']:80s} {row['outcome']:13s} {row['failed'][:40]:40s} worst {row['worst'][0]:.2f} "
              f"({row['worst'][1]}) {row['seconds']} s")
    print(f"correct samplers: {sum(r['outcome'] == 'FAILED' for r in correct)} of {len(correct)} cells FAILED; "
          f"planted bugs: {sum(r['outcome'] == 'FAILED' for r in bugs)} of {len(bugs)} cells caught")
    return 0


if __name__ == "__main__":
    sys.exit(main())
