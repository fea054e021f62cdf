"""A new sampler is one file (DESIGN.md): its benchmark settings live in it
(``sgbench.samplers._benchmarks.BenchmarkSettings``), and every benchmark reads them from the registry.

- A throwaway SGLD written to a temporary module, registered with its own settings and nothing else
  edited, is in the gate's quick cells (at the gate's temperature), the equivalence test's settings
  (and passes it), the speed workload's table (``sgbench speed``) with the gradients its step
  reports, and the asv suite's parameters and settings; unregistered, it is in none of them.
- The asv suite runs a sampler's speed settings on every asv target its file's ``asv`` does not name, its own
  entry on those it names (``_workloads.asv_params``); no entry repeats the speed settings, a new asv target
  needs no sampler file edited, and a misspelt target or speed settings that do not fit a target are errors
  naming the sampler, the target and what to declare.
- ``sgbench baseline update --sampler NAME --why TEXT`` measures its missing design biases and its
  baselines into copies of the stored files, leaving every other entry and the stored files as they were;
  bad input exits with status 2 before anything runs or is written.
- A registered sampler without settings is an error naming it and what to declare; bad settings are
  errors naming the field; a file that declares exact-law gate cells without its ``linear_law`` is an error at
  registration, and with it the gate computes the cell's design bias from that law.
All deterministic (no statistical assertion).
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib
import importlib.util
import json
import shutil
import sys
from pathlib import Path

import jax
import numpy as np
import pytest
import test_equivalence

from sgbench import samplers, targets
from sgbench.bench import cli
from sgbench.bench.gate import baseline as baselines, cells, design_bias, exact_law
from sgbench.bench.perf import speed, speed_workload
from sgbench.samplers._benchmarks import GATE_TARGETS

REPO = Path(__file__).resolve().parents[1]
NAME = "throwaway_sgld"
THROWAWAY = '''"""SGLD, copied as a new sampler would be written: one file, with its benchmark settings."""

import jax.numpy as jnp
import numpy as np

from sgbench import samplers
from sgbench.samplers._langevin import LangevinParams as Params, State, draw_spec, init  # noqa: F401


def reference_step(state, grad_fn, draws, params):
    h = params.step_size_at(state.step, np)
    position = state.position + h * grad_fn(state.position) + np.sqrt(2 * h * params.temperature) * draws["noise"]
    return State(position, state.step + 1), samplers.Info(num_grad_evals=1)


def optimized_step(state, grad_fn, draws, params):
    h = params.step_size_at(state.step, jnp)
    position = state.position + h * grad_fn(state.position) + jnp.sqrt(2 * h * params.temperature) * draws["noise"]
    return State(position, state.step + 1), samplers.Info(num_grad_evals=1)


benchmarks = samplers.BenchmarkSettings(
    gate=samplers.GateSettings(icg4={"step_size": 0.02}),
    equivalence=({"step_size": 1e-3},),
    speed={"step_size": 1e-2},
    asv={"rosenbrock": {"step_size": 3e-3}, "linreg": {"step_size": 3e-5}, "bnn": {"step_size": 1e-4}},
)

SAMPLER = samplers.register(samplers.Sampler.from_namespace("throwaway_sgld", "a test's copy of SGLD", globals()))
'''


@contextlib.contextmanager
def throwaway(folder: Path, source: str = THROWAWAY):
    """The throwaway sampler's module (``source``) written to ``folder`` and imported (it registers itself);
    unregistered and forgotten afterwards."""
    (folder / f"{NAME}.py").write_text(source)
    sys.path.insert(0, str(folder))
    try:
        importlib.import_module(NAME)
        yield samplers.get(NAME)
    finally:
        sys.path.remove(str(folder))
        sys.modules.pop(NAME, None)
        if NAME in samplers.names():
            samplers.unregister(NAME)


@contextlib.contextmanager
def asv_suite():
    """The asv benchmark modules, imported afresh (their parameters are read at import) under a
    package name of their own, and forgotten afterwards."""
    root = REPO / "bench" / "perf" / "asv" / "benchmarks"
    spec = importlib.util.spec_from_file_location("asv_suite_under_test", root / "__init__.py",
                                                  submodule_search_locations=[str(root)])
    sys.modules[spec.name] = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(sys.modules[spec.name])
        yield {m: importlib.import_module(f"{spec.name}.{m}") for m in ("_workloads", "samplers", "quality")}
    finally:
        for module in [m for m in sys.modules if m == spec.name or m.startswith(spec.name + ".")]:
            del sys.modules[module]


def test_every_registered_sampler_declares_benchmark_settings():
    for name in samplers.names():
        assert isinstance(samplers.benchmark_settings(name), samplers.BenchmarkSettings), name
    assert set(cells.TARGET_PRESETS) == set(GATE_TARGETS)


def test_a_new_sampler_file_is_in_every_benchmark(tmp_path):
    with throwaway(tmp_path) as sampler:
        quick = {c.name: c for c in cells.suite("quick") if c.sampler == NAME}
        assert set(quick) == {f"{NAME}@icg4-isotropic-h0.02", f"{NAME}@icg4-isotropic-h0.02-reference-numpy"}
        assert all(c.params == {"step_size": 0.02, "temperature": cells.TEMPERATURE} for c in quick.values())

        assert (NAME, {"step_size": 1e-3}) in test_equivalence.settings()
        icg = targets.get("icg", noise="isotropic", noise_variance=256.0)
        test_equivalence.assert_implementations_agree(sampler, icg, sampler.params(step_size=1e-3))

        table = speed.sampler_table([NAME], num_steps=64, numpy_steps=2, repeats=1, progress=lambda _: None)
        assert list(table.index) == [NAME] and table.loc[NAME, "gradients per step"] == 1

        with asv_suite() as asv:
            assert NAME in asv["samplers"].TIMING_PARAMS[0] and NAME in asv["quality"].TrackICG.params[0]
            assert asv["_workloads"].asv_params(NAME, "rosenbrock") == {"step_size": 3e-3}
            assert asv["_workloads"].asv_params(NAME, "icg") == {"step_size": 1e-2}  # its speed settings
            implementation = asv["_workloads"].implementation(NAME, "jax")
            assert implementation.params("icg", icg, timing=True).step_size == 1e-2
    assert NAME not in samplers.names()
    assert all(c.sampler != NAME for c in cells.suite("full"))
    assert all(name != NAME for name, _ in test_equivalence.settings())


def test_a_sampler_without_benchmark_settings_is_a_clear_error():
    bare = dataclasses.replace(samplers.get("sgld"), name="bare_sgld", benchmarks=None)
    samplers.register(bare)
    try:
        reads = [lambda: cells.suite("quick"), test_equivalence.settings, lambda: speed_workload.problem("bare_sgld")]
        for read in reads:
            with pytest.raises(samplers.MissingBenchmarkSettingsError,
                               match="sampler 'bare_sgld' declares no benchmark settings: define `benchmarks = "
                                     r"samplers.BenchmarkSettings\(...\)`"):
                read()
        with asv_suite() as asv, pytest.raises(samplers.MissingBenchmarkSettingsError, match="bare_sgld"):
            asv["_workloads"].asv_params("bare_sgld", "icg")
    finally:
        samplers.unregister("bare_sgld")
    assert "bare_sgld" not in samplers.names()


def test_the_asv_suite_runs_each_samplers_asv_entry_or_its_speed_settings():
    """The rule, for every (sampler, asv target): its file's ``asv`` entry where it declares one, its ``speed``
    settings otherwise; validated on the suite's targets as the benchmarks validate them."""
    with asv_suite() as asv:
        workloads = asv["_workloads"]
        built = {"icg": workloads.timing_target("icg", 10), "bnn": workloads.timing_target("bnn", 1000),
                 **{kind: targets.get(name, **params, **asv["quality"].GRADIENT_NOISE[kind])
                    for kind, (name, params) in asv["quality"].QUALITY_TARGETS.items() if kind != "icg"}}
        assert set(built) == set(workloads.ASV_TARGETS)
        for name in samplers.names():
            settings, sampler = samplers.benchmark_settings(name), samplers.get(name)
            implementation = workloads.implementation(name, "jax")
            for kind, target in built.items():
                rule = settings.asv[kind] if kind in settings.asv else settings.speed
                assert workloads.asv_params(name, kind) == rule, (name, kind)
                target = workloads.for_sampler(implementation, target)
                centred = "centre" in {field.name for field in dataclasses.fields(sampler.Params)}
                centre = {"centre": target.initial_position()} if centred else {}
                expected = sampler.params_for(target, **{**rule, **centre})
                suite = implementation.params(kind, target, timing=True)
                assert jax.tree.structure(suite) == jax.tree.structure(expected), (name, kind)
                assert all(np.array_equal(a, b) for a, b in zip(jax.tree.leaves(suite), jax.tree.leaves(expected)))


def test_no_sampler_declares_asv_hyperparameters_that_repeat_its_speed_settings():
    with asv_suite() as asv:
        for name in samplers.names():
            settings = samplers.benchmark_settings(name)
            assert set(settings.asv) <= set(asv["_workloads"].ASV_TARGETS), name
            assert [kind for kind, params in settings.asv.items() if params == settings.speed] == [], name


def test_the_asv_targets_are_the_timing_and_quality_targets():
    with asv_suite() as asv:
        workloads = asv["_workloads"]
        assert set(workloads.ASV_TARGETS) == set(workloads.TIMING_TARGETS) | set(asv["quality"].QUALITY_TARGETS)


def test_a_new_asv_target_runs_every_samplers_speed_settings(monkeypatch):
    """Adding an asv target edits no sampler file: a fifth target, which no file names, gets each sampler's
    speed settings; a name that is not an asv target is an error."""
    with asv_suite() as asv:
        workloads = asv["_workloads"]
        with pytest.raises(ValueError, match=r"asv target must be one of .* got 'funnel'"):
            workloads.asv_params("sgld", "funnel")
        monkeypatch.setattr(workloads, "ASV_TARGETS", (*workloads.ASV_TARGETS, "funnel"))
        for name in samplers.names():
            assert workloads.asv_params(name, "funnel") == samplers.benchmark_settings(name).speed, name


def _picky_sgld(asv: dict):
    """SGLD registered as ``picky_sgld`` with ``asv``, whose ``prepare`` rejects steps above 1e-3 on a
    non-Gaussian target (as a sampler's own target-dependent checks would)."""

    def prepare(target, params):
        if params["step_size"] > 1e-3 and target.name != "icg":
            raise ValueError(f"step_size {params['step_size']} is too large on {target.name}")
        return params

    settings = dataclasses.replace(_settings(), asv=asv)
    return samplers.register(dataclasses.replace(samplers.get("sgld"), name="picky_sgld", prepare=prepare,
                                                 benchmarks=settings))


def test_speed_settings_that_do_not_fit_an_asv_target_say_what_to_declare():
    rosenbrock = targets.get("rosenbrock", dim=10, Q=0.1)
    _picky_sgld({"linreg": {"step_size": 1e-2}})
    try:
        with asv_suite() as asv:
            implementation = asv["_workloads"].implementation("picky_sgld", "jax")
            assert implementation.params("icg", targets.get("icg"), timing=True).step_size == 1e-2
            with pytest.raises(asv["_workloads"].SpeedSettingsDoNotFitError) as raised:
                implementation.params("rosenbrock", rosenbrock, timing=True)
            assert str(raised.value) == (
                "sampler 'picky_sgld' cannot run the asv target 'rosenbrock' with its speed settings "
                "{'step_size': 0.01} (step_size 0.01 is too large on rosenbrock): declare its hyperparameters on "
                "'rosenbrock' in its file, `benchmarks = samplers.BenchmarkSettings(..., asv={'rosenbrock': "
                "{...}})`")
            with pytest.raises(ValueError, match="too large on linreg") as declared:  # its own entry: as it is
                implementation.params("linreg", targets.get("linreg"), timing=True)
            assert not isinstance(declared.value, asv["_workloads"].SpeedSettingsDoNotFitError)
    finally:
        samplers.unregister("picky_sgld")


def test_an_asv_entry_for_a_target_the_suite_does_not_run_is_an_error():
    _picky_sgld({"rosenbrok": {"step_size": 1e-3}})
    try:
        with asv_suite() as asv, pytest.raises(ValueError, match="sampler 'picky_sgld' declares asv hyperparameters "
                                                                 "for 'rosenbrok', which the asv suite does not run"):
            asv["_workloads"].asv_params("picky_sgld", "icg")
    finally:
        samplers.unregister("picky_sgld")


def _settings(**gate):
    """Valid settings but for the ``gate`` fields given."""
    return samplers.BenchmarkSettings(gate=samplers.GateSettings(**{"icg4": {"step_size": 0.1}, **gate}),
                                      equivalence=({"step_size": 1e-3},), speed={"step_size": 1e-2})


@pytest.mark.parametrize("make, error, words", [
    (lambda: _settings(icg4={"L": 1.0}), ValueError, "gate.icg4 must give a step_size"),
    (lambda: _settings(heavy_tailed=("icg5",)), ValueError, "gate.heavy_tailed[0] must be one of"),
    (lambda: _settings(num_burnin=-1), ValueError, "gate.num_burnin must be an integer >= 0"),
    (lambda: _settings(linreg=[0.1]), TypeError, "gate.linreg must be a dict of hyperparameters"),
    (lambda: _settings(posteriors={"mesquite": {"step_size": 1e-4}}), ValueError,
     "gate.posteriors must give hyperparameters for each of mesquite, gauss_mix"),
    (lambda: _settings(posteriors={"mesquite": {"step_size": 1e-4}, "gauss_mix": {"L": 1.0}}), ValueError,
     "gate.posteriors['gauss_mix'] must give a step_size"),
    (lambda: _settings(variants=({"step_size": 1},)), TypeError, "gate.variants[0] must be a GateVariant"),
    (lambda: samplers.GateVariant("stiff", {"step_size": 0.1}, "icg9"), ValueError,
     "gate variant 'stiff' target must be one of"),
    (lambda: dataclasses.replace(_settings(), equivalence=()), ValueError, "equivalence must hold at least one"),
    (lambda: dataclasses.replace(_settings(), asv=[{}]), TypeError, "asv must be a dict of hyperparameters by asv"),
    (lambda: dataclasses.replace(_settings(), asv={"bnn": 1e-4}), TypeError, "asv['bnn'] must be a dict of hyper"),
    (lambda: dataclasses.replace(samplers.get("sgld"), benchmarks=dataclasses.replace(
        _settings(), asv={"bnn": {"friction": 1.0}})),
     ValueError, "sampler 'sgld' (benchmark setting asv['bnn']) has no parameter 'friction'"),
    (lambda: dataclasses.replace(_settings(), wrapper=2), TypeError, "wrapper must be the name of a target adapter"),
    (lambda: targets.adapted(targets.get("icg"), "two_layers"), ValueError, "wrapper must be one of ['single_layer']"),
    (lambda: dataclasses.replace(samplers.get("sgld"), benchmarks=_settings(exact_law=({"friction": 3.0},))),
     ValueError, "sampler 'sgld' (benchmark setting gate.exact_law[0]) has no parameter 'friction'"),
    (lambda: dataclasses.replace(samplers.get("sgnht"), benchmarks=_settings(exact_law=({"step_size": 0.1},))),
     ValueError, "sampler 'sgnht' declares exact-law gate cells (benchmark setting gate.exact_law) but no linear_law"),
])
def test_bad_benchmark_settings_name_the_field(make, error, words):
    with pytest.raises(error) as raised:
        make()
    assert words in str(raised.value)


def test_exact_law_cells_need_the_files_law(tmp_path):
    """A file that declares exact-law gate cells but no ``linear_law`` fails at registration, saying what to define;
    with its law (here SGLD's, imported into the file) its exact-law cell is in the gate, whose design bias is that
    law's: nothing in bench names the sampler."""
    cells_line = 'gate=samplers.GateSettings(icg4={"step_size": 0.02}),'
    declared = THROWAWAY.replace(cells_line, cells_line[:-2] + ', exact_law=({"step_size": 0.02},)),')
    assert declared != THROWAWAY
    with pytest.raises(ValueError, match=f"sampler '{NAME}' declares exact-law gate cells .* but no linear_law: "
                                         "define `linear_law"):
        with throwaway(tmp_path, declared):
            pass
    assert NAME not in samplers.names()
    with_law = declared.replace("\n\ndef reference_step", "\nfrom sgbench.samplers.sgld import linear_law  # noqa: F401"
                                                          "\n\n\ndef reference_step", 1)
    with throwaway(tmp_path, with_law) as sampler:
        assert sampler.linear_law is samplers.get("sgld").linear_law
        quick = cells.suite("quick")
        ours = next(c for c in quick if c.sampler == NAME and c.exact_law)
        theirs = next(c for c in quick if c.sampler == "sgld" and c.exact_law and c.params == ours.params)
        np.testing.assert_array_equal(exact_law.expected_second_moment(ours), exact_law.expected_second_moment(theirs))


def test_every_declared_wrapper_is_a_target_adapter():
    """Sampler files name their adapter (they never import targets); a typo would fail every benchmark."""
    declared = {name: samplers.benchmark_settings(name).wrapper for name in samplers.names()}
    assert {name: w for name, w in declared.items() if w is not None and w not in targets.ADAPTERS} == {}
    assert {w for w in declared.values() if w is not None} == set(targets.ADAPTERS)


def test_one_command_measures_a_new_samplers_design_bias_and_baselines(tmp_path, monkeypatch):
    stored_bias, stored_base = design_bias.PATH, baselines.path_for("quick")
    stored = {path: path.read_bytes() for path in (stored_bias, stored_base)}
    bias, base = tmp_path / "design_bias.json", tmp_path / "quick.json"
    shutil.copy(stored_bias, bias)
    shutil.copy(stored_base, base)
    monkeypatch.setattr(design_bias, "PATH", bias)
    with throwaway(tmp_path):
        status = cli.main(["baseline", "update", "--sampler", NAME, "--why", "new sampler throwaway_sgld",
                           "--seeds", "2", "--groups", "1", "--path", str(base)])
        assert status == 0
        ours = [c for c in cells.suite("quick") if c.sampler == NAME]
        document = design_bias.load()
        for cell in ours:  # the gate can check them: each has its design bias and its baseline
            assert design_bias.of_cell(cell, document)["sampler"] == NAME
    cells_of = {p: json.loads(p.read_text())["cells"] for p in (stored_bias, stored_base, bias, base)}
    assert set(cells_of[bias]) - set(cells_of[stored_bias]) == {f"{NAME}@icg4-isotropic-h0.02",
                                                                f"{NAME}@icg4-isotropic-h0.02-reference"}
    assert set(cells_of[base]) - set(cells_of[stored_base]) == {c.name for c in ours}
    assert cells_of[base][ours[0].name]["why"] == "new sampler throwaway_sgld"
    for new, old in ((bias, stored_bias), (base, stored_base)):
        assert {k: v for k, v in cells_of[new].items() if not k.startswith(NAME)} == cells_of[old]
    assert {path: path.read_bytes() for path in stored} == stored


@pytest.mark.parametrize("argv, words", [
    (["--sampler", "nope", "--why", "new sampler"], "unknown sampler 'nope'"),
    (["--sampler", "sgld", "--why", "  "], "why must say why"),
    (["--sampler", "sgld", "--cell", "sgld@icg4-isotropic-h0.02", "--why", "x"], "not allowed with argument"),
])
def test_baseline_update_sampler_bad_input(argv, words, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(design_bias, "PATH", tmp_path / "design_bias.json")
    assert cli.main(["baseline", "update", *argv, "--path", str(tmp_path / "quick.json")]) == 2
    assert words in capsys.readouterr().err
    assert not list(tmp_path.iterdir())  # nothing measured, nothing written
