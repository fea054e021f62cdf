r"""What the SGHMC-family samplers share: hyperparameters (step size, friction, gradient-noise
estimate, temperature, schedule, form, integrator, momentum refresh), the state (position,
momentum, counter), and the two implementations of one step (one gradient evaluation).

Two forms of the same dynamics (:math:`g = \widehat{\nabla\log p}`, :math:`\xi \sim \mathcal N(0, I)`):

- ``form="chen"``: Chen et al. (2014), eq. (15) and Algorithm 2; MAMBA paper, appendix
  D.1, eq. (6). Step size :math:`h`, per-step friction :math:`\alpha`, momentum :math:`v`:

  .. math:: \theta \leftarrow \theta + v, \qquad
            v \leftarrow (1 - \alpha) v + h\,g(\theta) + \sqrt{h(2\alpha T - h\hat\beta)}\,\xi;

- ``form="practical"``: Algorithm 3 of the PX paper (appendix C), its sign
  convention included (:math:`r` is minus the usual momentum). Step size :math:`\epsilon`,
  friction rate :math:`\gamma`, momentum :math:`r`:

  .. math:: r \leftarrow (1 - \gamma\epsilon) r - \epsilon\,g(\theta)
            + \sqrt{\epsilon(2\gamma T - \epsilon\hat\beta)}\,\xi, \qquad \theta \leftarrow \theta - \epsilon r.

They are one chain for :math:`h = \epsilon^2`, :math:`\alpha = \gamma\epsilon`, :math:`v = -\epsilon r`.
``noise_estimate`` :math:`\hat\beta` is the gradient-noise variance (:math:`2\alpha T - h\hat\beta \ge 0`);
``temperature`` :math:`T` tempers the target to :math:`p^{1/T}` (PX eq. 8). ``integrator="euler"``
(default) is the papers' semi-implicit Euler, ``"splitting"`` the BAOAB splitting of Leimkuhler &
Matthews (2013), written A O A B, and ``"explicit_euler"`` the explicit Euler scheme of the SDE (Chen et al.'s
eq. (13) discretised with every right-hand side at the old state: the gradient at the old position, the
position moved with the old momentum), which blackjax, posteriors and SGMCMCJax implement:

.. math:: \theta \leftarrow \theta + v_{\text{old}}, \quad v \leftarrow (1 - \alpha) v + h\,g(\theta_{\text{old}})
          + \sqrt{h(2\alpha T - h\hat\beta)}\,\xi \quad\text{(Chen form; practical form likewise).}
 ``refresh_every`` :math:`L > 0` resamples the momentum every :math:`L`
steps (Chen et al.'s Algorithm 2). The momentum starts at 0 (PX Algorithm 3). On a Gaussian target every form
and integrator is a linear recursion in (position, momentum): :func:`hamiltonian_recursion`, :func:`linear_law`.

Derivation and notes: docs/derivations.md, section sgbench.samplers._hamiltonian.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax.numpy as jnp
import numpy as np

from sgbench.base.arguments import in_interval, integer_at_least, number_or_vector, one_of, vector_length_matches
from sgbench.samplers._contract import Info, Variate, hyperparameters, static_field
from sgbench.samplers._langevin import LangevinParams
from sgbench.samplers._linear_law import LinearLaw, step_counter

FORMS = ("chen", "practical")
INTEGRATORS = ("euler", "splitting", "explicit_euler")
EULER = ("euler", "explicit_euler")  # the integrators whose friction multiplies the momentum by 1 - alpha
DEFAULT_FRICTION = {"chen": 0.01, "practical": 100.0}  # MAMBA appendix D.1; PX table 11


@hyperparameters
class HamiltonianParams(LangevinParams):
    """``LangevinParams``; ``friction`` > 0, a number or a per-coordinate vector (default: 0.01, MAMBA's
    :math:`\\alpha`, in the Chen form; 100, PX table 11's :math:`\\gamma`, in the practical form);
    ``noise_estimate`` :math:`\\hat\\beta` >= 0, number or vector (default 0); ``form`` in ``FORMS``;
    ``integrator`` in ``INTEGRATORS``; ``refresh_every`` >= 0 (0: never). The Euler integrators need a
    per-step friction in (0, 2); the injected noise variance must be >= 0. Both are checked at the
    schedule's peak, its step 0 (every schedule here is largest there)."""

    friction: Any = None
    noise_estimate: Any = 0.0
    form: str = static_field("chen")
    integrator: str = static_field("euler")
    refresh_every: int = static_field(0)

    def __post_init__(self):
        super().__post_init__()
        one_of("form", self.form, FORMS)
        one_of("integrator", self.integrator, INTEGRATORS)
        integer_at_least("refresh_every", self.refresh_every, 0)
        friction = DEFAULT_FRICTION[self.form] if self.friction is None else self.friction
        object.__setattr__(self, "friction", number_or_vector("friction", friction, 0.0, minimum_open=True))
        object.__setattr__(self, "noise_estimate", number_or_vector("noise_estimate", self.noise_estimate))
        peak = self.step_size_at(0, np)
        per_step_friction = float(np.max(self.friction)) * (peak if self.form == "practical" else 1.0)
        if self.integrator in EULER and per_step_friction >= 2:
            name = "friction * step_size" if self.form == "practical" else "friction"
            in_interval(name, per_step_friction, 0.0, 2.0, low_open=True, high_open=True)
        variance = injected_variance(self, peak, np)
        if np.min(variance) < 0:
            raise ValueError(f"noise_estimate is too large: the injected noise variance is {np.min(variance):.4g} < 0 "
                             f"at step size {peak:g}; it needs {noise_condition(self)}")


def noise_condition(params: HamiltonianParams) -> str:
    """The condition on ``noise_estimate`` that keeps the injected variance >= 0, in words.

    Args:
        params: validated HamiltonianParams (its form and integrator).

    Returns:
        str: the inequality, for error messages.
    """
    if params.integrator in EULER:
        friction = "friction" if params.form == "chen" else "friction (the rate gamma)"
        return f"2 * {friction} * temperature - step_size * noise_estimate >= 0"
    per_step = "friction" if params.form == "chen" else "friction * step_size"
    scale = "step_size" if params.form == "chen" else "step_size**2"
    return f"temperature * (1 - exp(-2 * {per_step})) - {scale} * noise_estimate >= 0"


def injected_variance(params: HamiltonianParams, step_size, xp):
    """Variance of the noise added to the momentum in one step of step size ``step_size`` (the
    schedule's value at that step).

    Args:
        params: HamiltonianParams.
        step_size: the schedule's step size at this step.
        xp: ``numpy`` or ``jax.numpy``.

    Returns:
        the variance per coordinate: a number, or a vector where ``friction`` or ``noise_estimate`` is one.
        Where the noise estimate's share cancels the friction's to rounding (the largest admissible
        ``noise_estimate``), exactly 0, so that the noise's scale, its square root, does not amplify the
        rounding of the two implementations (:func:`cancelled_difference`).
    """
    a, beta, temp = params.friction, params.noise_estimate, params.temperature
    if params.integrator in EULER:
        return step_size * cancelled_difference(2 * a * temp, step_size * beta, xp)
    if params.form == "chen":
        return cancelled_difference(step_size * temp * (1 - xp.exp(-2 * a)), step_size**2 * beta, xp)
    return cancelled_difference(temp * (1 - xp.exp(-2 * a * step_size)), step_size**2 * beta, xp)


ROUNDING = 16  # units in the last place within which two terms count as equal


def cancelled_difference(total, subtracted, xp):
    r""":math:`u - v`, or 0 where :math:`|u - v| \le 16\,\epsilon \max(|u|, |v|)` (:math:`\epsilon` the
    float64 machine epsilon): a difference that is only rounding, whose square root (:math:`\sqrt{10^{-19}}
    \approx 3\times10^{-10}`) would otherwise differ between NumPy and XLA, which may fuse the product and the
    subtraction into one rounding.

    Args:
        total: u, a number or an array.
        subtracted: v, of a shape that broadcasts with ``total``.
        xp: ``numpy`` or ``jax.numpy``.

    Returns:
        :math:`u - v`, with 0 where the two agree to rounding.
    """
    difference = total - subtracted
    scale = xp.maximum(xp.abs(total), xp.abs(subtracted))
    return xp.where(xp.abs(difference) <= ROUNDING * np.finfo(np.float64).eps * scale, 0.0, difference)


def refresh_variance(params: HamiltonianParams, step_size):
    """Variance of the momentum's stationary law: :math:`hT` (Chen form) or :math:`T` (practical).

    Args:
        params: HamiltonianParams.
        step_size: the schedule's step size at this step.

    Returns:
        ``step_size * temperature`` (Chen form) or ``temperature`` (practical form).
    """
    return step_size * params.temperature if params.form == "chen" else params.temperature


class State(NamedTuple):
    """The state of an SGHMC-family chain.

    Attributes:
        position: the chain's position, shape (dim,).
        momentum: its momentum (v in the Chen form, r in the practical form), shape (dim,); 0 at the start.
        step: the step counter t, from which the schedule reads the step size.
    """

    position: Any
    momentum: Any
    step: Any


def init(position, params: HamiltonianParams) -> State:
    """The chain at ``position`` with momentum 0 and its step counter at 0 (PX Algorithm 3).

    Args:
        position: the chain's starting point, shape (dim,).
        params: validated HamiltonianParams.

    Returns:
        the chain's State.

    Raises:
        ValueError: ``friction`` or ``noise_estimate`` is a vector whose length is not the position's
            dimension.
    """
    vector_length_matches("friction", params.friction, position)
    vector_length_matches("noise_estimate", params.noise_estimate, position)
    return State(position=position, momentum=0 * position, step=0)


def draw_spec(dim: int, params: HamiltonianParams) -> dict[str, Variate]:
    """The variates of one step: the injected noise, and a normal vector for the momentum refresh where
    ``refresh_every`` is set.

    Args:
        dim: the target's dimension.
        params: validated HamiltonianParams (its ``refresh_every`` is read).

    Returns:
        ``{"noise": Variate("normal", (dim,))}``, plus ``"refresh"``, another normal vector of shape (dim,),
        with a refresh.
    """
    spec = {"noise": Variate("normal", (dim,))}
    if params.refresh_every:
        spec["refresh"] = Variate("normal", (dim,))
    return spec


def reference_step(state: State, grad_fn, draws, params: HamiltonianParams):
    r"""One step, the papers' equations line by line (NumPy, one chain).

    Chen form, Euler (Algorithm 2): :math:`\theta \leftarrow \theta + v`, then
    :math:`v \leftarrow (1 - \alpha) v + h\,g(\theta) + \text{noise}`; practical form, Euler (PX Algorithm 3):
    :math:`r \leftarrow (1 - \gamma h) r - h\,g(\theta) + \text{noise}`, then :math:`\theta \leftarrow \theta - h r`;
    the splitting integrator: half a drift, the friction and noise, half a drift, a kick (A O A B); explicit
    Euler: the momentum from the gradient at the old position and the position moved with the old momentum. With
    ``refresh_every`` :math:`L`, the momentum is first redrawn from its stationary law at every step t with
    t mod L = 0. The arguments and result follow the step contract (``sgbench.samplers._contract``).

    Args:
        state: the chain's State (position, momentum, step counter t).
        grad_fn: the GradientOracle of this step (``grad_fn(x)`` is the stochastic gradient of the log density).
        draws: this step's draws of :func:`draw_spec`: ``noise``, a standard normal vector of shape (dim,), and
            ``refresh``, another, where ``refresh_every`` is set.
        params: validated HamiltonianParams.

    Returns:
        (new State, Info): the state after one step (its counter t + 1), and Info with ``num_grad_evals`` 1.
    """
    h = params.step_size_at(state.step, np)
    theta, m = state.position, state.momentum
    if params.refresh_every and state.step % params.refresh_every == 0:
        m = np.sqrt(refresh_variance(params, h)) * draws["refresh"]
    noise = np.sqrt(injected_variance(params, h, np)) * draws["noise"]
    if params.integrator == "explicit_euler" and params.form == "chen":
        theta, m = theta + m, (1 - params.friction) * m + h * grad_fn(theta) + noise
    elif params.integrator == "explicit_euler":
        theta, m = theta - h * m, (1 - params.friction * h) * m - h * grad_fn(theta) + noise
    elif params.form == "chen" and params.integrator == "euler":  # Chen et al. Algorithm 2
        theta = theta + m
        m = (1 - params.friction) * m + h * grad_fn(theta) + noise
    elif params.form == "practical" and params.integrator == "euler":  # PX Algorithm 3
        m = (1 - params.friction * h) * m - h * grad_fn(theta) + noise
        theta = theta - h * m
    elif params.form == "chen":  # A O A B
        theta = theta + m / 2
        m = np.exp(-params.friction) * m + noise
        theta = theta + m / 2
        m = m + h * grad_fn(theta)
    else:
        theta = theta - h * m / 2
        m = np.exp(-params.friction * h) * m + noise
        theta = theta - h * m / 2
        m = m - h * grad_fn(theta)
    return State(theta, m, state.step + 1), Info(num_grad_evals=1)


def coefficients(params: HamiltonianParams, h):
    """(drift, kick, decay) of one step of step size ``h``: the position moves by drift * momentum,
    the momentum by kick * gradient, and friction multiplies the momentum by decay.

    Args:
        params: HamiltonianParams.
        h: the schedule's step size at this step.

    Returns:
        (drift, kick, decay); ``decay`` is a vector where ``friction`` is one.
    """
    per_step_friction = params.friction * (h if params.form == "practical" else 1.0)
    decay = 1 - per_step_friction if params.integrator in EULER else jnp.exp(-per_step_friction)
    if params.form == "chen":
        return 1.0, h, decay
    return -h, -h, decay


def optimized_step(state: State, grad_fn, draws, params: HamiltonianParams):
    r"""The same step from its coefficients (JAX; jit- and vmap-able).

    With (drift, kick, decay) of :func:`coefficients`, Euler: Chen form :math:`\theta \leftarrow \theta +
    \text{drift}\,m`, :math:`m \leftarrow \text{decay}\,m + \text{kick}\,g(\theta) + \text{noise}`;
    practical form the momentum first, then the position; splitting: half a drift, decay and noise, half a drift,
    a kick; explicit Euler: :math:`\theta' = \theta + \text{drift}\,m`, :math:`m' = \text{decay}\,m +
    \text{kick}\,g(\theta) + \text{noise}` (both from the old state). The arguments and result are those of
    :func:`reference_step`; the step contract is in ``sgbench.samplers._contract``.

    Args:
        state: the chain's State (position, momentum, step counter t).
        grad_fn: the GradientOracle of this step.
        draws: this step's draws of :func:`draw_spec` (``noise``, and ``refresh`` where ``refresh_every`` is set).
        params: validated HamiltonianParams.

    Returns:
        (new State, Info): the state after one step, and Info with ``num_grad_evals`` 1.
    """
    h = params.step_size_at(state.step, jnp)
    drift, kick, decay = coefficients(params, h)
    theta, m = state.position, state.momentum
    if params.refresh_every:
        refresh = state.step % params.refresh_every == 0
        m = jnp.where(refresh, jnp.sqrt(refresh_variance(params, h)) * draws["refresh"], m)
    noise = jnp.sqrt(injected_variance(params, h, jnp)) * draws["noise"]
    if params.integrator == "splitting":
        theta = theta + drift * m / 2
        m = decay * m + noise
        theta = theta + drift * m / 2
        return State(theta, m + kick * grad_fn(theta), state.step + 1), Info(num_grad_evals=1)
    if params.integrator == "explicit_euler":
        new_m = decay * m + kick * grad_fn(theta) + noise
        return State(theta + drift * m, new_m, state.step + 1), Info(num_grad_evals=1)
    if params.form == "chen":
        theta = theta + drift * m
        return State(theta, decay * m + kick * grad_fn(theta) + noise, state.step + 1), Info(num_grad_evals=1)
    m = decay * m + kick * grad_fn(theta) + noise
    return State(theta + drift * m, m, state.step + 1), Info(num_grad_evals=1)


def hamiltonian_recursion(precision, form, integrator, step, friction, temperature=1.0, noise_covariance=None,
                          noise_estimate=0.0):
    r"""One step of SGHMC on :math:`\mathcal N(0, P^{-1})` with :math:`g(x) = -Px + e`,
    :math:`e \sim \mathcal N(0, V)`, as :math:`z' = A z + B w` in :math:`z = (x, m)` (m: the
    momentum v of the Chen form, r of the practical form) with :math:`w = (n, e)`, n the injected
    noise :math:`\mathcal N(0, cI)`.

    Chen, Euler (h, alpha): :math:`x' = x + v`, :math:`v' = (1-\alpha)v + h g(x') + n`, so
    :math:`v' = -hPx + ((1-\alpha)I - hP)v + n + he`; :math:`c = h(2\alpha T - h\hat\beta)`.

    Practical, Euler (eps, gamma): :math:`r' = (1-\gamma\epsilon)r - \epsilon g(x) + n
    = \epsilon Px + (1-\gamma\epsilon)r + n - \epsilon e`, :math:`x' = x - \epsilon r'
    = (I - \epsilon^2P)x - \epsilon(1-\gamma\epsilon)r - \epsilon n + \epsilon^2 e`;
    :math:`c = \epsilon(2\gamma T - \epsilon\hat\beta)`.

    Chen, explicit Euler: :math:`x' = x + v`, :math:`v' = (1-\alpha)v + h g(x) + n
    = -hPx + (1-\alpha)v + n + he`; :math:`c` as for Euler.

    Practical, explicit Euler (:math:`k = 1 - \gamma\epsilon`): :math:`x' = x - \epsilon r`,
    :math:`r' = kr - \epsilon g(x) + n = \epsilon Px + kr + n - \epsilon e`; :math:`c` as for Euler.

    Chen, splitting A O A B (:math:`k = e^{-\alpha}`): :math:`x' = x + v/2 + (kv + n)/2
    = x + \tfrac{1+k}{2}v + n/2`, :math:`v' = kv + n + h g(x') = -hPx + (kI - h\tfrac{1+k}{2}P)v
    + (I - hP/2)n + he`; :math:`c = hT(1-k^2) - h^2\hat\beta`.

    Practical, splitting (:math:`k = e^{-\gamma\epsilon}`): :math:`x' = x - \epsilon\tfrac{1+k}{2}r
    - \epsilon n/2`, :math:`r' = kr + n - \epsilon g(x') = \epsilon Px
    + (kI - \epsilon^2\tfrac{1+k}{2}P)r + (I - \epsilon^2P/2)n - \epsilon e`;
    :math:`c = T(1-k^2) - \epsilon^2\hat\beta`.

    Args:
        precision: P, (d, d).
        form: ``"chen"`` or ``"practical"``.
        integrator: ``"euler"``, ``"splitting"`` or ``"explicit_euler"``.
        step: h (Chen form) or :math:`\epsilon` (practical form).
        friction: :math:`\alpha` (Chen form) or :math:`\gamma` (practical form).
        temperature: T.
        noise_covariance: V: a number (the isotropic :math:`VI`) or a (d, d) matrix; None for exact gradients.
        noise_estimate: :math:`\hat\beta`.

    Returns:
        (A, B, W, c): the noise covariance is :math:`Q = B W B^\top`, :math:`W = \mathrm{diag}(cI, V)`.
    """
    p = np.asarray(precision)
    d = p.shape[0]
    eye, zero = np.eye(d), np.zeros((d, d))
    temp, beta = temperature, noise_estimate
    if form == "chen" and integrator == "explicit_euler":
        h, a = step, friction
        c = h * (2 * a * temp - h * beta)
        big_a = np.block([[eye, eye], [-h * p, (1 - a) * eye]])
        big_b = np.block([[zero, zero], [eye, h * eye]])
    elif integrator == "explicit_euler":
        e, k = step, 1 - friction * step
        c = e * (2 * friction * temp - e * beta)
        big_a = np.block([[eye, -e * eye], [e * p, k * eye]])
        big_b = np.block([[zero, zero], [eye, -e * eye]])
    elif form == "chen" and integrator == "euler":
        h, a = step, friction
        c = h * (2 * a * temp - h * beta)
        big_a = np.block([[eye, eye], [-h * p, (1 - a) * eye - h * p]])
        big_b = np.block([[zero, zero], [eye, h * eye]])
    elif form == "practical" and integrator == "euler":
        e, k = step, 1 - friction * step
        c = e * (2 * friction * temp - e * beta)
        big_a = np.block([[eye - e**2 * p, -e * k * eye], [e * p, k * eye]])
        big_b = np.block([[-e * eye, e**2 * eye], [eye, -e * eye]])
    elif form == "chen":
        h, k = step, np.exp(-friction)
        c = h * temp * (1 - k**2) - h**2 * beta
        big_a = np.block([[eye, (1 + k) / 2 * eye], [-h * p, k * eye - h * (1 + k) / 2 * p]])
        big_b = np.block([[eye / 2, zero], [eye - h * p / 2, h * eye]])
    else:
        e, k = step, np.exp(-friction * step)
        c = temp * (1 - k**2) - e**2 * beta
        big_a = np.block([[eye, -e * (1 + k) / 2 * eye], [e * p, k * eye - e**2 * (1 + k) / 2 * p]])
        big_b = np.block([[-e / 2 * eye, zero], [eye - e**2 * p / 2, -e * eye]])
    v = np.zeros((d, d)) if noise_covariance is None else np.asarray(noise_covariance, dtype=np.float64)
    w = np.block([[c * eye, zero], [zero, v * eye if v.ndim == 0 else v]])
    return big_a, big_b, w, c


def linear_law(hyperparameters: dict, precision, noise_covariance, step=None) -> LinearLaw:
    r"""The exact law of one step (``sgbench.samplers._linear_law``): :func:`hamiltonian_recursion`'s
    :math:`A` and :math:`Q = BWB^\top` in :math:`z = (x - \mu, m)`, with the momentum refresh
    (:func:`refresh_variance`) every ``refresh_every`` steps.

    Args:
        hyperparameters: the hyperparameters of ``HamiltonianParams``, as given.
        precision: P, (d, d).
        noise_covariance: V, (d, d), or None for exact gradients.
        step: the step counter whose law is asked, or None for every step's (a constant schedule).

    Returns:
        the LinearLaw.

    Raises:
        NoLinearLawError: ``step`` is None and the schedule changes the step size.
    """
    params = HamiltonianParams(**hyperparameters)
    h = float(params.step_size_at(step_counter(params, step)))
    big_a, big_b, w, _ = hamiltonian_recursion(precision, params.form, params.integrator, h, params.friction,
                                               params.temperature, noise_covariance, params.noise_estimate)
    return LinearLaw(big_a, big_b @ w @ big_b.T, refresh_every=params.refresh_every,
                     refresh_variance=refresh_variance(params, h))
