"""Why the step ladder does not decide the suite's SGLD on the 31-d logistic regression within the default budget
(docs/derivations.md, section sgbench.reference.checks.vanishing_bias, "Cost and power"): the ladder run by
hand from h = 0.02 down to h/32 (256 chains a rung, rung k for 2^k times the default 4000 + 4000 steps, as
``sgbench validate`` runs it), each rung's per-coordinate errors against the NUTS gold standard kept in
``logreg_ladder.json`` beside this script as it finishes (a rerun resumes), then the fit on the first 4, 5 and 6
rungs at the first look's rates, with the rung standard errors as measured and divided by sqrt(2) and 2 (what 2
and 4 times the chains would give about the same centres).

    python reports/validate_decisive/logreg_ladder.py [--rungs 6]

Run from the repository root; about 8 minutes on 2 cores.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

RECORD = Path(__file__).with_name("logreg_ladder.json")
STEP, CHAINS = 0.02, 256


def plans():
    """The in-place validation's plan on every default target, logreg's last."""
    from sgbench.bench.adapters import load_sampler
    from sgbench.bench.validate import targets as vt
    from sgbench.bench.validate.claim import NO_CLAIM, resolve_claim
    from sgbench.bench.validate.plan import plan

    sampler = load_sampler("sgbench.samplers.sgld:SAMPLER")
    claim = resolve_claim(sampler, NO_CLAIM, None, None)
    return sampler, [plan(sampler, claim, t, {"step_size": STEP}, CHAINS, 4000, 4000)
                     for t in vt.select("default", False)]


def rung_errors(k: int) -> dict:
    """Rung k's per-coordinate errors and standard errors (mean error, then r) against the NUTS gold standard."""
    from sgbench.bench.gate.replicates import run_replicates
    from sgbench.bench.validate.session import as_one_run, at_temperature
    from sgbench.bench.validate.step_ladder import STATISTICS, healthy_values, rung
    from sgbench.reference.checks import standard_error

    sampler, (*_, p) = plans()
    rep = run_replicates(rung(p.cell, k), seed=k, keep_samples=True, thin=rung(p.cell, k).thin, sampler=sampler)
    values, diverged = healthy_values(rep, lambda r: as_one_run(at_temperature(r, 1.0, False)))
    return {"step": STEP / 2**k, "diverged": diverged,
            "errors": np.concatenate([values[key].mean(axis=0) for key in STATISTICS]).tolist(),
            "standard_errors": np.concatenate([standard_error(values[key]) for key in STATISTICS]).tolist(),
            "truth_se": np.concatenate([np.asarray(p.design[f"{key}_se"]) for key in STATISTICS]).tolist()}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rungs", type=int, default=6, help="rungs to run, from h = 0.02 (default 6: to h/32)")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    rungs = json.loads(RECORD.read_text()) if RECORD.exists() else []
    for k in range(len(rungs), args.rungs):
        rungs.append(rung_errors(k))
        RECORD.write_text(json.dumps(rungs, indent=1) + "\n")
        print(f"rung {k} (h = {rungs[-1]['step']:.3g}) finished", flush=True)
    from sgbench.bench.gate.runner import ALPHA_RUN
    from sgbench.bench.validate.session import look_alpha
    from sgbench.bench.validate.step_ladder import STATISTICS
    from sgbench.reference.checks.vanishing_bias import MISS, ladder_fit

    alpha = ALPHA_RUN / sum(p.statistical_checks for p in plans()[1])  # validate's share per check

    errors, se = np.array([r["errors"] for r in rungs]), np.array([r["standard_errors"] for r in rungs])
    dim = errors.shape[1] // 2
    labels = [f"{words} in coordinate {i}" for words in STATISTICS.values() for i in range(dim)]
    for count in range(4, len(rungs) + 1):
        for chains in (1, 2, 4):
            fit = ladder_fit([r["step"] for r in rungs[:count]], errors[:count], se[:count] / np.sqrt(chains),
                             alpha=look_alpha(alpha, 1), miss=look_alpha(MISS, 1), detect=0.1,
                             labels=labels, common_se=rungs[0]["truth_se"])
            s = fit.series[fit.worst]
            print(f"{count} rungs, {chains} x the chains: {fit.outcome}; worst series {fit.labels[fit.worst]}: b0 in "
                  f"{s.b0_low:.3f} to {s.b0_high:.3f} over the orders {s.orders[0]:.2g} to {s.orders[1]:.2g}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
