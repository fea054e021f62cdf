"""Gold standards and the statistics that compare samples with them (``reference.metrics``);
``reference.load(target)`` is a target's stored NUTS reference as a ``Truth`` (``reference.store``)."""

from reference import metrics
from reference.store import ReferenceFileError, load

__all__ = ["ReferenceFileError", "load", "metrics"]
