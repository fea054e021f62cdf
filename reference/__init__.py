"""Gold standards and the statistics that compare samples with them (``reference.metrics``);
``reference.load(target)`` is a target's stored NUTS reference as a ``Truth`` (``reference.store``)."""

import importlib


def __getattr__(name: str):
    """``metrics``, ``load`` and ``ReferenceFileError``, imported on first use (PEP 562): the metrics load
    ArviZ and JAX, which ``sgbench --help`` does not need."""
    if name == "metrics":
        return importlib.import_module("reference.metrics")
    if name in ("ReferenceFileError", "load"):
        return getattr(importlib.import_module("reference.store"), name)
    raise AttributeError(f"module 'reference' has no attribute {name!r}")


__all__ = ["ReferenceFileError", "load", "metrics"]
