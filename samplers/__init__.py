"""Samplers: each one file holding its reference (NumPy) and optimized (JAX) implementation.

``get(name)`` returns a :class:`sgbench.samplers._contract.Sampler`; ``names()`` lists them;
``benchmark_settings(name)`` is what its file declares for the benchmarks (``sgbench.samplers._benchmarks``);
``Sampler.law`` its exact discrete-time law where it declares one (``sgbench.samplers._linear_law``).
"""

from sgbench.base.registry import Registry, UnknownNameError
from sgbench.samplers._benchmarks import BenchmarkSettings, GateSettings, GateVariant
from sgbench.samplers._contract import Info, MissingHyperparameter, Sampler, Variate, hyperparameters, static_field
from sgbench.samplers._linear_law import LangevinStep, LinearLaw, NoLinearLawError

_REGISTRY: Registry[Sampler] = Registry("sampler", __name__)


def register(sampler: Sampler) -> Sampler:
    """Add ``sampler`` to the registry under ``sampler.name``.

    Args:
        sampler: a Sampler, usually ``Sampler.from_namespace(name, citation, globals())``.

    Returns:
        ``sampler`` itself, so that a module can keep it (``SAMPLER = samplers.register(...)``).

    Raises:
        ValueError: another sampler is already registered under ``sampler.name``.
    """
    return _REGISTRY.register(sampler.name, sampler)


def get(name: str) -> Sampler:
    """The sampler registered as ``name`` (UnknownNameError lists the known names).

    Args:
        name: a registered sampler's name.

    Returns:
        its Sampler.

    Raises:
        UnknownNameError: no sampler is registered as ``name`` (a ValueError; the message lists the names).
    """
    return _REGISTRY.get(name)


def unregister(name: str) -> None:
    """Remove sampler ``name`` from the registry (a throwaway sampler a test registered).

    Args:
        name: a registered sampler's name.

    Raises:
        UnknownNameError: no sampler is registered as ``name`` (a ValueError).
    """
    _REGISTRY.unregister(name)


def names() -> list[str]:
    """Names of all registered samplers, sorted.

    Returns:
        list of str: the registered names, sorted (every sampler module is imported first).
    """
    return _REGISTRY.names()


class MissingBenchmarkSettingsError(LookupError):
    """A registered sampler that declares no benchmark settings."""


def benchmark_settings(name: str) -> BenchmarkSettings:
    """The benchmark settings sampler ``name`` declares in its file.

    Args:
        name: a registered sampler's name.

    Returns:
        its :class:`BenchmarkSettings`; MissingBenchmarkSettingsError naming the sampler and what to
        declare where it has none.
    """
    settings = get(name).benchmarks
    if settings is None:
        raise MissingBenchmarkSettingsError(
            f"sampler {name!r} declares no benchmark settings: define `benchmarks = samplers.BenchmarkSettings(...)` "
            "(its gate cells, equivalence, speed and asv hyperparameters; samplers/_benchmarks.py) in its file "
            "before it registers, or pass benchmarks= to the Sampler it registers")
    return settings


__all__ = [
    "BenchmarkSettings", "GateSettings", "GateVariant", "Info", "LangevinStep", "LinearLaw",
    "MissingBenchmarkSettingsError", "MissingHyperparameter", "NoLinearLawError", "Sampler", "UnknownNameError",
    "Variate",
    "benchmark_settings", "get", "hyperparameters", "names", "register", "static_field", "unregister",
]
