"""Chains split over devices (``bench/running/sharding.py``): on a CPU made into 4 devices, the same draws and the
same numbers as on one device."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

from sgbench.bench.running.sharding import chain_devices


def test_chains_are_split_over_a_divisor_of_their_number(monkeypatch):
    import jax

    monkeypatch.setattr(jax, "local_devices", lambda: ["d0", "d1", "d2", "d3"])
    assert chain_devices(8) == ["d0", "d1", "d2", "d3"]
    assert chain_devices(6) == ["d0", "d1", "d2"] and chain_devices(7) == ["d0"]
    assert chain_devices(8, devices=2) == ["d0", "d1"] and chain_devices(8, devices=9) == ["d0", "d1", "d2", "d3"]
    with pytest.raises(ValueError, match="devices must be an integer >= 1"):
        chain_devices(8, devices=0)


@pytest.mark.integration
def test_a_grid_split_over_four_devices_gives_the_one_device_numbers():
    env = {**os.environ, "XLA_FLAGS": "--xla_force_host_platform_device_count=4"}
    script = Path(__file__).with_name("_sharded_run.py")
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["devices"] == 4
    for name in ("sgld", "smile_naive"):
        # every chain's draws, hence its mean, bit for bit; the float64 power sums of the higher moments may differ
        # in the last bit (XLA orders a sum over 2 chains per device differently from one over 8)
        assert out[name]["samples_identical"] and out[name]["means_identical"], name
        for one, split in out[name]["metrics"]:
            for key, value in one.items():
                if isinstance(value, float) and math.isfinite(value):
                    assert split[key] == pytest.approx(value, rel=1e-12, abs=1e-15), (name, key)
