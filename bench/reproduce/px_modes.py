r"""Section 5.1 of the PX-SGMCMC paper (Figure 1): mode hopping on the 2-d
mixture of 25 Gaussians, standard against expanded parametrisation.

The mixture is ``targets.get("gmm", extra_dims=0, component_variance=0.03)`` (centres on the grid
{-4, -2, 0, 2, 4}^2), wrapped as one 1 x 2 layer by ``sgbench.targets.single_layer`` so that the expansion (3, 0) gives
the paper's :math:`x = W_3 W_2 W_1 v` with 2 x 2 factors and a N(0, 1) prior on them. Each chain is an
independent single chain from the origin, its samples thinned by 10; a mode counts as visited when a finite
sample lies within 3 component standard deviations (0.52) of its centre. The samplers (``MODE_RUNS``): SGLD at
step 1e-3, SGHMC in its practical form at step 0.02 with friction 50, their PX versions, and PX-SGHMC with
equal friction on the expanded factors. The paper runs Metropolis-corrected HMC (10 leapfrog steps of 0.05)
for 10,000 samples and shows the samples (Figure 1); it gives no numbers, so the table has no paper column and
the acceptance checks are its claim: the expansion lets the chains leave the mode where the standard
parametrisation stays ("EP resolves the issue of SP getting trapped in local modes").

Kept on interruption: each finished sampler's run (its modes per chain, diverged chains and first chain's samples),
in ``px_modes_runs.jsonl`` beside the results store; progress over the runs (``sgbench.bench.reproduce._record.Units``).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from sgbench.base.figures import png_bytes, subplots
from sgbench.bench.reproduce._registry import SEED_OPTION, Option, Reproduction, register, seed_of
from sgbench.bench.reproduce.outcome import Check, Outcome, timed

MIXTURE = dict(extra_dims=0, component_variance=0.03)
MODE_RADIUS = 3.0  # component standard deviations
THIN = 10
SCALES = {"quick": {"chains": 8, "steps": 100_000}, "paper": {"chains": 64, "steps": 100_000}}


def _sampler(name: str, expansion=None, **options):
    """The sampler ``name``, expanded by ``expansion`` when given (``sgbench.samplers.px.px``)."""
    from sgbench import samplers
    from sgbench.samplers import px

    base = samplers.get(name)
    return base if expansion is None else px.px(base, expansion, module=__name__, **options)


# (label, sampler name, expansion and its options, params): the same budget, single chains from the origin.
MODE_RUNS = (
    ("SGLD", "sgld", None, {}, dict(step_size=1e-3)),
    ("PX-SGLD (3, 0)", "sgld", (3, 0), {}, dict(step_size=1e-3)),
    ("SGHMC", "sghmc", None, {}, dict(step_size=0.02, form="practical", friction=50.0)),
    ("PX-SGHMC (3, 0)", "sghmc", (3, 0), {"form": "practical"}, dict(step_size=0.02, friction=50.0)),
    ("PX-SGHMC (3, 0), equal friction", "sghmc", (3, 0), {"form": "practical"},
     dict(step_size=0.02, friction=50.0, expanded_friction=50.0)),
)


def modes_visited(samples, centres, radius) -> int:
    """The number of ``centres`` (k, 2) with at least one finite sample (rows of ``samples``, (n, 2)) within
    ``radius`` of them."""
    x = np.asarray(samples).reshape(-1, centres.shape[1])
    x = x[np.all(np.isfinite(x), axis=1)]
    if x.size == 0:
        return 0
    distances = np.linalg.norm(x[:, None, :] - centres[None, :, :], axis=-1)
    return int(np.sum(np.any(distances < radius, axis=0)))


def mixture_centres(target) -> np.ndarray:
    """The (25, 2) centres of the 2-d mixture ``target`` (its grid in each coordinate)."""
    return np.array([(a, b) for a in target.grid for b in target.grid])


def _one_run(wrapped, centres, radius: float, name: str, expansion, options: dict, params: dict, num_chains: int,
             num_steps: int, seed: int) -> tuple:
    """One unit of :func:`mode_counts`: (modes visited per chain, chains that diverged, the first chain's
    samples)."""
    from sgbench.bench.running import run as running

    run = running.run(_sampler(name, expansion, **options), wrapped, params=params, num_chains=num_chains,
                      num_steps=num_steps, thin=THIN, keep_samples=True, seed=seed)
    samples = np.asarray(run.trace.samples)
    return ([modes_visited(samples[c], centres, radius) for c in range(num_chains)],
            int(np.sum(run.trace.first_nonfinite_step >= 0)), samples[0])


def mode_counts(num_chains: int = 8, num_steps: int = 100_000, seed: int = 0, runs=MODE_RUNS, record=None,
                progress: bool = False):
    """Run each of ``runs`` on the wrapped mixture.

    Args:
        num_chains: independent single chains per sampler.
        num_steps: steps per chain (samples thinned by 10).
        seed: the runs' seed.
        runs: ``(label, sampler, expansion, expansion options, params)`` tuples (default ``MODE_RUNS``).
        record: a ``sgbench.bench.reproduce._record`` file keeping each finished run (its counts and first chain),
            reused by a rerun of the same settings (None: nothing kept).
        progress: progress over the runs on stderr (``sgbench.bench.reproduce._record.Units``).

    Returns:
        ``{label: (modes visited per chain, chains that diverged, the first chain's samples)}`` (JAX driver,
        float64; a diverged chain's finite samples still count).
    """
    from sgbench import targets
    from sgbench.bench.reproduce._record import Units

    gmm = targets.get("gmm", **MIXTURE)
    wrapped, centres = targets.single_layer(gmm), mixture_centres(gmm)
    radius = MODE_RADIUS * math.sqrt(MIXTURE["component_variance"])
    settings = {"chains": num_chains, "steps": num_steps, "seed": seed}
    out = {}
    with Units("px-modes", record, len(runs), "run", progress) as units:
        for label, name, expansion, options, params in runs:
            per_chain, diverged, first = units.cached(
                {**settings, "sampler": name, "expansion": expansion, "options": options, "params": params},
                (label,), _one_run, wrapped, centres, radius, name, expansion, options, params, num_chains,
                num_steps, seed)
            out[label] = (per_chain, diverged, np.asarray(first, dtype=np.float64))
    return out


def summary(counts: dict) -> pd.DataFrame:
    """Per sampler: the mean modes visited per chain, the chains that stayed in one mode, the diverged chains."""
    return pd.DataFrame([{"sampler": label, "modes per chain (mean)": float(np.mean(per_chain)),
                          "most modes": int(np.max(per_chain)),
                          "chains in one mode": f"{sum(c <= 1 for c in per_chain)} of {len(per_chain)}",
                          "diverged chains": diverged}
                         for label, (per_chain, diverged, _) in counts.items()])


def checks(counts: dict) -> tuple[Check, ...]:
    """Each expanded sampler visits more modes in total than its standard form: passed when more, failed when
    fewer, not resolved on a tie (a run too short to leave the first mode). At 8 chains of 10^5 steps the
    false-failure rate of PX-SGLD against SGLD is about 4e-6 (``tests/test_px.py``)."""
    out = []
    for base, expanded in (("SGLD", "PX-SGLD (3, 0)"), ("SGHMC", "PX-SGHMC (3, 0), equal friction")):
        if base in counts and expanded in counts:
            ours, theirs = sum(counts[expanded][0]), sum(counts[base][0])
            out.append(Check(f"{expanded} visits more modes than {base}",
                             True if ours > theirs else None if ours == theirs else False,
                             f"{ours} against {theirs} over {len(counts[base][0])} chains"))
    return tuple(out)


def figure(counts: dict) -> bytes:
    """PNG: the first chain's samples of each sampler over the mixture's centres."""
    grid = np.arange(-4.0, 5.0, 2.0)
    fig, axes = subplots(1, len(counts), figsize=(2.6 * len(counts), 3.0), squeeze=False)
    for ax, (label, (per_chain, _, samples)) in zip(axes[0], counts.items()):
        ax.scatter(*np.meshgrid(grid, grid), marker="+", color="0.6", s=30)
        finite = samples[np.all(np.isfinite(samples), axis=1)]
        ax.plot(finite[:, 0], finite[:, 1], ".", ms=1, alpha=0.3)
        ax.set(xlim=(-5.5, 5.5), ylim=(-5.5, 5.5), aspect="equal", title=f"{label}\nchain 0: {per_chain[0]} modes")
        ax.title.set_fontsize(8)
    fig.tight_layout()
    return png_bytes(fig, dpi=90)


def run(scale: str, options: dict, db, out, progress: bool) -> Outcome:
    """``sgbench reproduce px-modes``: :func:`mode_counts` at ``scale`` (``--chains``, ``--steps`` and ``--seed``
    override it), each finished run (its modes per chain and first chain's samples) kept in ``px_modes_runs.jsonl``
    beside the results store ``db``."""
    from sgbench.base.arguments import integer_at_least
    from sgbench.bench.running.config import MAX_CHAINS, MAX_TOTAL_STEPS

    chains = integer_at_least("--chains", options.get("chains", SCALES[scale]["chains"]), 1, MAX_CHAINS)
    steps = integer_at_least("--steps", options.get("steps", SCALES[scale]["steps"]), THIN, MAX_TOTAL_STEPS)
    seed = seed_of(options)
    from sgbench.bench.reproduce._record import record_path

    record = record_path(db, "px-modes")
    counts, seconds = timed(mode_counts, chains, steps, seed, record=record, progress=progress)
    return Outcome(
        name="px-modes", title="PX-SGMCMC paper, section 5.1: mode hopping on the 25-mode mixture",
        table=summary(counts), checks=checks(counts),
        intro=(f"{chains} single chains per sampler from the origin, {steps:,} steps each, samples thinned by "
               f"{THIN}, seed {seed}; a mode is visited when a sample lies within 3 component standard deviations "
               f"of its centre; {seconds:.0f} s. The paper gives no numbers (its Figure 1 shows HMC samples)."),
        sections=(("The first chain of each sampler (grey crosses: the 25 centres)", figure(counts)),
                  ("Differences from the paper",
                   "Stochastic-gradient samplers (SGLD, SGHMC and their PX versions) instead of the paper's "
                   "Metropolis-corrected HMC with 10 leapfrog steps of 0.05; the gradient is exact here.")))


REPRODUCTION = register(Reproduction(
    name="px-modes",
    summary="PX-SGMCMC section 5.1: modes of the 25-Gaussian mixture visited by SGLD, SGHMC and their expanded "
            "(PX) versions",
    source="PX-SGMCMC paper, section 5.1 and Figure 1",
    scales={"quick": "8 chains x 10^5 steps per sampler", "paper": "64 chains x 10^5 steps per sampler"},
    run=run,
    keeps="record",
    options=(Option("--chains", "px-modes: chains per sampler (default: 8 quick, 64 paper)"),
             Option("--steps", "steps per chain (default: the scale's)"),
             SEED_OPTION),
))
