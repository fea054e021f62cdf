r"""Appendix D of the SMILE paper (Figure 4): the 10-d Gaussian mixture whose
first two coordinates follow 25 Gaussians on the grid {-4, -2, 0, 2, 4}^2 with covariance 0.3 I and whose
other eight are standard normal (``targets.get("gmm")``), with the isotropic injected noise of appendix C
(V = 256 I).

pSMILE-naive runs at the paper's fixed step 0.6; cSGLD (cosine cycles of 5000 steps, the first third of each
cycle exploration: SMILE's cSGLD baseline) at a step size tuned so that its mean update norm per step matches
pSMILE-naive's, as the paper does: pilot runs over a grid of step sizes, then the step whose update norm is
interpolated (log-log) to pSMILE-naive's. Each chain starts at the target's initial position. A mode of the
first two coordinates counts as visited when a kept sample lies within 3 component standard deviations of its
centre (``sgbench.bench.reproduce.px_modes.modes_visited``). The paper's Figure 4 shows the samples; its claims are the
acceptance checks: a single pSMILE-naive chain traverses the barriers (visits more than one mode), and 10 chains
together recover all 25 modes.

Kept on interruption: nothing (the figure and the mode counts need the runs' samples, 2 x 10^5 per run, too many
to record); progress over the four runs (``sgbench.bench.reproduce._record.Units``).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from sgbench.base.figures import png_bytes, subplots
from sgbench.bench.reproduce._registry import SEED_OPTION, Option, Reproduction, register, seed_of
from sgbench.bench.reproduce.outcome import Check, Outcome, timed
from sgbench.bench.reproduce.px_modes import MODE_RADIUS, mixture_centres, modes_visited

TARGET = {"noise": "isotropic", "noise_variance": 256.0}  # targets.get("gmm") defaults: the paper's mixture
PSMILE_STEP = 0.6
CYCLE = {"kind": "cyclical", "cycle_length": 5000}
EXPLORATION = 1 / 3
PILOT_STEPS = 20_000
PILOT_GRID = tuple(np.logspace(-4, -1, 7))
NUM_CHAINS = 10
SCALES = {"quick": 100_000, "paper": 1_000_000}


def _thin(steps: int) -> int:
    return max(1, steps // 10_000)  # at most 10,000 kept samples per chain


def _mean_update_norm(samples: np.ndarray) -> float:
    """The mean Euclidean norm of the step between consecutive kept samples (chains, draws, dim), thin 1; steps
    from or to a position that is not a sample (cSGLD's exploration stage: NaN rows) are left out."""
    norms = np.linalg.norm(np.diff(samples, axis=1), axis=-1)
    return float(np.mean(norms[np.isfinite(norms)])) if np.isfinite(norms).any() else math.nan


def matched_csgld_step(target, reference_norm: float, seed: int, pilot_steps: int = PILOT_STEPS):
    """cSGLD's step size whose mean update norm matches ``reference_norm``: pilot runs of ``pilot_steps`` at
    ``PILOT_GRID`` (one vmapped program), then log-log interpolation between the two grid points around it (the
    nearest end of the grid when it lies outside). Returns the step and the pilot table (a DataFrame)."""
    from sgbench.bench.running import run as running

    grid = [{"step_size": float(h), "schedule": CYCLE, "exploration_fraction": EXPLORATION} for h in PILOT_GRID]
    runs = running.run_grid("csgld", target, params_grid=grid, num_chains=2, num_steps=pilot_steps, seed=seed,
                            keep_samples=True, dtype="float32")
    norms = np.array([_mean_update_norm(np.asarray(r.samples, dtype=np.float64)) for r in runs])
    pilot = pd.DataFrame({"cSGLD step size": PILOT_GRID, "mean update norm": norms})
    finite = np.isfinite(norms) & (norms > 0)
    log_h, log_norm = np.log(np.asarray(PILOT_GRID)[finite]), np.log(norms[finite])
    order = np.argsort(log_norm)
    step = float(np.exp(np.interp(math.log(reference_norm), log_norm[order], log_h[order])))
    return step, pilot


def compute(steps: int, seed: int = 0, progress: bool = False) -> dict:
    """pSMILE-naive at step 0.6 and the matched cSGLD (pilot runs of ``min(PILOT_STEPS, steps)``), 10 chains of
    ``steps`` each; ``progress``: progress over the four runs on stderr (``sgbench.bench.reproduce._record.Units``;
    nothing is kept: the figure needs the runs' samples, too many to record).

    Returns:
        ``{"samples": {label: (chains, kept, dim)}, "modes": {label: per-chain modes}, "pooled": {label: modes of
        all chains together}, "update_norm": {label: mean update norm}, "csgld_step": float, "pilot": DataFrame,
        "b2": {label: b^2 averaged over dims and chains}, "thin": int}``.
    """
    from sgbench import targets
    from sgbench.bench.reproduce._record import Units
    from sgbench.bench.running import run as running

    target = targets.get("gmm", **TARGET)
    centres = mixture_centres(target)
    radius = MODE_RADIUS * math.sqrt(target.component_variance)
    pilot_steps = min(PILOT_STEPS, steps)
    thin = _thin(steps)
    with Units("smile-gmm", None, 4, "run", progress) as units:
        pilot_smile = units.cached({}, ("pilot", "pSMILE-naive"), running.run, "psmile_naive", target,
                                   params={"step_size": PSMILE_STEP}, num_chains=2, num_steps=pilot_steps, seed=seed,
                                   keep_samples=True, dtype="float32")
        smile_norm = _mean_update_norm(np.asarray(pilot_smile.samples, dtype=np.float64))
        csgld_step, pilot = units.cached({}, ("pilot", "cSGLD"), matched_csgld_step, target, smile_norm, seed,
                                         pilot_steps)
        runs = {"pSMILE-naive": units.cached({}, ("pSMILE-naive",), running.run, "psmile_naive", target,
                                             params={"step_size": PSMILE_STEP}, num_chains=NUM_CHAINS,
                                             num_steps=steps, thin=thin, seed=seed, keep_samples=True,
                                             dtype="float32"),
                "cSGLD": units.cached({}, ("cSGLD",), running.run, "csgld", target,
                                      params={"step_size": csgld_step, "schedule": CYCLE,
                                              "exploration_fraction": EXPLORATION},
                                      num_chains=NUM_CHAINS, num_steps=steps, thin=thin, seed=seed, keep_samples=True,
                                      dtype="float32")}
    samples = {label: np.asarray(run.samples, dtype=np.float64)[..., :2] for label, run in runs.items()}
    return {"samples": samples,
            "modes": {label: [modes_visited(s[c], centres, radius) for c in range(len(s))] for label, s in
                      samples.items()},
            "pooled": {label: modes_visited(s, centres, radius) for label, s in samples.items()},
            "update_norm": {"pSMILE-naive": smile_norm,
                            "cSGLD": float(np.interp(math.log(csgld_step), np.log(pilot["cSGLD step size"]),
                                                     pilot["mean update norm"]))},
            "b2": {label: float(run.metrics["b2_mean_chain_average"]) for label, run in runs.items()},
            "diverged": {label: int(run.metrics["num_diverged_chains"]) for label, run in runs.items()},
            "csgld_step": csgld_step, "pilot": pilot, "thin": thin}


def table(result: dict) -> pd.DataFrame:
    """Per sampler: its step size, mean update norm, modes visited by one chain (mean and range over the chains),
    by all chains together, b^2 over all ten coordinates and the diverged chains."""
    steps = {"pSMILE-naive": PSMILE_STEP, "cSGLD": result["csgld_step"]}
    return pd.DataFrame([{"sampler": label, "step size": steps[label],
                          "mean update norm": result["update_norm"][label],
                          "modes per chain (mean)": float(np.mean(per_chain)),
                          "modes per chain (min-max)": f"{min(per_chain)}-{max(per_chain)}",
                          f"modes of the {len(per_chain)} chains together": result["pooled"][label],
                          "b² (mean over dims, chain average)": result["b2"][label],
                          "diverged chains": result["diverged"][label]}
                         for label, per_chain in result["modes"].items()])


def checks(result: dict) -> tuple[Check, ...]:
    """The paper's claims: one pSMILE-naive chain traverses the barriers (every chain visits more than one mode;
    reported per chain), and the chains together recover all 25 modes."""
    per_chain, pooled = result["modes"]["pSMILE-naive"], result["pooled"]["pSMILE-naive"]
    return (Check("a single pSMILE-naive chain visits more than one mode", min(per_chain) > 1,
                  f"modes per chain {per_chain}"),
            Check(f"{len(per_chain)} pSMILE-naive chains together visit all 25 modes", pooled == 25,
                  f"{pooled} of 25"))


def figure(result: dict) -> bytes:
    """PNG: the first two coordinates: one cSGLD chain, one pSMILE-naive chain, all pSMILE-naive chains."""
    panels = (("cSGLD, one chain", result["samples"]["cSGLD"][:1]),
              ("pSMILE-naive, one chain", result["samples"]["pSMILE-naive"][:1]),
              (f"pSMILE-naive, {NUM_CHAINS} chains", result["samples"]["pSMILE-naive"]))
    grid = np.arange(-4.0, 5.0, 2.0)
    fig, axes = subplots(1, 3, figsize=(10, 3.5))
    for ax, (title, samples) in zip(axes, panels):
        x = samples.reshape(-1, 2)
        x = x[np.all(np.isfinite(x), axis=1)]
        ax.scatter(*np.meshgrid(grid, grid), marker="+", color="0.5", s=30)
        ax.plot(x[:, 0], x[:, 1], ".", ms=1, alpha=0.2)
        ax.set(xlim=(-6, 6), ylim=(-6, 6), aspect="equal", title=title, xlabel="θ1", ylabel="θ2")
    fig.tight_layout()
    return png_bytes(fig, dpi=90)


def run(scale: str, options: dict, db, out, progress: bool) -> Outcome:
    """``sgbench reproduce smile-gmm``: :func:`compute` at ``scale`` (``--steps`` and ``--seed`` override it).
    ``db`` is not used and nothing is kept: the modes are counted from kept samples, which the store does not
    hold."""
    from sgbench.base.arguments import integer_at_least
    from sgbench.bench.running.config import MAX_TOTAL_STEPS

    steps = integer_at_least("--steps", options.get("steps", SCALES[scale]), 1000, MAX_TOTAL_STEPS)
    seed = seed_of(options)
    result, seconds = timed(compute, steps, seed, progress)
    return Outcome(
        name="smile-gmm", title="SMILE paper, appendix D: the 25-mode Gaussian mixture in 10-d",
        table=table(result), checks=checks(result),
        intro=(f"{NUM_CHAINS} chains x {steps:,} steps (paper: 10^6), kept every {result['thin']}, seed {seed}, "
               f"float32; isotropic injected noise V = 256 I; cSGLD's step matched to pSMILE-naive's mean update "
               f"norm by pilot runs of {min(PILOT_STEPS, steps):,} steps; {seconds:.0f} s. The paper gives no "
               "numbers (its Figure 4 shows the samples)."),
        sections=(("The first two coordinates (grey crosses: the 25 centres)", figure(result)),
                  ("Pilot runs of cSGLD (2 chains each)", result["pilot"]),
                  ("Differences from the paper",
                   "cSGLD's exploration stage (the first third of each cycle, as SMILE's cSGLD baseline) and the "
                   "matching by pilot runs are our choices; the paper states neither. Update norms are measured "
                   "between kept samples of the pilot runs (every step).")))


REPRODUCTION = register(Reproduction(
    name="smile-gmm",
    summary="SMILE appendix D: modes of the 10-d 25-Gaussian mixture visited by pSMILE-naive and a matched cSGLD",
    source="SMILE paper, appendix D and Figure 4",
    scales={"quick": "10 chains x 10^5 steps each", "paper": "10 chains x 10^6 steps each (the paper's)"},
    run=run,
    keeps="nothing",
    options=(Option("--steps", "steps per chain (default: the scale's)"),
             SEED_OPTION),
))
