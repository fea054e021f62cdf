"""A pytest plugin that plants the bug named by ``SGBENCH_PLANTED_BUG`` for the whole session
(``python -m pytest -p sgbench.bench.gate.planted_plugin ...``; used by ``sgbench gate --power``)."""

from __future__ import annotations

import contextlib
import os

_STACK = contextlib.ExitStack()


def pytest_configure(config):
    from sgbench.bench.gate import planted

    name = os.environ.get(planted.ENVIRONMENT_VARIABLE)
    if name:
        _STACK.enter_context(planted.get(name).planted())


def pytest_unconfigure(config):
    _STACK.close()
