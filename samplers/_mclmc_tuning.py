r"""Online tuning of MCLMC's step size :math:`\epsilon` and decoherence length :math:`L`: the three
phases of Robnik et al. (2023) ("Microcanonical Hamiltonian Monte Carlo", JMLR 24; blackjax's
``mclmc_find_L_and_step_size``), with the changes of MILE (section 3.2) available as
parameters, run inside the chain's step and selected by its step counter :math:`t` (0-based). With
phase lengths :math:`(n_1, n_2, n_3)` (``tuning_steps``):

**Phases I and II** (:math:`t < n_1 + n_2`): from the energy error :math:`\Delta E_t` (SMILE eq. 2) of
the step taken with :math:`\epsilon_t` and the desired energy variance per dimension :math:`V_t`,

.. math:: \xi_t = \frac{\Delta E_t^2}{d\,V_t} + 10^{-8}, \quad
          w_t = \exp\Big(-\tfrac12\big(\tfrac{\log\xi_t}{6\,\tau}\big)^2\Big), \quad
          X_{t+1} = \gamma X_t + w_t\,\xi_t/\epsilon_t^6, \quad W_{t+1} = \gamma W_t + w_t, \quad
          \epsilon_{t+1} = \min\big((X_{t+1}/W_{t+1})^{-1/6},\ \epsilon_{\max}\big);

a non-finite step is rejected and caps :math:`\epsilon_{\max} = 0.8\,\epsilon_t`. After phase II,
:math:`L = \sqrt{\sum_i \widehat{\operatorname{Var}}[\theta_i]}` over phase II's positions (weights
:math:`\epsilon_{t+1}`). **Phase III**: fixed :math:`(\epsilon, L)`; after it,
:math:`L = \ell\,\epsilon\,\operatorname{mean}_i(n_3/\mathrm{ESS}_i)` (``l_factor`` :math:`\ell = 0.4`), from at
most :math:`10^4` stored draws and 2000 coordinates. **Sampling** (:math:`t \ge n_1 + n_2 + n_3`): fixed
parameters; the steps of the three phases are not posterior samples (``Info.is_sample`` False).

The formulas are written once for NumPy and JAX arrays; the phase logic twice, :func:`reference_tune`
(NumPy) and :func:`optimized_tune` (JAX).

Derivation and notes: docs/derivations.md, section sgbench.samplers._mclmc_tuning.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from sgbench.base.arguments import in_interval, integer_at_least, positive_finite
from sgbench.base.backend import namespace

MAX_FFT_ROWS = 10_000  # MILE section 3.2.4: at most 10^4 phase-III draws enter the FFT
MAX_FFT_COORDINATES = 2000  # MILE section 3.2.4: subsample the coordinates when d > 2000
SUBSET_SEED = 0
XI_OFFSET = 1e-8  # Robnik's code: keeps log(xi) finite when Delta E = 0
NONFINITE_SHRINK = 0.8  # Robnik's code: the step-size cap after a non-finite step
ESS_BATCH = 128  # coordinates per FFT batch in JAX (bounds the memory of the one-off ESS)


class Tuning(NamedTuple):
    """The tuner's accumulators: the step-size predictor's :math:`W` (``weight_sum``), :math:`X`
    (``weighted_xi``) and :math:`\\epsilon_{\\max}`; phase II's total weight, weighted mean and sum of
    weighted squared deviations of the position; phase III's store of positions (rows, columns)."""

    weight_sum: Any
    weighted_xi: Any
    step_size_max: Any
    moment_weight: Any
    mean: Any
    m2: Any
    samples: Any


# ---------------------------------------------------------------------------------------------
# Parameters


def check_tuning(params) -> None:
    """Validate (and normalise in place) the tuning fields of an MCLMC-like ``params``: ValueError
    naming the parameter and its accepted range.

    Args:
        params: an MCLMC-like Params under construction (``tuning_steps``, ``step_size``, ``L``,
            ``desired_energy_variance``, ``num_effective_samples``, ``trust_in_estimate``, ``l_factor``).

    Raises:
        ValueError: a field outside its accepted range.
        TypeError: a phase length that is not an integer, or a number that is not a real number.
    """
    steps = params.tuning_steps
    if not isinstance(steps, tuple | list) or len(steps) != 3:
        raise ValueError(f"tuning_steps must be three integers (n1, n2, n3) >= 0, got {steps!r}")
    steps = tuple(integer_at_least(f"tuning_steps[{i}]", n, 0) for i, n in enumerate(steps))
    for i in (1, 2):
        if steps[i] == 1:
            raise ValueError(f"tuning_steps[{i}] must be 0 or an integer >= 2 (a variance and an ESS need two "
                             f"draws), got 1")
    object.__setattr__(params, "tuning_steps", steps)
    if params.step_size is not None:
        object.__setattr__(params, "step_size", positive_finite("step_size", params.step_size))
    if params.L is not None:
        object.__setattr__(params, "L", in_interval("L", params.L, 0.0, math.inf, low_open=True))
    variance = params.desired_energy_variance
    if isinstance(variance, tuple | list):
        if len(variance) != 2:
            raise ValueError(f"desired_energy_variance must be a number > 0 or a pair (start, end) of them, "
                             f"got {variance!r}")
        variance = tuple(positive_finite(f"desired_energy_variance[{i}]", v) for i, v in enumerate(variance))
    else:
        variance = positive_finite("desired_energy_variance", variance)
    object.__setattr__(params, "desired_energy_variance", variance)
    in_interval("num_effective_samples", params.num_effective_samples, 1.0, math.inf, high_open=True)
    positive_finite("trust_in_estimate", params.trust_in_estimate)
    positive_finite("l_factor", params.l_factor)


def desired_energy_variance(params, t):
    """:math:`V_t`: the EEVPD targeted at step ``t``, linear over phase I from the start to the end
    value of ``params.desired_energy_variance`` (a number is constant).

    Args:
        params: validated Params (``desired_energy_variance`` and ``tuning_steps``).
        t: the step counter.

    Returns:
        the EEVPD at step t.
    """
    variance = params.desired_energy_variance
    if not isinstance(variance, tuple):
        return variance
    start, end = variance
    n1 = params.tuning_steps[0]
    if n1 == 0:
        return end
    fraction = namespace(t).minimum(t / n1, 1.0)
    return (1 - fraction) * start + fraction * end


# ---------------------------------------------------------------------------------------------
# Formulas (NumPy and JAX)


def predict_step_size(weight_sum, weighted_xi, energy_error, step_size, step_size_max, dim, variance,
                      num_effective_samples, trust_in_estimate, xp):
    """One update of the step-size predictor (module docstring, phases I-II): (W, X, next step size)
    after a step of size ``step_size`` with energy error ``energy_error`` targeting EEVPD ``variance``.

    Args:
        weight_sum: W, the discounted sum of weights.
        weighted_xi: X, the discounted weighted sum of xi / step_size**6.
        energy_error: the energy error of the step just taken.
        step_size: that step's step size.
        step_size_max: the cap on the next step size.
        dim: the dimension d.
        variance: the EEVPD targeted at that step.
        num_effective_samples: the predictor's effective samples, which set its memory.
        trust_in_estimate: the trust tau.
        xp: ``numpy`` or ``jax.numpy``.

    Returns:
        (W, X, next step size).
    """
    decay = (num_effective_samples - 1.0) / (num_effective_samples + 1.0)
    xi = energy_error**2 / (dim * variance) + XI_OFFSET
    weight = xp.exp(-0.5 * (xp.log(xi) / (6.0 * trust_in_estimate)) ** 2)
    weighted_xi = decay * weighted_xi + weight * xi / step_size**6
    weight_sum = decay * weight_sum + weight
    return weight_sum, weighted_xi, xp.minimum((weighted_xi / weight_sum) ** (-1.0 / 6.0), step_size_max)


def add_weighted(total, mean, m2, x, weight):
    """West's (1979) weighted streaming update of (total weight, mean, sum of weighted squared
    deviations) by a draw ``x`` of weight ``weight`` > 0 (``total + weight`` must be > 0).

    Args:
        total: the total weight so far.
        mean: the weighted mean, shape (dim,).
        m2: the sum of weighted squared deviations, shape (dim,).
        x: the draw, shape (dim,).
        weight: its weight > 0.

    Returns:
        (total, mean, m2) with ``x`` added.
    """
    total = total + weight
    delta = x - mean
    mean = mean + (weight / total) * delta
    return total, mean, m2 + weight * delta * (x - mean)


def variance_length(total, m2, xp):
    """Phase II's :math:`L = \\sqrt{\\sum_i \\mathrm{Var}[\\theta_i]}` from the weighted variances
    ``m2 / total`` (0 without an accepted draw, as Robnik's code).

    Args:
        total: the total weight.
        m2: the sum of weighted squared deviations, shape (dim,).
        xp: ``numpy`` or ``jax.numpy``.

    Returns:
        the decoherence length L.
    """
    return xp.sqrt(xp.sum(m2) / xp.where(total > 0, total, 1.0))


def autocorrelation_length(ess, num_steps, step_size, l_factor, L, xp):
    """Phase III's :math:`L = \\ell\\,\\epsilon\\,\\mathrm{mean}(n_3/\\mathrm{ESS})` over the
    coordinates with a finite ratio; ``L`` if there is none.

    Args:
        ess: the ESS of each stored coordinate.
        num_steps: the length n3 of phase III.
        step_size: the step size.
        l_factor: the factor ell.
        L: the current decoherence length.
        xp: ``numpy`` or ``jax.numpy``.

    Returns:
        the new decoherence length.
    """
    ratio = num_steps / ess
    finite = xp.isfinite(ratio)
    mean = xp.sum(xp.where(finite, ratio, 0.0)) / xp.maximum(xp.sum(finite), 1)
    return xp.where(xp.any(finite), l_factor * step_size * mean, L)


def effective_sample_size(samples, xp):
    r"""ESS of each column of ``samples`` (n >= 2 draws of one chain, columns): Stan's estimator
    (Geyer's initial positive and initial monotone sequences; as ArviZ's ``_ess`` and blackjax's
    ``effective_sample_size`` compute it for one chain, without splitting or rank normalisation).
    MILE section 3.2.4 and blackjax use this FFT estimator; ``sgbench.reference.metrics.ess`` (ArviZ's bulk
    ESS: rank-normalised, split chains) is another quantity and is not used here.

    With the autocovariances :math:`c_t = \frac1n\sum_{i<n-t}(x_i-\bar x)(x_{i+t}-\bar x)` (FFT,
    zero-padded to :math:`2n`), :math:`\rho_0 = 1`, :math:`\rho_t = 1 - (\frac{n}{n-1}c_0 - c_t)/c_0`,
    pair sums :math:`P_k = \rho_{2k} + \rho_{2k+1}`, :math:`K` the first :math:`k` with
    :math:`P_k \le 0`, at most :math:`\lceil n/2\rceil - 2` (ArviZ's bound), and
    :math:`\tilde P_k = \min_{j\le k} P_j`:

    .. math:: \hat\tau = \max\Big(-1 + 2\sum_{k<K}\tilde P_k + \max(\rho_{2K}, 0),\ 1/\log_{10} n\Big),
              \qquad \mathrm{ESS} = n/\hat\tau;

    NaN for a constant column (:math:`c_0 = 0`) or a non-finite one.

    Args:
        samples: the draws of one chain, shape (n, columns), n >= 2.
        xp: ``numpy`` or ``jax.numpy``.

    Returns:
        the ESS of each column, shape (columns,).
    """
    n = samples.shape[0]
    centred = samples - samples.mean(axis=0)
    spectrum = xp.fft.rfft(centred, n=2 * n, axis=0)
    autocovariance = xp.fft.irfft(spectrum * xp.conj(spectrum), n=2 * n, axis=0)[:n] / n
    c0 = autocovariance[0]
    usable = c0 > 0  # False for a constant column and for NaN
    safe_c0 = xp.where(usable, c0, 1.0)
    rho = 1.0 - (n / (n - 1.0) * safe_c0 - autocovariance) / safe_c0
    rho = xp.concatenate([xp.ones_like(rho[:1]), rho[1:]], axis=0)
    num_pairs = n // 2
    pairs = rho[0:2 * num_pairs:2] + rho[1:2 * num_pairs:2]
    k = xp.arange(num_pairs)[:, None]
    last = max(-(-n // 2) - 2, 0)
    first_stop = xp.argmax((pairs <= 0) | (k >= last), axis=0)
    monotone = np.minimum.accumulate(pairs, axis=0) if xp is np else jax.lax.cummin(pairs, axis=0)
    rho_after = xp.take_along_axis(rho, 2 * first_stop[None, :], axis=0)[0]
    tau = -1.0 + 2.0 * xp.sum(xp.where(k < first_stop, monotone, 0.0), axis=0) + xp.maximum(rho_after, 0.0)
    tau = xp.maximum(tau, 1.0 / math.log10(n))
    return xp.where(usable, n / tau, xp.nan)


# ---------------------------------------------------------------------------------------------
# The phase-III store


def store_shape(num_steps: int, dim: int) -> tuple[int, int, int]:
    """(rows, columns, thinning k) of the store of ``num_steps`` phase-III positions of dimension ``dim``.

    Args:
        num_steps: the length n3 of phase III.
        dim: the dimension of a position.

    Returns:
        (rows, columns, thinning k).
    """
    thin = max(1, -(-num_steps // MAX_FFT_ROWS))
    return num_steps // thin, min(dim, MAX_FFT_COORDINATES), thin


def fft_coordinates(dim: int) -> np.ndarray | None:
    """The coordinates whose ESS is estimated: all (None) for ``dim`` <= 2000, else a sorted fixed
    random subset of 2000 (seed ``SUBSET_SEED``).

    Args:
        dim: the dimension of a position.

    Returns:
        None, or the sorted indices of the 2000 coordinates.
    """
    if dim <= MAX_FFT_COORDINATES:
        return None
    chosen = np.random.default_rng(SUBSET_SEED).choice(dim, MAX_FFT_COORDINATES, replace=False)
    return np.sort(chosen)


def stored_coordinates(position):
    """The coordinates of ``position`` that enter the store.

    Args:
        position: a position, shape (..., dim).

    Returns:
        ``position`` at the coordinates of :func:`fft_coordinates` (all of them for dim <= 2000).
    """
    index = fft_coordinates(position.shape[-1])
    return position if index is None else position[..., index]


def init_tuning(position, tuning_steps) -> Tuning:
    """Empty accumulators (module docstring) in the dtype and array library of ``position``.

    Args:
        position: the chain's starting point, shape (dim,).
        tuning_steps: the phase lengths (n1, n2, n3).

    Returns:
        Tuning, its store of shape (rows, columns) from :func:`store_shape`.
    """
    zero = position.sum() * 0
    rows, columns, _ = store_shape(tuning_steps[2], position.shape[-1])
    samples = namespace(position).zeros((rows, columns), dtype=position.dtype)
    return Tuning(zero, zero, zero + np.inf, zero, position * 0, position * 0, samples)


# ---------------------------------------------------------------------------------------------
# The phase logic, twice

KERNEL_FIELDS = ("position", "momentum", "logdensity", "gradient")


def reference_tune(previous, proposal, params):
    """The state after ``proposal`` (the kernel's step from ``previous``, counter advanced), tuned by
    the phase of ``previous.step`` (module docstring). NumPy, one chain.

    Args:
        previous: the chain's State before the step.
        proposal: the kernel's step from ``previous``, its counter advanced.
        params: validated Params with ``tuning_steps``.

    Returns:
        the State after the step, with the tuned step size, L and accumulators.
    """
    n1, n2, n3 = params.tuning_steps
    t = previous.step
    tuning = previous.tuning
    state = proposal
    if t < n1 + n2:  # phases I and II: the step size
        finite = all(np.all(np.isfinite(getattr(proposal, f))) for f in (*KERNEL_FIELDS, "energy_error"))
        step_size_max = tuning.step_size_max
        if not finite:  # reject
            state = previous._replace(energy_error=0.0, step=proposal.step)
            step_size_max = NONFINITE_SHRINK * previous.step_size
        weight_sum, weighted_xi, step_size = predict_step_size(
            tuning.weight_sum, tuning.weighted_xi, state.energy_error, previous.step_size, step_size_max,
            previous.position.shape[-1], desired_energy_variance(params, t), params.num_effective_samples,
            params.trust_in_estimate, np)
        tuning = tuning._replace(weight_sum=weight_sum, weighted_xi=weighted_xi, step_size_max=step_size_max)
        state = state._replace(step_size=step_size)
        if t >= n1 and finite and step_size > 0:  # phase II: the weighted moments of the position
            moment_weight, mean, m2 = add_weighted(tuning.moment_weight, tuning.mean, tuning.m2, state.position,
                                                   step_size)
            tuning = tuning._replace(moment_weight=moment_weight, mean=mean, m2=m2)
        if t == n1 + n2 - 1 and n2:
            state = state._replace(L=variance_length(tuning.moment_weight, tuning.m2, np))
    elif t < n1 + n2 + n3:  # phase III: store, then L from the ESS
        _, _, thin = store_shape(n3, previous.position.shape[-1])
        j = t - n1 - n2
        if (j + 1) % thin == 0:
            samples = tuning.samples.copy()
            samples[(j + 1) // thin - 1] = stored_coordinates(state.position)
            tuning = tuning._replace(samples=samples)
        if j == n3 - 1:
            ess = effective_sample_size(tuning.samples, np)
            state = state._replace(L=autocorrelation_length(ess, n3, state.step_size, params.l_factor, state.L, np))
    return state._replace(tuning=tuning)


def _run_if(predicate, function, value):
    """``function(value)`` where ``predicate``, else ``value``: a while loop of at most one iteration.
    Under ``vmap`` a batched ``lax.cond`` would evaluate ``function`` at every step; the loop runs
    its body only when some element needs it. The barrier ties ``value`` to the loop-variant
    predicate, so that XLA does not hoist the work on a loop-invariant ``value`` out of the loop
    (which would do it at every step again)."""

    def body(carry):
        predicate, value = jax.lax.optimization_barrier(carry)
        return jnp.zeros_like(predicate), function(value)

    return jax.lax.while_loop(lambda carry: carry[0], body, (predicate, value))[1]


def optimized_tune(previous, proposal, params):
    """JAX version of :func:`reference_tune` (pure, jit-able, vmap-able), with its arguments and result.

    Args:
        previous: the chain's State before the step.
        proposal: the kernel's step from ``previous``, its counter advanced.
        params: validated Params with ``tuning_steps``.

    Returns:
        the State after the step, with the tuned step size, L and accumulators.
    """
    n1, n2, n3 = params.tuning_steps
    t = previous.step
    tuning = previous.tuning
    adapting = t < n1 + n2
    finite = jnp.all(jnp.array([jnp.all(jnp.isfinite(getattr(proposal, f)))
                                for f in (*KERNEL_FIELDS, "energy_error")]))
    reject = adapting & ~finite
    state = proposal._replace(
        **{f: jnp.where(reject, getattr(previous, f), getattr(proposal, f)) for f in KERNEL_FIELDS},
        energy_error=jnp.where(reject, 0.0, proposal.energy_error))
    step_size_max = jnp.where(reject, NONFINITE_SHRINK * previous.step_size, tuning.step_size_max)
    weight_sum, weighted_xi, step_size = predict_step_size(
        tuning.weight_sum, tuning.weighted_xi, state.energy_error, previous.step_size, step_size_max,
        previous.position.shape[-1], desired_energy_variance(params, t.astype(previous.position.dtype)),
        params.num_effective_samples, params.trust_in_estimate, jnp)
    tuning = tuning._replace(weight_sum=jnp.where(adapting, weight_sum, tuning.weight_sum),
                             weighted_xi=jnp.where(adapting, weighted_xi, tuning.weighted_xi),
                             step_size_max=step_size_max)
    state = state._replace(step_size=jnp.where(adapting, step_size, previous.step_size))
    if n2:
        moving = adapting & (t >= n1) & finite & (state.step_size > 0)
        moment_weight, mean, m2 = add_weighted(tuning.moment_weight, tuning.mean, tuning.m2, state.position,
                                               state.step_size)
        tuning = tuning._replace(moment_weight=jnp.where(moving, moment_weight, tuning.moment_weight),
                                 mean=jnp.where(moving, mean, tuning.mean), m2=jnp.where(moving, m2, tuning.m2))
        state = state._replace(L=jnp.where(t == n1 + n2 - 1, variance_length(tuning.moment_weight, tuning.m2, jnp),
                                           state.L))
    if n3:
        rows, _, thin = store_shape(n3, previous.position.shape[-1])
        j = t - n1 - n2
        store = (j >= 0) & (j < n3) & ((j + 1) % thin == 0)
        row = jnp.where(store, (j + 1) // thin - 1, rows)
        samples = tuning.samples.at[row].set(stored_coordinates(state.position), mode="drop")

        def length(carry):  # the store is part of the loop's value (see _run_if)
            L, samples = carry
            ess = jax.lax.map(lambda column: effective_sample_size(column[:, None], jnp)[0], samples.T,
                              batch_size=ESS_BATCH)
            return autocorrelation_length(ess, n3, state.step_size, params.l_factor, L, jnp), samples

        L, samples = _run_if(j == n3 - 1, length, (state.L, samples))
        state, tuning = state._replace(L=L), tuning._replace(samples=samples)
    return state._replace(tuning=tuning)
