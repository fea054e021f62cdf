"""Gold standards and the statistics that compare samples with them (``reference.metrics``)."""

from reference import metrics

__all__ = ["metrics"]
