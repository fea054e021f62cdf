"""The suite's NUTS (numpyro and blackjax) on the Inference Gym targets, held to Inference Gym's ground truth.

Each model: 4 chains of 1000 adaptation steps and 2500 draws (target acceptance 0.9) on the unconstrained target,
mapped to the quantities Inference Gym's truth states (``target.quantities``). Every E[q] and E[q^2] is z-tested
(``sgbench.reference.agreement.compare``) with the suite's Monte Carlo standard errors (ArviZ ESS-based,
``sgbench.reference.agreement.moments``) and Inference Gym's (the mean's stated; E[q^2]'s the Gaussian allowance of
``sgbench.targets.inference_gym._truth``), Bonferroni at a family rate of 0.001 per model and backend. Each record
also holds the cost of one jitted gradient (float64, one position; the median of 50 after one warm call).

Run from the repository root: ``python reports/inference_gym_nuts/measure.py`` (resumable: one JSON line a finished
model and backend in ``records.jsonl``); ``--summary`` prints the table.
"""

import sys
import time
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from nuts_cases import SETTINGS, quantities_of_run, run  # noqa: E402

from sgbench import targets  # noqa: E402
from sgbench.reference import agreement
from sgbench.targets.inference_gym import MODELS  # noqa: E402

RECORD = Path(__file__).resolve().parent / "records.jsonl"
SLOWEST = ("item_response_theory", "stochastic_volatility", "log_gaussian_cox_process")


def gradient_seconds(target) -> float:
    """The median time of one jitted float64 gradient at the initial position."""
    with jax.enable_x64(True):
        grad = jax.jit(target.grad_logdensity)
        x = jnp.asarray(target.initial_position())
        grad(x).block_until_ready()
        times = []
        for _ in range(50):
            start = time.perf_counter()
            grad(x).block_until_ready()
            times.append(time.perf_counter() - start)
    return float(np.median(times))


def measure(model: str, backend: str) -> dict:
    target = targets.get("inference_gym", model=model)
    result, ours, seconds = quantities_of_run(target, backend, lambda draws, _: target.quantities(draws))
    truth = target.quantity_truth
    theirs = {"mean": truth.mean, "mean_se": truth.mean_se, "second_moment": truth.second_moment,
              "second_moment_se": truth.second_moment_se}
    test = agreement.compare(agreement.moments(ours), theirs, alpha=1e-3)
    kind, index = test.worst.split("[")
    return {"case": f"{model}/{backend}", "model": model, "backend": backend, "passed": test.passed,
            "max_abs_z": round(test.max_abs_z, 3), "threshold": round(test.threshold, 3),
            "worst": f"{kind} of {target.quantity_coordinates[int(index.rstrip(']'))]}",
            "divergences": int(result.divergent.sum()), "seconds": round(seconds, 1),
            "gradient_ms": round(1e3 * gradient_seconds(target), 3), "dim": target.dim, "settings": SETTINGS}


def main(argv=None):
    run(__doc__.splitlines()[0], RECORD, sorted(MODELS, key=lambda name: name in SLOWEST), measure, argv)


if __name__ == "__main__":
    main()
