r"""Control-variate gradients around a mode: the centre :math:`\hat x` (the MAP, found here with
optax's L-BFGS on the full-data log density) and the full-data gradient there, computed once.

The estimator (Baker et al. 2019; MAMBA paper, appendix D.3, eq. 8, written for
:math:`\log p = -U`):

.. math:: \widehat{\nabla\log p}_{cv}(x) = \nabla\log p(\hat x)
          + \widehat{\nabla\log p}(x) - \widehat{\nabla\log p}(\hat x),

with both stochastic gradients on the same minibatch (or the same injected-noise draw): the
driver binds ``grad_fn`` to one draw per step, so calling it at :math:`x` and :math:`\hat x` does
exactly that. It is unbiased for any centre; near the mode its variance is small. Used by SGLD-CV,
SGHMC-CV and SGNHT-CV: each declares its ``Params`` as its base sampler's plus :class:`Centred`, and is made
from its base sampler by :func:`wrap`. Additive gradient noise (the same at x and at the centre) cancels, so a base
with an exact linear law gives the control-variate sampler that law without gradient noise
(:func:`cancelled_noise_law`).
"""

from __future__ import annotations

import dataclasses
import functools
import warnings
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from sgbench.base.arguments import float_array, integer_at_least
from sgbench.samplers._contract import Sampler
from sgbench.samplers._linear_law import LinearLaw


class NoModeError(RuntimeError):
    """The optimiser found no finite mode (an unbounded density such as Neal's funnel)."""


@functools.lru_cache(maxsize=16)
def find_map(target, max_steps: int = 2000, tolerance: float = 1e-8) -> tuple[np.ndarray, np.ndarray]:
    """(centre, full-data gradient of the log density at it): L-BFGS (optax, zoom line search) on
    :math:`-\\log p` from ``target.initial_position()``, stopped when the gradient's max-norm is
    below ``tolerance`` times max(1, its norm at the start) or after ``max_steps`` iterations.
    NoModeError if the iterate or the gradient becomes non-finite; a RuntimeWarning with the final
    gradient norm if it stopped unconverged (the estimator stays unbiased, with more variance).
    Cached per target object.

    Args:
        target: a Target with ``logdensity``, ``grad_logdensity`` and ``initial_position`` (the cache's key).
        max_steps: the most L-BFGS iterations, an integer >= 1.
        tolerance: the stopping threshold on the gradient's max-norm, relative to max(1, its norm at the
            start).

    Returns:
        (centre, gradient): float64 arrays of shape (dim,).
    """
    import optax

    max_steps = integer_at_least("max_steps", max_steps, 1)
    start = jnp.asarray(target.initial_position(), dtype=jnp.float64)
    loss = lambda x: -target.logdensity(x)
    optimiser = optax.lbfgs()
    value_and_grad = optax.value_and_grad_from_state(loss)
    scale = max(1.0, float(jnp.max(jnp.abs(jax.grad(loss)(start)))))

    def not_done(carry):
        x, state, k, grad_norm = carry
        return (k < max_steps) & (grad_norm > tolerance * scale) & jnp.all(jnp.isfinite(x))

    def iteration(carry):
        x, state, k, _ = carry
        value, grad = value_and_grad(x, state=state)
        updates, state = optimiser.update(grad, state, x, value=value, grad=grad, value_fn=loss)
        x = optax.apply_updates(x, updates)
        return x, state, k + 1, jnp.max(jnp.abs(jax.grad(loss)(x)))

    carry = (start, optimiser.init(start), 0, jnp.inf)
    centre, _, steps, _ = jax.jit(lambda c: jax.lax.while_loop(not_done, iteration, c))(carry)
    centre = np.asarray(centre)
    gradient = np.asarray(target.grad_logdensity(centre), dtype=np.float64)
    if not (np.all(np.isfinite(centre)) and np.all(np.isfinite(gradient))):
        raise NoModeError(f"no finite mode of {target!r} found from its initial position; pass the "
                          "control-variate centre and centre_grad explicitly")
    if np.max(np.abs(gradient)) > tolerance * scale:
        warnings.warn(f"the MAP search for {target!r} stopped after {int(steps)} L-BFGS steps with gradient "
                      f"max-norm {np.max(np.abs(gradient)):.3g} > {tolerance * scale:.3g}; the control-variate "
                      "centre is not a mode", RuntimeWarning, stacklevel=2)
    return centre, gradient


def prepare(target, params: dict) -> dict:
    """``params`` with ``centre`` (the MAP unless given) and ``centre_grad`` (the full-data gradient
    at the centre unless given) filled in, for a control-variate sampler's ``Params``.

    Args:
        target: the Target the chains run on.
        params: the hyperparameters given, a dict (not modified).

    Returns:
        a new dict with ``centre`` and ``centre_grad`` filled in.

    Raises:
        ValueError: a given ``centre`` or ``centre_grad`` is not a finite vector of the target's dimension
            (checked before the MAP search, which takes seconds).
    """
    params = dict(params)
    for name in ("centre", "centre_grad"):
        if params.get(name) is not None:
            vector = float_array(name, params[name], "a finite vector of the target's dimension")
            if vector.ndim != 1 or vector.shape[0] != target.dim:
                raise ValueError(f"{name} has shape {vector.shape}, but the target has dimension {target.dim}")
            if not np.all(np.isfinite(vector)):
                raise ValueError(f"{name} must be a finite vector of the target's dimension, got {params[name]!r}")
    if params.get("centre") is None:
        params["centre"], gradient = find_map(target)
        params.setdefault("centre_grad", gradient)
    if params.get("centre_grad") is None:
        params["centre_grad"] = np.asarray(target.grad_logdensity(np.asarray(params["centre"], dtype=np.float64)))
    return params


def check_centre(params) -> None:
    """Store ``centre`` and ``centre_grad`` as float64 arrays; ValueError unless they are finite vectors
    of one length.

    Args:
        params: a control-variate Params under construction (its ``__post_init__``).

    Raises:
        ValueError: ``centre`` or ``centre_grad`` is missing, not a finite vector, or of another length.
    """
    for name in ("centre", "centre_grad"):
        value = getattr(params, name)
        if value is None:
            raise ValueError(f"{name} is required: a vector of the target's dimension (bench.run and "
                             "Sampler.params_for fill it in from the target's MAP)")
        array = float_array(name, value, "a finite vector (1-d)")
        if array.ndim != 1 or not np.all(np.isfinite(array)):
            raise ValueError(f"{name} must be a finite vector (1-d), got shape {array.shape}")
        object.__setattr__(params, name, array)
    if np.shape(params.centre) != np.shape(params.centre_grad):
        raise ValueError(f"centre_grad must have the shape of centre {np.shape(params.centre)}, "
                         f"got {np.shape(params.centre_grad)}")


def check_dimension(params, position) -> None:
    """ValueError unless the centre has the dimension of ``position`` (checked at ``init``).

    Args:
        params: validated control-variate Params.
        position: the chain's starting point, shape (dim,).

    Raises:
        ValueError: the centre's dimension is not the position's.
    """
    if np.shape(params.centre)[-1] != np.shape(position)[-1]:
        raise ValueError(f"centre has dimension {np.shape(params.centre)[-1]}, but the position has dimension "
                         f"{np.shape(position)[-1]}")


def cv_grad_fn(grad_fn, centre, centre_grad):
    """The control-variate oracle :math:`x \\mapsto \\nabla\\log p(\\hat x) + \\hat g(x) - \\hat g(\\hat x)`.

    Args:
        grad_fn: this step's gradient oracle, bound to its minibatch or noise draw.
        centre: the centre, shape (dim,).
        centre_grad: the full-data gradient of the log density at the centre, shape (dim,).

    Returns:
        the oracle, a function of a position x (two calls of ``grad_fn`` per call).
    """
    return lambda x: centre_grad + grad_fn(x) - grad_fn(centre)


@dataclasses.dataclass(frozen=True)
class Centred:
    r"""The control variate's hyperparameters, added to a base sampler's. A control-variate sampler's ``Params``
    subclasses this class and the base's ``Params``, in that order, so its fields are the base's, then
    ``centre`` :math:`\hat x` and ``centre_grad`` :math:`\nabla\log p(\hat x)` (``sgbench.samplers.sgld_cv``)::

        @samplers.hyperparameters
        class Params(control_variates.Centred, sgld.Params):
            ...

    Construction runs the base's checks, then :func:`check_centre`.

    Attributes:
        centre: the centre, a vector of the target's dimension (None until :func:`prepare` fills it in from the
            MAP).
        centre_grad: the full-data gradient of the log density at the centre (None until :func:`prepare` fills it
            in).
    """

    centre: Any = None
    centre_grad: Any = None

    def __post_init__(self):
        super().__post_init__()  # the base sampler's checks (the next class in the Params' MRO)
        check_centre(self)


CENTRE_FIELDS = tuple(field.name for field in dataclasses.fields(Centred))


def cancelled_noise_law(base_law):
    r"""The ``linear_law`` of the control-variate sampler whose base declares ``base_law``
    (``sgbench.samplers._linear_law``): with additive noise :math:`\hat g(x) = g(x) + e` the estimator is
    :math:`g(\hat x) + g(x) + e - g(\hat x) - e = g(x)` whatever the centre, so the base's law without gradient
    noise. It holds for additive noise only (not for minibatch noise, whose error at x and at the centre differ),
    and the step no longer reads the oracle's own gradient (no ``langevin`` part).

    Args:
        base_law: the base sampler's ``linear_law``.

    Returns:
        ``linear_law(hyperparameters, precision, noise_covariance, step=None) -> LinearLaw``, which ignores the
        hyperparameters ``centre`` and ``centre_grad``.
    """
    def linear_law(hyperparameters: dict, precision, noise_covariance, step=None) -> LinearLaw:
        base = {key: value for key, value in hyperparameters.items() if key not in CENTRE_FIELDS}
        law = base_law(base, precision, None, step)
        return dataclasses.replace(law, langevin=None, position_dependent_noise=False)

    return linear_law


def wrap(base: Sampler, Params: type, name: str, citation: str, benchmarks=None) -> Sampler:
    """``base`` with the control-variate gradient: hyperparameters ``Params`` (the base's and :class:`Centred`'s;
    ``prepare`` fills in the centre from the MAP unless given), its state, draws and steps, the steps fed the
    oracle :func:`cv_grad_fn` (two stochastic gradients, on one minibatch, per gradient the base takes), the base's
    law without gradient noise where the base declares one (:func:`cancelled_noise_law`), and its own
    ``benchmarks`` settings.

    Args:
        base: the base Sampler (one without ``prime``).
        Params: the new sampler's hyperparameter class: a subclass of :class:`Centred` and ``base.Params``, made
            with :func:`samplers.hyperparameters` in the new sampler's module.
        name: the new sampler's name.
        citation: the paper and equations it implements.
        benchmarks: its BenchmarkSettings, or None.

    Returns:
        the control-variate Sampler (not yet registered).

    Raises:
        ValueError: ``base`` caches log densities at its position (it has ``prime``).
        TypeError: ``Params`` is not a subclass of :class:`Centred` and ``base.Params``.
    """
    if base.prime is not None:
        raise ValueError(f"sampler {base.name!r} caches log densities at its position (prime); the control "
                         "variate wraps samplers that only call the gradient oracle")
    if not (issubclass(Params, Centred) and issubclass(Params, base.Params)):
        raise TypeError(f"Params of {name!r} must subclass control_variates.Centred and the Params of "
                        f"{base.name!r}, got {Params.__module__}.{Params.__qualname__}")

    def init(position, params):
        check_dimension(params, position)
        return base.init(position, params)

    def step_with(base_step):
        def step(state, grad_fn, draws, params):
            state, info = base_step(state, cv_grad_fn(grad_fn, params.centre, params.centre_grad), draws, params)
            return state, info._replace(num_grad_evals=2 * info.num_grad_evals)
        return step

    return Sampler(name=name, citation=citation, Params=Params, State=base.State, init=init,
                   reference_step=step_with(base.reference_step), optimized_step=step_with(base.optimized_step),
                   draw_spec=base.draw_spec, prepare=prepare, benchmarks=benchmarks,
                   linear_law=None if base.linear_law is None else cancelled_noise_law(base.linear_law))
