r"""Chains must travel: an overdispersed start, a warm-up, and the rule that decides whether the chains
forgot where they started before they are scored.

**Start.** Chain :math:`j` starts at :math:`x_0 = \mu + \kappa (x - \mu)`, :math:`x` a draw of the target
(exact, or resampled from its NUTS reference, ``sgbench.bench.gate.gold_standard``) and :math:`\kappa` =
``START_SCALE`` = 2: on a Gaussian target the start law is the target's with four times its covariance.
A chain that never moves keeps that spread, so its relative second-moment error is
:math:`\kappa^2 - 1 = 3`, and no check can mistake it for the target. A start at exact draws (what the
gate's cells used before) cannot tell a frozen chain from a perfect one; the gate's cells start here too.

**Warm-up.** The first :math:`W` steps are run and not scored; the next :math:`N` are (``num_burnin`` and
``num_steps`` of the cell). Whether :math:`W` was long enough is measured, not assumed: from the kept
draws of the scored window (every ``thin``-th step, :math:`K` per chain, :math:`C` chains), the
multi-chain bulk effective sample size (Vehtari et al. 2021, ``sgbench.reference.metrics.ess``) of each
coordinate's standardised position and of its squared deviation :math:`((x_i - \mu_i)/\sigma_i)^2` gives
an integrated autocorrelation time in steps, :math:`\hat\tau = \text{thin}\cdot CK/\widehat{ESS}`, largest over
coordinates and both series. Chains still remembering their starts differ from one another more than
within themselves, which lowers the multi-chain ESS, so :math:`\hat\tau` grows with the memory.

The chains *forgot their start* when :math:`W \ge` ``FORGET_TIMES`` :math:`\hat\tau` (``FORGET_TIMES`` = 2).
Why 2 suffices: for a chain whose memory decays as :math:`e^{-t/\tau_e}` (an AR(1), whose integrated time is
:math:`\tau \approx 2\tau_e`), the start's excess in the window average of :math:`r` is at most
:math:`(\kappa^2 - 1)\frac{\tau_e}{2N} e^{-2W/\tau_e} \le 3\cdot\frac{\tau}{4N} e^{-8}`, below :math:`3\cdot 10^{-4}`
for any :math:`\tau \le N`: below a hundredth of the checks' standard error for up to 2000 chains
(docs/gates_derivations.md, section sgbench.bench.gate.start). A :math:`\hat\tau` too small by a factor of two still
leaves the shift below a tenth of a standard error for up to :math:`100 N/\tau` chains.

The chains *do not move* when, in some coordinate, the median over chains of the standardised distance
between a chain's start and its last draw is below ``STILL`` = 0.01: in that coordinate they travelled less
than a hundredth of the target's standard deviation over the whole run (a sampler that freezes one coordinate
does not move either).

What the run cannot see: an autocorrelation time near the scored window's own length :math:`N` is
estimated from one or two effective draws per chain, so :math:`\hat\tau \ge N/2` is a lower bound, and
the warm-up it asks for (``FORGET_TIMES`` :math:`\hat\tau`) is "at least".
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

START_SCALE = 2.0
FORGET_TIMES = 2.0
STILL = 0.01
KEPT_DRAWS = 100


def thin_for(num_steps: int) -> int:
    """Steps between the draws a run keeps for :func:`travel`: about ``KEPT_DRAWS`` per chain."""
    return max(1, num_steps // KEPT_DRAWS)


def overdispersed(target, key, n: int, mean, scale: float = START_SCALE) -> np.ndarray:
    r""":math:`n` starts :math:`\mu + \kappa (x - \mu)` (module docstring), :math:`\kappa` = ``scale``.

    Args:
        target: a target object.
        key: a JAX key.
        n: how many.
        mean: :math:`\mu`, the target's mean (its truth's, ``sgbench.bench.gate.gold_standard.truth_of``).
        scale: :math:`\kappa` (1: exact draws).

    Returns:
        (n, dim) float64.
    """
    from sgbench.bench.gate import gold_standard  # JAX: not at import, so that `sgbench --help` stays light

    x = gold_standard.draws(target, key, n)
    if scale == 1.0:
        return x
    mu = np.where(np.isfinite(mean), np.asarray(mean, dtype=np.float64), x)  # a coordinate of unstated truth: x
    return mu + scale * (x - mu)


@dataclasses.dataclass(frozen=True)
class Travel:
    """How far a run's chains travelled: ``warmup`` :math:`W` and ``scored`` :math:`N` steps, the median over
    chains of the standardised distance from start to last draw in the coordinate where it is least
    (``displacement``, in coordinate ``coordinate``), and ``autocorrelation_steps`` :math:`\\hat\\tau` (inf
    where the draws do not vary). ``strict``: an estimate at the scored window's resolution (``lower_bound``) does
    not show that the chains forgot their start (``sgbench validate``, whose warm-up can grow beyond the window; the
    gate's cells keep the rule without it)."""

    warmup: int
    scored: int
    displacement: float
    autocorrelation_steps: float
    coordinate: int = 0
    strict: bool = False

    @property
    def still(self) -> bool:
        """The chains did not move (module docstring)."""
        return not self.displacement >= STILL

    @property
    def forgot(self) -> bool:
        """The warm-up was long enough for the chains to forget their start."""
        return (not self.still and self.warmup >= FORGET_TIMES * self.autocorrelation_steps
                and not (self.strict and self.lower_bound))

    @property
    def lower_bound(self) -> bool:
        """Whether :math:`\\hat\\tau` is at the run's resolution, so only a lower bound."""
        return not self.autocorrelation_steps < self.scored / 2

    @property
    def warmup_needed(self) -> float:
        """The warm-up that the rule asks for, ``FORGET_TIMES`` :math:`\\hat\\tau` (inf: not estimable)."""
        return FORGET_TIMES * self.autocorrelation_steps

    def row(self, target: str, sampler: str) -> dict:
        """The run's row of validate's table "How far the chains travelled"."""
        return {"target": target, "sampler": sampler, "warm-up steps": self.warmup, "scored steps": self.scored,
                "median distance travelled (sd)": self.displacement,
                "autocorrelation time (steps)": self.autocorrelation_steps, "forgot start": self.forgot,
                "finding": self.describe()}

    def describe(self, setting: str = "--warmup") -> str:
        """The finding in words; ``setting`` names where the warm-up is set."""
        if self.still:
            return (f"the chains do not move: median distance from start to end {self.displacement:.2g} target "
                    f"standard deviations in coordinate {self.coordinate} over {self.warmup + self.scored} steps")
        tau = "not estimable" if not math.isfinite(self.autocorrelation_steps) else f"{self.autocorrelation_steps:.3g}"
        times = f"autocorrelation time {tau} steps, warm-up {self.warmup} steps"
        if self.forgot:
            return f"the chains forgot their start ({times}: at least {FORGET_TIMES:g} times it)"
        need = "an unknown number of" if not math.isfinite(self.warmup_needed) else (
            f"{'at least ' if self.lower_bound else ''}{math.ceil(self.warmup_needed)}")
        if self.strict and self.lower_bound and self.warmup >= self.warmup_needed:
            return (f"the chains may not have forgotten their start ({times}: the estimate is at the resolution of "
                    f"{self.scored} scored steps, so only a lower bound); a longer scored window (--steps) would "
                    "decide")
        return f"the chains did not forget their start ({times}); {need} warm-up steps ({setting}) would decide"


def travel(start: np.ndarray, samples: np.ndarray, diverged: np.ndarray, mean, variance, thin: int,
           warmup: int, scored: int) -> Travel:
    """Assess one run (module docstring).

    Args:
        start: (chains, dim) the start positions.
        samples: (chains, kept, dim) the kept draws of the scored window (NaN at steps that are no sample,
            which are left out: the autocorrelation time across such a gap is overstated, not understated).
        diverged: (chains,) bool, chains left out.
        mean: (dim,) the target's mean.
        variance: (dim,) its marginal variances.
        thin: steps between kept draws.
        warmup: W.
        scored: N.

    Returns:
        the :class:`Travel`.
    """
    from sgbench.reference.metrics import ess

    healthy = ~np.asarray(diverged, dtype=bool)
    scale = np.sqrt(np.asarray(variance, dtype=np.float64))
    z = (np.asarray(samples, dtype=np.float64)[healthy] - mean) / scale
    u = (np.asarray(start, dtype=np.float64)[healthy] - mean) / scale
    z = z[:, np.all(np.isfinite(z), axis=(0, 2))]  # steps that are no sample (an exploration stage) are NaN
    if z.shape[0] == 0 or z.shape[1] == 0:
        return Travel(warmup, scored, math.nan, math.inf)
    per_coordinate = np.median(np.abs(z[:, -1] - u), axis=0)
    coordinate = int(np.argmin(per_coordinate))
    tau = math.inf
    if z.shape[0] >= 2 and z.shape[1] >= 4:
        with np.errstate(invalid="ignore", divide="ignore"):
            sizes = np.concatenate([ess(z), ess(z * z)])
        if np.all(np.isfinite(sizes)) and np.all(sizes > 0):
            tau = float(thin * z.shape[0] * z.shape[1] / sizes.min())
    return Travel(warmup, scored, float(per_coordinate[coordinate]), tau, coordinate)
