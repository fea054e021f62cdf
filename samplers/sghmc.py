r"""Stochastic gradient Hamiltonian Monte Carlo (SGHMC).

Chen et al. (2014), eq. (15) and Algorithm 2, in the parametrisation of MAMBA (``seeds/001``),
appendix D.1, eq. (6), written for the log density (:math:`g = \widehat{\nabla\log p}`):

.. math:: \Delta\theta = v, \qquad \Delta v = h\,g(\theta) - \alpha v
          + \mathcal N\big(0, h(2\alpha T - h\hat\beta)\big),

with step size :math:`h` from the schedule, friction :math:`\alpha` (MAMBA: 0.01), gradient-noise
estimate :math:`\hat\beta` (MAMBA: 0), temperature :math:`T`. Integrator: semi-implicit Euler
(drift with the old momentum, then friction and a kick with the gradient at the new position) by
default, or the BAOAB splitting (``integrator="splitting"``). ``form="practical"`` is Algorithm 3
of the PX paper (``seeds/004``, appendix C): step :math:`\epsilon`, friction rate :math:`\gamma`
(PX table 11: 100), :math:`r \leftarrow (1 - \gamma\epsilon) r + \epsilon\nabla\tilde U +
\sqrt{2\gamma\epsilon T}\,z`, :math:`\theta \leftarrow \theta - \epsilon r`. Both forms, both
integrators, the noise condition and the momentum refresh are in ``samplers._hamiltonian``.
One gradient evaluation per step. On a Gaussian target it is a linear recursion in
(position, momentum) whose stationary covariance solves a discrete Lyapunov equation
(``tests/test_hamiltonian_exact_laws.py``).
"""

from __future__ import annotations

import samplers
from samplers._hamiltonian import (  # noqa: F401  (parts of SAMPLER)
    HamiltonianParams as Params, State, draw_spec, init, optimized_step, reference_step)


SAMPLER = samplers.register(samplers.Sampler.from_namespace(
    "sghmc", "Chen et al. (2014), eq. (15); MAMBA appendix D.1, eq. (6); Algorithm 3 of the PX paper", globals()))
