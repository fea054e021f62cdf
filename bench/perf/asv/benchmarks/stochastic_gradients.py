"""One stochastic gradient of every registered target at its default size, JAX vs NumPy.

Targets whose default is exact gradients (the analytic ones) get the isotropic noise of
appendix C of the SMILE paper; data targets keep their default minibatch noise.

JAX: 1000 evaluations with 1000 different draws inside one compiled ``lax.scan`` that carries
the position forward by a tiny step (as a sampler's loop does; at a fixed position the compiler
would hoist the exact gradient out of the loop), compiled in ``setup``. NumPy: the same 1000
calls in a Python loop. Divide the reported time by 1000 for one gradient.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from sgbench import targets
from sgbench.base.draws import numpy_draws

EVALUATIONS = 1000


class TimeStochasticGradient:
    params = (targets.names(), ("jax", "numpy"))
    param_names = ("target", "backend")
    number = 1
    repeat = (3, 10, 20.0)
    timeout = 300

    def setup(self, name, backend):
        target = targets.get(name)
        if target.noise.name == "none":
            target = targets.get(name, noise="isotropic")
        rng = np.random.default_rng(0)
        self.x = target.initial_position()
        self.draws = numpy_draws(rng, target.draw_spec, (EVALUATIONS,))
        if backend == "numpy":
            self.draw_list = [jax.tree.map(lambda v, i=i: v[i], self.draws) for i in range(EVALUATIONS)]
            self.target = target
            return

        def total(x, draws):
            step = lambda x, draw: (x + 1e-9 * target.stochastic_grad(x, draw), None)  # noqa: E731
            return jax.lax.scan(step, x, draws, length=EVALUATIONS)[0]

        args = (jnp.asarray(self.x), jax.tree.map(jnp.asarray, self.draws))
        compiled = jax.jit(total).lower(*args).compile()
        self.run = lambda: compiled(*args).block_until_ready()
        self.run()

    def time_1000_gradients(self, name, backend):
        if backend == "numpy":
            for draw in self.draw_list:
                self.target.stochastic_grad(self.x, draw)
        else:
            self.run()
