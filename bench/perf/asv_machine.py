"""The asv machine this suite runs on: a name that says which accelerator JAX uses, its metadata, its registration.

asv files results under a machine name, and its dashboard draws one line per machine. Putting the accelerator in
the name keeps the CPU and the GPU timings of one host apart, side by side:

    <hostname>-cpu-<N>cores         JAX sees only CPUs; N is the number of cores this process may use
    <hostname>-gpu-<model>          one GPU, e.g. node7-gpu-nvidia-h100-80gb-hbm3
    <hostname>-gpu-<K>x-<model>     K GPUs of that model

(``tpu`` or any other JAX platform is named the same way as ``gpu``.) Every part is lower-cased and each run of
characters other than letters and digits becomes one ``-``.

``register_machine(config)`` runs ``asv machine --yes --machine NAME --os ... --arch ... --cpu ... --num_cpu ...
--ram ... --config CONFIG``, so that ``asv run --machine NAME`` finds the machine, and returns the name. The facts
(host, cores, CPU model, operating system, memory, JAX's devices) are :mod:`sgbench.base.provenance`'s.
"""

from __future__ import annotations

import dataclasses
import json
import re
import subprocess
import sys

from sgbench.base import provenance
from sgbench.base.provenance import Device

DEVICES_SCRIPT = "import json; from sgbench.base import provenance; print(json.dumps(provenance.jax_devices()))"


class AsvError(RuntimeError):
    """An asv command that failed; ``returncode`` is its exit status."""

    def __init__(self, message: str, returncode: int = 1):
        super().__init__(message)
        self.returncode = returncode


@dataclasses.dataclass(frozen=True)
class MachineInfo:
    """The fields of an asv machine (``asv machine --help``), all strings as asv stores them."""

    machine: str
    os: str
    arch: str
    cpu: str
    num_cpu: str
    ram: str

    def options(self) -> list[str]:
        """``asv machine`` options: ``["--machine", NAME, "--os", OS, ...]``."""
        return [text for key, value in dataclasses.asdict(self).items() for text in (f"--{key}", value)]


def sanitise(text: str) -> str:
    """``text`` lower-cased, each run of characters other than ``a-z`` and ``0-9`` replaced by one ``-``."""
    cleaned = re.sub(r"[^a-z0-9]+", "-", str(text).lower()).strip("-")
    return cleaned or "unknown"


def jax_devices() -> list[Device]:
    """JAX's devices on its default backend (:func:`sgbench.base.provenance.jax_devices`), asked in a child process:
    a JAX backend started here would hold GPU memory while asv's benchmark processes run."""
    done = subprocess.run([sys.executable, "-c", DEVICES_SCRIPT], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        last = (done.stderr.strip() or "no output").splitlines()[-1]
        raise AsvError(f"could not list JAX's devices: {last}", done.returncode)
    return [Device(platform, kind) for platform, kind in json.loads(done.stdout.strip().splitlines()[-1])]


def machine_name(devices=None, hostname: str | None = None, cores: int | None = None) -> str:
    """The asv machine name (see the module docstring); defaults: JAX's devices, this host, its cores."""
    devices = jax_devices() if devices is None else devices
    host = sanitise(provenance.host_name() if hostname is None else hostname)
    found = provenance.accelerator(devices)
    if found is None:
        return f"{host}-cpu-{provenance.usable_cores() if cores is None else cores}cores"
    platform_name, kind, count = found
    multiple = f"{count}x-" if count > 1 else ""
    return f"{host}-{sanitise(platform_name)}-{multiple}{sanitise(kind)}"


def machine_info(name: str | None = None, devices=None) -> MachineInfo:
    """This machine's asv metadata; ``cpu`` also names the accelerator, e.g. ``AMD EPYC (2 cores), 1 x NVIDIA H100``.

    ``name`` defaults to ``machine_name(devices)``.
    """
    devices = jax_devices() if devices is None else devices
    cores = provenance.usable_cores()
    cpu = f"{provenance.cpu_model()} ({cores} cores)"
    found = provenance.accelerator(devices)
    if found is not None:
        platform_name, kind, count = found
        cpu += f", {count} x {kind} ({platform_name})"
    return MachineInfo(machine=machine_name(devices, cores=cores) if name is None else name,
                       os=provenance.operating_system(), arch=provenance.architecture(), cpu=cpu,
                       num_cpu=str(cores), ram=provenance.ram_text())


def machine_command(config, info: MachineInfo) -> list[str]:
    """The ``asv machine`` command line that stores ``info`` for the asv config file ``config``."""
    return [sys.executable, "-m", "asv", "machine", "--yes", *info.options(), "--config", str(config)]


def register_machine(config, name: str | None = None, devices=None) -> str:
    """Run ``asv machine`` for ``config`` with this machine's metadata (named ``name``, default: ``machine_name()``)
    and return the name; raises ``AsvError`` when asv fails.

    asv 0.6 stores only the options whose values differ from the ones it detects itself (``--arch`` and
    ``--num_cpu`` usually do not), which would leave those fields out of its ``~/.asv-machine.json``; they are
    written there afterwards through asv's own ``MachineCollection``.
    """
    info = machine_info(name, devices)
    done = subprocess.run(machine_command(config, info), capture_output=True, text=True, check=False)
    if done.returncode != 0:
        last = (done.stderr.strip() or done.stdout.strip() or "no output").splitlines()[-1]
        raise AsvError(f"`asv machine` failed with status {done.returncode}: {last}", done.returncode)
    _complete_stored_machine(info)
    return info.machine


def _complete_stored_machine(info: MachineInfo) -> None:
    """Add to asv's stored entry for ``info.machine`` the fields ``asv machine`` left out."""
    from asv.machine import MachineCollection
    from asv.util import UserError

    try:
        stored = MachineCollection.load(info.machine)
    except UserError as error:
        raise AsvError(f"`asv machine` did not store machine {info.machine!r}: {error}") from None
    wanted = dataclasses.asdict(info)
    if any(stored.get(key) != value for key, value in wanted.items()):
        MachineCollection.save(info.machine, {**stored, **wanted})
