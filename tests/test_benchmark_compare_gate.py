"""The benchmark gate's wiring (``tests/benchmarks/__init__.py``): pytest-benchmark's
``--benchmark-compare`` finds a baseline saved under ``--benchmark-storage`` and ``--benchmark-compare-fail``
fails the run when a benchmark is slower than it by more than the threshold, and passes otherwise.

A tiny benchmark runs in a temporary directory (``pytester``) and is saved as a baseline, whose times are
then replaced by planted ones: 1 ns (faster than any run: the gate must fail, with pytest-benchmark's
message) or 100 s (slower than any run: the gate must pass). This checks the gate, not our speed.
"""

from __future__ import annotations

import json

import pytest

pytest_plugins = ["pytester"]

GATE = ["--benchmark-compare=0001", "--benchmark-compare-fail=min:25%"]
TINY_BENCHMARK = """
def test_tiny(benchmark):
    benchmark(sum, range(100))
"""
# Short runs, and only pytest-benchmark among the installed plugins (with PYTEST_DISABLE_PLUGIN_AUTOLOAD).
FAST = ["-p", "pytest_benchmark.plugin", "-p", "no:cacheprovider", "--benchmark-enable", "--benchmark-min-rounds=3",
        "--benchmark-max-time=0.001", "--benchmark-warmup=off"]


@pytest.fixture(autouse=True)
def only_benchmark_plugin(monkeypatch):
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    # under pytest-xdist this test runs in a worker, whose name pytest-benchmark would read as its own and then
    # disable every benchmark of the inner run
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)


def planted_baseline(pytester, seconds: float) -> str:
    """Save the tiny benchmark as baseline 0001, then set every time in it to ``seconds``; returns the storage
    option that finds it."""
    pytester.makepyfile(test_tiny=TINY_BENCHMARK)
    storage = f"--benchmark-storage=file://{pytester.path / 'baselines'}"
    pytester.runpytest_subprocess(*FAST, storage, "--benchmark-save=planted").assert_outcomes(passed=1)
    (saved,) = (pytester.path / "baselines").glob("*/0001_planted.json")  # <machine id>/0001_<name>.json
    baseline = json.loads(saved.read_text())
    (benchmark,) = baseline["benchmarks"]
    for field in ("min", "max", "mean", "median", "q1", "q3"):
        benchmark["stats"][field] = seconds
    for field in ("stddev", "iqr"):
        benchmark["stats"][field] = 0.0
    benchmark["stats"]["ops"] = 1 / seconds
    saved.write_text(json.dumps(baseline))
    return storage


def test_gate_fails_against_an_impossibly_fast_baseline(pytester):
    result = pytester.runpytest_subprocess(*FAST, planted_baseline(pytester, 1e-9), *GATE)
    assert result.ret == pytest.ExitCode.TESTS_FAILED  # pytest-benchmark's PerformanceRegression: exit status 1
    result.stderr.fnmatch_lines(["Performance has regressed:",
                                 "*test_tiny (0001_planted) - Field 'min' has failed PercentageRegressionCheck*"])


def test_gate_passes_against_a_slow_baseline(pytester):
    result = pytester.runpytest_subprocess(*FAST, planted_baseline(pytester, 100.0), *GATE)
    assert result.ret == pytest.ExitCode.OK
    result.stderr.fnmatch_lines(["Comparing against benchmarks from: *0001_planted.json"])
    result.stderr.no_fnmatch_line("*Performance has regressed*")
    for row in ("test_tiny (0001_planted) *", "test_tiny (NOW) *"):  # it did compare (rows sorted by time)
        result.stdout.fnmatch_lines([row])


@pytest.mark.parametrize(("options", "workers"), [({}, None), ({"benchmark_enable": True}, 0),
                                                  ({"benchmark_only": True}, 0)])
def test_timed_benchmarks_run_in_one_process(options, workers):
    """``-n auto`` keeps xdist's count (None) unless benchmarks are timed, which then run in one process (0)."""
    from tests.conftest import pytest_xdist_auto_num_workers

    class Config:
        @staticmethod
        def getoption(name, default=None):
            return options.get(name, default)

    assert pytest_xdist_auto_num_workers(Config()) == workers
