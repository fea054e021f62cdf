"""The asv suite imports (``asv check``), the asv machine's name and registration, and ``sgbench asv``'s command line
(built and checked without running asv; tests/test_dashboard.py does one real run)."""

from __future__ import annotations

import dataclasses
import json
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from sgbench.base import provenance
from sgbench.bench.cli import asv as asv_command, build_parser, main
from sgbench.bench.perf import asv_machine

REPO = Path(__file__).resolve().parents[1]
CONFIG = REPO / "bench" / "perf" / "asv" / "asv.conf.json"
Device = provenance.Device
CPU = Device("cpu", "cpu")
H100 = Device("gpu", "NVIDIA H100 80GB HBM3")


def asv_check(config: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "asv", "check", "--python=same", "--config", str(config)],
                          cwd=REPO, capture_output=True, text=True, timeout=300)


def test_asv_check_imports_every_benchmark():
    done = asv_check(CONFIG)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]


def test_asv_check_fails_on_a_benchmark_module_that_does_not_import(tmp_path):
    benchmarks = tmp_path / "benchmarks"
    benchmarks.mkdir()
    (benchmarks / "__init__.py").write_text("")
    (benchmarks / "fine.py").write_text("def time_nothing():\n    pass\n")
    config = tmp_path / "asv.conf.json"
    config.write_text(json.dumps({"version": 1, "project": "broken", "repo": str(REPO), "dvcs": "git",
                                  "branches": ["main"], "environment_type": "virtualenv", "pythons": ["3.11"],
                                  "benchmark_dir": str(benchmarks), "results_dir": str(tmp_path / "results"),
                                  "env_dir": str(tmp_path / "env")}))
    assert asv_check(config).returncode == 0  # the same config passes while every module imports
    (benchmarks / "broken.py").write_text("import no_such_module_anywhere\n")
    done = asv_check(config)
    assert done.returncode != 0
    assert "no_such_module_anywhere" in done.stdout + done.stderr


@pytest.mark.parametrize(("devices", "hostname", "name"), [
    ([CPU], "vm", "vm-cpu-2cores"),
    ([H100], "node7", "node7-gpu-nvidia-h100-80gb-hbm3"),
    ([CPU, H100], "node7", "node7-gpu-nvidia-h100-80gb-hbm3"),
    ([H100, H100, H100, H100], "node7", "node7-gpu-4x-nvidia-h100-80gb-hbm3"),
    ([Device("gpu", "Tesla V100-PCIE-32GB (rev. a1)")], "Lab_Box.example.org",
     "lab-box-example-org-gpu-tesla-v100-pcie-32gb-rev-a1"),
    ([Device("tpu", "TPU v4")], "tpu-host", "tpu-host-tpu-tpu-v4"),
])
def test_machine_name_says_which_accelerator_jax_uses(devices, hostname, name):
    assert asv_machine.machine_name(devices, hostname=hostname, cores=2) == name


@pytest.mark.parametrize(("text", "clean"), [
    ("NVIDIA H100 80GB HBM3", "nvidia-h100-80gb-hbm3"),
    ("  a//b__c  ", "a-b-c"),
    ("AMD Instinct MI300X / OAM", "amd-instinct-mi300x-oam"),
    ("Größe", "gr-e"),
    ("---", "unknown"),
    ("", "unknown"),
])
def test_sanitise_keeps_lowercase_letters_and_digits_joined_by_single_dashes(text, clean):
    assert asv_machine.sanitise(text) == clean


def test_machine_name_defaults_to_this_host_and_jax():
    name = asv_machine.machine_name()
    assert name.startswith(asv_machine.sanitise(socket.gethostname()) + "-")
    assert name.endswith(f"-cpu-{provenance.usable_cores()}cores") or "-gpu-" in name


def test_machine_info_names_the_gpu_and_gives_every_asv_field():
    info = asv_machine.machine_info(devices=[CPU, H100])
    assert info.machine.endswith("-gpu-nvidia-h100-80gb-hbm3")
    assert info.cpu.endswith(f"({provenance.usable_cores()} cores), 1 x NVIDIA H100 80GB HBM3 (gpu)")
    assert info.num_cpu == str(provenance.usable_cores())
    assert info.ram.endswith("GB") and info.os and info.arch
    options = info.options()
    assert options[0::2] == ["--machine", "--os", "--arch", "--cpu", "--num_cpu", "--ram"]
    command = asv_machine.machine_command(CONFIG, info)
    assert command[:5] == [sys.executable, "-m", "asv", "machine", "--yes"]
    assert command[5:-2] == options and command[-2:] == ["--config", str(CONFIG)]


def test_register_machine_stores_every_field(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))  # asv's machine file is ~/.asv-machine.json
    name = asv_machine.register_machine(CONFIG, devices=[H100])
    stored = json.loads((tmp_path / ".asv-machine.json").read_text())[name]
    # asv itself drops the options equal to what it detects (arch, num_cpu); register_machine puts them back.
    assert stored == dataclasses.asdict(asv_machine.machine_info(name, devices=[H100]))


def test_register_machine_reports_asv_failing(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    with pytest.raises(asv_machine.AsvError, match="asv machine` failed"):
        asv_machine.register_machine(tmp_path / "missing.conf.json", name="x", devices=[CPU])


def test_asv_run_command_line():
    args = build_parser().parse_args(["asv", "--quick", "--bench", "ksd", "sgld_icg", "--bench", r"time_ksd\(10\)",
                                      "--config", "c.json", "--", "--durations", "5"])
    command = asv_command.asv_run_command(Path("/abs/c.json"), "m", args.quick, args.bench, args.asv_args)
    assert command == [sys.executable, "-m", "asv", "run", "--python=same", "--set-commit-hash", "HEAD",
                       "--machine", "m", "--show-stderr", "--quick", "--bench", "ksd", "--bench", "sgld_icg",
                       "--bench", r"time_ksd\(10\)", "--config", "/abs/c.json", "--durations", "5"]
    plain = build_parser().parse_args(["asv"])
    assert asv_command.asv_run_command(Path("/c"), "m", plain.quick, plain.bench, plain.asv_args)[-2:] == \
        ["--config", "/c"]


def test_sgbench_asv_registers_the_machine_and_returns_asv_status(monkeypatch):
    calls = {}

    def fake_register(config, name=None, devices=None):
        calls["register"] = (config, name)
        return name or "host-cpu-2cores"

    def fake_run(command):
        calls["run"] = command
        return 3

    monkeypatch.setattr(asv_command, "register_machine", fake_register)
    monkeypatch.setattr(asv_command, "run_asv", fake_run)
    monkeypatch.chdir(REPO)
    assert main(["asv", "--quick", "--bench", "ksd"]) == 3
    assert calls["register"] == (CONFIG, None)
    assert calls["run"][calls["run"].index("--machine") + 1] == "host-cpu-2cores"
    assert calls["run"][calls["run"].index("--config") + 1] == str(CONFIG)
    assert main(["asv", "--machine", "given.name"]) == 3
    assert calls["register"] == (CONFIG, "given.name")


@pytest.mark.parametrize(("argv", "words"), [
    (["--machine", "a/b"], "--machine must be"),
    (["--machine", ""], "--machine must be"),
    (["--config", "no/such.json"], "--config: no asv config file"),
])
def test_bad_asv_options_exit_2(argv, words, capsys, monkeypatch):
    monkeypatch.chdir(REPO)
    monkeypatch.setattr(asv_command, "register_machine", lambda *a, **k: pytest.fail("asv must not run"))
    assert main(["asv", *argv]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and words in error


def test_run_asv_returns_the_commands_status():
    """``run_asv`` runs its command in a process group of its own and returns the exit status (its interruption,
    which stops the group: ``tests/test_signals.py``)."""
    assert asv_command.run_asv([sys.executable, "-c", "raise SystemExit(3)"]) == 3
    assert asv_command.run_asv([sys.executable, "-c", "import os; assert os.getpgid(0) == os.getpid()"]) == 0
