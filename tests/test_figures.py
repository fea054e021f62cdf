"""The suite's one plotting setup (``sgbench.base.figures``, issue 43): drawing a figure leaves the caller's
matplotlib as it was. In a fresh interpreter whose backend is set to one that is not Agg, the suite's figure
functions leave the backend as set, never import ``matplotlib.pyplot`` themselves, and register no figure with
pyplot; a figure handed back to the caller is a plain ``matplotlib.figure.Figure``. No module of the package calls
``matplotlib.use`` or imports pyplot (checked in the source, with each forbidden form planted in a snippet)."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE_FOLDERS = ("base", "bench", "samplers", "targets", "reference")
CALLERS_BACKEND = "svg"  # any backend but Agg: what the old ``matplotlib.use("Agg")`` switched away from

# Modules that import neither pyplot nor a library that does (ArviZ imports pyplot when imported).
WITHOUT_PYPLOT = """
import json, sys
from types import SimpleNamespace
import matplotlib
import numpy as np
matplotlib.rcParams["backend"] = sys.argv[1]  # the caller's backend
from sgbench.bench.html.figures import error_bar_figure
from sgbench.bench.reproduce import mile_table5
from sgbench.bench.tune.page import halving_figure
record = lambda arm, rnd, discrepancy: SimpleNamespace(arm=arm, round=rnd, discrepancy=discrepancy, charged=10.0)
tuning = SimpleNamespace(metric="ksd", winner=1, eta=2, budget=SimpleNamespace(unit="gradient evaluations"),
                         records=[record(0, 0, 0.5), record(1, 0, 0.3), record(1, 1, 0.2)])
pngs = [error_bar_figure({"a": (["x"], [np.array([0.1, 0.2])], [np.array([0.01, 0.02])])}, "t"),
        mile_table5.figure({"naive": {"nan": 3, "frozen": 1}, "mile": {"nan": 0, "frozen": 0}}, 12),
        halving_figure(tuning)]
pyplot = "matplotlib.pyplot" in sys.modules  # before get_backend, which would import it to resolve an unset backend
print(json.dumps({"pyplot": pyplot, "backend": matplotlib.get_backend(),
                  "pngs": [png.startswith(bytes([0x89]) + b"PNG") for png in pngs]}))
"""

# Modules that load ArviZ (so pyplot is imported): the backend stays, and pyplot holds none of the figures.
WITH_PYPLOT_LOADED = """
import json, sys, tempfile
from pathlib import Path
import matplotlib
import numpy as np
import pandas as pd
matplotlib.rcParams["backend"] = sys.argv[1]  # the caller's backend
from matplotlib.figure import Figure
from sgbench.bench.perf import speed
from sgbench.bench.reproduce import sglrw_table1
from sgbench.reference import nuts_speed
index = pd.MultiIndex.from_product([[0.1, 0.01], [10, 100]], names=["step_size", "B"])
table = pd.DataFrame({"sgld": [1.0, 0.8, 0.5, 0.4], "sgld_paper": [1.1, 0.9, 0.6, 0.5]}, index=index)
table.attrs["samplers"] = ["sgld"]
with tempfile.TemporaryDirectory() as folder:
    returned = sglrw_table1.plot(table, Path(folder) / "table1.png")
    nuts = nuts_speed.plot({"numpyro": {"min": 10.0, "median": 20.0}}, "t", Path(folder) / "nuts.png")
    saved = (Path(folder) / "table1.png").is_file() and nuts.is_file()
png = speed.figure(pd.DataFrame({"JAX µs": [1.0], "random numbers µs": [0.2]}, index=["sgld"]),
                   pd.DataFrame({"µs per chain-step": [1.0]}, index=["sgbench"]))
import matplotlib.pyplot as plt
print(json.dumps({"backend": matplotlib.get_backend(), "figure": type(returned) is Figure, "saved": saved,
                  "png": png.startswith(bytes([0x89]) + b"PNG"), "pyplot_figures": plt.get_fignums()}))
"""


def _fresh_python(code: str) -> dict:
    """What ``code`` prints last (JSON), run in a fresh interpreter whose backend it sets to ``CALLERS_BACKEND``."""
    done = subprocess.run([sys.executable, "-c", code, CALLERS_BACKEND], capture_output=True, text=True, timeout=600,
                          cwd=ROOT / "tests")
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_figures_leave_the_callers_backend_and_never_import_pyplot():
    seen = _fresh_python(WITHOUT_PYPLOT)
    assert seen == {"pyplot": False, "backend": CALLERS_BACKEND, "pngs": [True, True, True]}


def test_figures_are_not_pyplot_figures_where_pyplot_is_loaded():
    seen = _fresh_python(WITH_PYPLOT_LOADED)
    assert seen == {"backend": CALLERS_BACKEND, "figure": True, "saved": True, "png": True, "pyplot_figures": []}


def global_matplotlib_setup(source: str) -> list[int]:
    """Lines of ``source`` that import ``matplotlib.pyplot`` (in any form) or call ``matplotlib.use``."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import) and any(alias.name.startswith("matplotlib.pyplot") for alias in node.names):
            lines.append(node.lineno)
        elif isinstance(node, ast.ImportFrom) and node.module and (
                node.module.startswith("matplotlib.pyplot")
                or node.module == "matplotlib" and any(alias.name in ("pyplot", "use") for alias in node.names)):
            lines.append(node.lineno)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "use" and (
                ast.unparse(node.func.value) in ("matplotlib", "mpl")):
            lines.append(node.lineno)
    return lines


@pytest.mark.parametrize("planted", ["import matplotlib.pyplot as plt", "import matplotlib.pyplot",
                                     "from matplotlib import pyplot", "from matplotlib.pyplot import subplots",
                                     "from matplotlib import use", "def f():\n    import matplotlib\n\n"
                                     "    matplotlib.use('Agg', force=False)"])
def test_the_source_check_finds_each_form(planted):
    assert global_matplotlib_setup(planted) != []
    assert global_matplotlib_setup("from matplotlib.figure import Figure\nimport matplotlib.ticker") == []


def test_no_package_module_imports_pyplot_or_calls_matplotlib_use():
    modules = [path for folder in PACKAGE_FOLDERS for path in (ROOT / folder).rglob("*.py")]
    assert len(modules) > 150
    found = [f"{path.relative_to(ROOT)}:{line}" for path in modules
             for line in global_matplotlib_setup(path.read_text())]
    assert found == []
