r"""Table 2 of the SGLRW paper (appendix A.5): Bayesian logistic regression
on the breast-cancer data (569 points, 30 features and an intercept, d = 31, prior N(0, I)); KL(reference fit ||
particles' fit) between the Gaussian fit of the stored NUTS reference draws (``reference/data``) and the Gaussian
fit of the particles' final positions, for SGLD, SGLRW and Clipped-SGLD at every (B, δ) of the table: B in
1..64, δ in 10^0, 10^-1, 10^-2 with the schedule :math:`\delta(1+t)^{-0.55}` of Table 1, 1000 steps per particle.

The paper runs 5000 particles and averages 5 seeds; ``--scale paper`` does the same, ``quick`` 1000 particles and
2 seeds. Each cell gives the mean over seeds and its standard error (the standard deviation over seeds over the
square root of their number; with one seed, the bootstrap standard error of the fit). A KL above ``INF_KL`` or a
fit of fewer than d + 1 finite particles is the paper's "inf". The claims are those of appendix A.5.1, each at every
(B, δ) the paper states it for (:func:`claims`).

Kept on interruption: each finished (seed, B, sampler), in ``sglrw_table2_runs.jsonl`` beside the results store;
progress over the chain-steps (``sgbench.bench.reproduce._record.Units``).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from sgbench.base.figures import png_bytes, subplots
from sgbench.bench.reproduce._registry import Option, Reproduction, register
from sgbench.bench.reproduce.claims import (
    CONTRADICTED,
    HELD,
    NOT_RUN,
    Claim,
    Comparison,
    not_testable,
    ordering,
    somewhere,
)
from sgbench.bench.reproduce.outcome import Outcome, timed, verdict
from sgbench.bench.reproduce.sglrw_table1 import LABELS, PARTICLES_OPTION, SAMPLERS, final_positions, fit_kl

BATCH_SIZES = (1, 2, 4, 8, 16, 32, 64)
STEP_SIZES = (1.0, 0.1, 0.01)
NUM_ITERATIONS = 1000
SCALES = {"quick": {"particles": 1000, "seeds": 2}, "paper": {"particles": 5000, "seeds": 5}}
INF_KL = 1e6  # a fit this far from the reference is the paper's "inf" (a particle cloud that left the posterior)

# Table 2: (B, delta) -> KL of SGLD, SGLRW, Clipped SGLD (inf: SGLD failed).
PAPER_TABLE2 = {(b, h): dict(zip(SAMPLERS, kls)) for b, h, *kls in [
    (1, 1.0, math.inf, 8.3504, 9.3560), (1, 0.1, 16.6812, 6.0144, 6.4732), (1, 0.01, 10.3472, 3.9594, 4.2549),
    (2, 1.0, math.inf, 7.6706, 9.1187), (2, 0.1, 8.9809, 5.0197, 5.5856), (2, 0.01, 5.4982, 2.6152, 2.8710),
    (4, 1.0, 27.3098, 6.9768, 8.8915), (4, 0.1, 3.7046, 3.6632, 4.2974), (4, 0.01, 3.0155, 1.4698, 1.6333),
    (8, 1.0, 19.0951, 6.0397, 8.4212), (8, 0.1, 1.3149, 1.9429, 2.4981), (8, 0.01, 1.9578, 1.0051, 1.0553),
    (16, 1.0, 12.0667, 4.5631, 7.0883), (16, 0.1, 0.4993, 0.9423, 1.2400), (16, 0.01, 1.5158, 0.8059, 0.8027),
    (32, 1.0, 6.7814, 2.8940, 4.9928), (32, 0.1, 0.2506, 0.4538, 0.5611), (32, 0.01, 1.3235, 0.6845, 0.6629),
    (64, 1.0, 3.4559, 1.7535, 3.0879), (64, 0.1, 0.1769, 0.2153, 0.2417), (64, 0.01, 1.2267, 0.6490, 0.6169)]}


def _reference_fit():
    """The Gaussian fit of the stored NUTS draws of the breast-cancer posterior (an error naming the build command
    when none is stored)."""
    from sgbench import targets
    from sgbench.reference import store
    from sgbench.reference.metrics import GaussianFit

    target = targets.get("logreg", dataset="breast_cancer")
    return GaussianFit.of(store.load_draws(target), "reference")


def compute(num_particles: int, seeds, batch_sizes=BATCH_SIZES, step_sizes=STEP_SIZES, samplers=SAMPLERS,
            num_iterations: int = NUM_ITERATIONS, progress: bool = True, record=None) -> pd.DataFrame:
    """The KL of every (B, δ, sampler) and seed.

    Args:
        num_particles: parallel particles (chains), each kept at its final position.
        seeds: the seeds, one independent run of the table each.
        batch_sizes: the minibatch sizes B (default: the paper's).
        step_sizes: the base step sizes δ (default: the paper's).
        samplers: the samplers (default: SGLD, SGLRW, Clipped-SGLD).
        num_iterations: steps per particle (the paper: 1000).
        progress: progress over the chain-steps on stderr (``sgbench.bench.reproduce._record.Units``).
        record: a ``sgbench.bench.reproduce._record`` file keeping each finished (seed, B, sampler), reused by a rerun
            of the same settings (None: nothing kept).

    Returns:
        one row per (batch_size, step_size, sampler, seed): ``kl`` (inf past ``INF_KL`` or with too few finite
        particles), its bootstrap ``se`` and the ``diverged`` particles.
    """
    from sgbench.bench.reproduce._record import Units

    settings = {"particles": num_particles, "step_sizes": list(step_sizes), "iterations": num_iterations}
    rows = []
    unit_steps = len(step_sizes) * num_particles * num_iterations
    total = len(seeds) * len(batch_sizes) * len(samplers) * unit_steps
    with Units("sglrw-table2", record, total, "chain-step", progress) as units:
        reference = _reference_fit()
        for seed in seeds:
            for b in batch_sizes:
                for sampler in samplers:
                    rows += units.cached(settings, (seed, b, sampler), _unit_rows, reference, seed, b, sampler,
                                         num_particles, step_sizes, num_iterations, units.update, size=unit_steps)
    return pd.DataFrame(rows)


def _unit_rows(reference, seed: int, b: int, sampler: str, num_particles: int, step_sizes, num_iterations: int,
               progress) -> list[dict]:
    """:func:`compute`'s rows of one (seed, B, sampler); its bootstrap draws from ``(seed, B, the sampler's place
    in SAMPLERS)``, so they do not depend on which rows were computed before."""
    from sgbench import targets

    rng = np.random.default_rng([seed, b, SAMPLERS.index(sampler)])
    target = targets.get("logreg", dataset="breast_cancer", noise="minibatch", noise_batch_size=b)
    finals = final_positions(sampler, target, step_sizes, num_particles, num_iterations, seed, "float64", progress)
    rows = []
    for h, final in zip(step_sizes, finals):
        try:
            kl, se, diverged = fit_kl(reference, final, rng)
        except ValueError:  # a singular fit: the particles collapsed onto a subspace
            kl, se, diverged = math.inf, math.nan, 0
        if not math.isfinite(kl) or kl > INF_KL:
            kl, se = math.inf, math.nan
        rows.append({"batch_size": b, "step_size": h, "sampler": sampler, "seed": seed, "kl": kl, "se": se,
                     "diverged": diverged})
    return rows


def summarise(runs: pd.DataFrame) -> pd.DataFrame:
    r"""Per (B, δ, sampler): the mean KL over seeds (inf if any seed's is) and its standard error
    :math:`\sqrt{\sum_s se_s^2} / n`, from each seed's bootstrap standard error :math:`se_s` (the particles are
    independent, so the bootstrap over them is the sampling error of a seed's KL, with the many degrees of freedom
    of 1000 particles; the spread of a few seeds would have only ``n - 1``: :func:`seed_agreement` checks the two
    agree), beside the paper's value, with a verdict (the paper gives no interval)."""
    rows = []
    for (b, h, sampler), group in runs.groupby(["batch_size", "step_size", "sampler"], sort=False):
        kls = group["kl"].to_numpy()
        mean = float(np.mean(kls)) if np.all(np.isfinite(kls)) else math.inf
        se = float(np.sqrt(np.sum(group["se"].to_numpy() ** 2)) / len(kls)) if math.isfinite(mean) else math.nan
        paper = PAPER_TABLE2[b, h][sampler]
        if math.isinf(paper):  # the paper's SGLD failed here
            judged = "within (both inf)" if math.isinf(mean) else "differs (the paper's run failed, ours did not)"
        else:
            judged = verdict(mean, se, paper)
        rows.append({"B": b, "δ": h, "sampler": LABELS[sampler], "KL ours": mean, "se": se, "KL paper": paper,
                     "diverged particles": int(group["diverged"].sum()), "verdict": judged})
    return pd.DataFrame(rows)


def seed_agreement(runs: pd.DataFrame) -> pd.DataFrame:
    """Whether the bootstrap standard errors account for the differences between seeds: over the cells with two
    finite seeds or more, each seed's difference from the cell's mean over the others divided by their combined
    bootstrap standard error; these are standard normal when the bootstrap is right (root mean square near 1).

    Returns:
        one row: the number of such differences, their root mean square and largest absolute value.
    """
    scores = []
    for _, group in runs.groupby(["batch_size", "step_size", "sampler"]):
        kl, se = group["kl"].to_numpy(), group["se"].to_numpy()
        if len(kl) < 2 or not np.all(np.isfinite(kl)):
            continue
        for s in range(len(kl)):
            others = np.delete(np.arange(len(kl)), s)
            spread = math.sqrt(se[s] ** 2 + np.sum(se[others] ** 2) / len(others) ** 2)
            scores.append((kl[s] - kl[others].mean()) / spread)
    scores = np.asarray(scores)
    return pd.DataFrame([{"differences": len(scores),
                          "root mean square": float(np.sqrt(np.mean(scores ** 2))) if len(scores) else math.nan,
                          "largest": float(np.max(np.abs(scores))) if len(scores) else math.nan}])


WHERE = "appendix A.5.1"


def _comparisons(summary: pd.DataFrame, lower: str, higher: str, cells) -> list[Comparison]:
    """The :class:`Comparison` of ``lower``'s KL against ``higher``'s at each (B, δ) of ``cells`` that both ran."""
    values = {(row["B"], row["δ"], row["sampler"]): (row["KL ours"], row["se"]) for _, row in summary.iterrows()}
    return [Comparison(f"B={b}, δ={h:g}", *values[b, h, lower], *values[b, h, higher]) for b, h in cells
            if (b, h, lower) in values and (b, h, higher) in values]


def _paper_cells(lower: str, higher: str, cells) -> str:
    """How many of ``cells`` the paper's own Table 2 has ``lower``'s KL below ``higher``'s at, naming the fewer of
    the cells where it is and where it is not."""
    names = {label: sampler for sampler, label in LABELS.items()}
    below = {(b, h): PAPER_TABLE2[b, h][names[lower]] < PAPER_TABLE2[b, h][names[higher]] for b, h in cells}
    count = sum(below.values())
    if count in (0, len(below)):
        return f"the paper's table has {lower} {'below' if count else 'above'} {higher} at every one of these cells"
    named = count <= len(below) - count  # name the cells where it is below, or those where it is not
    listed = "; ".join(f"B={b}, δ={h:g}" for (b, h), is_below in below.items() if is_below == named)
    return (f"the paper's own table has {lower} below {higher} at {count} of {len(below)} cells, "
            + (f"at {listed}" if named else f"not at {listed}"))


def claims(summary: pd.DataFrame) -> tuple[Claim, ...]:
    """The claims of appendix A.5.1 about Table 2, each tested at every (B, δ) the paper states it for: SGLRW below
    SGLD and below Clipped-SGLD everywhere; SGLD's complete failure at the smallest batches (the paper's "inf" at
    B = 1, 2, δ = 1: every seed's KL infinite here too); Clipped-SGLD only slightly above SGLRW at B = 1, 2; and
    below it at some larger B."""
    cells = [(b, h) for b in sorted(summary["B"].unique()) for h in sorted(summary["δ"].unique(), reverse=True)]
    small = [(b, h) for b, h in cells if b <= 2]
    larger = [(b, h) for b, h in cells if b > 2]
    every = f"tested at every one of the {len(cells)} (B, δ) cells run (the paper's Table 2 has 21)"
    consistently = "SGLRW consistently outperforms {} across learning-rate settings"  # one claim per baseline
    failed = [(b, h) for b, h in cells if math.isinf(PAPER_TABLE2[b, h]["sgld"])]
    sgld = {(row["B"], row["δ"]): row["KL ours"] for _, row in summary[summary["sampler"] == "SGLD"].iterrows()}
    finite = [f"B={b}, δ={h:g}: {sgld[b, h]:.3g}" for b, h in failed if (b, h) in sgld and math.isfinite(sgld[b, h])]
    failure_words = "In the small-batch limit, where we observe a complete failure of SGLD"
    failure = Claim(
        failure_words, f"{WHERE}, third sentence", CONTRADICTED if finite else HELD,
        paper="SGLD's KL inf at " + ", ".join(f"B={b}, δ={h:g}" for b, h in failed),
        ours=("SGLD's KL finite at " + "; ".join(finite)) if finite else "inf at every one (every seed)",
        reason="the paper's inf cells: held when every seed's SGLD KL is infinite there (an observed event, so no "
               "sampling tolerance)", error_rate=0.0) if failed else not_testable(
        failure_words, f"{WHERE}, third sentence", NOT_RUN + " (the paper's inf cells are at B = 1, 2 and δ = 1)")
    return (
        ordering(consistently.format("SGLD ..."), f"{WHERE}, first sentence",
                 _comparisons(summary, "SGLRW", "SGLD", cells),
                 "SGLRW", "SGLD", paper=_paper_cells("SGLRW", "SGLD", cells),
                 reason=every),
        ordering(consistently.format("... Clipped-SGLD"), f"{WHERE}, first sentence",
                 _comparisons(summary, "SGLRW", "Clipped SGLD", cells),
                 "SGLRW", "Clipped SGLD", paper=_paper_cells("SGLRW", "Clipped SGLD", cells),
                 reason=every),
        failure,
        ordering("In the small-batch limit ... Clipped-SGLD performs only slightly worse than SGLRW",
                 f"{WHERE}, third sentence", _comparisons(summary, "SGLRW", "Clipped SGLD", small), "SGLRW",
                 "Clipped SGLD", paper=_paper_cells("SGLRW", "Clipped SGLD", small),
                 reason="the ordering at B = 1 and 2; \"only slightly\" is not quantified by the paper, so not tested"),
        somewhere("... and occasionally better as the batch size increases", f"{WHERE}, third sentence",
                  _comparisons(summary, "Clipped SGLD", "SGLRW", larger), "Clipped SGLD", "SGLRW",
                  paper=_paper_cells("Clipped SGLD", "SGLRW", larger),
                  reason="Clipped-SGLD below SGLRW at some cell with B >= 4"),
    )


def figure(summary: pd.DataFrame) -> bytes:
    """PNG: KL against B, one panel per δ, ours (solid, inf drawn at the top) and the paper's (dashed)."""
    steps = sorted(summary["δ"].unique(), reverse=True)
    fig, axes = subplots(1, len(steps), figsize=(4.5 * len(steps), 3.6), squeeze=False, sharey=True)
    for ax, h in zip(axes[0], steps):
        for k, label in enumerate(dict.fromkeys(summary["sampler"])):
            rows = summary[(summary["δ"] == h) & (summary["sampler"] == label)].sort_values("B")
            ax.plot(rows["B"], rows["KL ours"].replace(math.inf, np.nan), "o-", color=f"C{k}", label=f"{label} (ours)")
            ax.plot(rows["B"], rows["KL paper"].replace(math.inf, np.nan), "s--", color=f"C{k}", alpha=0.6,
                    label=f"{label} (paper)")
        ax.set(xscale="log", yscale="log", xlabel="minibatch size B", title=f"δ = {h:g}")
    axes[0][0].set_ylabel("KL(NUTS fit || particles' fit)")
    axes[0][-1].legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.02, 1.0))
    fig.tight_layout()
    return png_bytes(fig, dpi=90, tight=True)


def run(scale: str, options: dict, db, out, progress: bool) -> Outcome:
    """``sgbench reproduce sglrw-table2``: :func:`compute` at ``scale`` (``--particles``, ``--seeds`` override
    it), each finished (seed, B, sampler) kept in ``sglrw_table2_runs.jsonl`` beside the results store ``db``."""
    from sgbench.base.arguments import integer_at_least
    from sgbench.bench.running.config import MAX_CHAINS
    from sgbench.reference.metrics import exact_sampling_kl

    settings = {**SCALES[scale], **{k: v for k, v in options.items() if k in SCALES[scale]}}
    particles = integer_at_least("--particles", settings["particles"], 32, MAX_CHAINS)  # a fit in d = 31
    seeds = range(integer_at_least("--seeds", settings["seeds"], 1, 100))
    from sgbench.bench.reproduce._record import record_path

    runs, seconds = timed(compute, particles, seeds, progress=progress, record=record_path(db, "sglrw-table2"))
    summary = summarise(runs)
    floors = {n: exact_sampling_kl(31, n) for n in (particles, SCALES["paper"]["particles"])}
    shown = summary.assign(**{"KL ours": [f"{m:.3g} ± {s:.2g}" if math.isfinite(s) else f"{m:.3g}"
                                          for m, s in zip(summary["KL ours"], summary["se"])]}).drop(columns="se")
    return Outcome(
        name="sglrw-table2", title="SGLRW paper, Table 2: logistic regression on the breast-cancer data",
        table=shown, claims=claims(summary),
        intro=(f"{particles} particles x {NUM_ITERATIONS} steps, {len(seeds)} seed{'s' if len(seeds) > 1 else ''} "
               f"(paper: 5000 particles, 5 seeds); KL from the Gaussian fit of the stored NUTS reference (16,000 "
               f"draws) to the fit of the particles' final positions; mean ± its bootstrap standard error over "
               f"seeds. Even exact draws leave a floor: the expected KL of the fit of {particles} is "
               f"{floors[particles]:.3f} (of the paper's 5000, {floors[5000]:.3f}). "
               f"{seconds:.0f} s. Verdict: within 2 standard errors of the paper's value (which has none), or "
               f"differs."),
        sections=(("KL against minibatch size", figure(summary)),
                  ("Seed against seed, in bootstrap standard errors", seed_agreement(runs)),
                  ("Differences from the paper",
                   "The reference is our NumPyro NUTS reference (posteriordb contract), not the paper's Pyro run; "
                   "minibatches are drawn with replacement; the particles start at the posterior mode "
                   "(the target's initial position; the paper does not state its initialisation); the features "
                   "are standardised (sgbench.targets.datasets); float64.")))


REPRODUCTION = register(Reproduction(
    name="sglrw-table2",
    summary="SGLRW Table 2: KL of SGLD, SGLRW and Clipped-SGLD by (B, δ), logistic regression on the breast-cancer "
            "data against the stored NUTS reference",
    source="SGLRW paper, appendix A.5",
    scales={"quick": f"{SCALES['quick']['particles']} particles x 1000 steps, {SCALES['quick']['seeds']} seeds",
            "paper": f"{SCALES['paper']['particles']} particles x 1000 steps, {SCALES['paper']['seeds']} seeds "
                     "(the paper's)"},
    run=run,
    options=(PARTICLES_OPTION,
             Option("--seeds", "sglrw-table2: independent runs averaged (default: 2 quick, 5 paper)")),
))
