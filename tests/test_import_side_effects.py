"""Importing the suite changes nothing in the importing process (issue 43): in a fresh interpreter, importing every
module of ``sgbench`` leaves JAX's 64-bit mode off, and leaves NumPy's print options and error handling, the
environment variables, the root logger and matplotlib's backend as they were. The libraries the suite imports are
imported before the first look, so what is measured is the suite's own doing (some of them change the process when
imported: scikit-learn sets ``KMP_DUPLICATE_LIB_OK``, torch and SciPy add warning filters, the latter depending on
the order of imports, so the warning filters are checked in the source instead: no module of the suite changes
process-wide settings in its top-level code, outside a function or a ``warnings.catch_warnings()`` block). No module
hides its
imports behind a module-level ``__getattr__`` (PEP 562). The runs that need float64 scope it themselves
(``sgbench.base.float64``): a float64 run made from such a process gives the same numbers as the ``sgbench`` command,
and the caller's mode is back afterwards."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

STATE = """
import json, logging, os
import jax, matplotlib, numpy as np
def state():
    return {"x64": bool(jax.config.jax_enable_x64),
            "print": repr(sorted(np.get_printoptions().items())), "errors": repr(sorted(np.geterr().items())),
            "environ": sorted(os.environ.items()), "handlers": len(logging.getLogger().handlers),
            "backend": repr(matplotlib.rcParams._get("backend"))}  # without resolving it
"""

MODULES = """
import importlib, pkgutil, sgbench
names = [m.name for m in pkgutil.walk_packages(sgbench.__path__, "sgbench.") if not m.name.endswith(".__main__")]
"""

DEPENDENCIES = MODULES + """
import json, sys
bare = set(sys.modules)
for name in names:
    importlib.import_module(name)
print(json.dumps(sorted({m for m in sys.modules if m not in bare and not m.startswith("sgbench")})))
"""

IMPORT_ALL = STATE + """
import importlib, sys
for dependency in json.loads(sys.argv[1]):
    try:
        importlib.import_module(dependency)
    except Exception:  # a private submodule that imports only in its package's context
        pass
before = state()
""" + MODULES + """
for name in names:
    importlib.import_module(name)
print(json.dumps({"before": before, "after": state(), "modules": len(names)}))
"""

FLOAT64_RUN = """
import json, jax, numpy as np
from sgbench import targets
from sgbench.bench.running.run import run
target = targets.get("icg", dim=3, condition_number=10.0, noise="isotropic", noise_variance=2.0)
result = run("sgld", target, params={"step_size": 0.05}, num_chains=2, num_steps=50, seed=3, dtype="float64",
             keep_samples=True)
draws = np.asarray(target.sample(jax.random.key(0), 4))
print(json.dumps({"x64": bool(jax.config.jax_enable_x64), "dtype": str(np.asarray(result.samples).dtype),
                  "samples": np.asarray(result.samples).tolist(), "draws": draws.tolist(),
                  "draw_dtype": str(draws.dtype)}))
"""


def _python(code: str, x64: bool, *arguments: str):
    prefix = "import jax\njax.config.update('jax_enable_x64', True)\n" if x64 else ""
    done = subprocess.run([sys.executable, "-c", prefix + code, *arguments], capture_output=True, text=True,
                          timeout=600, cwd=ROOT / "tests")
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_importing_every_module_changes_no_global_state():
    dependencies = _python(DEPENDENCIES, x64=False)
    seen = _python(IMPORT_ALL, False, json.dumps(dependencies))
    assert seen["modules"] > 150
    assert seen["before"]["x64"] is False
    assert seen["after"] == seen["before"]


def test_a_float64_run_is_the_same_whatever_the_callers_mode():
    off, on = _python(FLOAT64_RUN, x64=False), _python(FLOAT64_RUN, x64=True)
    assert off["x64"] is False and on["x64"] is True  # the caller's mode, back after the run
    assert off["dtype"] == on["dtype"] == "float64" and off["draw_dtype"] == "float64"
    assert off["samples"] == on["samples"] and off["draws"] == on["draws"]


def test_no_module_has_a_module_level_getattr():
    modules = [path for folder in ("base", "bench", "samplers", "targets", "reference")
               for path in (ROOT / folder).rglob("*.py")]
    lazy = [str(path.relative_to(ROOT)) for path in modules
            if any(isinstance(node, ast.FunctionDef) and node.name == "__getattr__"
                   for node in ast.parse(path.read_text()).body)]
    assert lazy == []


PROCESS_WIDE = {("warnings", "filterwarnings"), ("warnings", "simplefilter"), ("config", "update"),
                ("matplotlib", "use"), ("np", "seterr"), ("np", "set_printoptions"), ("logging", "basicConfig"),
                ("os", "putenv"), ("environ", "update"), ("environ", "setdefault")}


def _top_level_settings(tree: ast.Module) -> list[int]:
    """Lines of top-level statements (not in a function, a class body's methods or ``warnings.catch_warnings()``)
    that call a process-wide setter or assign to ``os.environ``."""
    lines = []

    def visit(statements):
        for statement in statements:
            if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                continue
            if isinstance(statement, ast.With) and any("catch_warnings" in ast.unparse(item.context_expr)
                                                       for item in statement.items):
                continue
            for node in ast.walk(statement):
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                    owner = node.func.value
                    owner_name = owner.attr if isinstance(owner, ast.Attribute) else getattr(owner, "id", "")
                    if (owner_name, node.func.attr) in PROCESS_WIDE:
                        lines.append(node.lineno)
                if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store) and "environ" in ast.unparse(
                        node.value):
                    lines.append(node.lineno)

    visit(tree.body)
    return lines


def test_no_module_changes_process_wide_settings_in_its_top_level_code():
    modules = [path for folder in ("base", "bench", "samplers", "targets", "reference")
               for path in (ROOT / folder).rglob("*.py") if "asv" not in path.relative_to(ROOT).parts]
    found = [f"{path.relative_to(ROOT)}:{line}" for path in modules for line in _top_level_settings(
        ast.parse(path.read_text()))]
    assert found == []
    planted = ast.parse("import warnings, os\nwarnings.simplefilter('ignore')\nos.environ['A'] = '1'\n"
                        "with warnings.catch_warnings():\n    warnings.simplefilter('ignore')\n"
                        "def f():\n    warnings.simplefilter('ignore')\n")
    assert _top_level_settings(planted) == [2, 3]


ARVIZ_DIAGNOSTIC = MODULES + """
import sys
import numpy as np
for name in names:
    importlib.import_module(name)
print("arviz imported:", "arviz" in sys.modules)
from sgbench.reference.metrics.ess import ess
print("ess:", ess(np.random.default_rng(0).normal(size=(2, 50, 1))).round(1))
"""


def test_arviz_is_imported_only_for_a_diagnostic_and_its_announcement_is_not_shown(tmp_path):
    """ArviZ 0.23 prints a FutureWarning about its own refactor at import once a day (a stamp in the user's cache
    directory says it has): importing the suite does not import ArviZ, and computing a diagnostic does not show that
    message, which the first ``sgbench reproduce`` of a day printed before its own first line. A fresh cache
    directory makes ArviZ announce itself, as a bare ``import arviz`` there shows."""
    import os

    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path)}
    bare = subprocess.run([sys.executable, "-c", "import arviz"], capture_output=True, text=True, env=env, timeout=300)
    assert "ArviZ is undergoing" in bare.stderr, bare.stderr  # the premise: a new day for ArviZ
    for stamp in tmp_path.rglob("daily_warning"):
        stamp.unlink()
    done = subprocess.run([sys.executable, "-c", ARVIZ_DIAGNOSTIC], capture_output=True, text=True, env=env,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    assert "arviz imported: False" in done.stdout and "ess: [" in done.stdout, done.stdout
    assert "ArviZ is undergoing" not in done.stderr, done.stderr
