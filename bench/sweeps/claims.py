"""Who is computing a run: the claim a sweep takes on a store key before computing it.

A claim names its owner by host, process id and a token of the store connection that took it. A
claim is live while its owner can still finish: on this host, while the process exists; from
another host (a store on a shared file system), for :data:`LEASE_SECONDS` after it was taken,
since its process cannot be seen from here. A claim that is not live (its process was killed,
``kill -9`` included) is taken over by the next sweep that needs the run.
"""

from __future__ import annotations

import datetime
import os
import uuid
from typing import NamedTuple

from sgbench.base import provenance

LEASE_SECONDS = 24 * 3600


class Owner(NamedTuple):
    """The process (``host``, ``pid``) and store connection (``token``) holding a claim."""

    host: str
    pid: int
    token: str

    def __str__(self) -> str:
        return f"process {self.pid} on {self.host}"


def new_owner() -> Owner:
    """An owner for a store connection of this process."""
    return Owner(provenance.host_name(), os.getpid(), uuid.uuid4().hex)


def _process_exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


def is_live(owner: Owner, claimed_at: str, now: datetime.datetime | None = None) -> bool:
    """Whether a claim taken by ``owner`` at ``claimed_at`` (ISO 8601, UTC) can still be finished by it."""
    if owner.host == provenance.host_name():
        return _process_exists(owner.pid)
    now = now or datetime.datetime.now(datetime.UTC)
    return (now - datetime.datetime.fromisoformat(claimed_at)).total_seconds() < LEASE_SECONDS
