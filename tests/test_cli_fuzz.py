"""Property-based fuzzing (Hypothesis) of the command line and of the layers below it (issue 20, "hard to
misuse"): every generated input either runs or is refused by name.

- ``RunConfig(**kwargs)``, ``samplers.get(name).params_for(target, **params)`` and ``targets.get(name, **params)``
  either construct or raise a ValueError or TypeError whose message names the parameter;
- ``main(argv)`` returns 0 or 2, and with 2 prints exactly one line on stderr, ``sgbench: error: ...``, no
  traceback; argparse's own rejections are one line too.

Inputs: ints (negative, zero, huge), floats (nan, +-inf, +-0, extremes), strings, None, lists and dicts for the
layers; for ``sgbench run``, real and garbage sampler and target names, step sizes, sizes, KEY=VALUE parameters,
dtypes, backends and unusable ``--db``/``--out`` paths; for the other commands, option sets with at least one value
outside its range (so that nothing long runs). The examples are fixed (``derandomize=True``), so a run never
meets a new one: 1200 generated inputs in all (the ``max_examples`` below: 250 + 300 + 250 + 100 + 300; the 100
are the real runs, each a compilation), plus two fixed inputs that the fuzzing found with other examples (b² ~
1e257, whose report must still be written).
Runs that would really run are tiny (at most 3 chains of 200 steps, mostly on the NumPy backend) and write
only under pytest's temporary folder.
"""

from __future__ import annotations

import dataclasses
import inspect
import json
import math

import pytest
from hypothesis import HealthCheck, event, given, settings, strategies as st

from sgbench import samplers, targets
from sgbench.bench.cli import main
from sgbench.bench.running.config import RunConfig
from sgbench.targets.noise import names as noise_names

FUZZ = dict(deadline=None, derandomize=True, suppress_health_check=[  # a fresh folder per example: no fixture reuse
    HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large])
CONFIG_EXAMPLES, SAMPLER_EXAMPLES, TARGET_EXAMPLES, RUN_EXAMPLES, COMMAND_EXAMPLES = 250, 300, 250, 100, 300

# Text an OS can put in argv (no NUL, no lone surrogates), short.
TEXT = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=6)
GARBAGE_WORDS = ["", " ", "nope", "-", "--", "-x", "--help=no", "None", "true", "a\nb", "a=b", "é", "٣", "∞"]

# Values for the layers: small and huge ints (never a large accepted size: a dim of 5000 builds for seconds).
SMALL_INTS = st.integers(-3, 40)
HUGE_INTS = st.one_of(st.integers(min_value=10**7), st.integers(max_value=-10**7), st.sampled_from([2**63, 2**64]))
FLOATS = st.one_of(st.floats(allow_nan=True, allow_infinity=True),
                   st.sampled_from([0.0, -0.0, 1e-320, 1e300, -1e300, math.nan, math.inf, -math.inf, 0.5]))
SCHEDULES = st.one_of(
    st.sampled_from(["constant", "cyclical", "polynomial_decay", "exponential"]),
    st.dictionaries(st.sampled_from(["kind", "cycle_length", "final_fraction", "offset", "exponent", "x"]),
                    st.one_of(st.sampled_from(["cyclical", "constant", "polynomial_decay"]), SMALL_INTS, FLOATS,
                              TEXT, st.none()), max_size=4))
VALUES = st.one_of(
    st.none(), st.booleans(), SMALL_INTS, HUGE_INTS, FLOATS, TEXT,
    st.sampled_from(["float32", "numpy", "jax", "chen", "euler", "practical", "relu", "regression", "simulated",
                     *noise_names()]),
    st.lists(st.one_of(SMALL_INTS, FLOATS), max_size=4), st.tuples(SMALL_INTS, SMALL_INTS, SMALL_INTS), SCHEDULES)


def _names_one_of(message: str, names) -> bool:
    return any(name in message or repr(name) in message for name in names)


def _sampler_fields(name: str) -> list[str]:
    return [f.name for f in dataclasses.fields(samplers.get(name).Params)]


def _target_parameters(name: str) -> list[str]:
    cls = targets._REGISTRY.get(name)
    own = [n for n, p in inspect.signature(cls.__init__).parameters.items()
           if n != "self" and p.kind is not p.VAR_KEYWORD]
    return own + ["noise_variance", "noise_batch_size", "noise_scale", "noise_alpha", "noise_condition_number",
                  "noise_rotation_seed"]


# ---------------------------------------------------------------------------------------------- the layers

CONFIG_FIELDS = [f.name for f in dataclasses.fields(RunConfig)]


@settings(max_examples=CONFIG_EXAMPLES, **FUZZ)
@given(st.dictionaries(st.one_of(st.sampled_from(CONFIG_FIELDS), TEXT.filter(bool)), VALUES, max_size=5))
def test_run_config_constructs_or_names_the_field(kwargs):
    """A RunConfig is well-typed and within range, or the error names one of the fields given."""
    try:
        config = RunConfig(**kwargs)
    except (ValueError, TypeError) as error:
        assert _names_one_of(str(error), kwargs), (kwargs, error)
        return
    for name in ("num_chains", "num_steps", "num_burnin", "thin", "seed", "block_size", "num_checkpoints"):
        value = getattr(config, name)
        assert isinstance(value, int) and not isinstance(value, bool) and value >= 0, (name, value)
    assert config.backend in ("jax", "numpy") and config.dtype in ("float32", "float64")
    assert isinstance(config.keep_samples, bool)
    assert len(config.checkpoint_steps) <= config.num_checkpoints + 1


@pytest.fixture(scope="module")
def vector_targets():
    """A small ICG for most samplers; the same as one matrix layer for the PX samplers."""
    icg = targets.get("icg", dim=3)
    return icg, targets.single_layer(targets.get("icg", dim=4))


@settings(max_examples=SAMPLER_EXAMPLES, **FUZZ)
@given(st.data())
def test_sampler_params_construct_or_name_the_parameter(vector_targets, data):
    """``params_for`` with random hyperparameters (unknown names among them) builds Params or names a
    hyperparameter: one given, one of the sampler's, or a field of a schedule given as a dict."""
    name = data.draw(st.sampled_from(samplers.names()), label="sampler")
    fields = _sampler_fields(name)
    keys = data.draw(st.lists(st.one_of(st.sampled_from(fields), TEXT.filter(bool)), max_size=4, unique=True))
    params = {key: data.draw(VALUES, label=key) for key in keys}
    if data.draw(st.booleans(), label="a valid step size"):
        params.setdefault("step_size", data.draw(st.floats(1e-4, 1.0), label="step_size"))
    target = vector_targets[1] if name.startswith("px_") else vector_targets[0]
    try:
        samplers.get(name).params_for(target, **params)
    except (ValueError, TypeError) as error:
        nested = [key for value in params.values() if isinstance(value, dict) for key in value]
        assert _names_one_of(str(error), [*params, *nested, *fields]), (name, params, error)


@settings(max_examples=TARGET_EXAMPLES, **FUZZ)
@given(st.data())
def test_targets_build_or_name_the_parameter(data):
    """``targets.get`` with random parameters (unknown names, noise models and their ``noise_*``) builds
    the target or names a parameter given."""
    name = data.draw(st.sampled_from(targets.names()), label="target")
    names = _target_parameters(name)
    keys = data.draw(st.lists(st.one_of(st.sampled_from(names), TEXT.filter(bool)), max_size=3, unique=True))
    params = {key: data.draw(VALUES, label=key) for key in keys}
    try:
        target = targets.get(name, **params)
    except (ValueError, TypeError) as error:
        assert _names_one_of(str(error), params), (name, params, error)
        return
    assert target.dim >= 1


# ---------------------------------------------------------------------------------------------- the command line

def _call(capsys, argv):
    """``main(argv)``'s status, stdout and stderr, after checking the property every call must meet."""
    capsys.readouterr()
    status = main(list(argv))
    out, err = capsys.readouterr()
    assert status in (0, 2), (argv, status, err)
    assert "Traceback" not in err, (argv, err)
    if status == 2:
        lines = err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("sgbench: error: "), (argv, err)
    return status, out, err


def _folder(tmp_path_factory):
    """A fresh folder per example (Hypothesis reuses a test's fixtures across its examples), holding a file."""
    folder = tmp_path_factory.mktemp("fuzz")
    (folder / "a_file").write_text("")
    return folder


PATHS = {  # kind -> path under the example's folder
    "fresh": lambda f, name: f / "new" / name,
    "existing folder": lambda f, name: f,
    "below a file": lambda f, name: f / "a_file" / name,
    "a file": lambda f, name: f / "a_file",
    "newline": lambda f, name: f / "a\nb" / name,
}


def _number_text():
    """A number as typed (ints small, negative or beyond every bound: a valid dim of 5000 builds for seconds)."""
    return st.one_of(st.floats(allow_nan=True, allow_infinity=True).map(repr),
                     st.one_of(SMALL_INTS, st.integers(max_value=-1), st.integers(min_value=2**64)).map(str),
                     st.sampled_from(["0", "-0", "1e400", "-1e400", "nan", "-nan", "inf", "-inf", "-Infinity",
                                      "1_000", "0x10", "1e", "½", *GARBAGE_WORDS]))


def _int_text(valid):
    """Mostly a valid int of ``valid`` (a strategy), else one that is refused: negative, above every bound
    (2^64: a valid but large size, 10^7 steps, would run for minutes), or not an int at all."""
    return st.one_of(valid.map(str), valid.map(str), st.integers(max_value=-1).map(str),
                     st.integers(min_value=2**64).map(str),
                     st.sampled_from(["1.5", "1e3", "0x10", " 7", "٣", "nan", *GARBAGE_WORDS]))


def _value_text():
    return st.one_of(_number_text(), SMALL_INTS.map(str), TEXT,
                     st.sampled_from(["isotropic", "minibatch", "none", *noise_names(), "cyclical", "relu",
                                      "simulated", "[1, 2]", "[3]", "[]", "[1e999]", "{}", "{bad", '"x"', "null",
                                      '{"kind": "cyclical", "cycle_length": 50}', '{"kind": "cyclical"}',
                                      '{"kind": "polynomial_decay", "exponent": 2}', "[[1]]", "[-1, 0]"]),
                     st.lists(st.one_of(SMALL_INTS, FLOATS), max_size=3).map(lambda v: json.dumps(v)))


OPTIONS = {  # flag -> a mostly valid value text
    "--num-burnin": _int_text(st.integers(0, 50)), "--thin": _int_text(st.integers(1, 10)),
    "--seed": st.one_of(_int_text(st.integers(0, 9)), st.integers().map(str)),
    "--num-checkpoints": _int_text(st.integers(0, 5)), "--block-size": _int_text(st.integers(1, 300)),
    "--dtype": st.sampled_from(["float32", "float64", "float16", "", "FLOAT32"]),
    "--backend": st.sampled_from(["numpy", "jax", "torch", ""]), "--suite": st.sampled_from(["tiny", "nope", ""]),
    "--num-chains": _int_text(st.integers(1, 3)), "--num-steps": _int_text(st.integers(1, 200)),
    "--sampler": st.one_of(st.sampled_from(samplers.names()), st.sampled_from(GARBAGE_WORDS)),
    "--target": st.one_of(st.sampled_from(targets.names()), st.sampled_from(GARBAGE_WORDS)),
}
MUTATIONS = ("value", "option", "drop", "target param", "sampler param", "stray token", "paths")


@st.composite
def run_argv(draw):
    """``sgbench run`` options: a valid tiny sweep (a real sampler and target, NumPy, at most 3 chains of 200
    steps) changed by up to 5 mutations (a garbage value, another option, a required flag dropped, a
    KEY=VALUE parameter, a stray token, an unusable --db or --out). Returns (argv, db kind, out kind);
    --num-steps and --num-chains are never dropped, so that nothing falls back on 10 chains of 10^4 steps."""
    sampler, target = draw(st.sampled_from(samplers.names())), draw(st.sampled_from(targets.names()))
    step_sizes = draw(st.lists(st.sampled_from(["1e-3", "0.01", "0.1"]), min_size=1, max_size=3, unique=True))
    options = {"--sampler": [sampler], "--target": [target], "--step-size": step_sizes, "--backend": ["numpy"],
               "--num-steps": [str(draw(st.integers(1, 200)))], "--num-chains": [str(draw(st.integers(1, 3)))]}
    params, tokens, paths = [], [], ["fresh", "fresh"]
    for mutation in draw(st.lists(st.sampled_from(MUTATIONS), max_size=5)):
        if mutation == "value":
            flag = draw(st.sampled_from(sorted(options)))
            values = _number_text() if flag == "--step-size" else OPTIONS[flag]
            options[flag] = draw(st.lists(values, min_size=1, max_size=3 if flag == "--step-size" else 1))
        elif mutation == "option":
            flag = draw(st.sampled_from(sorted(OPTIONS)))
            options[flag] = [draw(OPTIONS[flag])]
        elif mutation == "drop":
            options.pop(draw(st.sampled_from(["--sampler", "--target", "--step-size", "--backend"])), None)
        elif mutation in ("target param", "sampler param"):
            keys = _target_parameters(target) if mutation == "target param" else _sampler_fields(sampler)
            key = draw(st.one_of(st.sampled_from(keys), TEXT))
            pair = draw(st.one_of(st.just(f"{key}={draw(_value_text())}"), TEXT))
            params += ["--target-param" if mutation == "target param" else "--sampler-param", pair]
        elif mutation == "stray token":
            tokens += draw(st.sampled_from([["--bogus"], ["extra"], ["--num-steps"], ["--step-size"], ["-x", "1"]]))
        else:
            paths = [draw(st.sampled_from(sorted(PATHS))), draw(st.sampled_from(sorted(PATHS)))]
    argv = ["run"]
    for flag in draw(st.permutations(sorted(options))):
        argv += [flag, *options[flag]]
    return [*argv, *params, *tokens], *paths


@pytest.mark.long
@settings(max_examples=RUN_EXAMPLES, **FUZZ)
@given(run_argv())
def test_run_runs_or_exits_2_with_one_line(capsys, tmp_path_factory, case):
    """``sgbench run`` with generated options: a tiny run (exit 0, a report) or one line naming what is wrong."""
    argv, db_kind, out_kind = case
    folder = _folder(tmp_path_factory)
    db, out = PATHS[db_kind](folder, "r.sqlite"), PATHS[out_kind](folder, "out")
    status, stdout, err = _call(capsys, [*argv, "--db", str(db), "--out", str(out), "--no-progress"])
    event(f"exit {status}" + (f": {err[len('sgbench: error: '):][:30]}" if status else ""))
    if status == 0 and "--help" not in argv:
        assert "report:" in stdout and db.is_file()


@pytest.mark.parametrize("target, step_sizes, steps", [("icg", ["1e-3", "0.1"], "77"),
                                                        ("linreg", ["1e-3", "0.01", "0.1"], "68")])
def test_a_run_far_from_the_truth_gets_its_report(capsys, tmp_path, target, step_sizes, steps):
    """SGHMC at h = 0.1 leaves the truth far behind (b² ~ 1e257) without overflowing: found by this file's
    fuzzing with other examples; the run is stored, so its report must be written too."""
    status, stdout, _ = _call(capsys, ["run", "--sampler", "sghmc", "--target", target, "--step-size", *step_sizes,
                                       "--num-chains", "1", "--num-steps", steps, "--backend", "numpy", "--no-progress",
                                       "--db", str(tmp_path / "r.sqlite"), "--out", str(tmp_path / "out")])
    assert status == 0 and "report:" in stdout


GATE_SUITES = ["quick", "full"]
BAD_SUITE = TEXT.filter(lambda t: t not in GATE_SUITES)
MODULES = ["sgbench.bench.adapters.blackjax:sgld", "sgbench.samplers.sgld:SAMPLER", "nope:x", "os:path", "sgld", ":",
           "a:b:c"]


def _bad_int(low, high=None):
    """An int text outside [low, high]: below it, or above it where it is bounded."""
    above = [] if high is None else [st.integers(min_value=high + 1).map(str)]
    return st.one_of(st.integers(max_value=low - 1).map(str), *above)


@st.composite
def rejected_command(draw):
    """argv of a command other than ``run`` with at least one value outside its range (marked ``bad``),
    in random order among valid ones, and every path under the example's folder: each is refused before
    any long work (a gate, NUTS, a validation)."""
    f = "{folder}"
    command = draw(st.sampled_from(["gate", "reference", "baseline", "design-bias", "reproduce", "validate",
                                    "px-overhead", "speed", "nuts-speed", "asv", "dashboard", "list", "report"]))
    if command == "gate":
        fixed, bad = ["gate", "--out", f"{f}/out", "--db", f"{f}/r.sqlite"], {
            "--seed": _bad_int(0, 2**32 - 1), "--reseed": _bad_int(0, 10_000), "--suite": BAD_SUITE}
        good = {"--seed": st.integers(0, 9).map(str), "--reseed": st.integers(0, 3).map(str),
                "--suite": st.sampled_from(GATE_SUITES), "--cell": TEXT, "--bug": TEXT}
    elif command == "reference":
        action = draw(st.sampled_from(["build", "check"]))
        fixed = ["reference", action, draw(st.one_of(st.sampled_from(targets.names()), TEXT)),
                 "--dir", f"{f}/refs"]
        bad = {"--backend": TEXT.filter(lambda t: t not in ("numpyro", "blackjax")), "--chains": _bad_int(1, 1024),
               "--warmup": _bad_int(1), "--draws": _bad_int(1),
               "--seed": _bad_int(0), "--stored": _bad_int(4),
               "--min-ess": st.sampled_from(["0", "-1", "nan", "inf", "-inf"]),
               "--target-accept": st.sampled_from(["0", "1", "1.5", "-0.1", "nan", "inf"]),
               "--alpha": st.sampled_from(["0", "1", "2", "-1e-3", "nan", "-inf"])}
        good = {"--backend": st.sampled_from(["numpyro", "blackjax"]), "--chains": st.integers(1, 4).map(str),
                "--param": _value_text().map(lambda v: f"dim={v}"), "--target-accept": st.just("0.9")}
    elif command == "baseline":
        fixed = ["baseline", "update", "--why", draw(st.sampled_from(["a test", "", " "])), "--path", f"{f}/b.json"]
        bad = {"--seeds": _bad_int(2), "--groups": _bad_int(1), "--suite": BAD_SUITE}
        good = {"--seeds": st.integers(2, 4).map(str), "--cell": TEXT}
    elif command == "design-bias":
        # design-bias writes reference/data/gate_design_bias.json: a bad value always stops it first
        fixed, bad, good = ["design-bias"], {"--groups": _bad_int(1), "--suite": BAD_SUITE}, {"--sampler": TEXT}
    elif command == "reproduce":
        fixed = ["reproduce", "sglrw-table1", "--out", f"{f}/out", "--db", f"{f}/r.sqlite"]
        bad = {"--particles": _bad_int(23, 2**20), "--iterations": _bad_int(1, 2**32), "--seed": _bad_int(0)}
        good = {"--particles": st.integers(23, 100).map(str), "--iterations": st.integers(1, 10).map(str)}
    elif command == "validate":
        fixed = ["validate", draw(st.sampled_from(MODULES)), "--out", f"{f}/out"]
        bad = {"--seed": _bad_int(0, 2**32 - 1), "--chains": _bad_int(2, 2**20), "--steps": _bad_int(1, 2**32)}
        good = {"--param": _value_text().map(lambda v: f"step_size={v}"), "--claims": TEXT,
                "--targets": st.sampled_from(["icg", "linreg", "all"])}
    elif command == "px-overhead":
        fixed, bad = ["px-overhead", "--no-rss"], {"--chains": _bad_int(1), "--steps": _bad_int(1),
                                                   "--repeats": _bad_int(1)}
        good = {"--hidden": st.integers(-1, 4).map(str), "--dtype": st.sampled_from(["float32", "float64"])}
    elif command == "speed":
        fixed = ["speed", "--out", f"{f}/out"]
        bad = {"--steps": _bad_int(1), "--numpy-steps": _bad_int(1), "--repeats": _bad_int(1),
               "--grid-steps": _bad_int(0)}
        good = {"--sampler": st.one_of(st.sampled_from(samplers.names()), TEXT), "--no-bnn": st.none()}
    elif command == "nuts-speed":
        fixed, bad, good = ["nuts-speed", "--out", f"{f}/n.png"], {"--draws": _bad_int(1)}, {}
    elif command in ("asv", "dashboard"):  # no such config file: nothing runs
        fixed, bad = [command], {"--config": st.sampled_from([f"{f}/missing.json", f"{f}/a_file/x.json"])}
        good = ({"--machine": TEXT, "--quick": st.none()} if command == "asv" else
                {"--port": st.integers(-5, 70000).map(str), "--serve": st.none(), "--offline": st.none()})
    elif command == "list":
        fixed, bad, good = ["list"], {}, {}
        fixed.append(draw(st.one_of(st.sampled_from(["samplers", "targets", "metrics", "suites"]), TEXT)))
    else:  # report: no store there
        fixed, bad, good = ["report", "--db", f"{f}/missing.sqlite", "--out", f"{f}/out"], {}, {}
    options = []
    if bad:
        flag = draw(st.sampled_from(sorted(bad)))
        options.append((flag, draw(bad[flag])))
    for flag in draw(st.lists(st.sampled_from(sorted(good)), max_size=3, unique=True)) if good else []:
        if flag not in dict(options):
            options.append((flag, draw(good[flag])))
    options = draw(st.permutations(options))
    argv = list(fixed)
    for flag, value in options:
        argv += [flag] if value is None else [flag, value]
    return argv


@settings(max_examples=COMMAND_EXAMPLES, **FUZZ)
@given(rejected_command())
def test_other_commands_exit_2_with_one_line(capsys, tmp_path_factory, argv):
    """The other commands refuse a value outside its range with one line, before any long work (the
    list command, given a real kind, prints the names)."""
    folder = _folder(tmp_path_factory)
    argv = [a.replace("{folder}", str(folder)) for a in argv]
    status, _, err = _call(capsys, argv)
    event(f"{argv[0]}, exit {status}" + (f": {err[len('sgbench: error: '):][:30]}" if status else ""))
    if argv[0] != "list":
        assert status == 2, argv
