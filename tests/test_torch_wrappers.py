"""The torch wrappers (``sgbench.bench.wrappers``): a ``torch.optim.Optimizer``, a torch step function and a
posteriors-style transform, as their authors write them, all chains as the rows of one float64 tensor.

- A correct SGLD optimizer is PASSED on icg at lr = 0.02 (the suite's SGLD there: r about +0.03, resolved at 256
  chains; a correct sampler is FAILED with probability at most 1e-3), and with torch's weight decay 0.2 left on
  (another posterior: variance 1/(1/s^2 + 0.2), r about -0.2 on icg's widest coordinate) it is FAILED.
- An optimizer that clips by the norm of the whole tensor couples the chains: ERROR before the run, naming
  ``per_chain=True`` and the author's ``step``; with ``per_chain=True`` it runs under the NumPy driver.
- A torch step function and posteriors' own ``sgld.build`` are PASSED at the same setting.
- Runs are reproducible from the seed, and torch's global generator is left as it was.
- A broken sampler in a wrapped form (a step that raises, returns the wrong shape or dtype, an init that starts at
  NaN, an optimizer that raises, a JAX step that cannot be traced) goes through ``sgbench validate`` as ERROR: exit
  4, one line naming the author's file and function, no traceback.
"""

from __future__ import annotations

import math
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from sgbench.bench.gate.outcome import Outcome  # noqa: E402
from sgbench.bench.running import run as running  # noqa: E402
from sgbench.bench.validate.validate import validate  # noqa: E402
from sgbench.bench.wrappers import posteriors_transform, torch_optimizer, torch_step  # noqa: E402

QUIET = dict(progress=lambda _: None)


class SGLD(torch.optim.Optimizer):
    def __init__(self, params, lr, temperature=1.0, weight_decay=0.0):
        super().__init__(params, {"lr": lr, "temperature": temperature, "weight_decay": weight_decay})

    @torch.no_grad()
    def step(self, closure=None):
        for group in self.param_groups:
            for p in group["params"]:
                drift = p.grad + group["weight_decay"] * p
                p.add_(-group["lr"] * drift + math.sqrt(2 * group["lr"] * group["temperature"]) * torch.randn_like(p))


class ClippedSGLD(SGLD):
    @torch.no_grad()
    def step(self, closure=None):
        for group in self.param_groups:
            for p in group["params"]:
                gradient = p.grad * min(1.0, 100.0 / (float(p.grad.norm()) + 1e-12))
                p.add_(-group["lr"] * gradient + math.sqrt(2 * group["lr"]) * torch.randn_like(p))


def sgld_step(generator, x, grad_log_density, step_size):
    return x + step_size * grad_log_density(x) + math.sqrt(2 * step_size) * torch.randn(
        x.shape, generator=generator, dtype=x.dtype)


def test_a_torch_optimizer_passes_and_one_with_weight_decay_fails(tmp_path):
    sampler = torch_optimizer(SGLD, step_size="lr")
    assert sampler.backend == "batched"
    good = validate(sampler, {"step_size": 0.02}, targets="icg", out=tmp_path, **QUIET).verdict
    assert good.outcome is Outcome.PASSED, good.summary()
    wrong = validate(sampler, {"step_size": 0.02, "weight_decay": 0.2}, targets="icg", out=tmp_path, **QUIET).verdict
    assert wrong.outcome is Outcome.FAILED, wrong.summary()


def test_an_optimizer_that_couples_the_chains_is_refused_naming_per_chain(tmp_path):
    verdict = validate(torch_optimizer(ClippedSGLD), {"lr": 0.02}, targets="icg", out=tmp_path, **QUIET).verdict
    reason = verdict.reasons["icg"]
    assert verdict.outcome is Outcome.ERROR, verdict.summary()
    assert "give torch_optimizer(ClippedSGLD, per_chain=True)" in reason and "test_torch_wrappers.py" in reason
    assert "\n" not in reason
    per_chain = torch_optimizer(ClippedSGLD, per_chain=True)
    assert per_chain.backend == "numpy"
    run = running.run(per_chain, "icg", params={"lr": 0.02}, num_chains=2, num_steps=20, backend="numpy")
    assert np.all(np.isfinite(run.trace.moments.mean))


def test_a_torch_step_and_a_posteriors_transform_pass(tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # tensordict, once per posteriors state class
        from posteriors.sgmcmc import sgld

    for sampler, params in [(torch_step(sgld_step), {"step_size": 0.02}),
                            (posteriors_transform(sgld.build, step_size="lr"), {"step_size": 0.02})]:
        verdict = validate(sampler, params, targets="icg", out=tmp_path, **QUIET).verdict
        assert verdict.outcome is Outcome.PASSED, verdict.summary()


def test_torch_runs_are_reproducible_and_leave_torchs_generator_alone():
    torch.manual_seed(123)
    before = torch.random.get_rng_state()
    runs = [running.run(torch_optimizer(SGLD), "icg", params={"lr": 0.01}, num_chains=4, num_steps=30, seed=7,
                        backend="batched") for _ in range(2)]
    np.testing.assert_array_equal(runs[0].trace.moments.mean, runs[1].trace.moments.mean)
    assert torch.equal(before, torch.random.get_rng_state())
    other = running.run(torch_optimizer(SGLD), "icg", params={"lr": 0.01}, num_chains=4, num_steps=30, seed=8,
                        backend="batched")
    assert not np.array_equal(runs[0].trace.moments.mean, other.trace.moments.mean)


def test_the_wrappers_import_without_torch_and_a_torch_wrapper_names_the_extra():
    code = "import sys, sgbench.bench.wrappers; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
    code = ("import sys; sys.modules['torch'] = None  # as if absent\n"
            "from sgbench.bench.wrappers import torch_optimizer\n"
            "try:\n    torch_optimizer(object)\nexcept ImportError as error:\n    print(error)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == ("torch_optimizer needs torch, which sgmcmc-bench installs with its torch extra: "
                           "python -m pip install 'sgmcmc-bench[torch]'"), out


BROKEN_FORMS = '''
import math, torch
import jax
from sgbench.bench.wrappers import jax_step, torch_optimizer, torch_step


def raises(generator, x, grad, step_size):
    raise RuntimeError("my kernel is not finished")


def wrong_shape(generator, x, grad, step_size):
    return x[..., :-1]


def wrong_dtype(generator, x, grad, step_size):
    return (x + step_size * grad(x)).float()


def nan_init(x, step_size):
    return x * float("nan")


def fine(generator, x, grad, step_size):
    return x + step_size * grad(x) + math.sqrt(2 * step_size) * torch.randn(x.shape, generator=generator,
                                                                            dtype=x.dtype)


class Raising(torch.optim.Optimizer):
    def __init__(self, params, step_size):
        super().__init__(params, {"lr": step_size})

    def step(self, closure=None):
        raise ValueError("no step here")


def untraceable(key, x, grad, step_size):
    if x[0] > 0:
        x = -x
    return x + step_size * grad(x)


RAISES = torch_step(raises)
SHAPE = torch_step(wrong_shape)
DTYPE = torch_step(wrong_dtype)
NAN = torch_step(fine, init=nan_init)
OPTIMIZER = torch_optimizer(Raising)
UNTRACEABLE = jax_step(untraceable)
'''
BROKEN = {  # object: (what the line says, the author's function it names)
    "RAISES": ("its step raised RuntimeError: my kernel is not finished", "raises"),
    "SHAPE": ("returns state.position of shape (3,), where the state it was given has (4,)", "wrong_shape"),
    "DTYPE": ("returns state.position of dtype float32, where the state it was given has float64", "wrong_dtype"),
    "NAN": ("its init gives a non-finite start", "nan_init"),
    "OPTIMIZER": ("its step raised ValueError: no step here", "step"),
    "UNTRACEABLE": ("its step cannot be traced by jax.jit", "untraceable"),
}


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_a_broken_wrapped_sampler_is_error_through_the_command_naming_the_authors_function(name, tmp_path):
    (tmp_path / "broken_forms.py").write_text(BROKEN_FORMS)
    done = subprocess.run([str(Path(sys.executable).with_name("sgbench")), "validate", f"broken_forms:{name}",
                           "--param", "step_size=0.02", "--targets", "icg", "--out", str(tmp_path / "out")],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)
    words, function = BROKEN[name]
    line = next((row for row in done.stdout.splitlines() if ": ERROR: on icg: " in row), "")
    assert done.returncode == 4, done.stdout[-2000:] + done.stderr[-2000:]
    assert words in line and "broken_forms.py:" in line and f", in {function})" in line, line
    assert "Traceback" not in done.stdout + done.stderr


def test_a_posteriors_style_state_is_read_as_an_attribute_or_a_key_and_anything_else_is_error(tmp_path):
    class Transform:
        def __init__(self, init, update):
            self.init, self.update = init, update

    def as_dict(log_posterior, lr):
        return Transform(lambda params: {"params": params}, lambda state, batch: (state, None))

    def as_list(log_posterior, lr):
        return Transform(lambda params: [params], lambda state, batch: (state, None))

    run = running.run(posteriors_transform(as_dict), "icg", params={"lr": 0.01}, num_chains=2, num_steps=3,
                      backend="batched")
    assert np.all(np.isfinite(run.trace.moments.mean))
    verdict = validate(posteriors_transform(as_list), {"lr": 0.01}, targets="icg", out=tmp_path, **QUIET).verdict
    assert verdict.outcome is Outcome.ERROR and "its state is a list without params: give posteriors_transform(" \
        in verdict.reasons["icg"] and "in as_list)" in verdict.reasons["icg"], verdict.summary()


def test_the_page_records_the_seed_of_a_wrapped_run(tmp_path):
    validation = validate(torch_step(sgld_step), {"step_size": 0.02}, targets="icg", seed=11, num_chains=16,
                          num_steps=200, budget="1s", out=tmp_path, **QUIET)
    from sgbench.bench.validate import page

    assert validation.seed == 11 and "; seed 11. " in page.write(validation).read_text()
