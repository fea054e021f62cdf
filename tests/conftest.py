"""Shared pytest configuration: float64 JAX (the suite enables it on import), the worker count, the order, and one
compilation cache for the run.

The default run spreads the tests over one pytest-xdist worker per core (``-n auto`` in pyproject.toml). A run that
times benchmarks (``--benchmark-enable`` or ``--benchmark-only``) runs in one process instead: timings taken beside
other workers would measure the contention, and pytest-benchmark turns itself off under xdist. Tests marked ``long``
start first, so that the longest (the quick gate) does not begin when the other worker has nothing left.

XLA compilation is most of the run's time, and many tests compile a program another test compiled already (the
quick gate's cells, a sweep run twice to test its resumption, the tuner's arms). Every worker therefore shares one
persistent compilation cache (``bench.running.compilation_cache``) in a folder new for the run, so nothing outlives
it; a run that times benchmarks keeps its compile times real and uses none."""

import pytest

import samplers  # noqa: F401  (enables JAX's 64-bit mode before any test builds arrays)
from bench.running.compilation_cache import enable_compilation_cache


def _times_benchmarks(config) -> bool:
    return bool(config.getoption("benchmark_enable", False) or config.getoption("benchmark_only", False))


def pytest_xdist_auto_num_workers(config):
    """0 workers (one process) when benchmarks are timed; None otherwise (xdist's own count: the cores)."""
    return 0 if _times_benchmarks(config) else None


def pytest_collection_modifyitems(config, items):
    """The ``long`` tests first, the rest in their collected order (a stable sort)."""
    items.sort(key=lambda item: item.get_closest_marker("long") is None)


@pytest.fixture(scope="session", autouse=True)
def one_compilation_cache_for_the_run(request, tmp_path_factory):
    """The run's compilation cache, in the run's temporary root (the workers' common parent under xdist)."""
    if _times_benchmarks(request.config):
        yield None
        return
    root = tmp_path_factory.getbasetemp()
    if hasattr(request.config, "workerinput"):
        root = root.parent
    yield enable_compilation_cache(root / "xla-cache")
