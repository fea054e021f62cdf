"""JAX's 64-bit mode, switched on by importing this module (``samplers`` and ``targets`` do, first thing).

The float64 references and the targets' exact draws need it; every array the suite makes has an explicit dtype,
so float32 chains stay float32. Both packages switch it on, so a process that only samples a target (a Dask worker
running a gate cell) draws the same numbers as one that imported the samplers first.
"""

import jax

jax.config.update("jax_enable_x64", True)
