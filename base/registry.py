"""Name -> object registries that discover their entries by importing every module of a package.

A new sampler or target is one new file in its package that calls ``register``; nothing else
changes. Modules whose names start with ``_`` are infrastructure and are not scanned.
"""

from __future__ import annotations

import importlib
import pkgutil
from typing import Generic, TypeVar

T = TypeVar("T")


class UnknownNameError(ValueError):
    """An unknown sampler, target or metric name; the message lists the known names."""


class Registry(Generic[T]):
    """Entries of one kind (``kind`` names it in error messages), found in ``package``.

    Args:
        kind: what the entries are (``"sampler"``, ``"target"``, ...), named in error messages.
        package: the package whose modules are imported to discover the entries.
    """

    def __init__(self, kind: str, package: str):
        self.kind = kind
        self.package = package
        self._entries: dict[str, T] = {}
        self._discovered = False

    def register(self, name: str, entry: T) -> T:
        """Add ``entry`` under ``name`` (registering the same entry under it again is allowed).

        Args:
            name: the entry's name.
            entry: the object to register.

        Returns:
            ``entry``.

        Raises:
            ValueError: ``name`` is registered to another entry.
        """
        if name in self._entries and self._entries[name] is not entry:
            raise ValueError(f"{self.kind} name {name!r} is registered twice")
        self._entries[name] = entry
        return entry

    def unregister(self, name: str) -> None:
        """Remove entry ``name`` (UnknownNameError if there is none).

        Args:
            name: a registered name.

        Raises:
            UnknownNameError: ``name`` is not registered (a ValueError).
        """
        self.get(name)
        del self._entries[name]

    def _discover(self) -> None:
        if self._discovered:
            return
        self._discovered = True
        package = importlib.import_module(self.package)
        for module in pkgutil.iter_modules(package.__path__):
            if not module.name.startswith("_"):
                importlib.import_module(f"{self.package}.{module.name}")

    def get(self, name: str) -> T:
        """The entry registered as ``name``, after importing the package's modules.

        Args:
            name: a registered name.

        Returns:
            the entry.

        Raises:
            UnknownNameError: ``name`` is not registered (a ValueError; the message lists the known names).
        """
        self._discover()
        if not isinstance(name, str) or name not in self._entries:
            raise UnknownNameError(
                f"unknown {self.kind} {name!r}; known {self.kind}s: {', '.join(self.names())}"
            )
        return self._entries[name]

    def names(self) -> list[str]:
        """The names of all entries, after importing the package's modules.

        Returns:
            list of str, sorted.
        """
        self._discover()
        return sorted(self._entries)
