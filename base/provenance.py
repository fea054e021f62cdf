"""Provenance: the versions of Python and of the libraries a result depends on."""

from __future__ import annotations

import importlib.metadata
import platform


def library_versions(packages) -> dict[str, str]:
    """Python's version and each package's ("not installed" where a package is missing).

    Args:
        packages: distribution names (e.g. ``"jax"``).

    Returns:
        dict from ``"python"`` and each package to its version string.
    """
    found = {"python": platform.python_version()}
    for package in packages:
        try:
            found[package] = importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            found[package] = "not installed"
    return found
