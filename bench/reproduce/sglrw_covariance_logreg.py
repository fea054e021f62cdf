r"""Figure 7, bottom, of the SGLRW paper (appendix A.1): the mean squared error of the posterior covariance against
the base step size, by minibatch size, for SGLD, SGLRW and Clipped-SGLD on Bayesian logistic regression on the
breast-cancer data (Table 2's problem, appendix A.5: 569 points, d = 31, prior N(0, I)), and the paper's claims
about Figure 7 (``sglrw_covariance.figure_claims``, the same as for its top panel) at every B and δ run.

There is no closed-form posterior: the covariance the particles are scored against is that of the stored NUTS
reference draws (``sgbench.reference.store.load_draws(targets.get("logreg", dataset="breast_cancer"))``, the
reference of ``sglrw-table2``). Particles start at the posterior mode and run Table 2's 1000 iterations of
:math:`\delta_t = \delta(1+t)^{-0.55}` at Table 2's base steps δ in {0.01, 0.1, 1}; the score is the covariance MSE
:math:`\frac1{d^2}\sum_{ij}(S_{ij} - \Sigma^{ref}_{ij})^2` of their final positions
(``sglrw_covariance.covariance_mse``: bootstrap sd over particles; infinite when a particle diverged). The floor is
the expected MSE of as many exact draws of the reference covariance (``sglrw_covariance.expected_covariance_mse``);
the reference's own sampling error adds the same amount to every sampler's MSE.

Kept on interruption: each finished (B, sampler), in ``sglrw_covariance_logreg_runs.jsonl`` beside the results
store; progress over the chain-steps (``sgbench.bench.reproduce._record.Units``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from sgbench.bench.reproduce._registry import SEED_OPTION, Reproduction, register, seed_of
from sgbench.bench.reproduce.outcome import Outcome, timed
from sgbench.bench.reproduce.sglrw_covariance import (
    covariance_mse,
    expected_covariance_mse,
    figure,
    figure_claims,
    with_sd,
)
from sgbench.bench.reproduce.sglrw_table1 import LABELS, SAMPLERS, final_positions
from sgbench.bench.reproduce.sglrw_table2 import BATCH_SIZES, NUM_ITERATIONS, STEP_SIZES, _reference_fit

SCALES = {"quick": {"particles": 1000, "batch_sizes": (1, 8, 64)},
          "paper": {"particles": 5000, "batch_sizes": BATCH_SIZES}}
LARGER_STEP_SIZES = (0.1, 1.0)  # the "larger stepsizes" of appendix A.1: the grid's largest two


def sampler_rows(reference: np.ndarray, b: int, name: str, num_particles: int, step_sizes, num_iterations: int,
                 seed: int, progress=None) -> list[dict]:
    """One row per step size of ``name``'s particles at minibatch size ``b``: see :func:`compute`. The bootstrap
    draws come from ``(seed, B, the sampler's place in SAMPLERS)``, so a row does not depend on which rows were
    computed before it."""
    from sgbench import targets

    target = targets.get("logreg", dataset="breast_cancer", noise="minibatch", noise_batch_size=b)
    rng = np.random.default_rng([seed, b, SAMPLERS.index(name)])
    floor = expected_covariance_mse(reference, reference, num_particles)
    finals = final_positions(name, target, step_sizes, num_particles, num_iterations, seed, "float64", progress)
    rows = []
    for h, final in zip(step_sizes, finals):
        mse, sd, log_sd, diverged = covariance_mse(final, reference, rng)
        rows.append({"B": b, "step size": h, "sampler": name, "mse": mse, "mse_sd": sd, "log_sd": log_sd,
                     "floor": floor, "diverged": diverged})
    return rows


def compute(num_particles: int, batch_sizes, step_sizes=STEP_SIZES, num_iterations: int = NUM_ITERATIONS,
            seed: int = 0, samplers=SAMPLERS, progress: bool = False, record=None) -> pd.DataFrame:
    """The figure's grid.

    Args:
        num_particles: parallel particles, each kept at its final position.
        batch_sizes: the minibatch sizes B.
        step_sizes: the base step sizes δ (default: Table 2's).
        num_iterations: steps per particle (default: Table 2's 1000).
        seed: the runs' seed.
        samplers: the samplers (default: SGLD, SGLRW, Clipped-SGLD).
        progress: progress over the chain-steps on stderr (``sgbench.bench.reproduce._record.Units``).
        record: a ``sgbench.bench.reproduce._record`` file keeping each finished (B, sampler), reused by a rerun of
            the same settings (None: nothing kept).

    Returns:
        one row per (B, δ, sampler): ``mse`` against the reference covariance (inf when a particle diverged), the
        bootstrap sd of it, ``mse_sd``, and of its logarithm, ``log_sd``, the ``floor`` of as many exact draws and
        the ``diverged`` particles.
    """
    from sgbench.bench.reproduce._record import Units

    settings = {"particles": num_particles, "step_sizes": list(step_sizes), "iterations": num_iterations,
                "seed": seed}
    rows = []
    unit_steps = len(step_sizes) * num_particles * num_iterations
    with Units("sglrw-covariance-logreg", record, len(batch_sizes) * len(samplers) * unit_steps, "chain-step",
               progress) as units:
        reference = _reference_fit().covariance
        for b in batch_sizes:
            for name in samplers:
                rows += units.cached(settings, (b, name), sampler_rows, reference, b, name, num_particles,
                                     step_sizes, num_iterations, seed, units.update, size=unit_steps)
    return pd.DataFrame(rows)


def run(scale: str, options: dict, db, out, progress: bool) -> Outcome:
    """``sgbench reproduce sglrw-covariance-logreg``: :func:`compute` at ``scale`` (``--seed`` sets the runs' seed),
    its units kept in ``sglrw_covariance_logreg_runs.jsonl`` beside the results store ``db``; the claims of
    ``sglrw_covariance.figure_claims`` (a contradicted one: exit 1)."""
    from sgbench.bench.reproduce._record import record_path

    particles, batch_sizes = SCALES[scale]["particles"], SCALES[scale]["batch_sizes"]
    seed = seed_of(options)
    record = record_path(db, "sglrw-covariance-logreg")
    frame, seconds = timed(compute, particles, batch_sizes, num_iterations=NUM_ITERATIONS, seed=seed,
                           progress=progress, record=record)
    shown = pd.DataFrame({
        "B": frame["B"], "δ": [f"{h:g}" for h in frame["step size"]], "sampler": [LABELS[s] for s in frame["sampler"]],
        "covariance MSE (ours)": [with_sd(v, sd) for v, sd in zip(frame["mse"], frame["mse_sd"])],
        "exact draws (floor)": [f"{v:.3g}" for v in frame["floor"]], "diverged": frame["diverged"]})
    return Outcome(
        name="sglrw-covariance-logreg",
        title="SGLRW paper, Figure 7 (bottom): covariance MSE by step size, logistic regression on the breast-cancer "
              "data",
        table=shown, claims=figure_claims(frame, LARGER_STEP_SIZES),
        intro=(f"Bayesian logistic regression on the breast-cancer data, d = 31; {particles} particles x "
               f"{NUM_ITERATIONS} iterations of δ(1+t)^-0.55 from the posterior mode, B in {list(batch_sizes)}, "
               f"seed {seed}; {seconds:.0f} s; finished units are kept in {record}. The covariance MSE is taken "
               "against the covariance of the stored NUTS reference draws (16,000); the floor is that of as many "
               "exact draws."),
        sections=(("Covariance MSE against the base step size", figure(frame)),
                  ("Differences from the paper",
                   "The paper's Figure 7 shows curves without numbers; its step sizes, batch sizes and particle "
                   f"number are not stated for this panel: ours are Table 2's (δ in {list(STEP_SIZES)}, "
                   f"{NUM_ITERATIONS} iterations, 5000 particles at --scale paper). The reference is our NumPyro NUTS "
                   "reference, not the paper's; the features are standardised; minibatches are drawn with "
                   "replacement.")),
    )


REPRODUCTION = register(Reproduction(
    name="sglrw-covariance-logreg",
    summary="SGLRW Figure 7 (bottom): covariance MSE of SGLD, SGLRW and Clipped-SGLD by step size and minibatch size, "
            "logistic regression on the breast-cancer data against the stored NUTS reference",
    source="SGLRW paper, appendix A.1 (Figure 7) and section 4.3.1",
    scales={scale: f"{SCALES[scale]['particles']} particles x {NUM_ITERATIONS} iterations, B in "
                   f"{{{', '.join(map(str, SCALES[scale]['batch_sizes']))}}}, {len(STEP_SIZES)} step sizes"
            for scale in SCALES},
    run=run,
    options=(SEED_OPTION,),
))
