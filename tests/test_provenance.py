"""Provenance (``sgbench.base.provenance``): each fact is right, it is computed nowhere else in the package, and
the records (results store, gate baselines, speed page) carry what it gives."""

from __future__ import annotations

import datetime
import json
import platform
import re
import socket
import subprocess
from pathlib import Path

import numpy as np
import pytest

from sgbench.base import provenance
from sgbench.base.provenance import Device

ROOT = Path(__file__).resolve().parents[1]
PACKAGE_FOLDERS = ("base", "bench", "samplers", "targets", "reference")
# What only base/provenance.py may compute: the code version, the machine, library versions, a record's time.
PROVENANCE_PATTERNS = {
    "git commit": r"rev-parse",
    "platform facts": r"^\s*(import|from)\s+platform\b",
    "host name": r"gethostname|^\s*(import|from)\s+socket\b",
    "library versions": r"importlib\.metadata|__version__",
    "CPU count": r"cpu_count\(|sched_getaffinity",
    "record time": r"isoformat\(timespec",
}
# Uses of the same calls that are no provenance: the number of Dask workers to start.
NOT_PROVENANCE = {("bench/sweeps/dask_tasks.py", "CPU count")}


def _git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()


def _facts_computed(line: str) -> list[str]:
    """The provenance facts a line of source computes (by :data:`PROVENANCE_PATTERNS`)."""
    return [fact for fact, pattern in PROVENANCE_PATTERNS.items() if re.search(pattern, line)]


def test_provenance_is_computed_in_base_provenance_alone():
    found = []
    for folder in PACKAGE_FOLDERS:
        for path in sorted((ROOT / folder).rglob("*.py")):
            relative = path.relative_to(ROOT).as_posix()
            if relative == "base/provenance.py":
                continue
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                found += [f"{relative}:{number}: {fact}: {line.strip()}" for fact in _facts_computed(line)
                          if (relative, fact) not in NOT_PROVENANCE]
    assert not found, "provenance computed outside sgbench.base.provenance:\n" + "\n".join(found)


def test_the_source_scan_sees_planted_copies():
    planted = ["import platform", "from socket import gethostname", "version = jax.__version__",
               'subprocess.run(["git", "rev-parse", "HEAD"])', "n = os.cpu_count()",
               "now = datetime.datetime.now(datetime.UTC).isoformat(timespec='seconds')", "x = device.platform"]
    assert [_facts_computed(line) for line in planted] == [
        ["platform facts"], ["host name"], ["library versions"], ["git commit"], ["CPU count"], ["record time"], []]


def test_git_commit_is_the_checkout_head_with_its_dirty_flag():
    dirty = bool(_git("status", "--porcelain", "--untracked-files=no"))
    head = _git("rev-parse", "HEAD")
    assert provenance.git_commit() == head + ("+dirty" if dirty else "")
    assert provenance.head_commit(ROOT) == head and re.fullmatch(r"[0-9a-f]{40}", head)


def test_head_commit_outside_a_checkout_raises(tmp_path):
    with pytest.raises((OSError, subprocess.SubprocessError)):
        provenance.head_commit(tmp_path)


def test_utc_now_is_iso_8601_utc_to_the_second():
    text = provenance.utc_now()
    moment = datetime.datetime.fromisoformat(text)
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00", text)
    assert abs((datetime.datetime.now(datetime.UTC) - moment).total_seconds()) < 60


def test_library_versions_name_python_first_and_a_missing_package():
    versions = provenance.library_versions(["numpy", "no-such-distribution-anywhere"])
    assert list(versions) == ["python", "numpy", "no-such-distribution-anywhere"]
    assert versions["python"] == platform.python_version() and versions["numpy"] == np.__version__
    assert versions["no-such-distribution-anywhere"] == "not installed"


def test_machine_facts():
    assert provenance.host_name() == socket.gethostname()
    assert provenance.usable_cores() >= 1 and provenance.cpu_model() and provenance.architecture()
    assert re.fullmatch(r"\d+GB|unknown", provenance.ram_text())
    assert provenance.operating_system().startswith(platform.system())


@pytest.mark.parametrize(("devices", "found"), [
    ([Device("cpu", "cpu")], None),
    ([Device("cpu", "cpu"), Device("gpu", "H100"), Device("gpu", "H100")], ("gpu", "H100", 2)),
    ([Device("tpu", "TPU v4"), Device("gpu", "H100")], ("tpu", "TPU v4", 1)),
])
def test_accelerator_is_the_first_device_that_is_not_a_cpu(devices, found):
    assert provenance.accelerator(devices) == found


def test_machine_summaries_keep_their_record_formats():
    import jax

    device = jax.devices()[0]
    assert re.fullmatch(rf"{re.escape(platform.node())} \| .+ \| \d+ CPUs \| jax backend {jax.default_backend()}",
                        provenance.machine_summary())
    assert provenance.accelerator_summary().startswith(f"{device.platform}: {device.device_kind}, {platform.node()}, ")
    assert provenance.jax_devices()[0] == Device(device.platform, device.device_kind)


def test_a_gate_baseline_is_stamped_by_provenance(tmp_path, monkeypatch):
    from sgbench.bench.gate import baseline

    monkeypatch.setattr(provenance, "git_commit", lambda: "commit-from-provenance")
    monkeypatch.setattr(provenance, "machine_summary", lambda: "machine-from-provenance")
    monkeypatch.setattr(provenance, "utc_now", lambda: "2001-02-03T04:05:06+00:00")
    path = baseline.write(tmp_path / "quick.json", "quick", {"cell": {"mean": {}}}, "a test", "sgbench baseline")
    document = json.loads(path.read_text())
    stamp = {"git_commit": "commit-from-provenance", "machine": "machine-from-provenance",
             "created": "2001-02-03T04:05:06+00:00"}
    assert stamp.items() <= document.items() and stamp.items() <= document["cells"]["cell"].items()


def test_the_source_fingerprint_changes_with_any_python_file_and_nothing_else(tmp_path):
    package = tmp_path / "pkg"
    (package / "sub" / "__pycache__").mkdir(parents=True)
    (package / "a.py").write_text("x = 1\n")
    (package / "sub" / "b.py").write_text("y = 2\n")
    first = provenance.source_fingerprint(package)
    (package / "sub" / "__pycache__" / "b.cpython-311.pyc").write_bytes(b"\0")
    (package / "notes.txt").write_text("not code")
    assert provenance.source_fingerprint(package) == first and len(first) == 64
    (package / "sub" / "b.py").write_text("y = 3\n")
    assert provenance.source_fingerprint(package) != first
    (package / "sub" / "b.py").write_text("y = 2\n")
    (package / "sub" / "b.py").rename(package / "b.py")  # same content, another place
    assert provenance.source_fingerprint(package) != first
    assert provenance.source_fingerprint() == provenance.source_fingerprint()
