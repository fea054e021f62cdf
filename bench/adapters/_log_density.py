"""The step's oracle as a JAX log density that another library differentiates: ``jax.value_and_grad`` of it gives the
oracle's value and gradient from one oracle evaluation (a ``jax.custom_jvp``: the gradient is never recomputed by
autodiff). Used where a library's kernel takes a log density, not a gradient (blackjax's MCLMC, a blackjax-style
pair written against a log density)."""

from __future__ import annotations

import jax
import jax.numpy as jnp


def logdensity_of(oracle):
    """``logdensity(x)`` whose value and gradient are ``oracle.value_and_grad(x)``'s, one evaluation each call."""

    @jax.custom_jvp
    def logdensity(x):
        return oracle.value_and_grad(x)[0]

    @logdensity.defjvp
    def logdensity_jvp(primals, tangents):
        (x,), (dx,) = primals, tangents
        value, gradient = oracle.value_and_grad(x)
        return value, jnp.sum(gradient * dx, axis=-1)

    return logdensity
