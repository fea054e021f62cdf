"""Issue 60's held-out set of wrapped samplers (``cases.py``, ``samplers.py``: an author's project that imports only
the public ``sgbench``) through ``sgbench.validate`` at its defaults but the targets (``cases.TARGETS``), one JSON
line a finished case in ``records.jsonl`` beside this script (a rerun computes only the cases not there), then the
summary: false PASSED, false FAILED, INCONCLUSIVE and ERROR per form, with each verdict's minutes.

    python reports/wrappers_heldout/measure.py [--only NAME ...] [--summary]

Run it from anywhere: the cases run in a temporary folder outside the repository.
"""

import os
import sys
import tempfile
import time
import warnings
from importlib.metadata import version
from pathlib import Path

HERE = Path(__file__).resolve().parent
RECORD = HERE / "records.jsonl"


def run_case(name, make) -> dict:
    import sgbench

    started = time.perf_counter()
    sampler, params = make()
    result = sgbench.validate(sampler, params, targets=TARGETS)
    return {"case": name, "outcome": result.outcome.name, "headline": result.headline,
            "reasons": {key: target.reason for key, target in result.targets.items()},
            "minutes": round((time.perf_counter() - started) / 60, 2), "sgbench": version("sgmcmc-bench")}


def summary(rows: dict) -> str:
    lines = [f"{'case':36} {'form':20} {'expected':8} {'outcome':13} {'minutes':>7}"]
    tally = {"false PASSED": 0, "false FAILED": 0, "INCONCLUSIVE": 0, "ERROR": 0, "right": 0}
    for name, (form, expected, _) in CASES.items():
        row = rows.get(name)
        if row is None:
            continue
        outcome = row["outcome"]
        if outcome == "PASSED" and expected == "wrong":
            tally["false PASSED"] += 1
        elif outcome == "FAILED" and expected == "correct":
            tally["false FAILED"] += 1
        elif outcome in ("INCONCLUSIVE", "ERROR"):
            tally[outcome] += 1
        else:
            tally["right"] += 1
        lines.append(f"{name:36} {form:20} {expected:8} {outcome:13} {row['minutes']:7.1f}")
    done = sum(name in rows for name in CASES)
    lines.append(f"{done} of {len(CASES)} cases: " + ", ".join(f"{v} {k}" for k, v in tally.items()))
    return "\n".join(lines)


def main(argv=None) -> int:
    args = arguments(__doc__.split("\n\n")[0], argv)
    rows = finished(RECORD)
    if not args.summary:
        os.chdir(tempfile.mkdtemp(prefix="sgbench-heldout-"))
        for name, (_, _, make) in CASES.items():
            if name in rows or (args.only and name not in args.only):
                continue
            row = run_case(name, make)
            append(RECORD, row)
            rows[name] = row
            print(f"{name}: {row['outcome']} ({row['minutes']:.1f} min) {row['headline'][:150]}", flush=True)
    print(summary(rows))
    return 0


if __name__ == "__main__":
    sys.path[:0] = [str(HERE), str(HERE.parents[1])]  # the author's project, and reports.case_record
    warnings.simplefilter("ignore", FutureWarning)  # tensordict, once per posteriors state class
    from cases import CASES, TARGETS

    from reports.case_record import append, arguments, finished

    sys.exit(main())
