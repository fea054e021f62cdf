r"""Figure 2 of the SGLRW paper (section 4.2 and appendix A.1): the
one-dimensional multimodal target (``targets.get("multimodal1d")``: three unit-scale components at -4, 0, 4
with weights 0.2, 0.5, 0.3, our choice where the paper gives none) whose exact gradient is corrupted by
symmetric alpha-stable noise (alpha = 1.5, no second moment) of increasing scale, sampled by SGLD, SGLRW and
Clipped-SGLD at one constant step size.

The score of a run is the Kolmogorov-Smirnov distance :math:`\sup_x |F_n(x) - F(x)|` between the empirical CDF
of the kept samples of all chains (finite ones; a diverged chain's non-finite samples count as lying at
infinity) and the mixture's exact CDF: 0 for a perfect sampler, 1 for one whose samples left the target; its
sampling sd is bootstrapped over chains. The paper shows histograms; its claims are the checks: at the largest
noise scale SGLRW's and Clipped-SGLD's KS distances are below SGLD's.

Kept on interruption: nothing (the KS distance and the figure need every run's samples, 2 x 10^5 per run at quick
scale, too many to record); progress over the runs (``sgbench.bench.reproduce._record.Units``).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import scipy.stats

from sgbench.base.figures import png_bytes, subplots
from sgbench.bench.reproduce._registry import SEED_OPTION, Option, Reproduction, register, seed_of
from sgbench.bench.reproduce.outcome import Check, Outcome, timed
from sgbench.bench.reproduce.sglrw_table1 import LABELS, SAMPLERS

ALPHA = 1.5
NOISE_SCALES = (0.1, 1.0, 10.0, 100.0)
STEP_SIZE = 0.01
THIN = 10
NUM_BOOTSTRAP = 50
SCALES = {"quick": {"chains": 100, "steps": 20_000}, "paper": {"chains": 1000, "steps": 100_000}}


def _mixture_cdf(x: np.ndarray, mixture) -> np.ndarray:
    """The CDF of ``mixture`` (``sgbench.targets._mixture``: weights, means, scales) at finite ``x``."""
    return np.sum(mixture.weights * scipy.stats.norm.cdf((x[..., None] - mixture.means) / mixture.scales), axis=-1)


def _ks_from_cdf(cdf_values: np.ndarray, total: int) -> float:
    """``sup |F_n - F|`` from the sorted CDF values of the finite samples, ``total`` samples in all (the others at
    +infinity, where F_n stays below 1 by their share)."""
    finite = cdf_values.size
    ranks = np.arange(1, finite + 1)
    below = np.max(np.abs(ranks / total - cdf_values), initial=0.0)
    above = np.max(np.abs((ranks - 1) / total - cdf_values), initial=0.0)
    return float(max(below, above, 1.0 - finite / total))


def ks_distance(samples: np.ndarray, mixture) -> float:
    """``sup |F_n - F|`` of ``samples`` (any shape, 1-d values) against ``mixture``'s CDF; non-finite samples count
    at +infinity."""
    x = np.asarray(samples, dtype=np.float64).ravel()
    finite = x[np.isfinite(x)]
    return _ks_from_cdf(np.sort(_mixture_cdf(finite, mixture)), x.size)


def ks_bootstrap_sd(samples: np.ndarray, mixture, rng: np.random.Generator, num_bootstrap: int = NUM_BOOTSTRAP):
    """The bootstrap standard deviation of :func:`ks_distance` over chains (rows of ``samples``, (chains, draws)):
    the chains are independent, the draws within one are not."""
    x = np.asarray(samples, dtype=np.float64)
    cdf = np.where(np.isfinite(x), _mixture_cdf(np.where(np.isfinite(x), x, 0.0), mixture), np.nan)
    values = []
    for _ in range(num_bootstrap):
        chosen = cdf[rng.integers(0, len(cdf), len(cdf))].ravel()
        values.append(_ks_from_cdf(np.sort(chosen[np.isfinite(chosen)]), chosen.size))
    return float(np.std(values, ddof=1))


def _one_run(target, sampler: str, num_chains: int, num_steps: int, seed: int, rng) -> tuple[dict, np.ndarray]:
    """One run of :func:`compute`: its row (without the noise scale) and its kept samples."""
    from sgbench.bench.running import run as running

    run = running.run(sampler, target, params={"step_size": STEP_SIZE}, num_chains=num_chains,
                      num_steps=num_steps, thin=THIN, keep_samples=True, seed=seed, dtype="float64")
    samples = np.asarray(run.samples)[..., 0]
    return {"sampler": sampler, "ks": ks_distance(samples, target.mixture),
            "ks_sd": ks_bootstrap_sd(samples, target.mixture, rng),
            "diverged": int(run.metrics["num_diverged_chains"]),
            "spread (1st-99th pct)": float(np.subtract(*np.nanpercentile(
                np.where(np.isfinite(samples), samples, np.nan), [99, 1])))}, samples


def compute(num_chains: int, num_steps: int, seed: int = 0, noise_scales=NOISE_SCALES, samplers=SAMPLERS,
            progress: bool = False):
    """Every (noise scale, sampler): ``num_chains`` chains of ``num_steps`` at ``STEP_SIZE`` from the target's
    mean, samples kept every ``THIN`` steps. Returns ``(frame, samples)``: one row per run with its ``ks``
    distance, its bootstrap sd over chains ``ks_sd`` and ``diverged`` chains, and the kept samples per (scale,
    sampler) for the figure. ``progress``: progress over the runs on stderr (``sgbench.bench.reproduce._record.Units``;
    nothing is kept: the KS distance and the figure need every run's samples, too many to record)."""
    from sgbench import targets
    from sgbench.bench.reproduce._record import Units

    rows, kept = [], {}
    rng = np.random.default_rng(seed)
    with Units("sglrw-multimodal", None, len(noise_scales) * len(samplers), "run", progress) as units:
        for scale in noise_scales:
            target = targets.get("multimodal1d", noise="alpha_stable", noise_alpha=ALPHA, noise_scale=scale)
            for sampler in samplers:
                row, kept[scale, sampler] = units.cached({}, (scale, sampler), _one_run, target, sampler, num_chains,
                                                         num_steps, seed, rng)
                rows.append({"noise scale": scale, **row})
    return pd.DataFrame(rows), kept


def checks(frame: pd.DataFrame, z: float = 2.0) -> tuple[Check, ...]:
    """At the largest noise scale, SGLRW's KS distance below SGLD's (the paper: "SGLD quickly fails while SGLRW
    remains stable") and Clipped-SGLD's below SGLD's (appendix A.1: both "prevent the severe instability exhibited
    by SGLD"): passed when below, failed when above by more than ``z`` combined bootstrap sds, not resolved
    otherwise."""
    top = frame[frame["noise scale"] == frame["noise scale"].max()].set_index("sampler")
    out = []
    for better in ("sglrw", "clipped_sgld"):
        if {"sgld", better} <= set(top.index):
            ours, sgld = top.loc[better], top.loc["sgld"]
            excess = ours["ks"] - sgld["ks"]
            passed = True if excess < 0 else False if excess > z * math.hypot(ours["ks_sd"], sgld["ks_sd"]) else None
            out.append(Check(f"noise scale {frame['noise scale'].max():g}: {LABELS[better]}'s KS distance below "
                             "SGLD's", passed, f"{ours['ks']:.3f} ± {ours['ks_sd']:.3f} against "
                                               f"{sgld['ks']:.3f} ± {sgld['ks_sd']:.3f}"))
    return tuple(out)


def figure(kept: dict, target_mixture) -> bytes:
    """PNG: per noise scale (columns) and sampler (rows), the histogram of the kept samples over the density."""
    scales = sorted({s for s, _ in kept})
    names = list(dict.fromkeys(n for _, n in kept))
    fig, axes = subplots(len(names), len(scales), figsize=(3 * len(scales), 2.2 * len(names)), squeeze=False,
                         sharex=True)
    x = np.linspace(-9, 9, 400)
    density = np.sum(target_mixture.weights * scipy.stats.norm.pdf((x[:, None] - target_mixture.means)
                                                                   / target_mixture.scales) / target_mixture.scales,
                     axis=1)
    for i, name in enumerate(names):
        for j, scale in enumerate(scales):
            ax = axes[i][j]
            samples = kept[scale, name].ravel()
            ax.hist(samples[np.isfinite(samples)], bins=np.linspace(-9, 9, 73), density=True, alpha=0.6)
            ax.plot(x, density, "k", lw=0.8)
            ax.set_title(f"{LABELS[name]}, noise scale {scale:g}", fontsize=8)
            ax.set_yticks([])
    fig.tight_layout()
    return png_bytes(fig, dpi=80)


def run(scale: str, options: dict, db, out, progress: bool) -> Outcome:
    """``sgbench reproduce sglrw-multimodal``: :func:`compute` at ``scale`` (``--chains``, ``--steps`` and
    ``--seed`` override it). ``db`` is not used and nothing is kept: the KS distance needs the kept samples."""
    from sgbench import targets
    from sgbench.base.arguments import integer_at_least
    from sgbench.bench.running.config import MAX_CHAINS, MAX_TOTAL_STEPS

    chains = integer_at_least("--chains", options.get("chains", SCALES[scale]["chains"]), 1, MAX_CHAINS)
    steps = integer_at_least("--steps", options.get("steps", SCALES[scale]["steps"]), THIN, MAX_TOTAL_STEPS)
    seed = seed_of(options)
    (frame, kept), seconds = timed(compute, chains, steps, seed, progress=progress)
    shown = frame.assign(sampler=[LABELS[s] for s in frame["sampler"]],
                         ks=[f"{v:.3f} ± {sd:.3f}" for v, sd in zip(frame["ks"], frame["ks_sd"])]).drop(columns="ks_sd")
    return Outcome(
        name="sglrw-multimodal", title="SGLRW paper, Figure 2: a multimodal target under alpha-stable gradient noise",
        table=shown.rename(columns={"ks": "KS distance"}), checks=checks(frame),
        intro=(f"{chains} chains x {steps:,} steps at step size {STEP_SIZE:g} (constant), samples kept every "
               f"{THIN}, from the target's mean, seed {seed}; alpha-stable noise with alpha = {ALPHA:g} added to the "
               f"exact gradient; KS distance of all kept samples to the "
               f"exact CDF (± bootstrap sd over chains); {seconds:.0f} s. The paper "
               "gives no numbers (its Figure 2 shows histograms)."),
        sections=(("Histograms of the kept samples over the target's density",
                   figure(kept, targets.get("multimodal1d").mixture)),
                  ("Differences from the paper",
                   "The paper gives neither the mixture, nor the step size, nor the noise scales: ours are three "
                   "components at -4, 0, 4 (weights 0.2, 0.5, 0.3, unit scales), a constant step 0.01 and scales "
                   "0.1 to 100.")))


REPRODUCTION = register(Reproduction(
    name="sglrw-multimodal",
    summary="SGLRW Figure 2: SGLD, SGLRW and Clipped-SGLD on a 1-d multimodal target under alpha-stable gradient "
            "noise of increasing scale",
    source="SGLRW paper, section 4.2 and appendix A.1",
    scales={"quick": "100 chains x 20,000 steps per (noise scale, sampler)",
            "paper": "1000 chains x 10^5 steps per (noise scale, sampler)"},
    run=run,
    keeps="nothing",
    options=(Option("--chains", "chains per sampler (default: the scale's)"),
             Option("--steps", "steps per chain (default: the scale's)"),
             SEED_OPTION),
))
