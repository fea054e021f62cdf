"""Run by tests/test_sharding.py in a process whose XLA_FLAGS give the CPU 4 devices: the same grid on one device
and split over all of them (``sgbench.bench.running.sharding``); prints what the test compares, as JSON."""

import json

import jax
import numpy as np

from sgbench.bench.running import run as running

out = {"devices": len(jax.local_devices())}
for name, noise in (("sgld", "isotropic"), ("smile_naive", "correlated")):
    runs = {}
    for devices in (1, None):
        results = running.run_grid(name, "icg", target_params={"dim": 10, "noise": noise}, num_chains=8, num_steps=600,
                                   params_grid=[{"step_size": 1e-3}, {"step_size": 3e-3}], block_size=200, seed=3,
                                   keep_samples=True, devices=devices)
        runs[devices] = results
    one, split = runs[1], runs[None]
    out[name] = {
        "samples_identical": all(np.array_equal(a.trace.samples, b.trace.samples, equal_nan=True)
                                 for a, b in zip(one, split)),
        "means_identical": all(np.array_equal(a.trace.moments.mean, b.trace.moments.mean) for a, b in zip(one, split)),
        "metrics": [[a.metrics, b.metrics] for a, b in zip(one, split)],
    }
print(json.dumps(out))
