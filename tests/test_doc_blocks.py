"""The Python blocks of the documentation's pages run as written: each page's blocks (those of ``OWN_TESTS`` aside,
which their own tests run) in order, as one program in a fresh process, in a folder outside the repository,
with JAX's 64-bit mode off unless the code turns it on. A block that is not run says why on the line before it
(``<!-- not run: REASON -->``), and no Python block escapes the reading of the blocks. The pages of ``LONG`` (a
minute or near it each) run under the ``integration`` marker, which keeps the default run within its 20 minutes
on 2 cores; ``python -m pytest -m integration tests/test_doc_blocks.py`` runs them."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests._doc_blocks import blocks, runnable_python

DOCS = Path(__file__).resolve().parents[1] / "docs"
PAGES = sorted(page.name for page in DOCS.glob("*.md") if any(b["language"] == "python" for b in blocks(page)))
OWN_TESTS = {"quickstart.md": "tests/test_quickstart.py", "gates.md": "tests/test_docs.py (and checks its output)"}
RUN = [name for name in PAGES if name not in OWN_TESTS and runnable_python(DOCS / name)]
LONG = {  # seconds of the page's run, measured on 2 cores shared with two other jobs (the others: 5 to 27 s)
    "defects_blackjax.md": 55,  # 3 x 4096 blackjax SGHMC chains of 3000 calls
    "samplers.md": 38,  # the PX, SMILE, cSGLD and SGLD-CV examples
    "tuning.md": 37,  # MAMBA on 12 arms, mostly compilation
}
PYTHON_FENCE = re.compile(r"^[ \t]*```[ \t]*py", re.MULTILINE)  # any opening of a Python fence, however spelt
TRACEBACK_LINE = re.compile(r'File "<string>", line (\d+)')


def test_every_python_block_is_run_or_says_why_not():
    """Every page's Python blocks are read as blocks, each marker belongs to a block and gives a reason."""
    problems = []
    for page in sorted(DOCS.glob("*.md")):
        text, found = page.read_text(), blocks(page)
        python = [b for b in found if b["language"] == "python"]
        if len(PYTHON_FENCE.findall(text)) != len(python):
            problems.append(f"{page.name}: {len(PYTHON_FENCE.findall(text))} Python fences, {len(python)} read")
        if text.count("<!-- not run:") != sum(1 for b in found if b["why"] is not None):
            problems.append(f"{page.name}: a `<!-- not run: REASON -->` marks no block (not directly before a "
                            "fence, or a '>' in its reason)")
        problems += [f"{page.name}:{b['line']}: an empty reason" for b in python if b["why"] is not None
                     and not b["why"].strip()]
    assert not problems, problems


def where(page: str, python: list[dict], stderr: str) -> str:
    """The page's line of the program's innermost line in ``stderr``'s traceback (empty if none is named)."""
    lines = TRACEBACK_LINE.findall(stderr)
    if not lines:
        return ""
    wanted, start = int(lines[-1]), 1
    for block in python:
        length = block["code"].count("\n") + 1  # its lines and the newline that joins it to the next
        if wanted < start + length:
            return f" (docs/{page}:{block['line'] + wanted - start})"
        start += length
    return ""


@pytest.mark.parametrize("page", [pytest.param(name, marks=pytest.mark.integration) if name in LONG else name
                                  for name in RUN])
def test_the_pages_python_blocks_run_as_written(page, tmp_path):
    """The page's run blocks, in order in one fresh process, exit with status 0."""
    python = runnable_python(DOCS / page)
    env = {key: value for key, value in os.environ.items() if key != "JAX_ENABLE_X64"}
    done = subprocess.run([sys.executable, "-c", "\n".join(b["code"] for b in python)], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"docs/{page} failed{where(page, python, done.stderr)}:\n{done.stderr[-3000:]}"
