"""JAX's 64-bit mode, in a scope: importing the suite never switches it on for the caller's process.

The float64 references, the targets' exact draws and the drivers' runs need it. Every array the suite makes has
an explicit dtype, so a float32 chain stays float32 inside the scope, and a run gives the same numbers whatever
the caller's own setting. The ``sgbench`` command runs each command in it (``sgbench.bench.cli``); the library's
entry points that make JAX arrays enter it themselves (:func:`in_float64_mode`); a caller who steps a sampler's
``optimized_step`` directly in float64 enters it with ``jax.enable_x64(True)``, as for any JAX code.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TypeVar

import jax

F = TypeVar("F", bound=Callable)


def in_float64_mode(function: F) -> F:
    """``function`` run with JAX's 64-bit mode on (``jax.enable_x64(True)``, thread-local) and the caller's
    setting restored when it returns or raises.

    Args:
        function: a function that makes or runs JAX arrays (not a generator: its body would run outside).

    Returns:
        the wrapped function, with ``function``'s name and docstring.
    """
    @functools.wraps(function)
    def in_mode(*args, **kwargs):
        with jax.enable_x64(True):
            return function(*args, **kwargs)
    return in_mode
