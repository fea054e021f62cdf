"""pytest-benchmark benchmarks: KSD^2 (IMQ kernel, c = 1, beta = -1/2, V-statistic, float64,
default block size) of N draws with their scores in d = 10 and d = 1000, on the default JAX device.

The time is one evaluation, compilation excluded (compiled and run once before the timed rounds;
the first call's time is ``first_call_seconds`` in ``extra_info``). Peak memory is measured in a
fresh Python process that imports the suite, builds the inputs, then computes KSD^2 once
(compilation included): ``peak_rss_mb`` is its peak resident set size (VmHWM), and
``ksd_peak_increment_mb`` the rise of that peak over the peak before the computation (imports and
the 2 N d float64 inputs); an O(N^2) float64 matrix would add 8 N^2 bytes (800 MB at N = 10^4).

The default ``pytest`` run (``--benchmark-disable``) runs each once at a small size. Sizes come
from the environment: ``SGBENCH_BENCH_KSD_DRAWS``: N (default 1000); ``SGBENCH_BENCH_ROUNDS``:
timed rounds when enabled (default 3). The figure::

    SGBENCH_BENCH_KSD_DRAWS=10000 python -m pytest tests/benchmarks/test_bench_ksd.py --benchmark-enable

Timings and memory are reported in ``extra_info``, never asserted.
"""

from __future__ import annotations

import subprocess
import sys
import time

import numpy as np
import pytest

from sgbench.reference.metrics.ksd import ksd

from .test_bench_samplers import ROUNDS, _env_int, _timed

NUM_DRAWS = _env_int("SGBENCH_BENCH_KSD_DRAWS", 1000)
DIMS = (10, 1000)

_PEAK_MEMORY_SCRIPT = """
import sys
import numpy as np
from sgbench.reference.metrics.ksd import ksd

def peak_mb():
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmHWM")) / 1024

n, d = int(sys.argv[1]), int(sys.argv[2])
x = np.random.default_rng(0).standard_normal((n, d))
s = -x
before = peak_mb()
ksd(x, s)
print(before, peak_mb())
"""


def inputs(n: int, dim: int):
    """N(0, I) draws and their exact scores."""
    x = np.random.default_rng(0).standard_normal((n, dim))
    return x, -x


def peak_memory_mb(n: int, dim: int) -> tuple[float, float]:
    """(peak RSS before, peak RSS after) one KSD^2 in a fresh process, in MB (Linux /proc)."""
    out = subprocess.run([sys.executable, "-c", _PEAK_MEMORY_SCRIPT, str(n), str(dim)],
                         check=True, capture_output=True, text=True).stdout.split()
    return float(out[0]), float(out[1])


@pytest.mark.parametrize("dim", DIMS)
def test_ksd_imq_time_and_peak_memory(benchmark, dim):
    x, s = inputs(NUM_DRAWS, dim)
    start = time.perf_counter()
    ksd(x, s)  # compiles for this shape, outside the timed rounds
    first_call = time.perf_counter() - start
    run, seconds = _timed(lambda: ksd(x, s))
    benchmark.group = f"ksd-imq-n{NUM_DRAWS}"
    value = benchmark.pedantic(run, rounds=ROUNDS, iterations=1, warmup_rounds=0)
    stats = getattr(benchmark.stats, "stats", None) if benchmark.stats else None
    before, peak = peak_memory_mb(NUM_DRAWS, dim)
    benchmark.extra_info.update(
        num_draws=NUM_DRAWS, dim=dim, seconds=stats.min if stats is not None else min(seconds),
        first_call_seconds=first_call, peak_rss_mb=peak, ksd_peak_increment_mb=peak - before,
        n_squared_float64_mb=8 * NUM_DRAWS**2 / 2**20)
    assert np.isfinite(value) and value > 0  # it did the work (a V-statistic is > 0); not a timing check
