"""The pytest plugin of sgmcmc-bench, registered as an entry point (``pytest11``): installing the package gives
every pytest session the fixture ``sgbench_validate``.

``sgbench_validate(sampler, params, **options)`` runs ``sgbench.validate`` (the same error budget, a correct sampler
FAILED with probability at most 1e-3, and the same compute budget as ``sgbench validate``) and fails the test with
the verdict's first line unless the outcome is PASSED (or INCONCLUSIVE, with ``allow_inconclusive=True``); it
returns the ``Result``. ``--sgbench-budget B`` and ``--sgbench-seed S`` set the budget and seed of every call that
does not give its own. Loading the plugin imports nothing but pytest.
"""

from __future__ import annotations

import pytest


def pytest_addoption(parser):
    group = parser.getgroup("sgbench", "sgmcmc-bench validation")
    group.addoption("--sgbench-budget", default=None, metavar="B",
                    help="compute budget of sgbench_validate calls that give none (20min, 90s, 2e9; default: "
                         "sgbench validate's)")
    group.addoption("--sgbench-seed", type=int, default=0, metavar="S", help="seed of sgbench_validate calls that "
                                                                              "give none (default: 0)")


@pytest.fixture
def sgbench_validate(request):
    """``check(sampler, params=None, *, allow_inconclusive=False, **options) -> Result``: ``sgbench.validate``,
    failing the test with the verdict's first line unless PASSED (module docstring)."""
    budget, seed = request.config.getoption("sgbench_budget"), request.config.getoption("sgbench_seed")

    def check(sampler, params=None, *, allow_inconclusive: bool = False, **options):
        from sgbench.bench.gate.outcome import Outcome
        from sgbench.bench.validate.api import validate

        if budget is not None:
            options.setdefault("budget", budget)
        options.setdefault("seed", seed)
        result = validate(sampler, params, **options)
        allowed = (Outcome.PASSED, Outcome.INCONCLUSIVE) if allow_inconclusive else (Outcome.PASSED,)
        if result.outcome not in allowed:
            pytest.fail(result.headline, pytrace=False)
        return result

    return check
