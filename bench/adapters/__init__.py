"""Adapters: other libraries' samplers run through the suite's sampler contract, unchanged.

- ``sgbench.bench.adapters.blackjax``: ``sgld``, ``sghmc``, ``sgnht``, ``mclmc``, ``csgld`` (contour SGLD, an
  importance sampler: ``log_weight``) (blackjax 1.7.1; JAX driver);
- ``sgbench.bench.adapters.posteriors``: ``sgld``, ``sghmc``, ``sgnht``, ``baoa``, ``sglrw`` (posteriors 0.1.3
  on torch; NumPy driver, one chain at a time; needs ``torch`` and ``posteriors`` installed);
- ``sgbench.bench.adapters.sgmcmcjax``: ``sgld``, ``sgld_cv``, ``sgld_svrg``, ``psgld``, ``sgld_adam``,
  ``sghmc``, ``sghmc_cv``, ``sghmc_svrg``, ``sgnht``, ``sgnht_cv``, ``baoab``, ``badodab``, ``badodab_cv`` (the 13
  kernels of SGMCMCJax 0.2.13, recomposed from its diffusions) and ``baoab_diffusion``, ``badodab_diffusion`` (its
  splitting diffusions composed as intended); JAX driver; needs ``SGMCMCJax`` installed (its short name
  ``sgmcmcjax:sgld`` names this module, not the installed package).

Each is an :class:`AdaptedSampler` (``bench/adapters/_adapted.py``): a sampler of the suite's
contract that also says which driver runs it (``backend``), which suite sampler it implements
(``claims``), that sampler's equivalent hyperparameters (``to_reference``) and what still differs
(``differences``). They are not in the suite's registry; pass the object, or load it by name::

    from sgbench.bench.adapters import blackjax as bj
    bench.run(bj.sgld, "icg", params={"step_size": 1e-2}, backend="jax")
    bench.run(load("posteriors:sgld"), "icg", params={"lr": 1e-2}, backend="numpy")
    bj.sgld.to_reference({"step_size": 1e-2})    # {'step_size': 0.01, 'temperature': 1.0} for samplers.get("sgld")
"""

from __future__ import annotations

import importlib
import importlib.util

from sgbench import samplers
from sgbench.bench.adapters._adapted import AdaptedSampler, Setting


def load_sampler(spec: str):
    """The object named by ``MODULE:OBJECT``; a MODULE without dots that names a module of
    ``sgbench.bench.adapters`` is that module (``blackjax:sgld``). ValueError naming what is wrong."""
    module_name, sep, attribute = spec.partition(":")
    if not sep or not module_name or not attribute:
        raise ValueError("sampler must be given as MODULE:OBJECT (e.g. sgbench.bench.adapters.blackjax:sgld), "
                         f"got {spec!r}")
    if "." not in module_name and importlib.util.find_spec(f"sgbench.bench.adapters.{module_name}") is not None:
        module_name = f"sgbench.bench.adapters.{module_name}"
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        raise ValueError(f"cannot import module {module_name!r} for {spec!r}: {error}") from error
    try:
        sampler = getattr(module, attribute)
    except AttributeError:
        raise ValueError(f"module {module_name!r} has no object {attribute!r}") from None
    if not isinstance(sampler, samplers.Sampler):
        raise ValueError(f"{spec} is a {type(sampler).__name__}, not a samplers.Sampler (the suite's contract; "
                         "see docs/architecture.md, 'The contracts', or wrap it with an adapter of "
                         "sgbench.bench.adapters)")
    return sampler


def load(spec: str) -> AdaptedSampler:
    """The adapter named ``"module:attribute"``: ``"sgbench.bench.adapters.blackjax:sgld"``, or its short name
    ``"blackjax:sgld"`` (a module of ``sgbench.bench.adapters``), as ``AdaptedSampler.name`` gives it."""
    try:
        adapter = load_sampler(spec)
    except ValueError as error:
        raise ValueError(f"{spec!r} does not name an adapter: {error}") from None
    if not isinstance(adapter, AdaptedSampler):
        raise ValueError(f"{spec!r} is not an adapter (an AdaptedSampler of sgbench.bench.adapters)")
    return adapter


__all__ = ["AdaptedSampler", "Setting", "load", "load_sampler"]
