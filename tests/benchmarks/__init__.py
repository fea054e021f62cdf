"""pytest-benchmark benchmarks of the hot paths, and the gate that compares them with a saved baseline.

Timings are reported (each benchmark's ``extra_info``: microseconds per chain-step and per gradient, ...),
never asserted. With the default ``--benchmark-disable`` (pyproject ``addopts``) each benchmark runs once at
a small size, as a smoke test. The files (each docstring says what is measured):

- ``test_bench_samplers.py``: every sampler's run, JAX driver (10 chains x N steps, float32) beside the NumPy
  reference (x N/100), at the hyperparameters each sampler's file declares (``bench/perf/speed_workload.py``); the
  sizes, shared by the files below;
- ``test_bench_steps.py``: one step of every sampler's optimized step, jitted and vmapped over 10 chains:
  dispatch + one step;
- ``test_bench_blackjax_sgld.py``, ``test_bench_posteriors_sgld.py``: blackjax's and posteriors' own SGLD on
  the same job, in the group ``icg10-isotropic-sgld`` beside ours;
- ``test_bench_blackjax_mclmc.py``: our ``mclmc`` beside blackjax's; ``test_bench_ksd.py``: KSD time and memory;
- ``conftest.py``: the gate's size check.

**The gate.** The hot paths (one step, and the JAX driver's run, of every sampler, and KSD) against the baseline
tracked in ``reports/baselines/benchmarks/``, from the repository root::

    SGBENCH_BENCH_STEPS=100000 python -m pytest tests/benchmarks/test_bench_samplers.py \\
        tests/benchmarks/test_bench_ksd.py -k "not numpy" --benchmark-enable --benchmark-only \\
        --benchmark-storage=file://reports/baselines/benchmarks --benchmark-compare=0001 \\
        --benchmark-compare-fail=min:80%

(the driver runs and KSD; the one-step benchmarks are saved in the baseline too, and can be compared by
adding ``tests/benchmarks/test_bench_steps.py``, but are not gated: see the threshold below)

It fails (exit status 1, ``Performance has regressed:`` then one line per benchmark, on stderr) when a
benchmark's fastest round (``min``) is more than 80 % slower than the baseline's; otherwise it passes with a
table holding both (a ``(NOW)`` row and a baseline row per benchmark). Benchmarks are matched by pytest node id
(``tests/benchmarks/test_bench_steps.py::test_one_step_time[sgld]``), so run it from the repository root;
one missing from the baseline is run and not compared. A node id does not carry the run's size: the sizes
must be the baseline's (``SGBENCH_BENCH_STEPS=100000``, default rounds), and ``conftest.py`` stops with a
usage error at other sizes. ``tests/test_benchmark_compare_gate.py`` checks the wiring (fails against a
planted 1 ns baseline, passes against a 100 s one).

**Which machine.** pytest-benchmark saves a run as ``<storage>/<machine id>/<NNNN>_<name>.json``, the machine
id being ``<system>-<Python implementation>-<Python X.Y>-<bits>bit``: ``Linux-CPython-3.11-64bit`` here.
``--benchmark-compare=0001`` looks for ``0001*.json`` in the current machine id's folder (and the storage's
top) only. So on ANY Linux machine with 64-bit CPython 3.11 it finds this baseline, whatever the CPU, its
cores or its load (pytest-benchmark only warns ``Benchmark machine_info is different``), and the comparison
is then meaningless; elsewhere (macOS, Python 3.12) it finds none: a warning ``Can't compare``, the
benchmarks run, then ``ERROR: --benchmark-compare-fail requires valid --benchmark-compare`` (exit status 4).
``--benchmark-compare=Linux-CPython-3.11-64bit/0001`` names another machine id's baseline. A baseline for
one's own machine: save it into the git-ignored ``.benchmarks/`` with the selection above, then gate on it::

    SGBENCH_BENCH_STEPS=100000 python -m pytest tests/benchmarks/test_bench_steps.py \\
        tests/benchmarks/test_bench_samplers.py tests/benchmarks/test_bench_ksd.py -k "not numpy" \\
        --benchmark-enable --benchmark-only \\
        --benchmark-storage=file://.benchmarks --benchmark-save=hotpaths
    # then the gate command with --benchmark-storage=file://.benchmarks and the number it printed
    # ("Saved benchmark data in: .benchmarks/<machine id>/0001_hotpaths.json")

**Re-saving the tracked baseline** (on the project's machine with nothing else running; 2 to 5 minutes on
2 cores; removing the old file keeps the number 0001, else the new one is 0002 and the gate must name it)::

    rm -r reports/baselines/benchmarks/Linux-CPython-3.11-64bit
    SGBENCH_BENCH_STEPS=100000 python -m pytest tests/benchmarks/test_bench_steps.py \\
        tests/benchmarks/test_bench_samplers.py tests/benchmarks/test_bench_ksd.py -k "not numpy" \\
        --benchmark-enable --benchmark-only \\
        --benchmark-storage=file://reports/baselines/benchmarks --benchmark-save=hotpaths

**The threshold.** The gate reads ``min``: other work on the machine only adds time, so the fastest round
moves least with it. Rule: threshold = max(25 %, 2 s), with s the largest rise of a benchmark's ``min`` over
the baseline's in a run of the same selection right after saving, with no code change. To measure s, run
the gate command with ``--benchmark-compare-fail=min:0%``: it lists every benchmark slower than the baseline
with its rise in per cent (``PercentageRegressionCheck: 12.3 > 0``). If the one-step benchmarks' s stays far
above the driver runs', gate the two files in two commands with their own thresholds.

Measured on the project's 2-core machine with nothing else running, right after saving the tracked
baseline (2026-11-22): a no-change rerun's ``min`` rose by up to 35 % for the driver runs (10^5 steps, 3
rounds), 41 % for KSD at d = 10, and 113 % for the one-step benchmarks (tens of microseconds, mostly
dispatch). By the rule the gate is 80 % over the driver runs and KSD; the one-step benchmarks are not gated.
(Earlier, with other jobs sharing the machine, the spread was -44 % to +60 % for driver runs and up to
+561 % for one step.)
"""
