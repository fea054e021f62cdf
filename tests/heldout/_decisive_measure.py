"""The measurements behind the expectations of ``tests/heldout/decisive.py``: run a sampler with ``bench.run``
on a target preset of ``tests.heldout.TARGETS``, started as ``sgbench validate`` starts its chains (docs/tutorial.md,
"Chains that must travel": at mu + 2(x - mu), x an exact draw of the target or one resampled from its stored NUTS
draws) or at exact draws (``--start exact``), after a warm-up, and print its error against the target's truth, per
coordinate, with standard errors over chains. ``--ladder K`` repeats the run at h/2, ..., h/2^K with the steps
and the warm-up multiplied by 2^k (the same span of the dynamics on each rung).

    python -m tests.heldout._decisive_measure tests.heldout.sgld_correct:SAMPLER icg step_size=0.02 \\
        --chains 256 --steps 8000 --burnin 8000 --ladder 3
    python -m tests.heldout._decisive_measure sgld logreg step_size=0.02 --chains 64 --steps 4000 --burnin 4000

The sampler is ``MODULE:OBJECT`` or a registered name. One JSON line per rung: ``mean_err_sd`` (the pooled
mean's error in units of the truth's standard deviation), ``r`` (the relative error of the pooled second moment
about the true mean, E[(x - mu)^2] / (T Sigma_ii) - 1, T the run's temperature), their standard errors over
chains, and on a target with many coordinates (logreg) a summary: the largest |r| and |mean error| with their
standard errors and the truth's own (NUTS) standard error of r. Not a statistical test: the numbers to judge.
"""

from __future__ import annotations

import json
import time

import jax
import numpy as np

from sgbench import samplers
from sgbench.bench.adapters import load_sampler
from sgbench.bench.gate import gold_standard
from sgbench.bench.running import run as running
from tests.heldout._measure import coordinate_errors, params_of, parser_of, target

STEP_NAMES = ("step_size",)


def _sampler(spec: str):
    return load_sampler(spec) if ":" in spec else samplers.get(spec)


def measure(spec: str, target_key: str, params: dict, chains: int = 64, steps: int = 4000, burnin: int = 0,
            seed: int = 0, start: str = "over", start_seed: int = 1, record_every: int = 1) -> dict:
    """Run ``spec`` on the preset ``target_key`` and score the kept steps against the target's truth."""
    sampler = _sampler(spec)
    tgt = target(target_key)
    truth = gold_standard.truth_of(tgt)
    mu = np.asarray(truth.mean, dtype=np.float64)
    draws = np.asarray(gold_standard.draws(tgt, jax.random.PRNGKey(start_seed), chains))
    initial = mu + 2 * (draws - mu) if start == "over" else draws
    began = time.perf_counter()
    result = running.run(sampler, tgt, params=params, num_chains=chains, num_steps=steps, num_burnin=burnin,
                         seed=seed, initial_position=initial, dtype="float64")
    validated = sampler.params(**params)
    temperature = float(getattr(validated, "temperature", 1.0))  # the requested one (baoab_diffusion: its tau)
    var = np.diag(np.asarray(truth.covariance, dtype=np.float64)) * temperature
    errors = coordinate_errors(result, mu, var)
    out = dict(sampler=sampler.name, target=target_key, params=params, chains=chains, steps=steps, burnin=burnin,
               seed=seed, diverged=errors["diverged"])
    if "r" in errors:
        m_err, m_se, r, r_se = (errors[key] for key in ("mean_err_sd", "mean_err_se", "r", "r_se"))
        if tgt.dim <= 6:
            out.update(mean_err_sd=m_err.round(4).tolist(), mean_err_se=m_se.round(4).tolist(),
                       r=r.round(4).tolist(), r_se=r_se.round(4).tolist())
        else:
            truth_se = np.zeros_like(r)
            if truth.covariance_se is not None:
                truth_se = np.diag(np.asarray(truth.covariance_se)) / np.diag(np.asarray(truth.covariance))
            worst = int(np.argmax(np.abs(r)))
            out.update(r_max=round(float(r[worst]), 4), r_max_se=round(float(r_se[worst]), 4),
                       r_max_coordinate=worst, r_mean=round(float(r.mean()), 4),
                       r_quartiles=np.quantile(r, [0.0, 0.25, 0.5, 0.75, 1.0]).round(4).tolist(),
                       r_se_max=round(float(r_se.max()), 4), truth_r_se_max=round(float(truth_se.max()), 4),
                       mean_err_max=round(float(m_err[np.argmax(np.abs(m_err))]), 4),
                       mean_err_se_max=round(float(m_se.max()), 4),
                       z_r_max=round(float(np.max(np.abs(r) / np.hypot(r_se, truth_se))), 2))
    out["seconds"] = round(time.perf_counter() - began, 1)
    return out


def ladder(spec, target_key, params, rungs=0, chains=64, steps=4000, burnin=0, seed=0, start="over",
           only=None):
    """:func:`measure` at h, h/2, ..., h/2^rungs (``step_size``), steps and warm-up times 2^k; ``only``: the
    rungs to run (default all)."""
    results = []
    for k in range(rungs + 1):
        if only is not None and k not in only:
            continue
        p = dict(params)
        for name in STEP_NAMES:
            if name in p:
                p[name] = p[name] / 2**k
        results.append(measure(spec, target_key, p, chains, steps * 2**k, burnin * 2**k, seed, start))
    return results


def main(argv=None) -> None:
    parser = parser_of(__doc__)
    parser.add_argument("--burnin", type=int, default=4000)
    parser.add_argument("--start", choices=("over", "exact"), default="over")
    parser.add_argument("--ladder", type=int, default=0, help="also run h/2 .. h/2^K")
    parser.add_argument("--only", type=int, nargs="*", help="the ladder's rungs to run (default all)")
    args = parser.parse_args(argv)
    params = params_of(args)
    for result in ladder(args.sampler, args.target, params, args.ladder, args.chains, args.steps, args.burnin,
                         args.seed, args.start, args.only):
        print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
