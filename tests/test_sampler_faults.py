"""A broken sampler is an outcome, not a crash (``sgbench.bench.running.sampler_fault``, ``Outcome.ERROR``).

Each broken case of an author's sampler (the tutorial's SGLD with one line changed, written in a module outside the
repository: an exception in its step, a
position of the wrong shape or dtype, a step that cannot be traced by ``jax.jit``, a non-finite start), goes through
``sgbench validate`` and gives ERROR: exit status 4, one line naming the author's file, function and line, no
traceback (``--traceback`` adds it); the page is written. An exception raised in the suite's own code is not the
sampler's fault (re-raised). A torch-style sampler run eagerly (the NumPy driver) that raises after some steps is
ERROR too, naming its line. A hyperparameter without a default that is not given is bad input (exit 2) naming the
flag that gives it.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np
import pytest

from sgbench import samplers
from sgbench.bench import cli
from sgbench.bench.adapters import AdaptedSampler
from sgbench.bench.gate.outcome import Outcome
from sgbench.bench.running.sampler_fault import fault_of, located
from sgbench.bench.validate.validate import validate

ROOT = Path(__file__).resolve().parents[1]
TEMPLATE = re.search(r"## Adding a sampler.*?```python\n(.*?)```", (ROOT / "docs" / "tutorial.md").read_text(),
                     re.DOTALL).group(1)  # the tutorial's SGLD, in the suite's contract
STEP_LINE = ("    position = state.position + params.step_size * grad + jnp.sqrt(2 * params.step_size) * "
             'draws["noise"]\n')
RETURN_LINE = "    return State(position, state.step + 1), samplers.Info(num_grad_evals=1)\n"
INIT_LINE = "def init(position, params): return State(position, 0)\n"

CASES = {  # name: (the template's line, what replaces it, words of the one line, a piece of the line it names)
    "raises": (STEP_LINE, '    raise RuntimeError("not finished")\n' + STEP_LINE,
               "its step raised RuntimeError: not finished", "raise RuntimeError"),
    "wrong_shape": (RETURN_LINE, RETURN_LINE.replace("State(position,", "State(position[:-1],"),
                    "returns state.position of shape (3,), where the state it was given has (4,)",
                    "def optimized_step"),
    "wrong_dtype": (RETURN_LINE, RETURN_LINE.replace("State(position,", "State(position.astype(jnp.int32),"),
                    "returns state.position of dtype int32", "def optimized_step"),
    "untraceable": (STEP_LINE, "    grad = 2 * grad if grad[0] > 0 else grad\n" + STEP_LINE,
                    "cannot be traced by jax.jit", "grad = 2 * grad if"),
    "nan_start": (INIT_LINE, INIT_LINE.replace("State(position, 0)", "State(position * jnp.nan, 0)"),
                  "its init gives a non-finite start", "def init"),
}


def _module(folder, name: str, line: str = "", replacement: str = "", named: str = "") -> tuple[str, int]:
    """The tutorial's SGLD as module ``name`` in ``folder``, not registered, its last ``line`` (the optimized step's,
    where the reference step has the same) replaced, and the number of its first line holding ``named`` (0: none)."""
    registered = 'samplers.register(samplers.Sampler.from_namespace("my_sampler", "the paper, eq. (n)", globals()))'
    text = TEMPLATE.replace(registered, f'samplers.Sampler.from_namespace({name!r}, "broken on purpose", globals())')
    if line:
        head, found, tail = text.rpartition(line)
        assert found, line
        text = head + replacement + tail
    (folder / f"{name}.py").write_text(text)
    sys.modules.pop(name, None)  # another test's module of that name, from another folder
    return text, next((k for k, row in enumerate(text.splitlines(), 1) if named and named in row), 0)


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_broken_sampler_is_error_naming_its_line(name, tmp_path, monkeypatch, capsys):
    line, replacement, words, named = CASES[name]
    _, number = _module(tmp_path, name, line, replacement, named)
    monkeypatch.chdir(tmp_path)  # MODULE is imported from the current folder
    status = cli.main(["validate", f"{name}:SAMPLER", "--param", "step_size=0.02", "--targets", "icg",
                       "--out", str(tmp_path / "out")])
    out, err = capsys.readouterr()
    assert status == 4 == Outcome.ERROR.exit_status, (out, err)
    headline = next(row for row in out.splitlines() if row.startswith(f"{name}: ERROR: on icg: "))
    assert words in headline and f"{tmp_path / name}.py:{number}, in " in headline, (headline, number)
    assert "Traceback" not in out + err
    assert (tmp_path / "out" / f"validate_{name}.html").exists()


def test_traceback_comes_on_request(tmp_path, monkeypatch, capsys):
    _module(tmp_path, "raises", *CASES["raises"][:2])
    monkeypatch.chdir(tmp_path)
    status = cli.main(["validate", "raises:SAMPLER", "--param", "step_size=0.02", "--targets", "icg", "--traceback",
                       "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert status == 4 and "Traceback (most recent call last)" in err and "RuntimeError: not finished" in err


def test_an_error_in_the_suites_own_code_is_not_the_samplers():
    with pytest.raises(ValueError) as raised:  # UnknownNameError
        samplers.get("no such sampler")
    error = raised.value.with_traceback(raised.value.__traceback__.tb_next)  # the frames below the catching one
    assert located(error) == "" and fault_of(error, "x", "its step") is None


def test_an_eager_sampler_that_raises_mid_run_is_error(tmp_path):
    """A NumPy-driver sampler (as a torch one runs) that raises at its 50th step: ERROR naming that line."""
    text, _ = _module(tmp_path, "eager")
    namespace = {}
    exec(compile(text.replace("\ndef reference_step(state, grad_fn, draws, params):\n",
                              "\ndef reference_step(state, grad_fn, draws, params):\n"
                              "    if state.step == 50: raise ValueError('lost my minibatch')\n"),
                 str(tmp_path / "eager.py"), "exec"), namespace)
    namespace["__name__"] = "eager"
    sampler = AdaptedSampler.build(name="eager", citation="", library="mine", backend="numpy",
                                   step=namespace["reference_step"], Params=namespace["Params"],
                                   State=namespace["State"], init=namespace["init"], draw_spec=namespace["draw_spec"])
    verdict = validate(sampler, {"step_size": 0.02}, targets="icg", num_chains=2, num_steps=100,
                       out=tmp_path, progress=lambda _: None).verdict
    assert verdict.outcome is Outcome.ERROR, verdict.summary()
    assert "its step raised ValueError: lost my minibatch" in verdict.reasons["icg"]
    assert f"{tmp_path / 'eager.py'}:" in verdict.reasons["icg"]
    assert np.isfinite(list(verdict.costs.values()) or [0.0]).all()


def test_a_missing_hyperparameter_names_the_flag(tmp_path, monkeypatch, capsys):
    _module(tmp_path, "plain")
    monkeypatch.chdir(tmp_path)
    status = cli.main(["validate", "plain:SAMPLER", "--targets", "icg", "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 2 and len(err) == 1, err
    assert "needs a value for its hyperparameter 'step_size'" in err[0] and "--param step_size=VALUE" in err[0]
