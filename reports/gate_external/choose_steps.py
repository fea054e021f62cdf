"""How the gate's external cells got their steps: for every sampler with a minibatch (``linreg``) gate cell, its
``linreg`` hyperparameters with the step rescaled to each external target, ``step = linreg step x (lambda_linreg /
lambda_target)^p x c``, where ``lambda`` is the largest eigenvalue of the negative Hessian at the mean (30 on
``linreg``; ``sgbench.bench.gate.cells.EXTERNAL_TARGETS`` for the others), ``p`` = 1 for a step that multiplies the
gradient (Langevin and Hamiltonian steps in their practical form), 1/2 for an integration time of a
second-order step (SMILE and pSMILE) and 0 for pSGLD (its RMSprop preconditioner divides the gradient by its own
scale), and ``c`` the first of 8, 4, 2, 1, 1/2, 1/4 at which one gate run (64 chains, the gate's warm-up and steps)
has no diverged chain and, for a cell that must forget its start (``Cell.must_forget``: not SMILE's and pSMILE's,
whose step adapts through the run), its chains forgot it (warm-up at least twice the autocorrelation time,
``sgbench.bench.gate.start``). One JSON line a sampler and target in ``records.jsonl``.

    python reports/gate_external/choose_steps.py [--only SAMPLER@TARGET ...] [--summary]
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RECORD = Path(__file__).with_name("records.jsonl")
sys.path.insert(0, str(ROOT))

from reports.case_record import append, arguments, commit, finished  # noqa: E402

LINREG_CURVATURE = 30.0
FACTORS = (8.0, 4.0, 2.0, 1.0, 0.5, 0.25)


def exponent(sampler: str) -> float:
    return 0.0 if sampler == "psgld" else 0.5 if "smile" in sampler else 1.0


def fits(row: dict) -> bool:
    return row["diverged"] == 0 and row.get("moved", True) and (row["forgot"] or not row.get("must_forget", True))


def trial(sampler: str, key: str, factor: float) -> dict:
    from sgbench import samplers
    from sgbench.bench.gate import cells
    from sgbench.bench.gate.replicates import run_replicates

    settings = samplers.benchmark_settings(sampler)
    target_params, curvature = cells.EXTERNAL_TARGETS[key]
    params = cells._at_temperature(sampler, settings.gate.linreg)
    step = params["step_size"] * (LINREG_CURVATURE / curvature) ** exponent(sampler) * factor
    params["step_size"] = float(f"{step:.3g}")
    cell = cells.Cell(sampler, params, target="posteriordb", target_params=dict(target_params),
                      wrapper=settings.wrapper, num_burnin=cells._warmup(settings.gate),
                      stationary=settings.gate.stationary)
    rep = run_replicates(cell, keep_samples=True, keep_every=cell.keep_every)
    moved = rep.travel()
    r = rep.second_moment_error[0][~rep.diverged[0]]
    return {"case": f"{sampler}@{key}", "params": params, "factor": factor, "diverged": int(rep.diverged.sum()),
            "forgot": bool(moved.forgot), "must_forget": cell.must_forget, "moved": not moved.still,
            "autocorrelation_steps": float(moved.autocorrelation_steps),
            "max_abs_r": float(abs(r.mean(axis=0)).max()) if r.size else None, "seconds": round(rep.seconds, 1)}


def main(argv=None) -> int:
    args = arguments(__doc__.split("\n\n")[0], argv)
    from sgbench import samplers
    from sgbench.bench.gate import cells

    rows = finished(RECORD)
    if not args.summary:
        for sampler in samplers.names():
            if samplers.benchmark_settings(sampler).gate.linreg is None:
                continue
            for key in cells.EXTERNAL_TARGETS:
                case = f"{sampler}@{key}"
                if case in rows or (args.only and case not in args.only):
                    continue
                for factor in FACTORS:
                    row = {**trial(sampler, key, factor), "commit": commit()}
                    print(f"{case} x{factor}: diverged {row['diverged']}, forgot {row['forgot']} "
                          f"(tau {row['autocorrelation_steps']:.0f}), max|r| {row['max_abs_r']}", flush=True)
                    if fits(row):
                        break
                append(RECORD, row)
                rows[case] = row
    for row in rows.values():
        print(f"{row['case']:28s} {'ok' if fits(row) else 'NONE FITS':9s} x{row['factor']:<5g} {row['params']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
