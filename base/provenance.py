"""Provenance: what a result records of the code, the machine, the libraries and the time that made it.

Every fact is computed here and nowhere else:

- the code: :func:`git_commit` (the package's checkout, ``+dirty`` with uncommitted changes to tracked files),
  :func:`head_commit` (the commit checked out in a folder), :func:`checked_out_branch` and
  :func:`source_fingerprint` (a hash of the package's source, which tells two working trees apart where a dirty
  commit cannot);
- the machine: :func:`host_name`, :func:`processor`, :func:`cpu_model`, :func:`cpu_count`, :func:`usable_cores`,
  :func:`operating_system`, :func:`architecture`, :func:`ram_text`, and JAX's view of it, :func:`jax_backend`,
  :func:`jax_devices` and :func:`accelerator`;
- the libraries: :func:`library_version`, :func:`library_versions` (with Python's version);
- the time: :func:`utc_now`.

Records keep the formats they were first written in, so stored results read the same. The one-line machine
descriptions are two: :func:`machine_summary` (the results store's runs and gate checks, the gate baselines) and
:func:`accelerator_summary` (the ``sgbench speed`` page); the asv machine (``sgbench.bench.perf.asv_machine``) is
assembled from the facts above.
"""

from __future__ import annotations

import datetime
import functools
import hashlib
import importlib.metadata
import os
import platform
import subprocess
from pathlib import Path
from typing import NamedTuple

CPU_PLATFORM = "cpu"
GIT_TIMEOUT_SECONDS = 10


class Device(NamedTuple):
    """What provenance records of a JAX device."""

    platform: str
    device_kind: str


def _git(directory, *args: str) -> str:
    """The stripped output of ``git ARGS`` run in ``directory`` (None: the working directory); raises
    ``OSError`` or ``subprocess.SubprocessError`` when git fails."""
    return subprocess.run(["git", *args], cwd=directory, capture_output=True, text=True,
                          timeout=GIT_TIMEOUT_SECONDS, check=True).stdout.strip()


def head_commit(directory=None) -> str:
    """The commit checked out (``HEAD``) in a git checkout.

    Args:
        directory: a folder inside the checkout (None: the working directory).

    Returns:
        the full commit hash, without a dirty flag.

    Raises:
        OSError, subprocess.SubprocessError: git is missing or ``directory`` is not in a checkout.
    """
    return _git(directory, "rev-parse", "HEAD")


def checked_out_branch(directory=None) -> str:
    """The branch checked out in a git checkout (asv graphs the commits of its config's branches).

    Args:
        directory: a folder inside the checkout (None: the working directory).

    Returns:
        the branch's name, ``"HEAD"`` when detached.

    Raises:
        OSError, subprocess.SubprocessError: git is missing or ``directory`` is not in a checkout.
    """
    return _git(directory, "rev-parse", "--abbrev-ref", "HEAD")


@functools.cache
def git_commit() -> str:
    """The code version of a result: the commit of the checkout holding this package.

    Returns:
        the full commit hash, with ``+dirty`` appended if tracked files differ from it; ``"unknown"`` outside a
        git checkout (an installed wheel).
    """
    here = Path(__file__).resolve().parent
    try:
        commit = head_commit(here)
        dirty = bool(_git(here, "status", "--porcelain", "--untracked-files=no"))
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return (commit + "+dirty" if dirty else commit) or "unknown"


def source_fingerprint(package: Path | None = None) -> str:
    """A hash of a package's Python source as it is now, for work that may be reused only by the same code (the
    gate's finished cells, ``sgbench.bench.gate.cell_record``); a ``+dirty`` commit cannot tell two edits apart.

    Args:
        package: the package's folder (default: this one, ``sgbench/``, whose subpackages are links to the
            repository's top-level folders; the links are followed).

    Returns:
        the SHA-256, in hex, of every ``.py`` file below ``package`` (``__pycache__`` and hidden folders left out),
        each with its path relative to ``package``, in sorted order.
    """
    package = Path(__file__).absolute().parent.parent if package is None else Path(package)
    digest = hashlib.sha256()
    for root, folders, files in sorted(os.walk(package, followlinks=True)):
        folders[:] = sorted(f for f in folders if f != "__pycache__" and not f.startswith("."))
        for name in sorted(f for f in files if f.endswith(".py")):
            path = Path(root) / name
            digest.update(str(path.relative_to(package)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def host_name() -> str:
    """This host's network name (``platform.node()``, the same as ``socket.gethostname()``).

    Returns:
        the host name; empty where the platform cannot tell.
    """
    return platform.node()


def processor() -> str:
    """The processor as the platform names it, else the machine architecture.

    Returns:
        ``platform.processor()`` or ``platform.machine()``; empty where the platform reports neither.
    """
    return platform.processor() or platform.machine()


def cpu_model() -> str:
    """The CPU's model name: ``/proc/cpuinfo`` on Linux, else :func:`processor`.

    Returns:
        the model name, ``"unknown CPU"`` where nothing names it.
    """
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.is_file():
        for line in cpuinfo.read_text(errors="replace").splitlines():
            key, sep, value = line.partition(":")
            if sep and key.strip() == "model name" and value.strip():
                return value.strip()
    return processor() or "unknown CPU"


def cpu_count() -> int | None:
    """The logical CPUs of this machine (``os.cpu_count()``), None where it cannot tell.

    Returns:
        the number of CPUs, or None.
    """
    return os.cpu_count()


def usable_cores() -> int:
    """The CPU cores this process may run on: its affinity where the OS has one, else :func:`cpu_count`.

    Returns:
        the number of cores, at least 1.
    """
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return cpu_count() or 1


def operating_system() -> str:
    """The operating system and its release, e.g. ``"Linux 6.8.0"``.

    Returns:
        ``platform.system()`` and ``platform.release()``, separated by a space.
    """
    return f"{platform.system()} {platform.release()}"


def architecture() -> str:
    """The machine architecture, e.g. ``"x86_64"``.

    Returns:
        ``platform.machine()``, ``"unknown"`` where the platform cannot tell.
    """
    return platform.machine() or "unknown"


def ram_text() -> str:
    """Physical memory in decimal gigabytes, e.g. ``"25GB"`` (as asv's own example).

    Returns:
        the memory text, ``"unknown"`` where the OS does not report it.
    """
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):
        return "unknown"
    return f"{round(total / 1e9)}GB"


def jax_backend() -> str:
    """JAX's default backend in this process (``"cpu"``, ``"gpu"``, ``"tpu"``).

    Returns:
        the backend name.
    """
    import jax

    return jax.default_backend()


def jax_devices() -> list[Device]:
    """JAX's devices on its default backend in this process (the GPUs when it has any, else the CPU).

    Returns:
        one :class:`Device` per device, in JAX's order.
    """
    import jax

    return [Device(device.platform, device.device_kind) for device in jax.devices()]


def accelerator(devices) -> tuple[str, str, int] | None:
    """The accelerator among ``devices``: the first device that is not a CPU, and how many of its kind there are.

    Args:
        devices: JAX devices, :class:`Device` s, or anything with ``platform`` and ``device_kind`` attributes.

    Returns:
        ``(platform, device kind, count)``, or None when every device is a CPU.
    """
    devices = list(devices)
    for device in devices:
        if device.platform != CPU_PLATFORM:
            count = sum(other.platform == device.platform and other.device_kind == device.device_kind
                        for other in devices)
            return device.platform, device.device_kind, count
    return None


@functools.cache
def library_version(package: str) -> str:
    """The installed version of one distribution.

    Args:
        package: a distribution name (e.g. ``"jax"``).

    Returns:
        its version string, ``"not installed"`` where it is missing.
    """
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def library_versions(packages) -> dict[str, str]:
    """Python's version and each package's (:func:`library_version`).

    Args:
        packages: distribution names (e.g. ``"jax"``).

    Returns:
        dict from ``"python"`` and each package to its version string.
    """
    return {"python": platform.python_version(), **{package: library_version(package) for package in packages}}


def utc_now() -> str:
    """The time a record is made: now, in UTC, to the second.

    Returns:
        ISO 8601 text, e.g. ``"2025-01-31T12:00:00+00:00"``.
    """
    return datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")


@functools.cache
def machine_summary() -> str:
    """The machine line of the results store's runs and gate checks and of the gate baselines.

    Returns:
        ``"HOST | PROCESSOR | N CPUs | jax backend B"`` (:func:`host_name`, :func:`processor`, :func:`cpu_count`,
        :func:`jax_backend`).
    """
    return (f"{host_name()} | {processor() or 'unknown processor'} | {cpu_count()} CPUs | "
            f"jax backend {jax_backend()}")


def accelerator_summary() -> str:
    """The machine line of the ``sgbench speed`` page: the device JAX runs on first, then the host.

    Returns:
        ``"PLATFORM: DEVICE KIND, HOST, PROCESSOR"`` of JAX's first device (:func:`jax_devices`).
    """
    device = jax_devices()[0]
    return f"{device.platform}: {device.device_kind}, {host_name()}, {processor()}"
