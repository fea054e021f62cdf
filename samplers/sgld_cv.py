r"""SGLD with control variates (SGLD-CV).

Baker et al. (2019); MAMBA paper, appendix D.3: the SGLD update

.. math:: x_{t+1} = x_t + h_t\,\hat g_{cv}(x_t) + \sqrt{2 h_t T}\,\xi_t, \qquad
          \hat g_{cv}(x) = \nabla\log p(\hat x) + \widehat{\nabla\log p}(x) - \widehat{\nabla\log p}(\hat x),

with centre :math:`\hat x` (``centre``) and the full-data gradient there (``centre_grad``). Unless
given, both come from ``sgbench.samplers.control_variates.find_map`` (optax L-BFGS on the full-data log
density, computed once per target), filled in by ``Sampler.params_for`` / ``bench.run``.
SGLD's ``convention`` (default standard; MAMBA's eq. 1 is the ``welling_teh`` one, its :math:`h` is
:math:`2h` in the standard one).
Two stochastic-gradient evaluations per step (at :math:`x_t` and at :math:`\hat x`, one minibatch);
the one full-data gradient at the centre is not counted. With additive gradient noise the
estimator is the exact gradient, so on a Gaussian target the chain is noise-free SGLD, a linear
recursion with a discrete-Lyapunov stationary covariance (``tests/test_langevin_exact_laws.py``): its law is
SGLD's without gradient noise (``control_variates.wrap`` derives it, ``control_variates.cancelled_noise_law``).
"""

from __future__ import annotations

from sgbench import samplers
from sgbench.samplers import control_variates, sgld
from sgbench.samplers._benchmarks import DECAY

benchmarks = samplers.BenchmarkSettings(
    gate=samplers.GateSettings(icg4={"step_size": 0.02}, linreg={"step_size": 1e-3},
                               posteriors={"mesquite": {"step_size": 0.000258}, "gauss_mix": {"step_size": 2.14e-05}},
                               exact_law=({"step_size": 0.02},)),
    equivalence=(
        dict(step_size=1e-3),
        dict(step_size=2e-3, temperature=0.3, schedule=DECAY, centre=[0.1] * 10),
    ),
    speed=sgld.benchmarks.speed,
    asv=sgld.benchmarks.asv,
)


@samplers.hyperparameters
class Params(control_variates.Centred, sgld.Params):
    """``sgld.Params`` (SGLD's) and the control variate's ``centre`` and ``centre_grad``
    (``sgbench.samplers.control_variates.Centred``)."""


SAMPLER = samplers.register(control_variates.wrap(
    sgld.SAMPLER, Params, "sgld_cv", "Baker et al. (2019); MAMBA appendix D.3, eq. (8)", benchmarks))
