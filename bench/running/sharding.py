"""Chains across devices: the JAX driver splits a grid's chains over the local devices (``jax.sharding``).

Each chain's steps, random numbers (from its own key) and streaming moments depend on that chain alone, so the
chains axis is split into equal shards, one per device, and XLA runs each shard's blocks on its device with no
communication until the results are copied to the host. The numbers do not depend on the split: the chains of
one device run the same program as they do on one device (tested with ``XLA_FLAGS=
--xla_force_host_platform_device_count=4`` on a CPU). On one device (a CPU by default, a single GPU) nothing
changes.
"""

from __future__ import annotations

import jax
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from sgbench.base.arguments import integer_at_least


def chain_devices(num_chains: int, devices: int | None = None) -> list:
    """The devices a grid of ``num_chains`` chains is split over: the first k local devices, k the largest
    divisor of ``num_chains`` not above ``devices`` (None: the number of local devices).

    Args:
        num_chains: chains per grid point.
        devices: at most this many devices (>= 1), or None for all local devices.

    Returns:
        list of ``jax.Device``, at least one.
    """
    local = jax.local_devices()
    limit = len(local) if devices is None else min(integer_at_least("devices", devices, 1), len(local))
    count = max(k for k in range(1, limit + 1) if num_chains % k == 0)
    return local[:count]


def shard_chains(tree, devices: list, chain_axis: int):
    """``tree``'s arrays placed with their axis ``chain_axis`` split over ``devices`` (unchanged on one device).

    Args:
        tree: a pytree of arrays whose axis ``chain_axis`` is the chains axis.
        devices: from :func:`chain_devices`.
        chain_axis: 0 for per-chain keys, 1 for the (grid point, chain, ...) carry.

    Returns:
        the pytree, sharded.
    """
    if len(devices) == 1:
        return tree
    mesh = Mesh(devices, ("chains",))
    spec = PartitionSpec(*([None] * chain_axis), "chains")
    return jax.device_put(tree, NamedSharding(mesh, spec))
