r"""Stochastic gradient Nosé-Hoover thermostat (SGNHT).

Ding et al. (2014), Algorithm 1, in two parametrisations (:math:`g = \widehat{\nabla\log p}`,
:math:`\zeta \sim \mathcal N(0, I)`, dimension :math:`D`, temperature :math:`T`):

- ``form="chen"`` (default): MAMBA paper, appendix D.2, eq. (7), in the units of Chen et al.'s
  SGHMC (``sgbench.samplers.sghmc``): with Ding et al.'s step :math:`\delta`, step size :math:`h = \delta^2`,
  momentum :math:`v = p\delta`, per-step thermostat :math:`\alpha = \xi\delta`, diffusion :math:`a = A\delta`:

  .. math:: v_{n+1} = v_n + h\,g(x_n) - \alpha_n v_n + \sqrt{2ahT}\,\zeta_n, \qquad
            x_{n+1} = x_n + v_{n+1}, \qquad
            \alpha_{n+1} = \alpha_n + \tfrac1D v_{n+1}^\top v_{n+1} - hT;

- ``form="practical"``: Algorithm 4 of the PX paper (appendix C), its sign convention
  included (:math:`r` is minus the usual momentum), step :math:`\epsilon_t`, diffusion :math:`a`:

  .. math:: r_t = (1 - \xi_{t-1}\epsilon_t) r_{t-1} - \epsilon_t\,g(\theta_{t-1})
            + \sqrt{2a\epsilon_t T}\,z_t, \qquad
            \theta_t = \theta_{t-1} - \epsilon_t r_t, \qquad
            \xi_t = \xi_{t-1} + \epsilon_t\big(\tfrac1D r_{t-1}^\top r_{t-1} - T\big).

Both are semi-implicit Euler (a kick at the old position, then a drift with the new momentum; one
gradient evaluation per step); the Chen form's thermostat reads the new momentum, the practical form's
the old one. The stationary law is :math:`p^{1/T}` (PX eq. 8). The momentum starts at 0, the thermostat
at ``initial_thermostat`` (default :math:`a`); ``diffusion`` :math:`a` defaults to 0.01 (Chen form) and 100
(practical form). Typos of MAMBA's eq. (7) and PX's Algorithm 4 are corrected.

Derivation and notes: docs/derivations.md, section sgbench.samplers.sgnht.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax.numpy as jnp
import numpy as np

from sgbench import samplers
from sgbench.base.arguments import in_interval, one_of, positive_finite
from sgbench.samplers._benchmarks import CYCLES, DECAY
from sgbench.samplers._contract import hyperparameters, static_field
from sgbench.samplers._hamiltonian import DEFAULT_FRICTION, FORMS
from sgbench.samplers._langevin import LangevinParams, draw_spec  # noqa: F401  (part of SAMPLER)

DEFAULT_DIFFUSION = dict(DEFAULT_FRICTION)  # MAMBA appendix D.2 (chen); PX table 11's SGHMC friction (practical)


@hyperparameters
class Params(LangevinParams):
    """``LangevinParams``; ``diffusion`` :math:`a` > 0 (default 0.01 in the Chen form, 100 in the
    practical one); ``initial_thermostat`` >= 0 (default: ``diffusion``); ``form`` in ``FORMS``.
    The per-step diffusion must be < 1/2 and the per-step initial thermostat < 2, both at the
    schedule's peak, its step 0 (every schedule here is largest there)."""

    diffusion: Any = None
    initial_thermostat: Any = None
    form: str = static_field("chen")

    def __post_init__(self):
        super().__post_init__()
        one_of("form", self.form, FORMS)
        diffusion = DEFAULT_DIFFUSION[self.form] if self.diffusion is None else self.diffusion
        object.__setattr__(self, "diffusion", positive_finite("diffusion", diffusion))
        initial = self.diffusion if self.initial_thermostat is None else self.initial_thermostat
        object.__setattr__(self, "initial_thermostat", in_interval("initial_thermostat", initial, 0.0, np.inf,
                                                                   high_open=True))
        scale, times = (self.step_size_at(0, np), " * step_size") if self.form == "practical" else (1.0, "")
        if self.diffusion * scale >= 0.5:
            raise ValueError(f"diffusion{times} (the per-step diffusion) must be < 0.5, got "
                             f"{self.diffusion * scale:g}: with a per-step friction c in (0, 2) the momentum's "
                             "stationary variance is at least 2 a h T / (c (2 - c)) >= 2 a h T, above the thermostat's "
                             "target h T when a >= 1/2, so the thermostat would push the friction past 2 and the chain "
                             "would diverge")
        if self.initial_thermostat * scale >= 2:
            raise ValueError(f"initial_thermostat{times} (the first step's friction) must be < 2, got "
                             f"{self.initial_thermostat * scale:g}: the momentum is multiplied by 1 - that value")


class State(NamedTuple):
    """The state of an SGNHT chain.

    Attributes:
        position: the chain's position, shape (dim,).
        momentum: its momentum (v in the Chen form, r in the practical form), shape (dim,); 0 at the start.
        thermostat: the thermostat (alpha in the Chen form, xi in the practical form), one number per chain.
        step: the step counter t, from which the schedule reads the step size.
    """

    position: Any
    momentum: Any
    thermostat: Any
    step: Any


def init(position, params: Params) -> State:
    """The chain at ``position`` with momentum 0, the thermostat at ``initial_thermostat`` and its step
    counter at 0.

    Args:
        position: the chain's starting point, shape (dim,).
        params: validated Params.

    Returns:
        the chain's State.
    """
    thermostat = 0 * position[..., 0] + params.initial_thermostat
    return State(position=position, momentum=0 * position, thermostat=thermostat, step=0)


def reference_step(state: State, grad_fn, draws, params: Params):
    r"""One step, the papers' equations line by line (NumPy, one chain).

    Chen form (MAMBA eq. 7): :math:`v \leftarrow v + h\,g(x) - \alpha v + \sqrt{2ahT}\,\zeta`,
    :math:`x \leftarrow x + v`, :math:`\alpha \leftarrow \alpha + v^\top v/D - hT`; practical form (PX Algorithm 4):
    :math:`r \leftarrow (1 - \xi h) r - h\,g(\theta) + \sqrt{2ahT}\,z`, :math:`\theta \leftarrow \theta - h r`,
    :math:`\xi \leftarrow \xi + h(r_{\text{old}}^\top r_{\text{old}}/D - T)`. The arguments and result follow the
    step contract (``sgbench.samplers._contract``).

    Args:
        state: the chain's State (position, momentum, thermostat, step counter t).
        grad_fn: the GradientOracle of this step (``grad_fn(x)`` is the stochastic gradient of the log density).
        draws: this step's draws of ``draw_spec``: ``noise``, a standard normal vector of shape (dim,).
        params: validated Params.

    Returns:
        (new State, Info): the state after one step (its counter t + 1), and Info with ``num_grad_evals`` 1.
    """
    h = params.step_size_at(state.step, np)
    theta, m, xi = state.position, state.momentum, state.thermostat
    noise = np.sqrt(2 * params.diffusion * h * params.temperature) * draws["noise"]
    if params.form == "chen":  # MAMBA eq. (7); Ding et al. Algorithm 1
        m = m + h * grad_fn(theta) - xi * m + noise
        theta = theta + m
        xi = xi + m @ m / m.shape[-1] - h * params.temperature
    else:  # PX Algorithm 4: the thermostat reads r_{t-1}
        m_old = m
        m = (1 - xi * h) * m - h * grad_fn(theta) + noise
        theta = theta - h * m
        xi = xi + h * (m_old @ m_old / m.shape[-1] - params.temperature)
    return State(theta, m, xi, state.step + 1), samplers.Info(num_grad_evals=1)


def coefficients(params: Params, h):
    """(friction, kick, drift, rate, target) of one step of step size ``h``: the momentum is
    multiplied by 1 - friction * thermostat and moves by kick * gradient, the position by
    drift * momentum, the thermostat by rate * (kinetic energy per dimension - target).

    Args:
        params: validated Params (its form and temperature).
        h: the schedule's step size at this step.

    Returns:
        (friction, kick, drift, rate, target).
    """
    if params.form == "chen":
        return 1.0, h, 1.0, 1.0, h * params.temperature
    return h, -h, -h, h, params.temperature


def optimized_step(state: State, grad_fn, draws, params: Params):
    r"""The same step from its coefficients (JAX; jit- and vmap-able).

    With (friction, kick, drift, rate, target) of :func:`coefficients`:
    :math:`m \leftarrow (1 - \text{friction}\,\xi) m + \text{kick}\,g(\theta) + \text{noise}`,
    :math:`\theta \leftarrow \theta + \text{drift}\,m`, :math:`\xi \leftarrow \xi + \text{rate}\,(m^\top m/D -
    \text{target})` (the new momentum in the Chen form, the old one in the practical form). The arguments and result
    are those of :func:`reference_step`; the step contract is in ``sgbench.samplers._contract``.

    Args:
        state: the chain's State (position, momentum, thermostat, step counter t).
        grad_fn: the GradientOracle of this step.
        draws: this step's draws of ``draw_spec``: ``noise``, a standard normal vector of shape (dim,).
        params: validated Params.

    Returns:
        (new State, Info): the state after one step, and Info with ``num_grad_evals`` 1.
    """
    h = params.step_size_at(state.step, jnp)
    friction, kick, drift, rate, target = coefficients(params, h)
    theta, m, xi = state.position, state.momentum, state.thermostat
    noise = jnp.sqrt(2 * params.diffusion * h * params.temperature) * draws["noise"]
    m_old = m
    m = (1 - friction * xi) * m + kick * grad_fn(theta) + noise
    theta = theta + drift * m
    read = m if params.form == "chen" else m_old
    xi = xi + rate * (jnp.sum(read * read, axis=-1) / m.shape[-1] - target)
    return State(theta, m, xi, state.step + 1), samplers.Info(num_grad_evals=1)


# The gate's diffusion is 2 (not 1). Speed: the Chen form's thermostat cannot balance gradient noise of
# variance 256 at h = 1e-2 (h^2 V > hT), so the practical form.
benchmarks = samplers.BenchmarkSettings(
    gate=samplers.GateSettings(
        icg4={"step_size": 0.1, "form": "practical", "diffusion": 2.0},
        linreg={"step_size": 5e-3, "form": "practical", "diffusion": 2.0},
        posteriors={"mesquite": {"step_size": 0.00129, "form": "practical", "diffusion": 2.0},
                    "gauss_mix": {"step_size": 0.000107, "form": "practical", "diffusion": 2.0}},
        # practical SGNHT diverges at twice the step (1781 of 2048 chains at h = 0.2; none of 2048
        # at 0.15, 0.16, 0.175 or 0.185)
        large_step_scale=1.5,
    ),
    equivalence=(
        dict(step_size=1e-3),
        dict(step_size=2e-3, temperature=0.5, initial_thermostat=0.0, schedule=DECAY),
        dict(step_size=1e-2, form="practical", diffusion=2.0, schedule=CYCLES),
        dict(step_size=1e-2, form="practical", diffusion=1.0, initial_thermostat=5.0, temperature=2.0),
    ),
    speed={"step_size": 1e-2, "form": "practical", "diffusion": 1.0},
    asv={"linreg": {"step_size": 3e-3, "diffusion": 1.0, "form": "practical"},
         "bnn": {"step_size": 3e-4, "form": "practical"}},
)

SAMPLER = samplers.register(samplers.Sampler.from_namespace(
    "sgnht", "Ding et al. (2014), Algorithm 1; MAMBA appendix D.2, eq. (7); Algorithm 4 of the PX paper",
    globals()))
