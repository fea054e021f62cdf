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
Bonferroni over the :math:`d` coordinates and the two statistics at family-wise rate :math:`\alpha/2`, so each
compares with :math:`t_c = t_{C-1}(1 - \alpha/(8d))`. A check that fails is followed by the same run at half
the steps (``HALVED``: the Langevin step and the stochastic-approximation step) for twice the steps and
warm-up, and the step-halving check (``sgbench.bench.gate.step_halving``) at rate :math:`\alpha/2`. A correct
sampler is FAILED by chance with probability at most :math:`\alpha` (:math:`\alpha/2` for the truth family;
for a sampler whose error is a discretisation bias of order :math:`\ge 1`, :math:`\alpha/2` for the halving
check).

**Power and tolerance.** Each check detects, with probability 0.9, a deviation of
:math:`\delta = q_{0.9}(t_c)\,\widehat{se}` (``detectable``; :math:`q` the noncentral-t quantile,
``sgbench.reference.checks.detection_quantile``): with :math:`C = 256`, :math:`d = 4` and :math:`\alpha = 10^{-3}`,
:math:`t_c = 4.07` and :math:`q = 5.37` standard errors (:math:`C = 64`: 4.29 and 5.65). The tolerance is this
calculation: the check PASSES only if :math:`\delta \le` ``detect`` (default 0.1, a relative variance error
and as many standard deviations of the mean, ``sgbench.bench.gate.resolution``) for both statistics; otherwise
it is INCONCLUSIVE and says how many chains, :math:`C(\delta/\text{detect})^2`, would decide. Importance
weights lengthen the standard error by about :math:`\sqrt{n/n_{\text{eff}}}`,
:math:`n_{\text{eff}} = (\sum w)^2/\sum w^2` (reported per chain as ``weight_ess``).

**Outcome** (the rules of ``sgbench validate`` against truth, ``sgbench.bench.gate.verdict``): a chain diverged
(a non-finite position or weighted sum): FAILED; the chains do not move: FAILED; the checks disagree with
truth after the chains forgot their start: FAILED when the error does not shrink at half the steps, else
INCONCLUSIVE (a discretisation-like bias, with its size); disagreement before forgetting, or while the weighted
estimates still drift between the two halves of the scored window (an adaptation not settled): INCONCLUSIVE;
agreement after forgetting that resolves ``detect``: PASSED; agreement that does not: INCONCLUSIVE with the chains that
would decide.

What it cannot see: the weights are checked only through the two moments of each coordinate, on a
Gaussian target (or a target's truth at T = 1); contour SGLD's own estimator is exact only as its partition
:math:`\Delta u` shrinks (its weight :math:`\theta^\zeta(J(x))` is the flattening at the top of the
partition, not at the energy :math:`U(x)`), and with a noisy energy estimate it is biased (docs/gates_derivations.md,
section "Weighted check"); halving the steps does not shrink either, so the check reports them as failures.
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
from sgbench.bench.gate import validation_targets as vt
from sgbench.bench.gate.outcome import Outcome
from sgbench.bench.gate.resolution import DEFAULT_CHAINS, DEFAULT_DETECT, Resolution
from sgbench.bench.gate.start import Travel, overdispersed, thin_for, travel
from sgbench.bench.gate.step_halving import halving_check
from sgbench.bench.running import run as running
from sgbench.bench.running.result import params_dict
from sgbench.reference.checks import CheckResult, mean_check, standard_error

ALPHA = 1e-3
DEFAULT_STEPS = 20_000
HALVED = ("step_size", "step_size_stoch")  # the hyperparameters the half-step run halves, where the sampler has them
HALF_STEP_SEED_OFFSET = 3000  # the half-step run's chains are independent of the first run's
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
        target_key: a key of ``sgbench.bench.gate.validation_targets``.
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
        halving: the step-halving check at rate ``alpha / 2`` (or the half-step run's ``finite`` check where it
            diverged), where a truth check failed; else None.
        drift: whether the weighted estimates of the two halves of the scored window agree (``mean_check`` of
            their difference at rate ``alpha / 2``; it turns a FAILED against truth into INCONCLUSIVE, so it adds no
            false failure, and the reason of one that is not PASSED mentions it); None with fewer than 2 healthy
            chains.
        variance_error_halves: (2, dim) the relative variance error over the first and the second half.
        travel: how far the chains travelled (unweighted draws).
        num_chains, num_steps, warmup: the run's chains, scored steps and warm-up steps.
        diverged: chains with a non-finite position or weighted sum.
        weight_ess: the median over chains of the weights' effective sample size over the scored steps, as a
            fraction of them.
        ratio_bias: the largest absolute delta-method ratio bias of the pooled estimates (O(1/(Cn))).
        alpha: the family-wise false-failure rate.
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
    halving: CheckResult | None
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


def halved_params(params: dict, names=HALVED) -> dict:
    """``params`` (defaults filled in) with each of ``names`` it has divided by 2."""
    return {key: value / 2 if key in names else value for key, value in params.items()}


def _truth_checks(run: WeightedRun, alpha: float) -> tuple[CheckResult, ...]:
    """``mean`` and ``second_moment``: ``mean_check`` of the linearised statistics against 0, each at ``alpha / 2``
    (Bonferroni over the coordinates inside)."""
    return tuple(mean_check(u, np.zeros(u.shape[1]), alpha=alpha / 2, name=name)
                 for name, u in zip(STATISTICS, (run.u_mean, run.u_second)))


def _drift_check(run: WeightedRun, alpha: float) -> CheckResult | None:
    """``drift``: ``mean_check`` at ``alpha`` that the second half of the scored window's linearised statistics
    (both, every coordinate) have the first half's mean: an adaptation still settling, or a weighted law that
    keeps changing, fails it. Information only: it changes no outcome."""
    if run.chains < 2:
        return None
    difference = np.moveaxis(run.halves[:, :, 1] - run.halves[:, :, 0], 0, 1)  # (chains, 2 statistics, dim)
    return mean_check(difference, np.zeros(difference.shape[1:]), alpha=alpha, name="drift")


def check_weighted(sampler, params: dict, target_key: str = "icg", *, num_chains: int = DEFAULT_CHAINS,
                   num_steps: int = DEFAULT_STEPS, warmup: int | None = None, seed: int = 0,
                   detect: float = DEFAULT_DETECT, alpha: float = ALPHA, target_params: dict | None = None,
                   halve: tuple[str, ...] = HALVED, progress=None) -> WeightedCheck:
    """The importance-weighted check of ``sampler`` against truth (module docstring).

    Args:
        sampler: an AdaptedSampler run by the JAX driver (its ``log_weight``; unit weights without one), or a
            suite sampler (unit weights).
        params: its hyperparameters (a dict).
        target_key: a key of ``sgbench.bench.gate.validation_targets`` with an exact truth ("icg", "icg_stiff",
            "linreg"; "gmm" at temperature 1).
        num_chains: C independent chains, at least 2.
        num_steps: scored steps per chain, at least 4.
        warmup: steps before them (default ``num_steps``).
        seed: the seed of the chains' keys and starts (the half-step run uses ``seed + 3000``).
        detect: the relative variance error (and mean error in standard deviations) the check must resolve.
        alpha: the family-wise false-failure rate, in (0, 1).
        target_params: replace these of the target's parameters (e.g. ``{"noise": "none"}``: exact gradients
            and log densities).
        halve: the hyperparameters the half-step run halves, where the sampler has them.
        progress: called with a line per run (None: silent).

    Returns:
        the :class:`WeightedCheck`. ValueError naming the parameter on bad input, before anything runs.
    """
    start = time.perf_counter()
    alpha = in_interval("alpha", alpha, 0.0, 1.0, low_open=True, high_open=True)
    resolution = Resolution(detect)
    integer_at_least("num_chains", num_chains, 2)
    integer_at_least("num_steps", num_steps, 4)
    warmup = num_steps if warmup is None else integer_at_least("warmup", warmup, 0)
    say = progress or (lambda line: None)
    say(f"{sampler.name} on {target_key}: {num_chains} chains x ({warmup} + {num_steps}) steps")
    first = run_weighted(sampler, params, target_key, num_chains=num_chains, num_steps=num_steps, warmup=warmup,
                         seed=seed, target_params=target_params)
    checks = _truth_checks(first, alpha / 2) if first.chains >= 2 else ()
    drift = _drift_check(first, alpha / 2)
    detectable = max((float(np.nanmax(np.atleast_1d(c.detectable))) for c in checks), default=math.nan)
    needed = max([num_chains] + [math.ceil(num_chains * (d / detect) ** 2) for d in
                                 (float(np.nanmax(np.atleast_1d(c.detectable))) for c in checks) if math.isfinite(d)])
    outcome, reason, halving = _decide(sampler, first, checks, resolution, alpha, halve, target_key, num_chains,
                                       num_steps, warmup, seed, target_params, say)
    halves = first.halves[1].mean(axis=0) if first.chains >= 2 else np.full((2,) + first.mean_error.shape, np.nan)
    if drift is not None and not drift.passed and outcome is not Outcome.PASSED:
        reason += (f"; the weighted estimates also drift between the halves of the scored window (largest |r| "
                   f"{np.max(np.abs(halves[0])):.3g} then {np.max(np.abs(halves[1])):.3g}; drift z = "
                   f"{drift.statistic:.3g} against {drift.threshold:.3g}): the sampler's adaptation has not settled, "
                   "and a longer warm-up may change them")
        if outcome is Outcome.FAILED and halving is not None:  # not a divergence or a chain that never moves
            outcome = Outcome.INCONCLUSIVE  # as validate's disagreement before the chains forget their start
            reason += f"; so this run cannot decide: a warm-up of more than {warmup} steps would"
    seconds = first.run_seconds or math.nan
    return WeightedCheck(
        sampler=sampler.name, params=first.params, target=target_key, outcome=outcome, reason=reason,
        mean_error=first.mean_error, mean_error_se=first.mean_error_se, variance_error=first.variance_error,
        variance_error_se=first.variance_error_se, detectable=detectable, detect=float(detect), chains_needed=needed,
        checks=checks, halving=halving, drift=drift, variance_error_halves=halves, travel=first.travel,
        num_chains=num_chains, num_steps=num_steps, warmup=warmup, diverged=first.diverged,
        weight_ess=float(np.median(first.weight_ess)) if len(first.weight_ess) else math.nan,
        ratio_bias=float(np.nanmax(np.abs(first.ratio_bias))) if first.chains >= 2 else math.nan, alpha=alpha,
        wall_seconds=time.perf_counter() - start, chain_steps_per_second=first.chain_steps / seconds,
        grad_evals_per_second=first.grad_evals / seconds)


def _decide(sampler, first: WeightedRun, checks, resolution: Resolution, alpha: float, halve, target_key,
            num_chains, num_steps, warmup, seed, target_params, say) -> tuple[Outcome, str, CheckResult | None]:
    """(outcome, reason, halving check) by the rules of the module docstring."""
    name, moved = sampler.name, first.travel
    if first.diverged:
        return Outcome.FAILED, f"{name} diverged in {first.diverged} of {num_chains} chains", None
    if moved.still:
        return Outcome.FAILED, f"{name}: {moved.describe()}", None
    failed = sorted(c.name for c in checks if not c.passed)
    if failed:
        finding = (f"the weighted estimates disagree with truth ({', '.join(failed)} failed; largest |r| "
                   f"{np.max(np.abs(first.variance_error)):.3g}, largest |mean error| "
                   f"{np.max(np.abs(first.mean_error)):.3g} sd)")
        if not moved.forgot:
            return Outcome.INCONCLUSIVE, f"{finding}, but {moved.describe()}", None
        half = halved_params(first.params, halve)
        changed = sorted(k for k in half if half[k] != first.params[k])
        say(f"{name} on {target_key}: at half the step ({', '.join(changed)}), twice the steps")
        second = run_weighted(sampler, half, target_key, num_chains=num_chains, num_steps=2 * num_steps,
                              warmup=2 * warmup, seed=seed + HALF_STEP_SEED_OFFSET, target_params=target_params)
        if second.diverged or second.chains < 2:
            finite = CheckResult(name="finite", passed=False, alpha=0.0, statistic=float(second.diverged),
                                 threshold=0.0, details={"num_chains": num_chains})
            return Outcome.FAILED, (f"{finding}; at half the step {second.diverged} of {num_chains} chains diverged"
                                    ), finite
        halving = halving_check({"mean_error": first.u_mean, "second_moment_error": first.u_second},
                                {"mean_error": second.u_mean, "second_moment_error": second.u_second},
                                alpha=alpha / 2)
        if halving.passed:
            return Outcome.INCONCLUSIVE, (
                f"{finding}; but at half the step ({', '.join(changed)}) its error shrinks as a discretisation bias "
                f"does (step-halving z = {halving.statistic:.3g} against {halving.threshold:.3g}; largest |r| there "
                f"{np.max(np.abs(second.variance_error)):.3g}), so this run cannot tell it from one; run a smaller "
                "step"), halving
        return Outcome.FAILED, (f"{finding}; its error does not halve with its step ({halving.details['note']}; "
                                f"z = {halving.statistic:.3g} against {halving.threshold:.3g})"), halving
    if not moved.forgot:
        return Outcome.INCONCLUSIVE, f"{name}: {moved.describe()}", None
    claim = f"{name}'s weighted estimates agree with truth"
    short = resolution.shortfalls(checks, first.chains)
    if short:
        return Outcome.INCONCLUSIVE, f"{claim}, but {'; '.join(short)}", None
    return Outcome.PASSED, claim, None
