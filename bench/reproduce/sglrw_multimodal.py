r"""Figures 2 and 8 of the SGLRW paper (section 4.2 and appendix A.1): the one-dimensional multimodal target
(``targets.get("multimodal1d")``: three unit-scale components at -4, 0, 4 with weights 0.2, 0.5, 0.3, our choice
where the paper gives none) whose exact gradient is corrupted by symmetric stable noise of increasing scale:
Gaussian (alpha = 2, Figure 8 left) and heavy-tailed (alpha = 1.5, no second moment: Figure 2 and Figure 8 right),
sampled by SGLD, SGLRW and Clipped-SGLD at one constant step size, with the paper's claims about them
(:func:`claims`).

The paper shows histograms. The score of a run is the Kolmogorov-Smirnov distance of its histogram: the largest
gap between the cumulative share of the kept samples of all chains below each bin edge and the mixture's exact CDF
there, :math:`\max_k |F_n(e_k) - F(e_k)|`, together with the share of non-finite samples (a diverged chain's,
counted at infinity): 0 for a perfect sampler, 1 for one whose samples left the target. The bins
(:func:`bin_edges`) are two cells of SGLRW's lattice wide, their edges midway between lattice points: SGLRW's
samples lie on the lattice :math:`x_0 + k\sqrt{2h}` from the start :math:`x_0`, whose empirical CDF jumps by a
whole cell's mass at each point, so a CDF compared between lattice points would count that staircase (up to
0.056 at the central peak) as disagreement with the target; compared at the cells' edges it counts what the
histogram shows. Its sampling sd is bootstrapped over chains (independent; the draws within one are not).

Kept on interruption: each finished (alpha, noise scale, sampler): its histogram counts, distance, bootstrap sd,
diverged chains and spread, in ``sglrw_multimodal_runs.jsonl`` beside the results store, from which the docs'
table is rendered; progress over the runs (``sgbench.bench.reproduce._record.Units``).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import scipy.optimize
import scipy.stats

from sgbench.base.figures import png_bytes, subplots
from sgbench.bench.reproduce._registry import SEED_OPTION, Option, Reproduction, register, seed_of
from sgbench.bench.reproduce.claims import CONTRADICTED, HELD, Claim, Comparison, ordering
from sgbench.bench.reproduce.outcome import Outcome, timed
from sgbench.bench.reproduce.sglrw_table1 import LABELS, SAMPLERS

ALPHAS = (2.0, 1.5)  # Gaussian noise (Figure 8 left), alpha-stable (Figure 2, Figure 8 right)
NOISE_LAWS = {2.0: "Gaussian (α = 2)", 1.5: "α-stable (α = 1.5)"}
NOISE_SCALES = (0.1, 1.0, 10.0, 100.0)
LARGE_SCALES = (10.0, 100.0)  # "as the noise scale increases": the paper gives no scales; our two largest
STEP_SIZE = 0.01
THIN = 10
HALF_WIDTH = 10.0  # the bins cover the start +- this; samples beyond fall in the two outer counts
NUM_BOOTSTRAP = 100
SCALES = {"quick": {"chains": 100, "steps": 20_000}, "paper": {"chains": 1000, "steps": 100_000}}


def _mixture_cdf(x: np.ndarray, mixture) -> np.ndarray:
    """The CDF of ``mixture`` (``sgbench.targets._mixture``: weights, means, scales) at finite ``x``."""
    return np.sum(mixture.weights * scipy.stats.norm.cdf((x[..., None] - mixture.means) / mixture.scales), axis=-1)


def bin_edges(start: float, step_size: float = STEP_SIZE, half_width: float = HALF_WIDTH) -> np.ndarray:
    r"""The histogram's bin edges: :math:`x_0 + (2j + \tfrac12)\sqrt{2h}` for every integer j with the edge within
    ``half_width`` of ``start`` :math:`x_0`: midway between points of SGLRW's lattice, two lattice cells apart.

    Args:
        start: the chains' start :math:`x_0` (the lattice's origin).
        step_size: the constant step h (the lattice spacing is :math:`\sqrt{2h}`).
        half_width: how far the edges reach on either side of the start.

    Returns:
        the edges, increasing.
    """
    cell = math.sqrt(2 * step_size)
    j = np.arange(math.ceil((-half_width / cell - 0.5) / 2), math.floor((half_width / cell - 0.5) / 2) + 1)
    return start + (2 * j + 0.5) * cell


def chain_counts(samples: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """Per chain, the samples in each bin of ``edges``: column 0 below the first edge, column k between edges k - 1
    and k, column ``len(edges)`` above the last, and a last column of non-finite samples.

    Args:
        samples: (chains, draws) values.
        edges: increasing bin edges.

    Returns:
        integer counts, shape (chains, len(edges) + 2).
    """
    x = np.asarray(samples, dtype=np.float64)
    finite = np.isfinite(x)
    index = np.where(finite, np.searchsorted(edges, np.where(finite, x, 0.0), side="right"), len(edges) + 1)
    width = len(edges) + 2
    flat = index + width * np.arange(x.shape[0])[:, None]
    return np.bincount(flat.ravel(), minlength=width * x.shape[0]).reshape(x.shape[0], width)


def binned_ks(counts: np.ndarray, edges: np.ndarray, mixture) -> float:
    """The Kolmogorov-Smirnov distance of a histogram: the largest of :math:`|F_n(e_k) - F(e_k)|` over the edges
    and the share of non-finite samples (:math:`|F_n - F|` at infinity, where they are counted).

    Args:
        counts: the histogram of :func:`chain_counts` summed over chains (len(edges) + 2 counts).
        edges: its bin edges.
        mixture: the target's mixture (its exact CDF).

    Returns:
        the distance, in [0, 1] (1 when no sample is finite).
    """
    counts = np.asarray(counts, dtype=np.float64)
    total = counts.sum()
    below = np.cumsum(counts[:-2]) / total  # the share below each edge (the overflow and non-finite above all)
    return float(max(np.max(np.abs(below - _mixture_cdf(edges, mixture))), counts[-1] / total))


def ks_bootstrap_sd(per_chain: np.ndarray, edges: np.ndarray, mixture, rng: np.random.Generator,
                    num_bootstrap: int = NUM_BOOTSTRAP) -> float:
    """The bootstrap standard deviation of :func:`binned_ks` over chains (the chains are independent, the draws
    within one are not).

    Args:
        per_chain: the histograms of :func:`chain_counts`, one row per chain.
        edges: their bin edges.
        mixture: the target's mixture.
        rng: the resampling's stream.
        num_bootstrap: resamples of the chains.

    Returns:
        the standard deviation of the distance over the resamples.
    """
    chains = len(per_chain)
    values = [binned_ks(per_chain[rng.integers(0, chains, chains)].sum(axis=0), edges, mixture)
              for _ in range(num_bootstrap)]
    return float(np.std(values, ddof=1))


def spread(mixture) -> float:
    """The distance between the 1st and 99th percentiles of ``mixture`` (what a run's ``spread`` estimates).

    Args:
        mixture: the target's mixture.

    Returns:
        the spread.
    """
    low, high = mixture.means.min() - 10 * mixture.scales.max(), mixture.means.max() + 10 * mixture.scales.max()
    first, last = (scipy.optimize.brentq(lambda x, q=q: _mixture_cdf(np.array(x), mixture) - q, low, high)
                   for q in (0.01, 0.99))
    return float(last - first)


def _one_run(target, sampler: str, num_chains: int, num_steps: int, seed: int, stream: list) -> dict:
    """One run of :func:`compute`: its histogram (:func:`chain_counts` summed over chains), :func:`binned_ks` with
    its bootstrap sd over chains (resampled from the NumPy stream ``stream``), the diverged chains and the samples'
    1st-99th percentile spread."""
    from sgbench.bench.running import run as running

    run = running.run(sampler, target, params={"step_size": STEP_SIZE}, num_chains=num_chains,
                      num_steps=num_steps, thin=THIN, keep_samples=True, seed=seed, dtype="float64")
    samples = np.asarray(run.samples)[..., 0]
    edges = bin_edges(float(target.initial_position()[0]))
    per_chain = chain_counts(samples, edges)
    finite = samples[np.isfinite(samples)]
    return {"counts": per_chain.sum(axis=0), "ks": binned_ks(per_chain.sum(axis=0), edges, target.mixture),
            "ks_sd": ks_bootstrap_sd(per_chain, edges, target.mixture, np.random.default_rng(stream)),
            "diverged": int(run.metrics["num_diverged_chains"]),
            "spread": float(np.subtract(*np.percentile(finite, [99, 1]))) if finite.size else math.nan}


def unit_settings(num_chains: int, num_steps: int, seed: int) -> dict:
    """What a run of :func:`compute` depends on beyond its key (alpha, noise scale, sampler): its record's
    settings.

    Args:
        num_chains: chains per run.
        num_steps: steps per chain.
        seed: the runs' seed.

    Returns:
        the settings, JSON-ready.
    """
    from sgbench import targets

    edges = bin_edges(float(targets.get("multimodal1d").initial_position()[0]))
    return {"chains": num_chains, "steps": num_steps, "seed": seed, "step_size": STEP_SIZE, "thin": THIN,
            "bins": [float(edges[0]), float(edges[-1]), len(edges)], "bootstrap": NUM_BOOTSTRAP}


def compute(num_chains: int, num_steps: int, seed: int = 0, alphas=ALPHAS, noise_scales=NOISE_SCALES,
            samplers=SAMPLERS, progress: bool = False, record=None) -> pd.DataFrame:
    """Every (alpha, noise scale, sampler): ``num_chains`` chains of ``num_steps`` at ``STEP_SIZE`` from the
    target's mean, samples kept every ``THIN`` steps.

    Args:
        num_chains: chains per run.
        num_steps: steps per chain.
        seed: the runs' seed; each run's bootstrap has a stream of its own (seed, alpha, scale, sampler), so its
            result does not depend on which runs came before.
        alphas: the noise's stability indices (2: Gaussian).
        noise_scales: the noise's scales.
        samplers: the samplers.
        progress: progress over the runs on stderr (``sgbench.bench.reproduce._record.Units``).
        record: a ``sgbench.bench.reproduce._record`` file keeping each finished run, reused by a rerun of the same
            settings (None: nothing kept).

    Returns:
        one row per run: ``alpha``, ``noise scale``, ``sampler`` and :func:`_one_run`'s ``counts`` (a list), ``ks``,
        ``ks_sd``, ``diverged`` and ``spread``.
    """
    from sgbench import targets
    from sgbench.bench.reproduce._record import Units

    settings = unit_settings(num_chains, num_steps, seed)
    rows = []
    with Units("sglrw-multimodal", record, len(alphas) * len(noise_scales) * len(samplers), "run", progress) as units:
        for alpha in alphas:
            for scale in noise_scales:
                target = targets.get("multimodal1d", noise="alpha_stable", noise_alpha=alpha, noise_scale=scale)
                for sampler in samplers:
                    row = units.cached(settings, (alpha, scale, sampler), _one_run, target, sampler, num_chains,
                                       num_steps, seed, [seed, *f"{alpha:g}/{scale:g}/{sampler}".encode()])
                    rows.append({"alpha": alpha, "noise scale": scale, "sampler": sampler, **row})
    return pd.DataFrame(rows)


def _comparisons(runs: pd.DataFrame, pairs) -> list[Comparison]:
    """The :class:`Comparison` of each ``(setting, (alpha, scale, lower sampler), (alpha, scale, higher sampler))``
    whose runs are both in ``runs``: their distances and bootstrap sds."""
    values = {(row["alpha"], row["noise scale"], row["sampler"]): (row["ks"], row["ks_sd"])
              for _, row in runs.iterrows()}
    return [Comparison(setting, *values[lower], *values[higher]) for setting, lower, higher in pairs
            if lower in values and higher in values]


def claims(runs: pd.DataFrame) -> tuple[Claim, ...]:
    """The paper's claims about Figures 2 and 8, each tested at every noise scale it is stated for among those
    run (the paper gives no scales: "as the noise scale increases" and "large fluctuations" are tested at
    ``LARGE_SCALES``; "across noise scales" at every scale): under alpha-stable noise, SGLRW's distance below
    SGLD's at the large scales (Figure 2's caption), SGLD's at the large scales above its own at the smallest
    ("SGLD quickly fails"), no SGLRW chain diverged at any scale (section 4.2: stability as the absence of
    catastrophic updates; an observed event), both SGLRW's and Clipped-SGLD's below SGLD's at the large scales
    (appendix A.1), SGLRW's below Clipped-SGLD's at every scale (appendix A.1); and the hypothesis of section 4.2,
    SGLRW's below SGLD's at the large scales, under both noises of Figure 8 (the paper states no claim of its own
    about the Gaussian panel).

    Args:
        runs: the rows of :func:`compute`.

    Returns:
        the claims.
    """
    stable = 1.5
    scales = sorted(set(runs["noise scale"]))
    large = [s for s in scales if s in LARGE_SCALES]
    smallest = scales[0]

    def pairs(lower, higher, alphas=(stable,), at=large):
        return [(f"{NOISE_LAWS[a]}, scale {s:g}", (a, s, lower), (a, s, higher)) for a in alphas for s in at]

    where_large = f"the paper gives no noise scales; ours are {', '.join(f'{s:g}' for s in scales)}, and the claim " \
                  f"is tested at the large ones, {', '.join(f'{s:g}' for s in large)}"
    sglrw = runs[(runs["sampler"] == "sglrw") & (runs["alpha"] == stable)]
    diverged = {row["noise scale"]: int(row["diverged"]) for _, row in sglrw.iterrows()}
    rising = [(f"SGLD at scale {smallest:g} vs {s:g}", (stable, smallest, "sgld"), (stable, s, "sgld")) for s in large]
    return (
        ordering("We observe that as the noise scale increases SGLD quickly fails while SGLRW remains stable",
                 "Figure 2 caption, second sentence", _comparisons(runs, pairs("sglrw", "sgld")), "SGLRW", "SGLD",
                 reason=f"SGLRW's distance below SGLD's under α-stable noise; {where_large}"),
        ordering("as the noise scale increases SGLD quickly fails", "Figure 2 caption, second sentence",
                 _comparisons(runs, rising), "the smallest scale", "a large scale",
                 reason=f"SGLD's distance at each large scale above its own at the smallest, {smallest:g}; "
                        f"{where_large}"),
        Claim("in this regime, where stability depends critically on whether large stochastic fluctuations can "
              "induce rare but catastrophic updates, SGLD fails while SGLRW remains stable",
              "section 4.2, the sentence after Figure 2", HELD if not any(diverged.values()) else CONTRADICTED,
              ours="SGLRW chains diverged under α-stable noise: "
                   + ", ".join(f"scale {s:g}: {n}" for s, n in diverged.items()),
              reason="an observed event: held when no SGLRW chain has a non-finite sample at any noise scale "
                     "(SGLD's failure is the previous claim)", error_rate=0.0),
        ordering("both Clipped SGLD and SGLRW prevent the severe instability exhibited by SGLD under heavy-tailed "
                 "gradient noise", "appendix A.1, third paragraph, first sentence",
                 _comparisons(runs, pairs("sglrw", "sgld") + pairs("clipped_sgld", "sgld")),
                 "SGLRW or Clipped SGLD", "SGLD",
                 reason=f"SGLRW's and Clipped-SGLD's distances below SGLD's under α-stable noise; {where_large}"),
        ordering("Across noise scales, SGLRW maintains a closer qualitative agreement with the target distribution "
                 "than Clipped SGLD", "appendix A.1, third paragraph, second sentence",
                 _comparisons(runs, pairs("sglrw", "clipped_sgld", at=scales)), "SGLRW", "Clipped SGLD",
                 reason="SGLRW's distance below Clipped-SGLD's under α-stable noise at every scale"),
        ordering("We hypothesize ... that due to the bounded structure, large fluctuations in stochastic gradients "
                 "have a less severe impact on the update in the case of SGLRW than in the case of SGLD",
                 "section 4.2, the sentences before Figure 2; Figure 8, to which section 4.2 refers for Gaussian "
                 "noise", _comparisons(runs, pairs("sglrw", "sgld", alphas=ALPHAS)), "SGLRW", "SGLD",
                 reason=f"SGLRW's distance below SGLD's under both noises of Figure 8 (the paper states nothing of "
                        f"its own about the Gaussian panel); {where_large}"),
    )


def _wide(runs: pd.DataFrame, text) -> pd.DataFrame:
    """One row per (noise, scale), one column per sampler, each cell ``text(row)`` of its run."""
    rows = {}
    for _, row in runs.iterrows():
        key = (NOISE_LAWS.get(row["alpha"], f"α = {row['alpha']:g}"), row["noise scale"])
        rows.setdefault(key, {"noise": key[0], "noise scale": key[1]})[LABELS[row["sampler"]]] = text(row)
    return pd.DataFrame(list(rows.values()))


def tables(runs: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The tables shown: the histograms' distances to the target (± bootstrap sd; with the diverged chains where
    any diverged) and the samples' 1st-99th percentile spread.

    Args:
        runs: the rows of :func:`compute`.

    Returns:
        ``(distances, spreads)``, one row per (noise, scale), a column per sampler.
    """
    def distance(row):
        return f"{row['ks']:.3f} ± {row['ks_sd']:.3f}" + (f" ({row['diverged']} diverged)" if row["diverged"] else "")

    return _wide(runs, distance), _wide(runs, lambda row: row["spread"])


def figure(runs: pd.DataFrame, mixture, start: float) -> bytes:
    """PNG: per noise (rows) and scale (columns), each sampler's histogram (its recorded counts) over the density."""
    edges = bin_edges(start)
    centres, width = (edges[:-1] + edges[1:]) / 2, edges[1] - edges[0]
    keys = sorted({(a, s) for a, s in zip(runs["alpha"], runs["noise scale"])}, key=lambda k: (-k[0], k[1]))
    alphas = list(dict.fromkeys(a for a, _ in keys))
    scales = sorted({s for _, s in keys})
    fig, axes = subplots(len(alphas), len(scales), figsize=(3 * len(scales), 2.4 * len(alphas)), squeeze=False,
                         sharex=True)
    x = np.linspace(edges[0], edges[-1], 400)
    density = np.sum(mixture.weights * scipy.stats.norm.pdf((x[:, None] - mixture.means) / mixture.scales)
                     / mixture.scales, axis=1)
    for _, row in runs.iterrows():
        ax = axes[alphas.index(row["alpha"])][scales.index(row["noise scale"])]
        counts = np.asarray(row["counts"], dtype=np.float64)
        ax.step(centres, counts[1:-2] / (counts.sum() * width), where="mid", lw=0.9,
                color=f"C{SAMPLERS.index(row['sampler'])}", label=LABELS[row["sampler"]])
        ax.set_title(f"{NOISE_LAWS.get(row['alpha'], row['alpha'])}, scale {row['noise scale']:g}", fontsize=8)
    for row_axes in axes:
        for ax in row_axes:
            ax.plot(x, density, "k", lw=0.8)
            ax.set_yticks([])
    axes[0][-1].legend(fontsize=7)
    fig.tight_layout()
    return png_bytes(fig, dpi=80)


def run(scale: str, options: dict, db, out, progress: bool) -> Outcome:
    """``sgbench reproduce sglrw-multimodal``: :func:`compute` at ``scale`` (``--chains``, ``--steps`` and
    ``--seed`` override it), each finished run kept in ``sglrw_multimodal_runs.jsonl`` beside the results store
    ``db``.

    Args:
        scale: ``quick`` or ``paper``.
        options: ``chains``, ``steps``, ``seed`` where given.
        db: the results store, beside which the record lies.
        out: the page's folder (not read: the command writes the page).
        progress: progress over the runs on stderr.

    Returns:
        the :class:`~sgbench.bench.reproduce.outcome.Outcome`.
    """
    from sgbench import targets
    from sgbench.base.arguments import integer_at_least
    from sgbench.bench.reproduce._record import record_path
    from sgbench.bench.running.config import MAX_CHAINS, MAX_TOTAL_STEPS

    chains = integer_at_least("--chains", options.get("chains", SCALES[scale]["chains"]), 1, MAX_CHAINS)
    steps = integer_at_least("--steps", options.get("steps", SCALES[scale]["steps"]), THIN, MAX_TOTAL_STEPS)
    seed = seed_of(options)
    runs, seconds = timed(compute, chains, steps, seed, progress=progress,
                          record=record_path(db, "sglrw-multimodal"))
    distances, spreads = tables(runs)
    target = targets.get("multimodal1d")
    return Outcome(
        name="sglrw-multimodal",
        title="SGLRW paper, Figures 2 and 8: a multimodal target under Gaussian and α-stable gradient noise",
        table=distances, claims=claims(runs),
        intro=(f"{chains} chains x {steps:,} steps at step size {STEP_SIZE:g} (constant), samples kept every "
               f"{THIN}, from the target's mean, seed {seed}; symmetric stable noise (α = 2: Gaussian of variance "
               f"2 scale²; α = 1.5) added to the exact gradient; the Kolmogorov-Smirnov distance of the histogram "
               f"of all kept samples (bins two SGLRW lattice cells wide) to the exact CDF, ± bootstrap sd over "
               f"chains; {seconds:.0f} s. The paper gives no numbers (its figures show histograms)."),
        sections=((f"Spread of the kept samples, 1st to 99th percentile (the target's: {spread(target.mixture):.1f})",
                   spreads),
                  ("Histograms of the kept samples over the target's density",
                   figure(runs, target.mixture, float(target.initial_position()[0]))),
                  ("Differences from the paper",
                   "The paper gives neither the mixture, nor the step size, nor the noise scales: ours are three "
                   "components at -4, 0, 4 (weights 0.2, 0.5, 0.3, unit scales), a constant step 0.01 and scales "
                   "0.1 to 100.")))


REPRODUCTION = register(Reproduction(
    name="sglrw-multimodal",
    summary="SGLRW Figures 2 and 8: SGLD, SGLRW and Clipped-SGLD on a 1-d multimodal target under Gaussian and "
            "alpha-stable gradient noise of increasing scale",
    source="SGLRW paper, section 4.2 and appendix A.1",
    scales={"quick": "100 chains x 20,000 steps per (noise, scale, sampler)",
            "paper": "1000 chains x 10^5 steps per (noise, scale, sampler)"},
    run=run,
    options=(Option("--chains", "chains per sampler (default: the scale's)"),
             Option("--steps", "steps per chain (default: the scale's)"),
             SEED_OPTION),
))
