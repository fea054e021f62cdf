"""Held-out runs of the weighted check (``sgbench.bench.validate.weighted_truth``) before trusting it.

    PYTHONPATH=. python reports/csgld/heldout.py [--chains 256] [--steps 20000] [--budget 4min] [--only NAME ...]

appends one JSON line per case to ``reports/csgld/heldout_ladder.jsonl`` (the outcome, reason, estimates, speed,
looks; the rules of the step ladder and the remedies within ``--budget``, issue 59; ``heldout.jsonl`` holds the runs
under the step-halving rule before it) and prints its summary. Cases: (a) ``blackjax:csgld`` at its settings on icg,
and on icg with exact gradients and log densities at a partition whose first part holds the minimum energy
(blackjax's kernel, the paper's, and one fix at a time); (b) csgld with zeta = 0 (plain SGLD, constant weights); (c)
deliberately wrong uses of its draws (no weights, weights of the wrong sign), which it must fail; (d)
``blackjax:sgld`` with unit weights; (e) a correct importance sampler with weights that are not constant (SGLD at
1.5 T weighted back to T).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import variants  # noqa: E402

from sgbench import targets  # noqa: E402
from sgbench.bench.adapters import blackjax as bj  # noqa: E402
from sgbench.bench.validate import targets as vt, weighted_truth as wt  # noqa: E402

EXACT = {"noise": "none"}
U_MIN = 2 * np.log(2 * np.pi)  # icg's smallest energy -log p: (d/2) log(2 pi), det Sigma = 1
# exact energies; the first partition [U_MIN - 0.125, U_MIN + 0.125) holds the minimum, none is empty below it
EXACT_PARTITION = dict(step_size=0.01, step_size_stoch=0.01, zeta=0.75, num_partitions=60, energy_gap=0.25,
                       min_energy=float(U_MIN - 0.125))


def cases():
    setting = {s.label: s.params for s in bj.csgld.settings}
    first = bj.csgld.settings[0].params
    icg = targets.get("icg", **vt.get("icg").params)
    out = [(f"a: blackjax:csgld, {label}", bj.csgld, params, None) for label, params in setting.items()]
    out += [
        ("a: blackjax:csgld, exact energies", bj.csgld, EXACT_PARTITION, EXACT),
        ("a: the paper's kernel, exact energies", variants.PAPER, EXACT_PARTITION, EXACT),
        ("a: the paper's kernel, midpoint weights, exact energies", variants.PAPER_MIDPOINT, EXACT_PARTITION, EXACT),
        ("a: blackjax with (J-1) v 1 only, exact energies", variants.LOWER_FIXED, EXACT_PARTITION, EXACT),
        ("a: blackjax with the theta^zeta gain only, exact energies", variants.GAIN_FIXED, EXACT_PARTITION, EXACT),
        ("b: blackjax:csgld zeta = 0", bj.csgld, {**first, "zeta": 0.0}, None),
        ("c: blackjax:csgld without its weights, exact energies", variants.unweighted(), EXACT_PARTITION, EXACT),
        ("c: blackjax:csgld, weights of the wrong sign, exact energies", variants.wrong_sign(), EXACT_PARTITION,
         EXACT),
        ("d: blackjax:sgld", bj.sgld, dict(step_size=0.01), None),
        ("e: blackjax:sgld at 1.5 T weighted back", variants.tempered_sgld(icg), dict(step_size=0.01), None),
    ]
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chains", type=int, default=wt.DEFAULT_CHAINS)
    parser.add_argument("--steps", type=int, default=wt.DEFAULT_STEPS)
    parser.add_argument("--only", nargs="*", default=None, help="run the cases whose name starts with these")
    parser.add_argument("--budget", default="4min", help="what each case's remedies may spend (default: 4min, "
                        "sgbench conformance's per task)")
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "heldout_ladder.jsonl")
    args = parser.parse_args()
    for name, sampler, params, target_params in cases():
        if args.only and not any(name.startswith(prefix) for prefix in args.only):
            continue
        check = wt.check_weighted(sampler, params, num_chains=args.chains, num_steps=args.steps,
                                  target_params=target_params, budget=args.budget)
        print(f"[{name}]\n{check.summary()}", flush=True)
        record = {"case": name, "params": {k: (v if isinstance(v, str) else float(v)) for k, v in check.params.items()},
                  "target_params": target_params, "chains": args.chains, "steps": args.steps,
                  "outcome": check.outcome.name, "reason": check.reason,
                  "variance_error": check.variance_error.tolist(),
                  "variance_error_se": check.variance_error_se.tolist(),
                  "mean_error": check.mean_error.tolist(), "mean_error_se": check.mean_error_se.tolist(),
                  "detectable": check.detectable, "weight_ess": check.weight_ess, "ratio_bias": check.ratio_bias,
                  "diverged": check.diverged, "wall_seconds": check.wall_seconds, "budget": args.budget,
                  "looks": check.looks, "final_chains": check.num_chains, "final_warmup": check.warmup,
                  "chain_steps_per_second": check.chain_steps_per_second, "when": time.strftime("%Y-%m-%d %H:%M")}
        with open(args.out, "a") as handle:
            handle.write(json.dumps(record) + "\n")


if __name__ == "__main__":
    main()
