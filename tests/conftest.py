"""Shared pytest configuration: float64 JAX (the suite enables it on import) and tier markers."""

import samplers  # noqa: F401  (enables JAX's 64-bit mode before any test builds arrays)
