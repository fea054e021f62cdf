r"""PX-SGHMC: SGHMC in the practical form of the PX paper's Algorithm 3 (``samplers.sghmc``,
``form="practical"``) on the expanded parametrisation of eq. (9) of the PX-SGMCMC paper
(``seeds/004_36ef435241ec6d1f.txt``), one left and one right expanded matrix per layer (c = d = 1):

.. math:: \mathbf W = \mathbf P_1 \mathbf V \mathbf Q_1, \qquad \mathbf b = \mathbf P_1 \mathbf a,

with :math:`\mathbf P_1` (out x out) and :math:`\mathbf Q_1` (in x in) starting at the identity and
:math:`\mathcal N(0, \sigma^2 I)` on every expanded parameter (default :math:`\sigma`: the target's
prior scale). Position :math:`\theta = (\mathbf V, \mathbf a, \mathbf P_1, \mathbf Q_1)` (eq. 10) and
momentum :math:`r = (\mathbf S, \mathbf c, \mathbf R_1, \mathbf T_1)` (eq. 11):

.. math:: r \leftarrow (1 - \gamma\epsilon) r - \epsilon\,\widehat{\nabla\log\tilde p}(\theta)
          + \sqrt{2\gamma\epsilon T}\,z, \qquad \theta \leftarrow \theta - \epsilon r,

with a per-coordinate friction :math:`\gamma` in two groups (section 5, table 11): ``friction``
(default 100) on the :math:`\mathbf V, \mathbf a` coordinates and ``expanded_friction`` (default
``friction / 100``, table 11's 1) on the :math:`\mathbf P, \mathbf Q` ones. Every other option of
``samplers.sghmc`` (the Chen form, the splitting integrator, a noise estimate, momentum refresh,
schedules) carries over. One gradient evaluation per step. The layout, the chain rule, the
targets, ``expansion``, ``prior_scale`` and ``low_rank`` are in ``samplers.px``.
"""

from __future__ import annotations

import samplers
from samplers import sghmc
from samplers.px import px

SAMPLER = samplers.register(px(sghmc.SAMPLER, (1, 1), name="px_sghmc", form="practical", friction=100.0))
Params = SAMPLER.Params
