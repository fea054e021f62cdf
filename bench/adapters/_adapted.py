"""``AdaptedSampler``: another library's sampler behind the suite's sampler contract.

An adapter is a :class:`samplers.Sampler` (``Params``, ``State``, ``init``, ``draw_spec``, the two
steps, optionally ``prime``) whose step calls the library's own update, unchanged, with the
gradient from the suite's oracle. It adds:

- ``library``: the library it runs ("blackjax", "posteriors");
- ``backend``: the suite driver that can run it. A JAX library's kernel is pure and jit-able, so its
  adapter gives ``optimized_step`` and runs under the JAX driver (``backend="jax"``); a torch
  library's update runs eagerly on one chain, so its adapter gives ``reference_step`` and runs
  under the NumPy driver (``backend="numpy"``); one whose update is elementwise over the coordinates (posteriors'
  SGLD, SGLRW, SGHMC, BAOA) gives a ``reference_step`` that also takes all chains at once, with a leading chain
  axis, and runs under the batched driver (``backend="batched"``, ``sgbench.bench.running.batched_driver``; the
  NumPy driver runs it too, one chain at a time). The other step raises :class:`WrongBackendError` naming the
  backend to use;
- ``claims``: the name of the suite's reference sampler that implements the same dynamics, or
  None;
- ``to_reference(params)``: that reference's hyperparameters for the adapter's ``params`` (a dict,
  or the adapter's ``Params``), translating the library's step-size, friction, temperature and
  noise conventions into the suite's;
- ``differences``: what still differs from the reference with those hyperparameters ("" where the
  adapter's one-step law equals the reference's): an initial momentum, the minibatch that several
  gradient evaluations share;
- ``steps_per_call``: how many of the reference's steps one call of the adapter makes (blackjax's SGHMC: its
  ``num_integration_steps`` L; None: 1), so that ``sgbench validate`` runs the reference that many times as long
  and compares the two over the same span of the dynamics;
- ``method``: the suite sampler of the same method (default: ``claims``), beside which ``sgbench conformance``
  measures the adapter's speed;
- ``settings``: the :class:`Setting` s at which ``sgbench conformance`` runs it (two or more: a
  temperature other than 1 where the library takes one, friction far from 1, small and moderate steps);
- ``temperature(params)``: the temperature, in the suite's convention, at which the adapter samples at ``params``
  (its ``Params``; None, the default: the ``temperature`` hyperparameter, or 1 without one), for a library whose
  temperature has other units (posteriors' log density divided by ``num_data``: T = N tau);
- ``log_weight(state, params)``: for a sampler whose draws follow another density than the target (an
  importance sampler such as contour SGLD), the log importance weight of the state's position, up to a
  constant: the target's expectations are the self-normalised weighted averages
  sum_k w_k f(x_k) / sum_k w_k, w_k = exp(log_weight(s_k, params)), over the states s_k after each step
  (``sgbench.bench.validate.weighted_truth``). None (the default): the draws follow the target, unweighted.

Adapters are not registered in the suite's registry (they would need their library to import);
they are module attributes, ``sgbench.bench.adapters.blackjax.sgld``, found by
:func:`sgbench.bench.adapters.load` from ``"sgbench.bench.adapters.blackjax:sgld"``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from sgbench import samplers
from sgbench.samplers._contract import Sampler

BACKENDS = ("jax", "numpy", "batched")
_STEP_OF_BACKEND = {"jax": "optimized_step", "numpy": "reference_step", "batched": "reference_step"}


class WrongBackendError(TypeError):
    """An adapter run under a driver that cannot run its library's update."""


def _unavailable_step(name: str, backend: str, missing: str) -> Callable:
    """A step that says which driver runs the adapter (``backend``; a batched one runs under the NumPy driver too)."""
    drivers = f"{backend!r} driver" + (" (or 'numpy', one chain at a time)" if backend == "batched" else " only")

    def step(state, grad_fn, draws, params):
        raise WrongBackendError(f"{name} has no {missing}: it runs under the {drivers}; use "
                                f"bench.run(..., backend={backend!r})")

    step.__name__ = missing
    return step


@dataclasses.dataclass(frozen=True)
class Setting:
    """One setting at which ``sgbench conformance`` runs an adapter.

    Attributes:
        label: a short name for the report ("T = 0.5, alpha = 1").
        params: the adapter's hyperparameters (``TARGET:NAME`` keys apply to one validation target only).
        targets: comma-separated keys of ``sgbench.bench.validate.targets``.
        probes: what the setting is there to find, in words.
        steps_factor: multiplies the scale's warm-up and scored steps (>= 1): for an adaptive sampler whose
            adaptation needs longer to settle than the scale gives (contour SGLD's stochastic approximation).
    """

    label: str
    params: dict
    targets: str = "icg"
    probes: str = ""
    steps_factor: int = 1


EXTERNAL_TARGETS = "mesquite,gauss_mix,schools"
"""The external validation targets (posteriordb's) an adapter's ``external targets`` setting runs on."""
EXTERNAL_STEPS = {"step_size": 0.05, "mesquite:step_size": 2e-4, "gauss_mix:step_size": 5e-6}
"""An SGLD step h on each of them: about 0.2 over the largest curvature (0.05 on ``schools``, where the chains'
averages are heavy-tailed at 0.15; a quarter of it on ``gauss_mix``, whose minibatch noise heats SGLD), in the
convention of a library whose step is the suite's h (``reports/validate_external`` measures the suite's own there)."""
EXTERNAL_STEPS_FACTOR = 4
"""Their runs are 4 times the scale's steps: at the default scale's 2000 + 2000 the chains on the mixture do not
forget their start (autocorrelation time 1260 steps) and those on the eight schools have heavy-tailed averages."""


@dataclasses.dataclass(frozen=True, kw_only=True)
class AdaptedSampler(Sampler):
    """A :class:`samplers.Sampler` running another ``library``'s update, with the ``backend`` that
    can run it, the suite sampler it ``claims`` to implement, ``translate`` (the adapter's
    ``Params`` to that sampler's hyperparameters) and the ``differences`` that remain. An importance
    sampler's ``log_weight(state, params)`` is the log weight of the state's position, up to a constant
    (module docstring; None: its draws follow the target unweighted)."""

    library: str
    backend: str
    claims: str | None = None
    translate: Callable[[Any], dict] | None = None
    differences: str = ""
    steps_per_call: Callable[[Any], int] | None = None
    method: str | None = None
    settings: tuple[Setting, ...] = ()
    log_weight: Callable[[Any, Any], Any] | None = None
    temperature: Callable[[Any], float] | None = None

    def __post_init__(self):
        if self.backend not in BACKENDS:
            raise ValueError(f"backend must be one of {list(BACKENDS)}, got {self.backend!r}")
        if (self.claims is None) != (self.translate is None):
            raise ValueError("an adapter gives both claims and translate, or neither")
        if self.method is None:
            object.__setattr__(self, "method", self.claims)

    @classmethod
    def build(cls, *, name: str, citation: str, library: str, backend: str, step: Callable, Params: type,
              State: type, init: Callable, draw_spec: Callable, prime: Callable | None = None,
              claims: str | None = None, translate: Callable | None = None, differences: str = "",
              steps_per_call: Callable | None = None, method: str | None = None, settings: tuple[Setting, ...] = (),
              prepare: Callable | None = None, log_weight: Callable | None = None,
              temperature: Callable | None = None) -> AdaptedSampler:
        """The adapter whose ``step`` is the step of ``backend``; the other step raises."""
        if backend not in BACKENDS:
            raise ValueError(f"backend must be one of {list(BACKENDS)}, got {backend!r}")
        other = "reference_step" if backend == "jax" else "optimized_step"
        steps = {_STEP_OF_BACKEND[backend]: step, other: _unavailable_step(name, backend, other)}
        return cls(name=name, citation=citation, Params=Params, State=State, init=init, draw_spec=draw_spec,
                   prime=prime, prepare=prepare, library=library, backend=backend, claims=claims,
                   translate=translate, differences=differences, steps_per_call=steps_per_call, method=method,
                   settings=tuple(settings), log_weight=log_weight, temperature=temperature, **steps)

    def to_reference(self, params) -> dict:
        """Hyperparameters of the suite sampler ``claims`` equal to the adapter's ``params`` (a dict
        of the adapter's hyperparameters, defaults filled in, or its ``Params``). ValueError where
        the adapter claims none, or where ``params`` use a feature the reference lacks."""
        if self.claims is None:
            raise ValueError(f"{self.name} claims no suite sampler, so it has no reference hyperparameters")
        if not isinstance(params, self.Params):
            params = self.params(**params)
        return self.translate(params)

    def reference_steps(self, params) -> int:
        """The reference's steps in one call of the adapter at ``params`` (a dict or the adapter's ``Params``)."""
        if self.steps_per_call is None:
            return 1
        return int(self.steps_per_call(params if isinstance(params, self.Params) else self.params(**params)))

    def reference(self) -> Sampler:
        """The suite sampler this adapter claims to implement."""
        if self.claims is None:
            raise ValueError(f"{self.name} claims no suite sampler")
        return samplers.get(self.claims)
