r"""Held-out sampler ``frozen``: an SGLD step that computes its update and then returns the old position.

Update:

.. math:: x_{t+1} = x_t,

although the step evaluates the gradient :math:`g(x_t)` and consumes a normal draw :math:`\xi_t`, as SGLD's
:math:`x_t + h\,g(x_t) + \sqrt{2hT}\,\xi_t` would (the bug: the new position is computed and dropped).

What is wrong: the chain never moves. Started at exact draws of the target it keeps them forever, so at
temperature 1 its moments agree with truth as well as the starting draws do, and a check of moments
alone would pass it (measured: 512 chains of 4000 steps on icg4 from exact draws, mean error within 0.06
standard deviations and r within 0.053 of 0, all within 1.4 standard errors).

Verdict: FAILED ("does not move") on every target, with or without a claim: a sampler whose position never
changes samples nothing but its start, whatever the moments of that start.
"""

from __future__ import annotations

from sgbench import samplers
from tests.heldout._langevin import Params, State, draw_spec, init, langevin_steps  # noqa: F401


def update(xp, x, grad_fn, noise, h, temperature):
    proposed = x + h * grad_fn(x) + xp.sqrt(2 * h * temperature) * noise
    del proposed  # the bug: the update is computed, then dropped
    return xp.array(x)


reference_step, optimized_step = langevin_steps(update)

SAMPLER = samplers.Sampler.from_namespace("frozen", "held-out bug: SGLD that returns its old position", globals())
