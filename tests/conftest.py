"""Shared pytest configuration: JAX's 64-bit mode for the whole test process, and the worker count.

The tests run in JAX's 64-bit mode, as the ``sgbench`` command runs its commands (``sgbench.base.float64``):
importing the suite leaves the mode as it was (tests/test_import_side_effects.py checks it in a fresh
process), and the tests that step samplers' JAX code directly in float64 need it on.

The default run spreads the tests over one pytest-xdist worker per core (``-n auto`` in pyproject.toml). A run that
times benchmarks (``--benchmark-enable`` or ``--benchmark-only``) runs in one process instead: timings taken beside
other workers would measure the contention, and pytest-benchmark turns itself off under xdist. Tests marked ``long``
start first, so that the longest (the quick gate) does not begin when the other worker has nothing left."""

import jax

jax.config.update("jax_enable_x64", True)


def pytest_xdist_auto_num_workers(config):
    """0 workers (one process) when benchmarks are timed; None otherwise (xdist's own count: the cores)."""
    if config.getoption("benchmark_enable", False) or config.getoption("benchmark_only", False):
        return 0
    return None


def pytest_collection_modifyitems(config, items):
    """The ``long`` tests first, the rest in their collected order (a stable sort)."""
    items.sort(key=lambda item: item.get_closest_marker("long") is None)
