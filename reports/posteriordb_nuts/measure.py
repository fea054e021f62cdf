"""The suite's NUTS (numpyro and blackjax) on every posteriordb posterior, held to posteriordb's reference draws.

Each posterior: 4 chains of 1000 adaptation steps and 2500 draws (target acceptance 0.9) on the unconstrained
target, mapped back to the reference draws' constrained quantities (transformed parameters included). The
comparison is the suite's agreement test of two references (``sgbench.reference.agreement.compare``): every E[q] and
E[q^2] z-tested with both sides' Monte Carlo standard errors (ArviZ ESS-based, ``sgbench.reference.store.summarize``),
Bonferroni at a family rate of 0.001 per posterior and backend. posteriordb's acceptance of its own reference
draws (ESS, R-hat, E-FMI) is a property of the draws; what it asks of another algorithm is agreement of the
moments within Monte Carlo error, which this tests.

Run from the repository root: ``python reports/posteriordb_nuts/measure.py`` (resumable: one JSON line a finished
posterior and backend in ``records.jsonl``); ``--summary`` prints the table.
"""

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from nuts_cases import SETTINGS, quantities_of_run, run  # noqa: E402

from sgbench import targets  # noqa: E402
from sgbench.reference import agreement, store  # noqa: E402
from sgbench.targets.posteriordb import POSTERIORS  # noqa: E402

RECORD = Path(__file__).resolve().parent / "records.jsonl"


def flat_quantities(quantities: dict, shape) -> np.ndarray:
    """The quantities (name -> (n,) or (n, size)) as (chains, draws, q) in sorted name order."""
    columns = [np.asarray(quantities[k]).reshape(*shape, -1) for k in sorted(quantities)]
    return np.concatenate(columns, axis=-1)


def measure(posterior: str, backend: str) -> dict:
    target = targets.get("posteriordb", posterior=posterior)
    result, ours, seconds = quantities_of_run(
        target, backend, lambda draws, shape: flat_quantities(target.quantities(draws), shape))
    reference = {k: v if v.ndim == 3 else v[..., None] for k, v in target.reference.items()}
    theirs = np.concatenate([reference[k] for k in sorted(reference)], axis=-1)
    test = agreement.compare(store.summarize(ours), store.summarize(theirs), alpha=1e-3)
    labels = [f"{k}[{i + 1}]" if reference[k].shape[-1] > 1 else k for k in sorted(reference)
              for i in range(reference[k].shape[-1])]
    kind, index = test.worst.split("[")
    return {"case": f"{posterior}/{backend}", "posterior": posterior, "backend": backend, "passed": test.passed,
            "max_abs_z": round(test.max_abs_z, 3), "threshold": round(test.threshold, 3),
            "worst": f"{kind} of {labels[int(index.rstrip(']'))]}", "divergences": int(result.divergent.sum()),
            "seconds": round(seconds, 1), "settings": SETTINGS}


def main(argv=None):
    slowest_last = sorted(POSTERIORS, key=lambda name: name.startswith("diamonds"))
    run(__doc__.splitlines()[0], RECORD, slowest_last, measure, argv)


if __name__ == "__main__":
    main()
