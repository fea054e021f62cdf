"""Discrepancies between samples (or streamed moments) and a target's truth.

Each metric is a pure function, registered by name with :func:`register`, its definition and
source in its docstring, and tested against a closed form. ``names()`` lists them.
"""

from samplers._registry import Registry

_REGISTRY = Registry("metric", __name__)


def register(name: str):
    """Function decorator: register a metric under ``name``."""

    def decorate(fn):
        return _REGISTRY.register(name, fn)

    return decorate


def get(name: str):
    """The metric function registered as ``name``."""
    return _REGISTRY.get(name)


def names() -> list[str]:
    """Names of all registered metrics, sorted."""
    return _REGISTRY.names()


from reference.metrics.b2 import B2Summary, b2, b2_summary  # noqa: E402
from reference.metrics.moments import Moments  # noqa: E402

__all__ = ["B2Summary", "Moments", "b2", "b2_summary", "get", "names", "register"]
