r"""The exact discrete-time law a sampler may declare: one step on a Gaussian target as a linear recursion.

On :math:`\mathcal N(\mu, P^{-1})` the gradient of the log density is :math:`g(x) = -P(x - \mu)`, and a gradient
oracle with additive noise returns :math:`\hat g(x) = g(x) + e`, with :math:`e` of mean 0 and covariance
:math:`V`, drawn afresh at each step. A sampler whose step is linear in its state and in the gradient moves the
centred state :math:`z = (x - \mu, m)` (:math:`m`: its auxiliary coordinates, SGHMC's momentum, which ``init``
sets to 0; none for a Langevin step) by

.. math:: z_{t+1} = A z_t + w_t, \qquad E[w_t \mid z_t] = 0, \qquad \mathrm{Cov}(w_t) = Q,

so that its second moment :math:`S_t = E[z_t z_t^\top]` follows :math:`S_{t+1} = A S_t A^\top + Q` exactly,
transient included, whatever the law of the noise (DESIGN.md, tier 1). The gate's exact-law cells, the exact-law
tests and the reproductions' predictions are computed from it (``sgbench.reference.linear_laws``,
``sgbench.reference.minibatch_laws``), never from the implementation.

A sampler file declares its law as a module-level function beside its steps (collected by
``Sampler.from_namespace`` like its other parts; optional):

.. code-block:: python

    def linear_law(hyperparameters: dict, precision, noise_covariance, step=None) -> LinearLaw: ...

- ``hyperparameters``: the sampler's hyperparameters as given (a dict, as ``prepare`` receives them: a law needs
  none that depends on the target, such as a control-variate centre, so none is filled in);
- ``precision``: :math:`P`, (d, d);
- ``noise_covariance``: :math:`V`, (d, d), or None for exact gradients;
- ``step``: the step counter whose law is asked, or None for the law of every step (:func:`step_counter`).

It raises :class:`NoLinearLawError`, saying why, where the hyperparameters make the step nonlinear (pSGLD's
adaptive preconditioner) or its law change from step to step (a schedule, asked for every step).
``sgbench.samplers.control_variates.wrap`` derives the law of a control-variate sampler from its base's (the
control variate cancels additive noise). A sampler whose ``benchmarks`` declare exact-law gate cells
(``GateSettings.exact_law``) must declare its law.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import numpy as np


class NoLinearLawError(ValueError):
    """The sampler has no exact linear law at these hyperparameters, or with this gradient noise (the message
    says why)."""


@dataclasses.dataclass(frozen=True)
class LangevinStep:
    r"""SGLD's step on the oracle's own stochastic gradient, read at the current position, with a fixed
    diagonal preconditioner :math:`G`:

    .. math:: x' = x + hG\,\hat g(x) + \sqrt{2hTG}\,\xi, \qquad \xi \sim \mathcal N(0, I):

    what the exact law under minibatch gradients (``sgbench.reference.minibatch_laws``) reads.

    Args:
        step: :math:`h`, in the standard convention (Welling & Teh's :math:`\epsilon` is :math:`2h`).
        temperature: :math:`T`.
        preconditioner: :math:`G`, a number (1 for SGLD) or a (d,) vector.
    """

    step: float
    temperature: float
    preconditioner: Any = 1.0


@dataclasses.dataclass(frozen=True)
class LinearLaw:
    r"""One step of a sampler on :math:`\mathcal N(\mu, P^{-1})` with gradient noise of covariance :math:`V`:
    :math:`z' = Az + w`, :math:`\mathrm{Cov}(w) = Q` (module docstring), so :math:`S' = ASA^\top + Q`.

    Args:
        transition: :math:`A`, (k, k): the position block first (k = d), the auxiliary coordinates after.
        covariance: :math:`Q`, (k, k).
        refresh_every: L > 0: before each step whose counter is a multiple of L the auxiliary block is redrawn,
            independent of the position, with covariance ``refresh_variance`` I (SGHMC's momentum refresh); 0: never.
        refresh_variance: the redrawn auxiliary coordinates' variance.
        langevin: the step's :class:`LangevinStep`, where it is SGLD's step on the oracle's own gradient; None
            otherwise.
        state_covariance: where the step's covariance also depends on the state, the part that does, as a linear
            function of the state's current second moment :math:`S` (SGLRW: its lattice fixes
            :math:`E[\Delta_i^2 \mid x] = 2hT`, so its variance loses :math:`h^2 g_i(x)^2`); None: :math:`Q` alone.
        position_dependent_noise: whether the law also holds, for the second moments, under gradient noise whose
            covariance :math:`V(x)` depends on the position (minibatch gradients), with ``noise_covariance`` its
            expectation :math:`E[V(x_t)]`: true where the step reads the oracle's gradient once, at the current
            position, and its covariance is linear in :math:`V` (SGLD, pSGLD, SGLRW); false otherwise (a control
            variate cancels additive noise only; SGHMC's Chen form reads the gradient at a moved position).
        approximation: what the law neglects, where it is not exact (SGLRW: its clip); "" for an exact law.
    """

    transition: np.ndarray
    covariance: np.ndarray
    refresh_every: int = 0
    refresh_variance: float = 0.0
    langevin: LangevinStep | None = None
    state_covariance: Callable[[np.ndarray], np.ndarray] | None = None
    position_dependent_noise: bool = False
    approximation: str = ""

    def propagate(self, second_moment: np.ndarray) -> np.ndarray:
        r"""The second moment one step on (no refresh): :math:`S' = ASA^\top + Q` (plus ``state_covariance(S)``).

        Args:
            second_moment: :math:`S`, (k, k).

        Returns:
            :math:`S'`, (k, k).
        """
        covariance = self.covariance
        if self.state_covariance is not None:
            covariance = covariance + self.state_covariance(second_moment)
        return self.transition @ second_moment @ self.transition.T + covariance


def step_counter(params, step: int | None) -> int:
    """The step counter whose law a ``linear_law`` computes: ``step``; with ``step`` None (the law of every
    step), 0, once it is checked that the schedule keeps the step size constant.

    Args:
        params: validated Params with a ``schedule`` (``sgbench.samplers.schedules``).
        step: the step counter t, or None.

    Returns:
        the step counter.

    Raises:
        NoLinearLawError: ``step`` is None and the schedule changes the step size.
    """
    if step is not None:
        return int(step)
    if params.schedule.kind != "constant":
        raise NoLinearLawError(f"the law of every step needs a constant step size, got the schedule "
                               f"{params.schedule!r} (ask for the law of one step)")
    return 0
