"""``sgbench validate`` on the external targets (posteriordb and Inference Gym, ``--targets external``): a correct
SGLD and planted bugs, held to truth alone (``--claims none``), at 256 chains, 4000 + 4000 steps and a budget of
10min per case, seed 0; each case's verdict, reasons and cost, one JSON line a finished case in ``records.jsonl``
beside this script, with the commit it ran at, then the summary.

The step on each target is about a fifth of the Euler stability limit, h = 0.2 / lambda_max (lambda_max the largest
eigenvalue of the negative Hessian of the log density at the truth's mean, docs/targets.md): SGLD's bias there is
of the order of the resolution 0.1, so the step ladder has to decide (on ``gauss_mix`` a quarter of that: its
minibatch noise heats SGLD, r = 2.6 at 2e-5 with minibatches of 32, a record kept under its own name; on ``schools``
also at a third of it). The cases (``tests.heldout``):

- ``sgld_correct``, a correct SGLD: PASSED (or INCONCLUSIVE), never FAILED;
- ``sgld_noise_inflated``, injected noise 20 % too large in variance (r about +0.2 that does not vanish with h):
  FAILED (or INCONCLUSIVE), never PASSED;
- ``sgld_minibatch_off_by_one`` on ``mesquite`` (B = 8), the likelihood scaled by N/(B + 1) instead of N/B: a
  tempering by 8/9, r about +0.12 where the data dominate the prior.

    python reports/validate_external/measure.py [--only NAME ...] [--summary]

Run from the repository root.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RECORD = Path(__file__).with_name("records.jsonl")
sys.path.insert(0, str(ROOT))

from reports.case_record import append, arguments, commit, finished  # noqa: E402

STEPS = {"mesquite": 2e-4, "gauss_mix": 5e-6, "schools": 0.15, "brownian": 4e-4, "irt": 3e-5}
SMALLER = {"schools": 0.05}  # also run at this step (at 0.15 the chains' averages are heavy-tailed)
EXPECTED = {"sgld_correct": ("PASSED", "INCONCLUSIVE"), "sgld_noise_inflated": ("FAILED", "INCONCLUSIVE"),
            "sgld_minibatch_off_by_one": ("FAILED", "INCONCLUSIVE")}
CASES = [(sampler, target, step) for sampler in ("sgld_correct", "sgld_noise_inflated")
         for target, step in [*STEPS.items(), *SMALLER.items()]] + [("sgld_minibatch_off_by_one", "mesquite", 2e-4)]


def name(sampler: str, target: str, step: float) -> str:
    return f"{sampler}@{target}-h{step:g}"


def run_case(sampler: str, target: str, step: float) -> dict:
    from sgbench.bench.adapters import load_sampler
    from sgbench.bench.validate.validate import validate

    started = time.perf_counter()
    verdict = validate(load_sampler(f"tests.heldout.{sampler}:SAMPLER"), {"step_size": step}, claims="none",
                       targets=target, out=Path("/tmp/validate_external"), progress=lambda line: None,
                       budget="10min").verdict
    return {"case": name(sampler, target, step), "outcome": verdict.outcome.name, "reasons": verdict.reasons,
            "seconds": round(time.perf_counter() - started, 1),
            "grad_evals": float(sum(evals for _, evals in verdict.costs.values()))}


def main(argv=None) -> int:
    args = arguments(__doc__.split("\n\n")[0], argv)
    rows = finished(RECORD)
    if not args.summary:
        for sampler, target, step in CASES:
            case = name(sampler, target, step)
            if case in rows or (args.only and case not in args.only):
                continue
            row = {**run_case(sampler, target, step), "commit": commit()}
            append(RECORD, row)
            rows[case] = row
            print(f"{case}: {row['outcome']} ({row['seconds'] / 60:.1f} min)", flush=True)
    wrong = 0
    for case, row in rows.items():  # also the records of settings since changed (named by their step and batch)
        wrong += row["outcome"] not in EXPECTED[case.split("@")[0]]
        print(f"{case:48s} {row['outcome']:13s} {row['seconds'] / 60:5.1f} min {row['grad_evals']:10.3g} gradient "
              "evaluations")
    print(f"{sum(name(*c) in rows for c in CASES)} of {len(CASES)} cases, {wrong} wrong of {len(rows)} records (a "
          "PASSED bug or a FAILED correct sampler)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
