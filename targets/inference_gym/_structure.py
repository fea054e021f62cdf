"""Inference Gym's structured values (a dict, a named tuple or one array) as flat vectors, and back.

A structure's leaves are taken in a fixed order: a mapping's keys sorted, a named tuple's fields in order, a bare
array as one leaf named ``""``; a leaf of shape ``s`` becomes ``prod(s)`` coordinates in C order, named
``name[i]`` (from 1, as posteriordb's draws; ``name`` alone for a scalar). Flattening the model's event, its
quantities and its truth by this one rule lines them up by name, whatever order Inference Gym stores them in.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import jax.numpy as jnp


def leaves(structure) -> list[tuple[str, object]]:
    """The (name, leaf) pairs of ``structure`` in the module's order.

    Args:
        structure: a mapping, a named tuple, or one array-like leaf.

    Returns:
        list of (name, leaf).
    """
    if isinstance(structure, Mapping):
        return [(key, structure[key]) for key in sorted(structure)]
    if hasattr(structure, "_fields"):
        return [(field, getattr(structure, field)) for field in structure._fields]
    return [("", structure)]


def coordinate_names(name: str, shape: tuple[int, ...]) -> list[str]:
    """The names of a leaf's coordinates.

    Args:
        name: the leaf's name.
        shape: its shape.

    Returns:
        ``[name]`` for a scalar, else ``name[1]``, ``name[2]``, ... (a bare array: ``[1]``, ...).
    """
    size = math.prod(shape)
    return [name] if not shape else [f"{name}[{i}]" for i in range(1, size + 1)]


def flatten(structure):
    """The leaves of ``structure`` concatenated, each flattened (C order) over its trailing event axes.

    Args:
        structure: a structured value, no batch axes.

    Returns:
        a JAX vector.
    """
    return jnp.concatenate([jnp.reshape(jnp.asarray(leaf), (-1,)) for _, leaf in leaves(structure)])


class Layout:
    """The leaves of a model's event: names, shapes and the flat vector's slices; ``unflatten`` rebuilds the
    structure (of the event's own container type) from a flat vector."""

    def __init__(self, event_shape):
        self.template = event_shape
        self.names = [name for name, _ in leaves(event_shape)]
        self.shapes = [tuple(int(n) for n in shape) for _, shape in leaves(event_shape)]
        sizes = [math.prod(shape) for shape in self.shapes]
        self.offsets = [sum(sizes[:i]) for i in range(len(sizes) + 1)]
        self.coordinates = tuple(c for name, shape in zip(self.names, self.shapes, strict=True)
                                 for c in coordinate_names(name, shape))

    @property
    def dim(self) -> int:
        """The flat vector's length."""
        return self.offsets[-1]

    def pieces(self, vector) -> list:
        """The flat ``vector`` cut into leaves of their shapes.

        Args:
            vector: shape (dim,).

        Returns:
            list of arrays, in the layout's order.
        """
        return [jnp.reshape(vector[a:b], shape)
                for a, b, shape in zip(self.offsets[:-1], self.offsets[1:], self.shapes, strict=True)]

    def build(self, values: list):
        """The event's container holding ``values`` (one per leaf, the layout's order).

        Args:
            values: list of arrays.

        Returns:
            a dict, a named tuple of the event's type, or the one array.
        """
        if isinstance(self.template, Mapping):
            return dict(zip(self.names, values, strict=True))
        if hasattr(self.template, "_fields"):
            return type(self.template)(**dict(zip(self.names, values, strict=True)))
        return values[0]
