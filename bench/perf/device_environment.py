"""What a machine offers JAX, as ``sgbench device-check`` reports it before measuring anything (issue 46).

:func:`report`: JAX's and jaxlib's versions, JAX's backend and devices and the accelerator among them
(:mod:`sgbench.base.provenance`), the versions of JAX's CUDA plugin packages (``CUDA_PACKAGES``; ``"not installed"``
on a CPU machine), and what ``nvidia-smi`` says of the GPUs (``"not found"`` where there is no ``nvidia-smi``).
Nothing is installed or changed.
"""

from __future__ import annotations

import shutil
import subprocess

from sgbench.base import provenance

CUDA_PACKAGES = ("jax-cuda12-plugin", "jax-cuda12-pjrt", "jax-cuda13-plugin", "jax-cuda13-pjrt")
NVIDIA_SMI = ("nvidia-smi", "--query-gpu=name,driver_version,memory.total", "--format=csv,noheader")
NVIDIA_SMI_TIMEOUT_SECONDS = 20


def nvidia_smi(command=NVIDIA_SMI, timeout_seconds: float = NVIDIA_SMI_TIMEOUT_SECONDS) -> str:
    """``nvidia-smi``'s line per GPU (name, driver, memory), ``"not found"`` without the program, or what went
    wrong (its status and last line, or the timeout)."""
    if shutil.which(command[0]) is None:
        return "not found"
    try:
        done = subprocess.run(list(command), capture_output=True, text=True, timeout=timeout_seconds, check=False)
    except subprocess.TimeoutExpired:
        return f"no answer in {timeout_seconds:g} s"
    except OSError as error:
        return f"could not run: {error}"
    if done.returncode != 0:
        last = (done.stderr.strip() or done.stdout.strip() or "no output").splitlines()[-1]
        return f"failed with status {done.returncode}: {last}"
    return done.stdout.strip()


def report() -> dict:
    """The environment (module docstring) as a JSON-ready dict; ``"accelerator"`` is None on a CPU-only machine,
    and ``"label"`` says ``CPU`` or the accelerator in words."""
    devices = provenance.jax_devices()
    found = provenance.accelerator(devices)
    label = "CPU only" if found is None else f"{found[2]} x {found[1]} ({found[0]})"
    return {"label": label, "jax_backend": provenance.jax_backend(),
            "jax_devices": [{"platform": d.platform, "kind": d.device_kind} for d in devices],
            "accelerator": None if found is None else {"platform": found[0], "kind": found[1], "count": found[2]},
            "host": provenance.host_name(), "cpu": provenance.cpu_model(), "cores": provenance.usable_cores(),
            "libraries": provenance.library_versions(("jax", "jaxlib", "numpy")),
            "cuda_packages": {package: provenance.library_version(package) for package in CUDA_PACKAGES},
            "nvidia_smi": nvidia_smi(), "recorded": provenance.utc_now()}
