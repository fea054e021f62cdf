r"""Held-out sampler ``sgld_lr_names``: a correct SGLD whose hyperparameters have other libraries' names.

Update (:math:`g` the oracle's stochastic gradient of :math:`\log p`, :math:`\xi_t \sim \mathcal N(0, I)`),
with the step size called ``lr`` (:math:`h`) and the temperature ``temp`` (:math:`T`):

.. math:: x_{t+1} = x_t + \mathrm{lr}\,g(x_t) + \sqrt{2\,\mathrm{lr}\,\mathrm{temp}}\,\xi_t.

What is right: everything; it is the suite's ``sgld`` (standard convention) with ``step_size = lr`` and
``temperature = temp``. What is different: only the names, so a claim of ``sgld`` needs the mapping
``{"lr": "step_size", "temp": "temperature"}`` to run the reference with the same hyperparameters.

Verdict: PASSED when mapped onto ``sgld`` (same law, same bias, on shared draws even the same chain).
Without the mapping a validator cannot run the reference at its settings: bad input (or a refusal naming
the parameters), never a pass or a fail on numbers.
"""

from __future__ import annotations

from sgbench import samplers
from sgbench.base.arguments import positive_finite
from tests.heldout._langevin import State, draw_spec, init, langevin_steps  # noqa: F401


@samplers.hyperparameters
class Params:
    """``lr`` > 0 (the step size h), ``temp`` > 0 (the temperature T, default 1)."""

    lr: float
    temp: float = 1.0

    def __post_init__(self):
        object.__setattr__(self, "lr", positive_finite("lr", self.lr))
        object.__setattr__(self, "temp", positive_finite("temp", self.temp))


def update(xp, x, grad_fn, noise, lr, temp):
    return x + lr * grad_fn(x) + xp.sqrt(2 * lr * temp) * noise


reference_step, optimized_step = langevin_steps(update, hyperparameters=lambda params: (params.lr, params.temp))

SAMPLER = samplers.Sampler.from_namespace(
    "sgld_lr_names", "Welling & Teh (2011), standard convention, parameters named lr and temp; held out", globals())
