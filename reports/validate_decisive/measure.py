"""The held-out set of issue 59 (``tests/heldout/decisive.py``, written before the decisive validator) through
``sgbench validate`` at its defaults (256 chains, 4000 + 4000 steps, ``--budget`` 20min, seed 0): each case's
verdict, reasons and cost, one JSON line a finished case in ``records.jsonl`` beside this script, with the commit
it ran at (a rerun computes only the cases not there: empty the record after a change to validate's rules), then
the summary: false PASSED (a PASSED outside the case's expected verdicts), false FAILED, INCONCLUSIVE share, per
kind of case, with what each verdict cost.

    python reports/validate_decisive/measure.py [--only NAME ...] [--summary]

Run from the repository root (``tests.heldout`` is imported from there).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RECORD = Path(__file__).with_name("records.jsonl")
sys.path.insert(0, str(ROOT))  # tests.heldout and reports.case_record

from reports.case_record import append, arguments, commit, finished  # noqa: E402


def run_case(case) -> dict:
    from sgbench.bench.adapters import load_sampler
    from sgbench.bench.validate.claim import NO_CLAIM
    from sgbench.bench.validate.validate import validate

    started = time.perf_counter()
    options = {} if case.num_chains is None else {"num_chains": case.num_chains}
    try:
        verdict = validate(load_sampler(case.sampler), dict(case.params), claims=case.claims or NO_CLAIM,
                           targets=",".join(case.targets), num_steps=case.num_steps, rename=case.param_map,
                           out=Path("/tmp/validate_decisive"), progress=lambda line: None, **options).verdict
    except Exception as error:  # a case the validator cannot run is a finding, recorded as such
        return {"case": case.name, "outcome": "ERROR", "reasons": {"error": f"{type(error).__name__}: {error}"},
                "seconds": time.perf_counter() - started, "grad_evals": 0.0}
    return {"case": case.name, "outcome": verdict.outcome.name,
            "outcomes": {k: o.name for k, o in verdict.outcomes.items()}, "reasons": verdict.reasons,
            "seconds": round(time.perf_counter() - started, 1),
            "grad_evals": float(sum(evals for _, evals in verdict.costs.values()))}


def summary(cases, rows: dict) -> str:
    lines = [f"{'case':58} {'kind':9} {'decided':9} {'outcome':13} {'minutes':>7} {'grad evals':>10}"]
    tally = {"false PASSED": 0, "false FAILED": 0, "INCONCLUSIVE": 0, "decided as expected": 0, "other": 0}
    for case in cases:
        row = rows.get(case.name)
        if row is None:
            continue
        outcome = row["outcome"]
        if outcome == "PASSED" and outcome not in case.expected:
            tally["false PASSED"] += 1
        elif outcome == "FAILED" and outcome not in case.expected:
            tally["false FAILED"] += 1
        elif outcome == "INCONCLUSIVE":
            tally["INCONCLUSIVE"] += 1
        elif outcome == case.decided:
            tally["decided as expected"] += 1
        else:
            tally["other"] += 1
        lines.append(f"{case.name:58} {case.kind or '':9} {case.decided or '-':9} {outcome:13} "
                     f"{row['seconds'] / 60:7.1f} {row['grad_evals']:10.3g}")
    done = sum(case.name in rows for case in cases)
    lines.append(f"{done} of {len(cases)} cases: " + ", ".join(f"{v} {k}" for k, v in tally.items()))
    return "\n".join(lines)


def main(argv=None) -> int:
    args = arguments(__doc__.split("\n\n")[0], argv)
    from tests.heldout.decisive import DECISIVE_CASES

    rows = finished(RECORD)
    if not args.summary:
        for case in DECISIVE_CASES:
            if case.name in rows or (args.only and case.name not in args.only):
                continue
            row = {**run_case(case), "commit": commit()}
            append(RECORD, row)
            rows[case.name] = row
            print(f"{case.name}: {row['outcome']} ({row['seconds'] / 60:.1f} min)", flush=True)
    print(summary(DECISIVE_CASES, rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
