r"""The importance-weighted check against truth: for a sampler whose draws follow another density than the
target and carry importance weights (``AdaptedSampler.log_weight``: contour SGLD, Deng, Lin & Liang 2020,
whose draws follow the flattened density :math:`\varpi_\theta \propto \pi/\Psi_\theta^\zeta(U)`).

**Run.** :math:`C` independent chains (the JAX driver, ``bench.run``) start overdispersed
(``sgbench.bench.gate.start``), run :math:`W` warm-up steps and :math:`n` scored steps. The adapter is wrapped
(:func:`weighted_sampler`) so that each chain's state accumulates, over its scored steps :math:`t`, with
:math:`w_t = e^{\ell_t}` (:math:`\ell_t` = ``log_weight`` of the state after step :math:`t`, Deng et al.'s
weighted averaging estimator :math:`\sum_t \theta_t^\zeta(J(x_t)) f(x_t) / \sum_t \theta_t^\zeta(J(x_t))`) and
:math:`z_{ti} = (x_{ti} - \mu_i)/\sqrt{T\Sigma_{ii}}` against the truth :math:`\mathcal N(\mu, T\Sigma)`:
:math:`S^w = \sum_t w_t`, :math:`S^1_i = \sum_t w_t z_{ti}`, :math:`S^2_i = \sum_t w_t z_{ti}^2` and
:math:`\sum_t w_t^2` (in a running log-sum-exp scale, so no weight underflows); the driver returns the
final states (``ChainTrace.final_state``). A sampler without ``log_weight`` has :math:`w_t = 1`.

**Statistics.** Per chain :math:`j` the self-normalised estimates are the standardised mean error
:math:`m_{ij} = S^1_{ij}/S^w_j` and the relative variance error :math:`r_{ij} = S^2_{ij}/S^w_j - 1`. A ratio
of two averages is biased by :math:`O(1/n)` per chain, and that bias does not shrink with the number of
chains while the standard error across chains does, so the test is not made on :math:`m_{ij}, r_{ij}` but
on their linearisation about the truth: with :math:`\bar B = \frac1{Cn}\sum_j S^w_j` (the weights on one
scale across chains),

.. math:: u^{m}_{ij} = \frac{S^1_{ij}/n}{\bar B}, \qquad u^{r}_{ij} = \frac{(S^2_{ij} - S^w_j)/n}{\bar B},

whose expectation is exactly :math:`E_\varpi[w\,(f - f_0)]/E[\bar B] = 0` at stationarity when the weighted
law is the target (:math:`f_0` = 0 for the mean, 1 for :math:`z^2`): no ratio bias enters the test. Their mean
over the chains is exactly the pooled self-normalised estimate :math:`\sum_j S^1_j/\sum_j S^w_j`
(:math:`\sum_j S^2_j/\sum_j S^w_j - 1`), reported as the estimate, whose own ratio bias is :math:`O(1/(Cn))`
(estimated by the delta method, ``ratio_bias``: :math:`-\widehat{\mathrm{cov}}_j(u_j, S^w_j/(n\bar B))/C`), and
:math:`\mathrm{sd}_j(u)/\sqrt C` is its delta-method standard error.

**Tests and error rate.** ``mean`` and ``second_moment``: Johnson's skewness-corrected t-test of
:math:`E[u] = 0` across the :math:`C` independent chains per coordinate (``sgbench.reference.checks.mean_check``),
Bonferroni over the :math:`d` coordinates and the two statistics at family-wise rate :math:`\alpha_j/2` at look
:math:`j`, :math:`\alpha_j = \alpha/2^j` (``validation_session.look_alpha``: over all looks a correct sampler is
FAILED with probability at most :math:`\alpha`); at the first look each compares with
:math:`t_c = t_{C-1}(1 - \alpha/(16d))`. A disagreement is decided by the step ladder of ``sgbench validate``
(``sgbench.bench.validate.step_ladder.fit_rungs``): the same run at :math:`h/2, h/4, h/8` (``HALVED``: the Langevin
step and the stochastic-approximation step) for :math:`2^k` times the steps and warm-up, its persists at
:math:`\alpha_j/2` and its vanishes at the miss rate :math:`\mu/2^j`.

**Power and tolerance.** Each check detects, with probability 0.9, a deviation of
:math:`\delta = q_{0.9}(t_c)\,\widehat{se}` (``detectable``; :math:`q` the noncentral-t quantile,
``sgbench.reference.checks.detection_quantile``). The tolerance is this calculation: the check PASSES only if
:math:`\delta \le` ``detect`` (default 0.1, a relative variance error and as many standard deviations of the
mean, ``sgbench.bench.gate.resolution``) for both statistics. Importance weights lengthen the standard error by
about :math:`\sqrt{n/n_{\text{eff}}}`, :math:`n_{\text{eff}} = (\sum w)^2/\sum w^2` (reported per chain as
``weight_ess``).

**Outcome** (the rules of ``sgbench validate`` against truth, ``sgbench.bench.validate.verdict``, with its remedies
within ``budget``): a chain diverged (a non-finite position or weighted sum, on any rung): FAILED; the chains do
not move: FAILED; a disagreement with truth after the chains forgot their start, with estimates that do not drift
between the two halves of the scored window: the step ladder, FAILED where the error persists, PASSED where it
vanishes (a consistent discretisation); agreement after forgetting that resolves ``detect``: PASSED. Otherwise
INCONCLUSIVE, and the remedy runs if its predicted cost fits the budget: a longer warm-up where the chains did not
forget their start, or where the weighted estimates drift (an adaptation not settled); more chains where a check
is short of power (a new run of :math:`1.2\,C(\delta/\text{detect})^2` chains); the ladder's first rungs, more
chains on every rung or a finer rung where its fit is undecided. An INCONCLUSIVE names what would decide it.

What it cannot see: the weights are checked only through the two moments of each coordinate, on a
Gaussian target (or a target's truth at T = 1); contour SGLD's own estimator is exact only as its partition
:math:`\Delta u` shrinks (its weight :math:`\theta^\zeta(J(x))` is the flattening at the top of the
partition, not at the energy :math:`U(x)`), and with a noisy energy estimate it is biased (docs/gates_derivations.md,
section "Weighted check"); shrinking the steps removes neither, so the ladder reports them as errors that persist.
"""

from __future__ import annotations

import dataclasses
import math
import time
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from sgbench import samplers
from sgbench.base.arguments import in_interval, integer_at_least
from sgbench.bench.adapters import AdaptedSampler
from sgbench.bench.gate.outcome import Outcome
from sgbench.bench.gate.resolution import DEFAULT_CHAINS, DEFAULT_DETECT, Resolution
from sgbench.bench.gate.start import Travel, overdispersed, thin_for, travel
from sgbench.bench.running import run as running
from sgbench.bench.running.result import params_dict
from sgbench.bench.validate import targets as vt
from sgbench.bench.validate.budget import Account, Budget
from sgbench.bench.validate.session import CHAINS_MARGIN, MAX_LOOKS, look_alpha
from sgbench.bench.validate.step_ladder import FIRST_RUNGS, MAX_RUNGS, STEP, fit_rungs
from sgbench.bench.validate.verdict import WARMUP_MARGIN, Remedy
from sgbench.reference.checks import CheckResult, mean_check, standard_error
from sgbench.reference.checks.vanishing_bias import MISS, PERSISTS, VANISHES, LadderFit

ALPHA = 1e-3
DEFAULT_STEPS = 20_000
HALVED = ("step_size", "step_size_stoch")  # what each rung of the ladder halves, where the sampler has it
STATISTICS = ("mean", "second_moment")


class WeightedState(NamedTuple):
    """The wrapped sampler's state (:func:`weighted_sampler`): the inner sampler's ``position`` and ``inner``
    state; the running log scale ``shift`` of the weights; per half of the scored window (leading axis 2), the
    sums of the weights ``weight_sum``, of their squares ``weight_sq_sum``, of :math:`w z` (``first``, (2, dim))
    and of :math:`w z^2` (``second``, (2, dim)), each relative to :math:`e^{\text{shift}}`; ``scored`` the scored
    steps counted and ``steps`` the steps made."""

    position: Any
    inner: Any
    shift: Any
    weight_sum: Any
    weight_sq_sum: Any
    first: Any
    second: Any
    scored: Any
    steps: Any


def _wrong_driver(state, grad_fn, draws, params):
    raise TypeError("the weighted check runs the JAX driver only (the wrapped adapter's optimized_step)")


def weighted_sampler(sampler, warmup: int, center, scale, halfway: int | None = None) -> samplers.Sampler:
    """``sampler`` whose state also accumulates the weighted sums of the module docstring over the steps
    after the first ``warmup``, with :math:`z = (x - \text{center})/\text{scale}`, separately before and from
    step ``halfway`` (the two halves of the scored window).

    Args:
        sampler: an AdaptedSampler run by the JAX driver (its ``log_weight``, or unit weights when None), or a
            suite sampler (unit weights).
        warmup: the steps not scored.
        center: (dim,) the truth's mean.
        scale: (dim,) its standard deviations at the run's temperature.
        halfway: the first step of the second half (None: never, all in the first).

    Returns:
        a samplers.Sampler with the same ``Params`` and draws, whose ``State`` is :class:`WeightedState`.
    """
    log_weight = getattr(sampler, "log_weight", None)
    center, scale = np.asarray(center, dtype=np.float64), np.asarray(scale, dtype=np.float64)
    halfway = np.iinfo(np.int64).max if halfway is None else int(halfway)

    def init(position, params):
        inner = sampler.init(position, params)
        pair = jnp.zeros(2, jnp.float64)
        vectors = jnp.zeros((2,) + center.shape, jnp.float64)
        return WeightedState(inner.position, inner, jnp.asarray(-jnp.inf, jnp.float64), pair, pair, vectors, vectors,
                             0, 0)

    def prime(state, oracle):
        inner = sampler.prime(state.inner, oracle)
        return state._replace(position=inner.position, inner=inner)

    def step(state: WeightedState, grad_fn, draws, params):
        inner, info = sampler.optimized_step(state.inner, grad_fn, draws, params)
        scored = (state.steps >= warmup) & jnp.asarray(info.is_sample, bool)
        logw = jnp.zeros((), jnp.float64) if log_weight is None else jnp.asarray(
            log_weight(inner, params), jnp.float64)
        logw = jnp.where(scored, logw, -jnp.inf)  # NaN stays NaN: the chain's sums turn non-finite (diverged)
        shift = jnp.maximum(state.shift, logw)
        rescale = jnp.where(shift == state.shift, 1.0, jnp.exp(state.shift - shift))
        w = jnp.where(logw == -jnp.inf, 0.0, jnp.exp(logw - shift))
        half = jnp.where(state.steps >= halfway, jnp.array([0.0, 1.0]), jnp.array([1.0, 0.0]))
        wh = w * half
        z = (jnp.asarray(inner.position, jnp.float64) - center) / scale
        new = WeightedState(inner.position, inner, shift, state.weight_sum * rescale + wh,
                            state.weight_sq_sum * rescale**2 + wh * w, state.first * rescale + wh[:, None] * z,
                            state.second * rescale + wh[:, None] * z * z, state.scored + jnp.where(scored, 1, 0),
                            state.steps + 1)
        return new, info

    return samplers.Sampler(
        name=sampler.name, citation=sampler.citation, Params=sampler.Params, State=WeightedState, init=init,
        reference_step=_wrong_driver, optimized_step=step, draw_spec=sampler.draw_spec, prepare=sampler.prepare,
        prime=None if sampler.prime is None else prime)


@dataclasses.dataclass(frozen=True)
class WeightedRun:
    """One run of :func:`run_weighted`: per chain (healthy chains only, ``chains`` of them) the linearised
    statistics ``u_mean`` and ``u_second`` (chains, dim) over the scored window and ``halves`` (2 statistics,
    chains, 2 halves, dim) over its first and second half, ``weight_ess`` (chains,) the weights' effective
    sample size over the scored steps; the pooled estimates ``mean_error`` and ``variance_error`` (dim,) with their
    standard errors, ``ratio_bias`` (the pooled estimates' delta-method ratio bias, per statistic (2, dim));
    ``diverged`` chains; the ``travel`` of the unweighted draws; the driver's ``run_seconds`` and
    ``compile_seconds``, the ``chain_steps`` and ``grad_evals`` made, and the ``params`` run."""

    u_mean: np.ndarray
    u_second: np.ndarray
    halves: np.ndarray
    weight_ess: np.ndarray
    mean_error: np.ndarray
    mean_error_se: np.ndarray
    variance_error: np.ndarray
    variance_error_se: np.ndarray
    ratio_bias: np.ndarray
    diverged: int
    chains: int
    travel: Travel
    run_seconds: float
    compile_seconds: float
    chain_steps: int
    grad_evals: float
    params: dict


def _statistics(state: WeightedState, scored: int, healthy: np.ndarray):
    """(u_mean, u_second, weight_ess, normalised weight sums, healthy) of the ``healthy`` chains from the stacked
    final states (module docstring): ``u_mean`` and ``u_second`` (chains, 3, dim) over the whole scored window,
    its first half and its second half (each half's sums over its own steps, on the whole window's scale);
    ``healthy`` is narrowed to the chains whose sums are finite and positive."""
    shift = np.asarray(state.shift, dtype=np.float64)
    weight_sum, weight_sq_sum = (np.asarray(v, dtype=np.float64) for v in (state.weight_sum, state.weight_sq_sum))
    first, second = np.asarray(state.first, dtype=np.float64), np.asarray(state.second, dtype=np.float64)
    healthy = (healthy & np.isfinite(shift) & np.all(np.isfinite(first), axis=(1, 2))
               & np.all(np.isfinite(second), axis=(1, 2)) & np.all(np.isfinite(weight_sum), axis=1)
               & (weight_sum.sum(axis=1) > 0))
    if not healthy.any():
        empty = np.zeros((0, 3) + first.shape[2:])
        return empty, empty, np.zeros(0), np.zeros(0), healthy
    scale = np.exp(shift[healthy] - shift[healthy].max())[:, None]  # every chain's sums on one scale
    counts = np.array([scored, scored // 2, scored - scored // 2], dtype=np.float64)  # halves: before, from halfway
    sums = lambda v: np.concatenate([v.sum(axis=1, keepdims=True), v], axis=1)  # noqa: E731  (whole, halves)
    w, w1, w2 = (sums(v[healthy]) for v in (weight_sum[:, :, None], first, second))
    total = scale[:, 0] * w[:, 0, 0] / scored
    b_bar = total.mean()
    per_step = scale[:, :, None] / counts[None, :, None] / b_bar
    u_mean = per_step * w1
    u_second = per_step * (w2 - w)
    ess = weight_sum[healthy].sum(axis=1) ** 2 / weight_sq_sum[healthy].sum(axis=1) / scored
    return u_mean, u_second, ess, total / b_bar, healthy


def _cov(u: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Per coordinate, the sample covariance over chains of ``u`` (chains, dim) with ``b`` (chains,)."""
    return ((u - u.mean(axis=0)) * (b - b.mean())[:, None]).sum(axis=0) / (len(b) - 1)


def _target_spec(spec, target_params: dict | None) -> dict:
    """The validation target's parameters with ``target_params`` in place (a new ``noise`` model drops the
    old model's ``noise_*`` parameters)."""
    base = dict(spec.params)
    if target_params and "noise" in target_params:
        base = {k: v for k, v in base.items() if not k.startswith("noise_")}
    return {**base, **(target_params or {})}


def run_weighted(sampler, params: dict, target_key: str = "icg", *, num_chains: int = DEFAULT_CHAINS,
                 num_steps: int = DEFAULT_STEPS, warmup: int | None = None, seed: int = 0,
                 target_params: dict | None = None, dtype: str = "float64") -> WeightedRun:
    """Run ``sampler``'s chains and reduce them to the statistics of the module docstring (no test).

    Args:
        sampler: an AdaptedSampler of the JAX driver (weights from its ``log_weight``) or a suite sampler
            (unit weights).
        params: its hyperparameters.
        target_key: a key of ``sgbench.bench.validate.targets``.
        num_chains: C, at least 2.
        num_steps: scored steps per chain, at least 4.
        warmup: steps before them (default ``num_steps``).
        seed: the run's seed (the chains' keys and starts).
        target_params: replace these of the validation target's parameters (e.g. ``{"noise": "none"}``).
        dtype: the chains' dtype.

    Returns:
        the :class:`WeightedRun`.
    """
    integer_at_least("num_chains", num_chains, 2)
    integer_at_least("num_steps", num_steps, 4)
    warmup = num_steps if warmup is None else integer_at_least("warmup", warmup, 0)
    if isinstance(sampler, AdaptedSampler) and sampler.backend != "jax":
        raise ValueError(f"{sampler.name} runs under the {sampler.backend!r} driver; the weighted check runs the "
                         "JAX driver only")
    spec = vt.get(target_key)
    target_spec = _target_spec(spec, target_params)
    from sgbench import targets

    target = targets.get(spec.target, **target_spec)
    p = sampler.params_for(target, **params)
    temperature = float(getattr(p, "temperature", 1.0))
    truth = target.truth
    if truth is None or (temperature != 1.0 and not spec.gaussian):
        raise ValueError(f"target {target_key!r} has no exact truth at temperature {temperature:g} for the weighted "
                         "check (the Gaussian targets have one at every temperature)")
    mean = np.asarray(truth.mean, dtype=np.float64)
    variance = temperature * np.diag(np.asarray(truth.covariance, dtype=np.float64))
    wrapped = weighted_sampler(sampler, warmup, mean, np.sqrt(variance), halfway=warmup + num_steps // 2)
    starts = overdispersed(target, jax.random.key(seed), num_chains, mean)
    keep_every = thin_for(num_steps)
    result = running.run(wrapped, spec.target, target_params=target_spec, params=dict(params),
                         num_chains=num_chains, num_steps=num_steps, num_burnin=warmup, seed=seed,
                         initial_position=starts, keep_samples=True, keep_every=keep_every, dtype=dtype)
    trace = result.trace
    u_mean, u_second, ess, b, healthy = _statistics(trace.final_state, num_steps,
                                                    ~np.asarray(trace.diverged, dtype=bool))
    halves = np.stack([u_mean[:, 1:], u_second[:, 1:]])
    u_mean, u_second = u_mean[:, 0], u_second[:, 0]
    chains = u_mean.shape[0]
    nan = np.full(mean.shape, np.nan)
    if chains >= 2:
        se = [standard_error(u_mean), standard_error(u_second)]
        bias = np.array([-_cov(u, b) / chains for u in (u_mean, u_second)])
        estimates = [u_mean.mean(axis=0), u_second.mean(axis=0)]
    else:
        se, bias, estimates = [nan, nan], np.array([nan, nan]), [nan, nan]
    moved = travel(starts, trace.samples, ~healthy, mean, variance, keep_every, warmup, num_steps)
    return WeightedRun(u_mean=u_mean, u_second=u_second, halves=halves, weight_ess=ess, mean_error=estimates[0],
                       mean_error_se=se[0], variance_error=estimates[1], variance_error_se=se[1], ratio_bias=bias,
                       diverged=int(num_chains - chains), chains=chains, travel=moved,
                       run_seconds=float(trace.run_seconds), compile_seconds=float(trace.compile_seconds),
                       chain_steps=num_chains * (warmup + num_steps), grad_evals=float(np.sum(trace.grad_evals)),
                       params=params_dict(p))


@dataclasses.dataclass(frozen=True)
class WeightedCheck:
    """The weighted check's verdict (module docstring).

    Attributes:
        sampler: the sampler's name.
        params: its hyperparameters, defaults filled in.
        target: the validation target's key.
        outcome: PASSED, FAILED or INCONCLUSIVE.
        reason: why, in words (with the chains that would decide where power is short).
        mean_error: (dim,) the pooled weighted estimate of each coordinate's standardised mean error
            :math:`(\\hat\\mu_i - \\mu_i)/\\sqrt{T\\Sigma_{ii}}`.
        mean_error_se: (dim,) its standard error over the chains.
        variance_error: (dim,) the pooled weighted relative variance error
            :math:`r_i = \\hat E_w[(x_i - \\mu_i)^2]/(T\\Sigma_{ii}) - 1`.
        variance_error_se: (dim,) its standard error.
        detectable: the largest deviation (in r, and in standard deviations of the mean) that the two checks
            detect with probability 0.9 (NaN with fewer than 2 healthy chains).
        detect: the deviation the check had to resolve.
        chains_needed: the chains that would resolve ``detect`` (``num_chains`` where they do).
        checks: the ``mean`` and ``second_moment`` CheckResults (each at rate ``alpha / 4``).
        ladder: the step ladder's last fit (``sgbench.reference.checks.vanishing_bias.LadderFit``), where a truth
            check failed after the chains forgot their start and the estimates did not drift; else None.
        drift: whether the weighted estimates of the two halves of the scored window agree (``mean_check`` of
            their difference at the truth checks' rate; a disagreement with truth while it fails asks for a longer
            warm-up, never FAILS); None with fewer than 2 healthy chains.
        variance_error_halves: (2, dim) the relative variance error over the first and the second half.
        travel: how far the chains travelled (unweighted draws).
        num_chains, num_steps, warmup: the last first run's chains, scored steps and warm-up steps (the remedies
            change them).
        diverged: chains with a non-finite position or weighted sum.
        weight_ess: the median over chains of the weights' effective sample size over the scored steps, as a
            fraction of them.
        ratio_bias: the largest absolute delta-method ratio bias of the pooled estimates (O(1/(Cn))).
        alpha: the family-wise false-failure rate over all looks.
        looks: the looks at the evidence (1: the first run decided or nothing could be run).
        wall_seconds: wall-clock seconds of the whole check (runs, compilation, statistics).
        chain_steps_per_second: chain-steps (warm-up included) per second of the first run's compiled program.
        grad_evals_per_second: gradient-oracle evaluations per second of that program.
    """

    sampler: str
    params: dict
    target: str
    outcome: Outcome
    reason: str
    mean_error: np.ndarray
    mean_error_se: np.ndarray
    variance_error: np.ndarray
    variance_error_se: np.ndarray
    detectable: float
    detect: float
    chains_needed: int
    checks: tuple
    ladder: LadderFit | None
    drift: CheckResult | None
    variance_error_halves: np.ndarray
    travel: Travel
    num_chains: int
    num_steps: int
    warmup: int
    diverged: int
    weight_ess: float
    ratio_bias: float
    alpha: float
    looks: int
    wall_seconds: float
    chain_steps_per_second: float
    grad_evals_per_second: float

    @property
    def passed(self) -> bool:
        return self.outcome is Outcome.PASSED

    def summary(self) -> str:
        """The outcome and reason, the estimates with standard errors, and the speed, in a few lines."""
        fmt = lambda v: np.array2string(np.asarray(v), precision=4, suppress_small=True)  # noqa: E731
        return "\n".join([
            f"{self.sampler} on {self.target}: {self.outcome.name}: {self.reason}",
            f"  weighted mean error (sd): {fmt(self.mean_error)} +- {fmt(self.mean_error_se)}",
            f"  weighted variance error r: {fmt(self.variance_error)} +- {fmt(self.variance_error_se)} (halves of "
            f"the window: {fmt(self.variance_error_halves[0])}, {fmt(self.variance_error_halves[1])})",
            f"  detects {self.detectable:.3g} (asked {self.detect:g}) at alpha {self.alpha:g}; {self.num_chains} "
            f"chains x ({self.warmup} + {self.num_steps}) steps, {self.diverged} diverged; weight ESS "
            f"{self.weight_ess:.2g}",
            f"  {self.wall_seconds:.1f} s; {self.chain_steps_per_second:.3g} chain-steps/s, "
            f"{self.grad_evals_per_second:.3g} gradient evaluations/s"])


def halved_params(params: dict, names=HALVED, times: int = 1) -> dict:
    """``params`` (defaults filled in) with each of ``names`` it has divided by ``2**times``."""
    return {key: value / 2**times if key in names else value for key, value in params.items()}


def _truth_checks(run: WeightedRun, alpha: float) -> tuple[CheckResult, ...]:
    """``mean`` and ``second_moment``: ``mean_check`` of the linearised statistics against 0, each at ``alpha / 2``
    (Bonferroni over the coordinates inside)."""
    return tuple(mean_check(u, np.zeros(u.shape[1]), alpha=alpha / 2, name=name)
                 for name, u in zip(STATISTICS, (run.u_mean, run.u_second)))


def _drift_check(run: WeightedRun, alpha: float) -> CheckResult | None:
    """``drift``: ``mean_check`` at ``alpha`` that the second half of the scored window's linearised statistics
    (both, every coordinate) have the first half's mean: an adaptation still settling, or a weighted law that
    keeps changing, fails it. It never FAILS a sampler: a disagreement with truth while it fails asks for a longer
    warm-up."""
    if run.chains < 2:
        return None
    difference = np.moveaxis(run.halves[:, :, 1] - run.halves[:, :, 0], 0, 1)  # (chains, 2 statistics, dim)
    return mean_check(difference, np.zeros(difference.shape[1:]), alpha=alpha, name="drift")


def _rung_values(run: WeightedRun) -> dict:
    return {"mean_error": run.u_mean, "second_moment_error": run.u_second}


@dataclasses.dataclass
class _Runs:
    """The weighted check's runs so far: the first run's ``chains``, ``steps`` and ``warmup``, its run (``first``),
    the step ladder's rungs below it (``ladder``, runs at h/2, h/4, ...), the look (1, 2, ...) and the runs made
    (each gets its own seed)."""

    chains: int
    steps: int
    warmup: int
    first: WeightedRun | None = None
    ladder: list = dataclasses.field(default_factory=list)
    look: int = 0
    made: int = 0


def check_weighted(sampler, params: dict, target_key: str = "icg", *, num_chains: int = DEFAULT_CHAINS,
                   num_steps: int = DEFAULT_STEPS, warmup: int | None = None, seed: int = 0,
                   detect: float = DEFAULT_DETECT, alpha: float = ALPHA, target_params: dict | None = None,
                   halve: tuple[str, ...] = HALVED, budget="2min", progress=None,
                   account: Account | None = None) -> WeightedCheck:
    """The importance-weighted check of ``sampler`` against truth (module docstring), with the remedies of an
    INCONCLUSIVE run within ``budget``.

    Args:
        sampler: an AdaptedSampler run by the JAX driver (its ``log_weight``; unit weights without one), or a
            suite sampler (unit weights).
        params: its hyperparameters (a dict).
        target_key: a key of ``sgbench.bench.validate.targets`` with an exact truth ("icg", "icg_stiff",
            "linreg"; "gmm" at temperature 1).
        num_chains: C independent chains, at least 2.
        num_steps: scored steps per chain, at least 4.
        warmup: steps before them (default ``num_steps``).
        seed: the seed of the first run's chains and starts (each later run adds 1000 per run made).
        detect: the relative variance error (and mean error in standard deviations) the check must resolve.
        alpha: the family-wise false-failure rate over all looks, in (0, 1).
        target_params: replace these of the target's parameters (e.g. ``{"noise": "none"}``: exact gradients
            and log densities).
        halve: the hyperparameters each rung of the step ladder halves, where the sampler has them.
        budget: what the first run and the remedies may spend (``sgbench validate --budget``: "20min", "90s",
            or gradient evaluations, "2e9").
        progress: called with a line per run (None: silent).
        account: the budget's account of a validation of several targets, the target started
            (``Account.start_target``); None: ``budget`` alone, for this target.

    Returns:
        the :class:`WeightedCheck`. ValueError naming the parameter on bad input, before anything runs.
    """
    start = time.perf_counter()
    alpha = in_interval("alpha", alpha, 0.0, 1.0, low_open=True, high_open=True)
    resolution = Resolution(detect)
    integer_at_least("num_chains", num_chains, 2)
    integer_at_least("num_steps", num_steps, 4)
    warmup = num_steps if warmup is None else integer_at_least("warmup", warmup, 0)
    if account is None:
        account = Account(Budget.parse(budget), targets=1)
        account.start_target()
    say = progress or (lambda line: None)
    runs = _Runs(num_chains, num_steps, warmup)

    def run(params_at, chains, steps, warm, rung=0):
        at = f" at h/{2 ** rung}" if rung else ""
        say(f"{sampler.name} on {target_key}: {chains} chains x ({warm} + {steps}) steps{at}")
        started = time.perf_counter()
        done = run_weighted(sampler, params_at, target_key, num_chains=chains, num_steps=steps, warmup=warm,
                            seed=seed + 1000 * runs.made, target_params=target_params)
        runs.made += 1
        account.charge(time.perf_counter() - started, done.grad_evals)
        return done

    runs.first = run(dict(params), num_chains, num_steps, warmup)
    while True:
        runs.look += 1
        rate = look_alpha(alpha, runs.look)
        first = runs.first
        checks = _truth_checks(first, rate / 2) if first.chains >= 2 else ()
        drift = _drift_check(first, rate / 2)
        outcome, reason, fit, fix = _decide(sampler.name, runs, checks, drift, resolution, rate,
                                            look_alpha(MISS, runs.look))
        if fix is None:
            break
        if runs.look >= MAX_LOOKS:
            reason += f"; {fix.words} would decide, but this check has had its {MAX_LOOKS} looks"
            break
        cost = _cost(runs, fix)
        if cost is None:
            reason += f"; {fix.words} would be next, beyond the ladder's {MAX_RUNGS} rungs"
            break
        if not account.affords(*cost):
            reason += (f"; {fix.words} would decide, at a predicted {cost[0]:.0f} s: beyond the budget "
                       f"({account.budget}); budget {account.would_decide(*cost)} would run it")
            break
        say(f"{sampler.name} on {target_key}: {fix.words} (predicted {cost[0]:.0f} s)")
        _apply(runs, fix, run, dict(first.params), halve)
    first = runs.first
    halves = first.halves[1].mean(axis=0) if first.chains >= 2 else np.full((2,) + first.mean_error.shape, np.nan)
    detectable = max((float(np.nanmax(np.atleast_1d(c.detectable))) for c in checks), default=math.nan)
    needed = max([runs.chains] + [math.ceil(runs.chains * (d / detect) ** 2) for d in
                                  (float(np.nanmax(np.atleast_1d(c.detectable))) for c in checks) if math.isfinite(d)])
    seconds = first.run_seconds or math.nan
    return WeightedCheck(
        sampler=sampler.name, params=first.params, target=target_key, outcome=outcome, reason=reason,
        mean_error=first.mean_error, mean_error_se=first.mean_error_se, variance_error=first.variance_error,
        variance_error_se=first.variance_error_se, detectable=detectable, detect=float(detect), chains_needed=needed,
        checks=checks, ladder=fit, drift=drift, variance_error_halves=halves, travel=first.travel,
        num_chains=runs.chains, num_steps=runs.steps, warmup=runs.warmup, diverged=first.diverged,
        weight_ess=float(np.median(first.weight_ess)) if len(first.weight_ess) else math.nan,
        ratio_bias=float(np.nanmax(np.abs(first.ratio_bias))) if first.chains >= 2 else math.nan, alpha=alpha,
        looks=runs.look, wall_seconds=time.perf_counter() - start, chain_steps_per_second=first.chain_steps / seconds,
        grad_evals_per_second=first.grad_evals / seconds)


def _decide(name: str, runs: _Runs, checks, drift, resolution: Resolution, alpha: float, miss: float):
    """(outcome, reason, the ladder's fit or None, the remedy that would decide or None) by the rules of the module
    docstring, at this look's rates."""
    first = runs.first
    moved = first.travel
    if first.diverged:
        return Outcome.FAILED, (f"{name} diverged in {first.diverged} of {runs.chains} chains ({runs.warmup} warm-up + "
                                f"{runs.steps} scored steps)"), None, None
    if moved.still:
        return Outcome.FAILED, f"{name}: {moved.describe()}", None, None
    wanted = math.ceil(max(2 * runs.warmup, WARMUP_MARGIN * moved.warmup_needed))
    longer = Remedy("warmup", wanted, f"a warm-up of {wanted} steps")
    failed = sorted(c.name for c in checks if not c.passed)
    if not failed:
        claim = f"{name}'s weighted estimates agree with truth"
        if not moved.forgot:
            return Outcome.INCONCLUSIVE, f"{claim}, but {moved.describe()}", None, longer
        short = resolution.shortfalls(checks, first.chains)
        if short:
            need = resolution.chains_needed(checks, first.chains)
            return Outcome.INCONCLUSIVE, f"{claim}, but {'; '.join(short)}", None, Remedy("chains", need,
                                                                                          f"{need} chains")
        return Outcome.PASSED, claim, None, None
    finding = (f"the weighted estimates disagree with truth ({', '.join(failed)} failed; largest |r| "
               f"{np.max(np.abs(first.variance_error)):.3g}, largest |mean error| "
               f"{np.max(np.abs(first.mean_error)):.3g} sd)")
    if not moved.forgot:
        return Outcome.INCONCLUSIVE, f"{finding}, but {moved.describe()}", None, longer
    if drift is not None and not drift.passed:
        halves = first.halves[1].mean(axis=0)
        return Outcome.INCONCLUSIVE, (
            f"{finding}, but they drift between the halves of the scored window (largest |r| "
            f"{np.max(np.abs(halves[0])):.3g} then {np.max(np.abs(halves[1])):.3g}; drift z = {drift.statistic:.3g} "
            f"against {drift.threshold:.3g}): the sampler's adaptation has not settled"), None, Remedy(
            "warmup", 2 * runs.warmup, f"a warm-up of {2 * runs.warmup} steps")
    if not runs.ladder:
        return Outcome.INCONCLUSIVE, finding, None, Remedy(
            "ladder", 0.0, f"the step ladder (to h/{2 ** (FIRST_RUNGS - 1)})")
    rungs = [first, *runs.ladder]
    lost = [(k, r.diverged) for k, r in enumerate(rungs) if r.diverged or r.chains < 2]
    if lost:
        k, n = lost[0]
        return Outcome.FAILED, f"{finding}; on its step ladder it diverged in {n} chains at h/{2 ** k}", None, None
    h = float(first.params.get(STEP, 1.0))  # the Langevin step (its ratios are what the fit reads)
    fit = fit_rungs(tuple(h / 2**k for k in range(len(rungs))), [_rung_values(r) for r in rungs], alpha / 2, miss,
                    resolution.relative_variance)
    if fit.outcome == PERSISTS:
        return Outcome.FAILED, f"{finding}; {fit.describe()}", fit, None
    if fit.outcome == VANISHES:
        return Outcome.PASSED, (f"{finding} at its step, a discretisation bias: {fit.describe()} (a bias of the right "
                                "order but the wrong size is not seen without a claim)"), fit, None
    if math.isfinite(fit.chains_factor):
        factor = fit.chains_factor
        fix = Remedy("ladder_chains", factor, f"{factor:.2g} times the chains on every rung of the step ladder")
    else:
        fix = Remedy("ladder_rung", 0.0, f"a finer rung (h/{2 ** len(rungs)}) on the step ladder")
    return Outcome.INCONCLUSIVE, f"{finding}; {fit.describe()}", fit, fix


def _rung_chain_steps(runs: _Runs, k: int, chains: int) -> float:
    return float(chains) * 2**k * (runs.warmup + runs.steps)


def _cost(runs: _Runs, fix: Remedy) -> tuple[float, float] | None:
    """The predicted (seconds, gradient evaluations) of ``fix`` (None: beyond the ladder's rungs): the first run's
    seconds and evaluations per chain-step, and its compilation once per new run."""
    first = runs.first
    if fix.kind == "warmup":
        steps, made = runs.chains * (fix.amount + runs.steps), 1
    elif fix.kind == "chains":
        steps, made = math.ceil(CHAINS_MARGIN * fix.amount) * (runs.warmup + runs.steps), 1
    elif fix.kind == "ladder":
        steps, made = sum(_rung_chain_steps(runs, k, runs.chains) for k in range(1, FIRST_RUNGS)), FIRST_RUNGS - 1
    elif fix.kind == "ladder_rung":
        k = len(runs.ladder) + 1
        if k >= MAX_RUNGS:
            return None
        steps, made = _rung_chain_steps(runs, k, runs.chains), 1
    else:
        chains = math.ceil(CHAINS_MARGIN * fix.amount * runs.chains)
        steps, made = sum(_rung_chain_steps(runs, k, chains) for k in range(len(runs.ladder) + 1)), len(runs.ladder) + 1
    return (first.run_seconds / first.chain_steps * steps + first.compile_seconds * made,
            first.grad_evals / first.chain_steps * steps)


def _apply(runs: _Runs, fix: Remedy, run, params: dict, halve) -> None:
    """Run ``fix``: a new first run (a longer warm-up, more chains: the ladder starts again), the first rungs, a
    finer rung, or every rung again with more chains."""
    if fix.kind in ("warmup", "chains"):
        if fix.kind == "warmup":
            runs.warmup = int(fix.amount)
        else:
            runs.chains = math.ceil(CHAINS_MARGIN * fix.amount)
        runs.first, runs.ladder = run(params, runs.chains, runs.steps, runs.warmup), []
        return
    rung = lambda k, chains: run(halved_params(params, halve, k), chains, 2**k * runs.steps,  # noqa: E731
                                 2**k * runs.warmup, rung=k)
    if fix.kind == "ladder":
        runs.ladder = [rung(k, runs.chains) for k in range(1, FIRST_RUNGS)]
    elif fix.kind == "ladder_rung":
        runs.ladder.append(rung(len(runs.ladder) + 1, runs.chains))
    else:
        runs.chains = math.ceil(CHAINS_MARGIN * fix.amount * runs.chains)
        runs.first = run(params, runs.chains, runs.steps, runs.warmup)
        runs.ladder = [rung(k, runs.chains) for k in range(1, len(runs.ladder) + 1)]
