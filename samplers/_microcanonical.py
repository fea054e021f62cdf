r"""What the microcanonical samplers share: the isokinetic integrators as data, the ESH momentum
update, the partial momentum refreshment, and the energy error, each in NumPy (reference) and JAX
(optimized).

The dynamics (MCLMC; SMILE paper, eq. 1; MILE paper, eq. 3), with
:math:`g = \nabla\log p` and the momentum a unit direction :math:`u`:

.. math:: d\theta = u\,dt, \qquad du = (1 - uu^\top)\big((d-1)^{-1} g\,dt + \eta\,dW\big).

One step (SMILE appendix F.2): half a partial refreshment, the palindromic scheme of ``INTEGRATORS``
(kicks P, drifts Q; minimal-norm P Q P Q P by default), then the other half refreshment. A drift is
:math:`\theta \leftarrow \theta + \epsilon u`; a kick is the ESH map

.. math:: u \leftarrow \frac{u + (\sinh\delta + e^\top u(\cosh\delta - 1))\,e}{\cosh\delta + e^\top u\sinh\delta},
          \qquad e = g/\lVert g\rVert, \quad \delta = \epsilon\lVert g\rVert/(d - 1),

and the energy error (SMILE eq. 2) is
:math:`\Delta E = \Delta\log p - \sum_{\text{kicks}} (d-1)\log(\cosh\delta + e^\top u\sinh\delta)`. The
refreshment is :math:`u \leftarrow (u + \nu z)/\lVert u + \nu z\rVert`, :math:`\nu = \sqrt{(e^{2\epsilon/L} - 1)/d}`
(Robnik & Seljak 2024). A diagonal preconditioner :math:`s` (pSMILE) kicks with :math:`s \odot g` and
drifts by :math:`\epsilon\, s \odot u`.

Derivation and notes: docs/derivations.md, section sgbench.samplers._microcanonical.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

MINIMAL_NORM_B1 = 0.1931833275037836  # SMILE appendix F.2
INTEGRATORS = {
    # palindromic (kick, drift, kick, ...) coefficients: the minimal-norm scheme of SMILE F.2
    # (b1, a1, b2 = 1 - 2 b1, a1, b1 with a1 = 1/2; two gradients per step) and velocity Verlet (one)
    "minimal_norm": (MINIMAL_NORM_B1, 0.5, 1.0 - 2.0 * MINIMAL_NORM_B1, 0.5, MINIMAL_NORM_B1),
    "leapfrog": (0.5, 1.0, 0.5),
}


def gradients_per_step(integrator: str) -> int:
    """Gradient evaluations of one deterministic step: one per drift.

    Args:
        integrator: a key of ``INTEGRATORS``.

    Returns:
        int: the number of drifts.
    """
    return len(INTEGRATORS[integrator]) // 2


def reference_kick(momentum, gradient, time):
    """The ESH momentum update :math:`B_\\epsilon` of time ``time``: (new momentum, kinetic energy change).

    Args:
        momentum: the unit momentum u (0 at rest), shape (dim,).
        gradient: the gradient g of the log density (times the preconditioner, if any), shape (dim,).
        time: the kick's time (its coefficient times the step size).

    Returns:
        (momentum, kinetic energy change): the new unit momentum, shape (dim,), and a number.
    """
    dim = momentum.shape[-1]
    norm = np.linalg.norm(gradient)
    direction = gradient / (norm if norm > 0 else 1.0)
    projection = direction @ momentum
    delta = time * norm / (dim - 1)
    zeta = np.exp(-delta)
    raw = (1 - zeta) * (1 + zeta + projection * (1 - zeta)) * direction + 2 * zeta * momentum
    raw_norm = np.linalg.norm(raw)
    momentum = raw / raw_norm if raw_norm > 0 else raw
    kinetic_change = (dim - 1) * (delta - np.log(2.0) + np.log(1 + projection + zeta**2 * (1 - projection)))
    return momentum, kinetic_change


def optimized_kick(momentum, gradient, time):
    """JAX version of :func:`reference_kick`, with its arguments and result.

    Args:
        momentum: the unit momentum u (0 at rest), shape (dim,).
        gradient: the gradient g of the log density (times the preconditioner, if any), shape (dim,).
        time: the kick's time (its coefficient times the step size).

    Returns:
        (momentum, kinetic energy change): the new unit momentum, shape (dim,), and a number.
    """
    dim = momentum.shape[-1]
    norm = jnp.linalg.norm(gradient)
    direction = gradient / jnp.where(norm > 0, norm, 1.0)
    projection = direction @ momentum
    delta = time * norm / (dim - 1)
    zeta = jnp.exp(-delta)
    raw = (1 - zeta) * (1 + zeta + projection * (1 - zeta)) * direction + 2 * zeta * momentum
    raw_norm = jnp.linalg.norm(raw)
    momentum = raw / jnp.where(raw_norm > 0, raw_norm, 1.0)
    kinetic_change = (dim - 1) * (delta - jnp.log(2.0) + jnp.log(1 + projection + zeta**2 * (1 - projection)))
    return momentum, kinetic_change


def reference_refresh(momentum, time, decoherence_length, normal):
    """Partial refreshment of time ``time`` with :math:`L` = ``decoherence_length`` (inf: none).

    Args:
        momentum: the unit momentum u (0 at rest), shape (dim,).
        time: the refreshment's time (half the step size).
        decoherence_length: L > 0 (inf: no refreshment).
        normal: a standard normal vector of this step's draws, shape (dim,).

    Returns:
        the new unit momentum (``momentum`` itself where the moved vector is 0).
    """
    nu = np.sqrt(np.expm1(2 * time / decoherence_length) / momentum.shape[-1])
    moved = momentum + nu * normal
    norm = np.linalg.norm(moved)
    return moved / norm if norm > 0 else momentum


def optimized_refresh(momentum, time, decoherence_length, normal):
    """JAX version of :func:`reference_refresh`, with its arguments and result.

    Args:
        momentum: the unit momentum u (0 at rest), shape (dim,).
        time: the refreshment's time (half the step size).
        decoherence_length: L > 0 (inf: no refreshment).
        normal: a standard normal vector of this step's draws, shape (dim,).

    Returns:
        the new unit momentum (``momentum`` itself where the moved vector is 0).
    """
    nu = jnp.sqrt(jnp.expm1(2 * time / decoherence_length) / momentum.shape[-1])
    moved = momentum + nu * normal
    norm = jnp.linalg.norm(moved)
    return jnp.where(norm > 0, moved / jnp.where(norm > 0, norm, 1.0), momentum)


def integrate(position, momentum, logdensity, gradient, grad_fn, step_size, coefficients, kick, scale=1.0):
    """One deterministic step of the palindromic scheme ``coefficients`` from (``position``,
    ``momentum``) with ``logdensity`` and ``gradient`` evaluated there, kicks by ``kick``
    (:func:`reference_kick` or :func:`optimized_kick`; the stages are unrolled at trace time in
    JAX), ``scale`` a diagonal preconditioner. Returns (position, momentum, logdensity, gradient,
    energy error of eq. 2).

    Args:
        position: the position at the start, shape (dim,).
        momentum: the unit momentum there (0 at rest), shape (dim,).
        logdensity: the log density at ``position``.
        gradient: its gradient at ``position``, shape (dim,).
        grad_fn: GradientOracle bound to this step's draw; ``grad_fn.value_and_grad`` is called once per
            drift.
        step_size: the step size.
        coefficients: the palindromic (kick, drift, kick, ...) coefficients, a value of ``INTEGRATORS``.
        kick: :func:`reference_kick` or :func:`optimized_kick`.
        scale: the diagonal preconditioner, a number or a vector of shape (dim,) (1: none).

    Returns:
        (position, momentum, logdensity, gradient, energy error) at the end of the step.
    """
    kinetic_change = 0.0
    new_logdensity = logdensity
    for stage, coefficient in enumerate(coefficients):
        if stage % 2 == 0:
            momentum, change = kick(momentum, scale * gradient, coefficient * step_size)
            kinetic_change = kinetic_change + change
        else:
            position = position + coefficient * step_size * scale * momentum
            new_logdensity, gradient = grad_fn.value_and_grad(position)
    energy_error = new_logdensity - logdensity - kinetic_change
    return position, momentum, new_logdensity, gradient, energy_error
