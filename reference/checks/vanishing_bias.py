r"""Does an error vanish as the step shrinks? The fit of a step ladder.

A sampler run at steps :math:`h_k = h\,2^{-k}` (the rungs, each for :math:`2^k` times the steps, so that
every rung covers the same span of the dynamics) has, per statistic and coordinate (a *series*), an estimated
error :math:`\hat\beta_k` against truth with standard error :math:`s_k`, independent across rungs. The model is

.. math:: \beta(h) = b_0 + c\,(h/h_0)^p,

:math:`b_0` the error that remains as :math:`h \to 0` (0 for a consistent discretisation), :math:`p > 0` the weak
order, fitted per series on the finest ``WINDOW`` rungs (the coarse rungs of a large step are often not yet in
the regime of the leading term). Nothing assumes the order: :math:`p` is measured, and every decision holds for
every order the data allow.

- **The orders the data allow.** At a fixed :math:`p` the model is linear in :math:`(b_0, c)`; its weighted
  residual :math:`Q(p)` is :math:`\chi^2_{m-2}` at the true order (:math:`m` rungs in the window). The set
  :math:`P = \{p \in [p_{\min}, p_{\max}]: Q(p) \le \chi^2_{m-2}(1 - \epsilon)\}` holds the true order with
  probability :math:`1 - \epsilon` (:math:`\epsilon = \mu/2`, below). Where it is empty (one series in
  :math:`1/\epsilon`, by chance) the set at :math:`\alpha/2` stands in (it holds the first); only an empty one
  rejects the model (the window is not in the regime of one power).
- **Persists** (the error does not vanish): at every :math:`p \in P` the linear estimate :math:`\hat b_0(p)`
  differs from 0 by more than :math:`z_{1-\alpha/4}` standard errors, and the error stopped shrinking: over the
  window's two halvings it kept significantly (at rate :math:`\alpha`) more than the share :math:`2^{-1/2}` that
  any order considered would leave, with one sign on all three rungs. The second test alone declares a
  consistent sampler persistent with
  probability at most :math:`\alpha`, also before the small-step regime, where errors shrink faster; so the
  rate of *persists* does not rest on :math:`P`.
- **Vanishes**: at every :math:`p \in P` the interval :math:`\hat b_0(p) \pm z_{1-\mu/2}\,se` lies inside
  :math:`(-\delta, \delta)`, :math:`\delta` the error that matters (``detect``): a sampler whose error tends to
  :math:`|b_0| \ge \delta` is declared vanishing with probability at most :math:`\epsilon + \mu/2 = \mu`
  (``miss``; ``MISS`` = 0.1 by default, the standard of every PASSED of the suite: a bias of ``detect`` missed
  with probability at most 0.1). The fit vanishes only if every series does, so one series whose error does not
  vanish suffices to keep it from vanishing: :math:`\mu` needs no split over the series (an intersection-union
  test), unlike the rate of *persists*.
- Otherwise **undecided**: more chains on every rung (the intervals shrink as :math:`1/\sqrt{C}`) or a finer
  rung decides.

An error common to every rung (that of an estimated truth, with standard error :math:`s_0`: a NUTS reference's)
shifts :math:`b_0` and the plateau statistic alike; it widens their standard errors in quadrature
(``common_se``). Over :math:`n` series the rate of *persists* is split by Bonferroni. What the fit can and
cannot see (an error of the right order but the wrong size is a valid if worse discretisation: only a claim
catches it), why a coarse rung is left out and why *persists* also asks that the error stopped shrinking, and
the measured rates: docs/derivations.md, section sgbench.reference.checks.vanishing_bias.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import scipy.stats

from sgbench.reference.checks._validate import check_alpha
from sgbench.reference.checks.result import POWER, Z_POWER

WINDOW = 3  # the finest rungs the model is fitted on (3: b0, c and p, with Q(p) on 1 degree of freedom)
ORDERS = (0.5, 4.0)  # the weak orders considered
MISS = 1.0 - POWER  # by default an error that tends to detect is declared vanishing with at most this probability
GRID = 480  # orders tried, log-spaced over ORDERS (the best is within 0.3 % of the least-squares order)

VANISHES, PERSISTS, UNDECIDED = "vanishes", "persists", "undecided"


@dataclasses.dataclass(frozen=True)
class SeriesFit:
    """One series' fit (module docstring): the outcome; ``b0`` at the best order with its standard error and the
    interval ``(b0_low, b0_high)`` over every allowed order; the best order ``p`` and the allowed ``orders``
    (low, high; NaN where the set is empty); ``error_at_step`` the measured error at the coarsest rung;
    ``smallest_t`` the smallest |b0|/se over the allowed orders, against ``critical`` (*persists*' z);
    ``half_width`` the largest ``interval_z`` se over them (*vanishes*' intervals); ``plateau`` the statistic of
    :func:`_plateau`."""

    outcome: str
    b0: float
    b0_se: float
    b0_low: float
    b0_high: float
    p: float
    orders: tuple[float, float]
    error_at_step: float
    error_at_step_se: float
    smallest_t: float
    half_width: float = float("nan")
    critical: float = float("nan")
    interval_z: float = float("nan")
    plateau: float = float("nan")


@dataclasses.dataclass(frozen=True)
class LadderFit:
    """The fit of every series: ``outcome`` (``persists`` if any series does, else ``vanishes`` if every one
    does, else ``undecided``), ``series`` (a :class:`SeriesFit` per series, labelled by ``labels``), ``steps``
    the rungs' steps, the per-series rate ``alpha`` (split over the series) and ``detect``; ``worst`` the index
    of the series that decided (or that is furthest from deciding); ``chains_factor`` for an undecided fit, by how
    much the chains on every rung would have to grow for it to vanish, predicted from its estimates and standard
    errors (NaN where no growth would)."""

    outcome: str
    series: tuple
    labels: tuple
    steps: tuple
    alpha: float
    detect: float
    worst: int
    chains_factor: float

    @property
    def order(self) -> float:
        """The median over the series whose order is bounded of their best order (NaN: none)."""
        bounded = [s.p for s in self.series if np.isfinite(s.orders[0]) and s.orders[1] < ORDERS[1]]
        return float(np.median(bounded)) if bounded else float("nan")

    def describe(self) -> str:
        """The finding in words, naming the deciding series."""
        s, label = self.series[self.worst], self.labels[self.worst]
        steps = ", ".join(f"{h:.3g}" for h in self.steps)
        if not np.isfinite(s.orders[0]):
            orders = "no order fits"
        elif s.orders == ORDERS:
            orders = f"any order from {ORDERS[0]:g} to {ORDERS[1]:g} fits: the error barely changes over the ladder"
        else:
            orders = f"weak order {s.p:.2g} (allowed {s.orders[0]:.2g} to {s.orders[1]:.2g})"
        where = (f"{label}: error {s.error_at_step:.3g} ± {s.error_at_step_se:.2g} at the step, extrapolated to "
                 f"{s.b0:.3g} ± {s.b0_se:.2g} as the step vanishes (interval {s.b0_low:.3g} to {s.b0_high:.3g} "
                 f"over the allowed orders), {orders}; ladder of steps {steps}")
        if self.outcome == PERSISTS:
            return f"its error does not vanish as the step shrinks ({where})"
        if self.outcome == VANISHES:
            return f"its error vanishes as the step shrinks (within ±{self.detect:g}; worst {where})"
        return f"the ladder cannot yet tell whether its error vanishes ({where})"


def _linear_fits(x: np.ndarray, beta: np.ndarray, se: np.ndarray):
    """Weighted least squares of ``beta`` on [1, x] for every row of ``x`` (orders, rungs): (b0, se(b0), Q)."""
    w = 1.0 / se**2
    s, sx, sxx = w.sum(), (w * x).sum(axis=1), (w * x * x).sum(axis=1)
    sy, sxy = (w * beta).sum(), (w * x * beta).sum(axis=1)
    det = s * sxx - sx**2
    slope = (s * sxy - sx * sy) / det
    b0 = (sy - slope * sx) / s
    residual = beta[None, :] - b0[:, None] - slope[:, None] * x
    return b0, np.sqrt(sxx / det), (w * residual**2).sum(axis=1)


def _series_fit(x, orders, beta, se, at_step: tuple, common: float, alpha: float, miss: float,
                detect: float) -> SeriesFit:
    """One series on the window: ``x`` (orders, rungs) its relative steps to each order, ``at_step`` the
    error and standard error at the coarsest rung of the ladder, ``common`` the standard error of an error common
    to every rung."""
    b0, b0_se, q = _linear_fits(x, beta, se)
    b0_se = np.hypot(b0_se, common)
    allowed = q <= scipy.stats.chi2.ppf(1 - miss / 2, len(beta) - 2)
    if not allowed.any():  # the set misses every order with probability miss/2 by chance: reject only at alpha
        allowed = q <= scipy.stats.chi2.ppf(1 - alpha / 2, len(beta) - 2)
    z, z_interval = scipy.stats.norm.isf(alpha / 4), scipy.stats.norm.isf(miss / 2)
    best = int(np.argmin(q))
    if not allowed.any():
        return SeriesFit(UNDECIDED, float(b0[best]), float(b0_se[best]), np.nan, np.nan, float(orders[best]),
                         (np.nan, np.nan), *at_step, np.nan)
    low, high = b0[allowed] - z_interval * b0_se[allowed], b0[allowed] + z_interval * b0_se[allowed]
    t = np.abs(b0[allowed]) / b0_se[allowed]
    plateau = _plateau(beta, se, common)
    if t.min() > z and plateau > scipy.stats.norm.isf(alpha):
        outcome = PERSISTS
    elif low.min() > -detect and high.max() < detect:
        outcome = VANISHES
    else:
        outcome = UNDECIDED
    return SeriesFit(outcome, float(b0[best]), float(b0_se[best]), float(low.min()), float(high.max()),
                     float(orders[best]), (float(orders[allowed].min()), float(orders[allowed].max())), *at_step,
                     float(t.min()), float(z_interval * b0_se[allowed].max()), float(z), float(z_interval), plateau)


def _plateau(beta, se, common: float = 0.0) -> float:
    r"""Whether the error stopped shrinking over the window's two halvings, in standard errors: with
    :math:`s = 2^{-p_{\min}}` the share of an error that any order the fit considers leaves at a halving,
    :math:`\operatorname{sign}(\beta_K)\,[(\beta_K - s\beta_{K-1}) + (\beta_{K-1} - s\beta_{K-2})]`, each bracket
    at most 0 for an error of one sign that shrinks at least as :math:`h^{p_{\min}}` (large: it stopped);
    ``common`` the standard error of an error common to the rungs, which enters it with weight :math:`2 - 2s`. NaN
    where the three errors do not share a sign (an error crossing 0 is not a plateau)."""
    if not (np.all(beta[-3:] > 0) or np.all(beta[-3:] < 0)):
        return float("nan")
    shrink = 2.0 ** -ORDERS[0]
    excess = (beta[-1] - shrink * beta[-2]) + (beta[-2] - shrink * beta[-3])
    spread = np.sqrt(se[-1] ** 2 + ((1 - shrink) * se[-2]) ** 2 + (shrink * se[-3]) ** 2
                     + ((2 - 2 * shrink) * common) ** 2)
    return float(np.sign(beta[-1]) * excess / spread)


def ladder_fit(steps, errors, standard_errors, *, alpha: float, detect: float, miss: float = MISS, labels=None,
               common_se=None) -> LadderFit:
    r"""Fit the ladder (module docstring).

    Args:
        steps: the rungs' steps :math:`h_k`, coarsest first, at least 3.
        errors: (rungs, series) the estimated errors against truth.
        standard_errors: (rungs, series) their standard errors (> 0; independent across rungs).
        alpha: the rate of *persists* for a consistent sampler, in (0, 1), split over the series.
        detect: :math:`\delta > 0`, the error that matters.
        miss: :math:`\mu`, the rate of *vanishes* for an error that tends to ``detect``, in (0, 1).
        labels: a name per series (default its index).
        common_se: (series,) the standard error of an error common to every rung (an estimated truth's; default 0).

    Returns:
        The :class:`LadderFit`. ValueError on shapes that do not match or fewer than 3 rungs.
    """
    alpha, miss = check_alpha(alpha), check_alpha(miss, "miss")
    h = np.asarray(steps, dtype=np.float64)
    beta, se = np.asarray(errors, dtype=np.float64), np.asarray(standard_errors, dtype=np.float64)
    if beta.ndim != 2 or beta.shape != se.shape or beta.shape[0] != h.size:
        raise ValueError(f"errors and standard_errors must both be (rungs, series) with {h.size} rungs, got "
                         f"{beta.shape} and {se.shape}")
    if h.size < WINDOW or not np.all(np.diff(h) < 0) or h[-1] <= 0:
        raise ValueError(f"steps must be at least {WINDOW} positive steps, coarsest first, got {h.tolist()}")
    if not (np.all(np.isfinite(beta)) and np.all(np.isfinite(se)) and np.all(se > 0)):
        raise ValueError("errors must be finite and standard_errors finite and > 0")
    if not detect > 0:
        raise ValueError(f"detect must be > 0, got {detect}")
    labels = tuple(labels) if labels is not None else tuple(str(i) for i in range(beta.shape[1]))
    common = np.zeros(beta.shape[1]) if common_se is None else np.broadcast_to(
        np.asarray(common_se, dtype=np.float64), (beta.shape[1],))
    per_series = alpha / beta.shape[1]
    window = slice(h.size - WINDOW, h.size)
    orders = np.geomspace(*ORDERS, GRID)
    x = (h[window] / h[0])[None, :] ** orders[:, None]
    fits = tuple(_series_fit(x, orders, beta[window, i], se[window, i], (float(beta[0, i]), float(se[0, i])),
                             float(common[i]), per_series, miss, detect) for i in range(beta.shape[1]))
    outcomes = [f.outcome for f in fits]
    if PERSISTS in outcomes:
        outcome = PERSISTS
        worst = max((i for i, f in enumerate(fits) if f.outcome == PERSISTS), key=lambda i: fits[i].smallest_t)
    elif all(o == VANISHES for o in outcomes):
        outcome = VANISHES
        worst = int(np.argmax([max(-f.b0_low, f.b0_high) for f in fits]))
    else:
        outcome = UNDECIDED
        worst = int(np.argmax([np.inf if f.outcome == UNDECIDED and not np.isfinite(f.b0_low) else
                               max(-f.b0_low, f.b0_high) for f in fits]))
    return LadderFit(outcome, fits, labels, tuple(float(v) for v in h), per_series * beta.shape[1], detect, worst,
                     _chains_factor(fits, detect, common, per_series))


def _chains_factor(fits, detect: float, common, alpha: float) -> float:
    """By how much the chains on every rung would have to grow for the fit to decide, predicted two ways and the
    smaller taken (the next look asks again): for a series whose error looks persisting (b0 and the plateau
    statistic of one sign), the growth that brings both its smallest t and its plateau statistic to their critical
    values plus the power quantile (each grows as sqrt(C)); and the growth for every series to vanish, were its
    errors those of a consistent sampler: each undecided series' interval over the allowed orders is then noise
    about 0, and its extent, max(-b0_low, b0_high), shrinks as 1/sqrt(C) until it fits within ``detect``, less the
    part an estimated truth adds (``common`` times the intervals' z), which does not shrink. 1 where every series
    vanishes; NaN where neither would do."""
    confirm = [max(((scipy.stats.norm.isf(alpha) + Z_POWER) / f.plateau) ** 2,
                   ((f.critical + Z_POWER) / f.smallest_t) ** 2) for f in fits
               if f.outcome == UNDECIDED and f.plateau > 0 and f.smallest_t > 0]
    factor = 1.0
    for f, s0 in zip(fits, common):
        if f.outcome == VANISHES:
            continue
        fixed = f.interval_z * s0
        if f.outcome == PERSISTS or not np.isfinite(f.b0_low) or detect <= fixed:
            factor = float("nan")
            break
        extent = max(-f.b0_low, f.b0_high)
        factor = max(factor, ((extent - fixed) / (detect - fixed)) ** 2)
    candidates = [c for c in confirm + [factor] if np.isfinite(c)]
    return float(max(1.0, min(candidates))) if candidates else float("nan")
