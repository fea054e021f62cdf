"""``sgbench speed`` (``bench/perf/speed.py``, ``bench/perf/floors.py``, ``bench/perf/native_sgld.py``):
it runs end to end at a tiny size and writes its tables; every implementation of SGLD does SGLD; bad input is refused.
No timing is asserted (the figures are measured, docs/performance.md)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from sgbench import samplers, targets
from sgbench.base import provenance
from sgbench.bench.cli import main
from sgbench.bench.perf import native_sgld
from sgbench.bench.perf.speed_workload import TARGET, TARGET_PARAMS


def test_speed_command_writes_its_tables(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(provenance, "accelerator_summary", lambda: "machine line of sgbench.base.provenance")
    status = main(["speed", "--steps", "2048", "--numpy-steps", "5", "--grid-steps", "1024", "--no-bnn",
                   "--sampler", "sgld", "--repeats", "1", "--out", str(tmp_path)])
    assert status == 0
    rows = pd.read_csv(tmp_path / "speed_samplers.csv", index_col=0)
    assert list(rows.index) == ["sgld"]
    assert (rows[["JAX µs", "random numbers µs", "NumPy µs"]] > 0).all().all()
    assert np.allclose(rows["x rng"], rows["JAX µs"] / rows["random numbers µs"])
    sgld = pd.read_csv(tmp_path / "speed_sgld.csv", index_col=0)
    assert any(label.startswith("blackjax") for label in sgld.index)
    assert any(label.startswith("random numbers") for label in sgld.index)
    page = (tmp_path / "speed.html").read_text()
    assert "SGLD step-size grid" in page and "data:image/png;base64," in page
    assert "machine line of sgbench.base.provenance" in page  # the page's machine is provenance's


@pytest.mark.parametrize("argv, message", [
    (["--steps", "0"], "--steps must be an integer >= 1"),
    (["--grid-steps", "-1"], "--grid-steps must be an integer >= 0"),
    (["--sampler", "nope"], "unknown sampler 'nope'"),
])
def test_speed_bad_input(argv, message, capsys):
    assert main(["speed", *argv]) == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize("implementation", ["blackjax", "posteriors", "numpy"])
def test_native_sgld_is_sgld(implementation):
    """Each other implementation makes the SGLD recursion's law: on the icg from the mean, after t steps
    x_t - m is Gaussian with covariance sum_k A^k (2h I + h^2 V) A^k, A = I - h P, V = 256 I. Test:
    the 200 chains' whitened coordinates are 2000 independent N(0, 1) values; the mean of their squares
    (1, sd sqrt(2 / 2000)) is z-tested at rate 1e-6 (|z| < 4.9); it detects a variance error of 20 % in
    every direction with probability 0.9 (a dropped sqrt(2) in the injected noise is about 50 %)."""
    if implementation == "posteriors":
        pytest.importorskip("posteriors")
    target = targets.get(TARGET, **TARGET_PARAMS)
    h, steps, chains = samplers.benchmark_settings("sgld").speed["step_size"], 50, 200
    program = getattr(native_sgld, f"{implementation}_program")
    run = program(target, chains, steps, h, 0)
    final = np.asarray(run(), dtype=np.float64) - target.mean
    assert final.shape == (chains, target.dim)
    a = np.eye(target.dim) - h * target.precision
    step_cov = 2 * h * np.eye(target.dim) + h**2 * target.noise.variance * np.eye(target.dim)
    cov = np.zeros_like(a)
    power = np.eye(target.dim)
    for _ in range(steps):
        cov += power @ step_cov @ power.T
        power = a @ power
    whitened = final @ np.linalg.inv(np.linalg.cholesky(cov)).T
    squares = whitened.ravel() ** 2  # chi-square(1) each: mean 1, sd sqrt(2)
    z = (squares.mean() - 1) / np.sqrt(2 / squares.size)
    assert abs(z) < 4.9, z
    assert samplers.get("sgld")  # the suite's sampler this is timed against
