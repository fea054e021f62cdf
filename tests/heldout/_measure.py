"""The measurements behind the held-out expectations: run a sampler with ``bench.run`` from exact draws of a
target and print its error against ``target.truth``, per coordinate, with standard errors over chains.

    python -m tests.heldout._measure tests.heldout.sgld_noise_inflated:SAMPLER icg step_size=0.02
    python -m tests.heldout._measure sgld linreg step_size=1e-3 --chains 64 --steps 4000
    python -m tests.heldout._measure tests.heldout.sgld_tiny:SAMPLER icg step_size=1e-5 temperature=0.5

The sampler is ``MODULE:OBJECT`` or a registered name; the target a key of ``tests.heldout.TARGETS``. It
prints one JSON line: the chains that diverged, and over the others ``mean_err_sd`` (the pooled mean's error
in units of the truth's standard deviation), ``r`` (the relative error of the pooled second moment about the
true mean, E[(x - mu)^2] / (T Sigma_ii) - 1, at the run's ``temperature``), their standard errors over
chains, and for the mixture Var[x^2] against the truth's. Not a statistical test: the numbers to judge.
"""

from __future__ import annotations

import argparse
import json
import time

import jax
import numpy as np

from sgbench import samplers, targets
from sgbench.bench.adapters import load_sampler
from sgbench.bench.running import run as running
from tests.heldout import TARGETS


def target(key: str):
    """The target preset ``key`` of ``TARGETS``."""
    kwargs = dict(TARGETS[key])
    return targets.get(kwargs.pop("name"), **kwargs)


def measure(spec: str, target_key: str, params: dict, chains: int = 64, steps: int = 4000, seed: int = 0,
            start_seed: int = 1) -> dict:
    """Run ``spec`` on the preset ``target_key`` from exact draws (JAX key ``start_seed``) and score it."""
    sampler = load_sampler(spec) if ":" in spec else samplers.get(spec)
    tgt = target(target_key)
    start = np.asarray(tgt.sample(jax.random.PRNGKey(start_seed), chains))
    began = time.perf_counter()
    result = running.run(sampler, tgt, params=params, num_chains=chains, num_steps=steps, seed=seed,
                         initial_position=start)
    validated = sampler.params(**params)
    temperature = float(getattr(validated, "temperature", getattr(validated, "temp", 1.0)))
    mu, var = tgt.truth.mean, np.diag(tgt.truth.covariance) * temperature
    errors = coordinate_errors(result, mu, var)
    out = dict(sampler=sampler.name, target=target_key, params=params, chains=chains, steps=steps, seed=seed,
               diverged=errors["diverged"])
    if "r" in errors:
        out.update({key: errors[key].round(4).tolist() for key in ("mean_err_sd", "mean_err_se", "r", "r_se")})
        if tgt.name == "gmm":
            moments, healthy, square = result.moments, errors["healthy"], errors["square"]
            count = np.asarray(moments.count)[healthy][:, None]
            pooled = (count * square).sum(0) / count.sum(0)
            spread = (np.asarray(moments.m2_sq)[healthy] + count * (square - pooled) ** 2).sum(0) / count.sum(0)
            out.update(var_x2=spread.round(4).tolist(), truth_var_x2=tgt.truth.second_moment_var.round(4).tolist())
    out["seconds"] = round(time.perf_counter() - began, 1)
    return out


def coordinate_errors(result, mu, var) -> dict:
    """Over the healthy chains of ``result`` (``healthy``; ``diverged`` the others' count), per coordinate: the
    pooled mean's error in standard deviations (``mean_err_sd``), r = E[(x - mu)^2] / var - 1 (``r``), their
    standard errors over chains (``mean_err_se``, ``r_se``) and the per-chain second moments (``square``); only
    the counts where fewer than 2 chains are healthy."""
    healthy = ~np.asarray(result.trace.diverged)
    n = int(healthy.sum())
    out = dict(healthy=healthy, diverged=int((~healthy).sum()))
    if n >= 2:
        mean = np.asarray(result.moments.mean)[healthy]
        square = np.asarray(result.moments.mean_sq)[healthy]
        centred = square - 2 * mu * mean + mu**2  # per chain, E[(x - mu)^2]
        out.update(mean_err_sd=(mean.mean(0) - mu) / np.sqrt(var), mean_err_se=mean.std(0, ddof=1) / np.sqrt(n * var),
                   r=centred.mean(0) / var - 1, r_se=centred.std(0, ddof=1) / np.sqrt(n) / var, square=square)
    return out


def _value(text: str):
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def parser_of(doc: str) -> argparse.ArgumentParser:
    """The command line a measurement script shares: the sampler, the target, NAME=VALUE hyperparameters (read by
    :func:`params_of`), --chains, --steps, --seed."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("sampler", help="MODULE:OBJECT or a registered sampler's name")
    parser.add_argument("target", choices=sorted(TARGETS))
    parser.add_argument("params", nargs="*", help="NAME=VALUE (JSON values; other text is a string)")
    parser.add_argument("--chains", type=int, default=64)
    parser.add_argument("--steps", type=int, default=4000)
    parser.add_argument("--seed", type=int, default=0)
    return parser


def params_of(args) -> dict:
    return {name: _value(value) for name, _, value in (p.partition("=") for p in args.params)}


def main(argv=None) -> None:
    parser = parser_of(__doc__)
    parser.add_argument("--start-seed", type=int, default=1)
    args = parser.parse_args(argv)
    params = params_of(args)
    print(json.dumps(measure(args.sampler, args.target, params, args.chains, args.steps, args.seed,
                             args.start_seed)))


if __name__ == "__main__":
    main()
