"""docs/quickstart.md as a new user runs it, in a folder outside the repository: every Python block in order in
a fresh process (JAX's 64-bit mode off, as in the user's own code), the first block saved as ``my_sgld.py`` and run
through the command the page gives, the page's pytest file passing for the correct sampler and failing with the
verdict's first line for the wrong one, and the CI workflow the page shows equal to the template file. A block that
is not run says why (``<!-- not run: REASON -->`` before it)."""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tests._doc_blocks import BLOCK

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "quickstart.md"
SGBENCH = Path(sys.executable).with_name("sgbench")


def _blocks() -> list[dict]:
    return [match.groupdict() for match in BLOCK.finditer(PAGE.read_text())]


def _run(command, folder: Path, timeout: int = 900) -> subprocess.CompletedProcess:
    return subprocess.run(command, cwd=folder, capture_output=True, text=True, timeout=timeout)


def test_every_block_is_run_or_says_why_not():
    for block in _blocks():
        runnable = block["language"] == "python" or block["code"].startswith("sgbench validate")
        assert runnable or block["why"], block["code"][:80]


@pytest.mark.long
def test_the_quickstart_runs_as_written(tmp_path):
    python = [b["code"] for b in _blocks() if b["language"] == "python" and not b["why"]]
    done = _run([sys.executable, "-c", "\n".join(python) + "\nprint('TEST_FILE', repr(TEST_FILE))"], tmp_path)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    printed = done.stdout.splitlines()
    assert printed[0] == "PASSED" and "agrees with exact truth" in printed[1], printed
    assert any(line.startswith("sgld_too_noisy: FAILED: on icg: ") for line in printed), printed
    assert any(line.startswith("sgld_untraceable: its step cannot be traced by jax.jit") for line in printed)
    assert "SGLD: PASSED on icg" in printed, printed  # the torch optimizer of "Other forms"
    test_file = eval(printed[-1].removeprefix("TEST_FILE "))

    (tmp_path / "my_sgld.py").write_text(python[0])
    command = next(b["code"] for b in _blocks() if b["code"].startswith("sgbench validate")).strip()
    done = _run([str(SGBENCH), *shlex.split(command)[1:], "--out", str(tmp_path / "out")], tmp_path)
    assert done.returncode == 0 and "sgld: PASSED on icg" in done.stdout, done.stdout[-2000:] + done.stderr[-2000:]

    (tmp_path / "test_my_sgld.py").write_text(test_file)
    done = _run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_my_sgld.py"], tmp_path)
    assert done.returncode == 0, done.stdout[-3000:]
    wrong = python[0].replace("jnp.sqrt(2 * step_size)", "jnp.sqrt(2.3 * step_size)").replace("def sgld(",
                                                                                              "def sgld_too_noisy(")
    (tmp_path / "my_sgld.py").write_text(wrong.replace("jax_step(sgld)", "jax_step(sgld_too_noisy)"))
    done = _run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_my_sgld.py"], tmp_path)
    assert done.returncode == 1, done.stdout[-3000:]
    assert "\nsgld_too_noisy: FAILED: on icg: sgld_too_noisy disagrees with exact truth" in done.stdout, done.stdout
    assert "Traceback" not in done.stdout


def test_the_ci_workflow_shown_is_the_template():
    shown = next(b["code"] for b in _blocks() if b["language"] == "yaml")
    assert shown == (ROOT / "docs" / "templates" / "validate-sampler.yml").read_text()
