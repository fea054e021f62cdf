"""The benchmark gate's size check (see ``__init__.py``): a baseline saved by pytest-benchmark
(``--benchmark-save``) records the sizes it ran at (``SGBENCH_BENCH_STEPS``, ``SGBENCH_BENCH_ROUNDS``,
``SGBENCH_BENCH_KSD_DRAWS``) as ``sgbench_sizes``, and ``--benchmark-compare`` against a baseline saved at
other sizes stops with a usage error: a benchmark's name does not carry its size, so a run at 10^4 steps
would otherwise be compared with, and pass against, a baseline at 10^5.

pytest-benchmark compares while pytest configures itself, before collection: this file takes part only when
it is loaded then, that is when the command line names ``tests/benchmarks`` or files in it (as the gate
command does).
"""

from __future__ import annotations

import pytest

from .test_bench_ksd import NUM_DRAWS
from .test_bench_samplers import NUM_STEPS, ROUNDS

SIZES = {"SGBENCH_BENCH_STEPS": NUM_STEPS, "SGBENCH_BENCH_ROUNDS": ROUNDS, "SGBENCH_BENCH_KSD_DRAWS": NUM_DRAWS}


def pytest_benchmark_update_json(config, benchmarks, output_json):
    output_json["sgbench_sizes"] = SIZES


def pytest_benchmark_compare_machine_info(config, benchmarksession, machine_info, compared_benchmark):
    saved = compared_benchmark.get("sgbench_sizes")
    if saved is not None and saved != SIZES:
        settings = " ".join(f"{name}={value}" for name, value in saved.items())
        raise pytest.UsageError(f"the benchmark baseline was saved at sizes {saved}, this run's are {SIZES}: "
                                f"run with {settings} to compare with it")
