"""``sgbench device-check`` (issue 46): its environment report, its steps rule, the gate's dtype option, its bad
input, and (integration) the whole ``--quick`` run on a CPU."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from sgbench.bench.cli import main
from sgbench.bench.cli.asv import QUICK_BENCHMARKS
from sgbench.bench.gate.cells import suite
from sgbench.bench.gate.runner import run_cell, run_cell_in
from sgbench.bench.perf import chain_scaling, device_environment

REPO = Path(__file__).resolve().parents[1]


def test_environment_on_a_cpu_says_cpu(monkeypatch):
    monkeypatch.setattr(device_environment, "nvidia_smi", lambda: "not found")
    found = device_environment.report()
    assert found["jax_backend"] == "cpu" and found["accelerator"] is None and found["label"] == "CPU only"
    assert set(found["cuda_packages"]) == set(device_environment.CUDA_PACKAGES)
    assert {"jax", "jaxlib"} <= set(found["libraries"])
    json.dumps(found)


def test_a_failed_asv_part_fails_the_page_headline(monkeypatch, tmp_path):
    """asv missing (``pip install -e .`` without the gpu extra) left a green page with a status-1 row; the
    headline now says asv FAILED."""
    import pandas as pd

    from sgbench.bench.perf.device_check import PAGE, DeviceCheckFolder

    monkeypatch.setattr(device_environment, "nvidia_smi", lambda: "not found")
    folder = DeviceCheckFolder(tmp_path, "box-cpu-2cores", device_environment.report())
    folder.start()
    folder.keep("asv", pd.DataFrame([{"asv status": 0, "machine": "box-cpu-2cores"}]))
    assert "asv FAILED" not in (tmp_path / PAGE).read_text()
    folder.keep("asv", pd.DataFrame([{"asv status": 1, "machine": "box-cpu-2cores"}]))
    assert "CPU only: box-cpu-2cores — asv FAILED (status 1)" in (tmp_path / PAGE).read_text()


def test_nvidia_smi_missing_is_not_found():
    assert device_environment.nvidia_smi(("no-such-program-sgbench", "-q")) == "not found"


@pytest.mark.parametrize(("chains", "budget", "steps"), [(10, 10**6, 100_000), (1_000, 10**6, 1_000),
                                                        (100_000, 10**6, 100), (10**7, 10**6, 100), (3, 10, 100)])
def test_steps_keep_the_chain_steps_about_the_budget(chains, budget, steps):
    assert chain_scaling.steps_for(chains, budget) == steps


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_the_gate_dtype_reaches_the_runs(dtype):
    cell = next(c for c in suite("quick") if c.sampler == "sgld" and c.backend == "jax")
    rep = run_cell(cell, dtype=dtype)
    assert all(result.config.dtype == dtype for result in rep.results)
    assert np.asarray(rep.results[0].trace.samples).dtype == np.dtype(dtype)


def test_a_reference_cell_runs_in_float64_whatever_the_dtype():
    cell = next(c for c in suite("quick") if c.sampler == "sgld" and c.backend == "numpy")
    assert all(result.config.dtype == "float64" for result in run_cell_in(cell, dtype="float32").results)


@pytest.mark.parametrize(("argv", "words"), [(["--skip", "gpu"], "--skip must be one of scaling, bnn, asv, gate"),
                                             (["--repeats", "0"], "--repeats"),
                                             (["--machine", "a b"], "--machine")])
def test_bad_input_is_one_line_and_status_2(argv, words, capsys, tmp_path):
    assert main(["device-check", *argv, "--out", str(tmp_path / "out")]) == 2
    error = capsys.readouterr().err.strip()
    assert "\n" not in error and words in error
    assert not (tmp_path / "out").exists()


def test_an_interruption_says_what_was_kept(monkeypatch, capsys, tmp_path):
    import pandas as pd

    def interrupted(names, counts, budget, repeats, progress, on_row):
        on_row(pd.DataFrame([{"sampler": "sgld", "chains": 10, "µs per chain-step": 0.2}]))
        raise KeyboardInterrupt

    monkeypatch.setattr(chain_scaling, "measure", interrupted)
    out = tmp_path / "out"
    assert main(["device-check", "--quick", "--skip", "asv", "--skip", "gate", "--out", str(out)]) == 130
    said = capsys.readouterr().err.strip().splitlines()[-1]
    assert said.startswith("sgbench: device-check interrupted during scaling") and "chain_scaling.csv" in said
    assert {"env.json", "chain_scaling.csv", "device_check.html"} <= {path.name for path in out.iterdir()}


def test_tox_asv_quick_runs_the_same_benchmarks():
    tox = (REPO / "tox.ini").read_text(encoding="utf-8")
    section = tox.split("[testenv:asv-quick]")[1].split("\n[")[0]
    assert tuple(re.findall(r'--bench "([^"]+)"', section)) == QUICK_BENCHMARKS


@pytest.mark.integration
def test_quick_device_check_on_a_cpu(tmp_path):
    """The whole ``sgbench device-check --quick`` on this CPU into ``tmp_path``: 141 s on 2 cores (the command
    alone took 128 s, about 50 of them the asv subset, 26 the gate in both dtypes)."""
    out, home = tmp_path / "check", tmp_path / "home"
    home.mkdir()
    env = {**os.environ, "JAX_PLATFORMS": "cpu", "HOME": str(home), "PYTHONPATH": str(REPO)}
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "sgbench.bench.cli", "device-check", "--quick", "--out", str(out)],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    print(f"device-check --quick: {time.perf_counter() - started:.0f} s")
    names = {path.name for path in out.iterdir()}
    assert {"env.json", "chain_scaling.csv", "bnn_overhead.csv", "gate_dtypes.csv", "device_check.html",
            "asv"} <= names
    environment = json.loads((out / "env.json").read_text(encoding="utf-8"))
    assert environment["label"] == "CPU only" and environment["machine"].endswith("cores")
    assert list((out / "asv" / "results").rglob("*.json"))
    page = (out / "device_check.html").read_text(encoding="utf-8")
    assert "CPU only" in page and "float32" in page and "float64" in page
