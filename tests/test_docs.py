"""The documentation: ``mkdocs build --strict`` succeeds (no warning: broken links and anchors, docstrings
mkdocstrings cannot render), the samplers page lists every registered sampler from the registry, the API
pages hold every module, and the README stays short with its opening commands. Deterministic."""

from __future__ import annotations

import dataclasses
import html
import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from sgbench import samplers

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """The site built from this tree with ``mkdocs build --strict`` (about 5 s)."""
    out = tmp_path_factory.mktemp("site")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1",
           "PYTHONPATH": os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])}
    result = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(ROOT / "mkdocs.yml"),
                             "-d", str(out)], cwd=ROOT, env=env, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    return out


def load_hook(name: str):
    spec = importlib.util.spec_from_file_location(f"docs_hook_{name}", ROOT / "docs" / "hooks" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def registered_table(page: str) -> str:
    """The HTML of the samplers page's section "Every registered sampler" (the generated tables)."""
    start = page.index('id="every-registered-sampler"')
    return page[start:page.index("<h2", start)]


def test_the_site_builds_strictly_and_lists_every_registered_sampler(site):
    section = registered_table((site / "samplers" / "index.html").read_text())
    names = samplers.names()
    assert names
    for name in names:
        # one row in each generated table: the benchmark settings and the hyperparameters
        assert section.count(f"<td><code>{name}</code></td>") == 2, name
        assert html.escape(samplers.get(name).citation, quote=False) in section, name


def test_the_samplers_table_comes_from_the_registry():
    """A sampler registered now is in the table, with its gate's icg4 step size; unregistered, it is not."""
    hook = load_hook("samplers_table")
    base = samplers.get("sgld")
    settings = dataclasses.replace(base.benchmarks,
                                   gate=dataclasses.replace(base.benchmarks.gate, icg4={"step_size": 0.0123}))
    samplers.register(dataclasses.replace(base, name="docs_throwaway", citation="a throwaway", benchmarks=settings))
    try:
        table = hook.table()
        row = next(line for line in table.splitlines() if line.startswith("| `docs_throwaway` | a throwaway"))
        assert "`step_size=0.0123`" in row
    finally:
        samplers.unregister("docs_throwaway")
    assert "docs_throwaway" not in hook.table()


def test_every_module_has_an_api_section(site):
    for package in load_hook("api_pages").PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            if "asv" in path.relative_to(ROOT).parts:  # the asv suite: asv imports it, not a package
                continue
            parts = path.relative_to(ROOT).with_suffix("").parts
            module = ".".join(("sgbench", *(parts[:-1] if parts[-1] == "__init__" else parts)))
            page_package = ".".join(("sgbench", *parts[:-1]))
            page = (site / "api" / page_package / "index.html").read_text()
            assert f'id="{module}"' in page, (module, page_package)


def test_readme_is_short_and_keeps_its_opening_commands():
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= 220
    first_block = re.search(r"```bash\n(.*?)```", readme, re.DOTALL).group(1)
    assert first_block.splitlines() == [
        "python3 -m venv .venv && . .venv/bin/activate && python -m pip install -e . && sgbench run",
        'python3 -m venv .venv && . .venv/bin/activate && python -m pip install -e ".[test]" && python -m pytest']
    for link in re.findall(r"\]\((docs/[^)#]+)", readme):
        assert (ROOT / link).is_file(), link


def test_the_readme_example_runs_as_written():
    """The README's Python example, in a fresh process (JAX's 64-bit mode off, as in a user's own code)."""
    readme = (ROOT / "README.md").read_text()
    example = re.search(r"## A short example\n\n```python\n(.*?)```", readme, re.DOTALL).group(1)
    done = subprocess.run([sys.executable, "-c", example], capture_output=True, text=True, timeout=600,
                          cwd=ROOT / "tests")
    assert done.returncode == 0, done.stderr[-3000:]


def test_the_validate_manual_example_runs_as_written():
    """docs/gates.md's Python example (``validate`` with a budget), in a fresh process; it prints the outcome and
    the cost of the one target."""
    page = (ROOT / "docs" / "gates.md").read_text()
    example = re.search(r"### In Python\n\n```python\n(.*?)```", page, re.DOTALL).group(1)
    done = subprocess.run([sys.executable, "-c", example], capture_output=True, text=True, timeout=600,
                          cwd=ROOT / "tests")
    assert done.returncode == 0, done.stderr[-3000:]
    first, second = done.stdout.splitlines()[:2]
    assert first.split()[0] in ("PASSED", "INCONCLUSIVE") and "blackjax:sgld" in first, done.stdout
    seconds, evals = eval(second)  # the (seconds, gradient evaluations) tuple it prints
    assert seconds > 0 and evals >= 256 * 8000, done.stdout
