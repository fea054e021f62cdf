r"""The exact expected time average of a run whose sampler declares a linear law.

A sampler's ``linear_law`` (``sgbench.samplers._linear_law``) gives one step on a Gaussian target
:math:`\mathcal N(\mu, P^{-1})` as :math:`z_{t+1} = A z_t + w_t` in the centred state :math:`z = (x - \mu, m)`, so
the second moment of every step follows :math:`S_{t+1} = A S_t A^\top + Q`, transient included (SGLD and pSGLD
with a frozen preconditioner, SGLD-CV, SGHMC and SGHMC-CV in both forms and integrators; the equations are derived
from the papers' update rules beside them, ``sgbench.samplers._langevin`` and ``sgbench.samplers._hamiltonian``, not
from the implementations). Here the law is iterated from a start into what a run records, so that the gate and the
tests can hold the implementations to it (DESIGN.md, tier 1).
"""

from __future__ import annotations

import numpy as np

from sgbench.samplers import LinearLaw


def averaged_second_moment(s0, law: LinearLaw, num_steps: int, dim: int, num_burnin: int = 0,
                           thin: int = 1) -> np.ndarray:
    r"""diag of the mean over :math:`t = b+k, b+2k, .., b+n` of the first ``dim`` coordinates of :math:`S_t`,
    where :math:`S_{t+1}` = ``law.propagate`` :math:`(S_t)` from :math:`S_0` = ``s0``: the exact expected time
    average of :math:`(x_i - \mu_i)^2` of a run of ``num_steps`` steps that records every ``thin`` = :math:`k`-th
    step after ``num_burnin`` = :math:`b` unrecorded ones (as ``RunConfig.thin`` does).

    Before each step whose counter is a multiple of ``law.refresh_every`` (where it is > 0) the auxiliary block
    (coordinates ``dim:``) is replaced by ``law.refresh_variance`` I, uncorrelated with the position (SGHMC's
    momentum refresh).

    Args:
        s0: the centred state's second moment at the start, (k, k).
        law: the sampler's LinearLaw, its matrices (k, k).
        num_steps: n.
        dim: how many leading coordinates are positions.
        num_burnin: b, steps run before the recorded ones (the step counter runs through them).
        thin: k, the recorded steps that enter the average (``num_steps // thin`` of them).

    Returns:
        (dim,) the time-averaged second moments.
    """
    s = np.array(s0, dtype=np.float64)
    total = np.zeros(s.shape[0])
    for t in range(num_burnin + num_steps):
        if law.refresh_every and t % law.refresh_every == 0:
            s[dim:, :] = 0.0
            s[:, dim:] = 0.0
            s[dim:, dim:] = law.refresh_variance * np.eye(s.shape[0] - dim)
        s = law.propagate(s)
        if t >= num_burnin and (t - num_burnin + 1) % thin == 0:
            total += np.diag(s)
    return total[:dim] / (num_steps // thin)
