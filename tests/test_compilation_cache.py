"""The persistent compilation cache: ``enable_compilation_cache`` takes effect after a first compilation and when it
names another folder, a second process loads what the first compiled, and the test run itself shares one cache
(``tests/conftest.py``)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import jax
import jax.numpy as jnp
import pytest
from jax.experimental.compilation_cache import compilation_cache

from bench.running.compilation_cache import enable_compilation_cache

# Compiles before enabling the cache (which JAX would otherwise never use in this process), then a program unique to
# the test, and prints the cache events it saw.
_PROCESS = """
import json, sys
import jax, jax.numpy as jnp
from bench.running.compilation_cache import enable_compilation_cache
events = []
jax.monitoring.register_event_listener(lambda name, **kwargs: events.append(name))
jax.jit(lambda x: x * 2.0)(jnp.ones(3)).block_until_ready()
enable_compilation_cache(sys.argv[1])
jax.jit(lambda x: jnp.cos(x) * 1.234567)(jnp.ones(7)).block_until_ready()
print(json.dumps([name.rsplit("/", 1)[-1] for name in events if "compilation_cache" in name]))
"""


def _cache_events(folder: Path) -> list[str]:
    done = subprocess.run([sys.executable, "-c", _PROCESS, str(folder)], capture_output=True, text=True, check=True,
                          cwd=Path(__file__).resolve().parents[1])
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_late_enabled_cache_is_written_then_loaded_by_the_next_process(tmp_path):
    folder = tmp_path / "cache"
    first = _cache_events(folder)
    assert "cache_misses" in first and "cache_hits" not in first
    assert any(entry.name.startswith("jit__lambda") for entry in folder.iterdir())
    second = _cache_events(folder)
    assert "cache_hits" in second and "cache_misses" not in second


def test_the_test_run_compiles_into_its_own_cache(one_compilation_cache_for_the_run, tmp_path_factory):
    if one_compilation_cache_for_the_run is None:
        pytest.skip("a run that times benchmarks compiles without a cache")
    folder = Path(jax.config.jax_compilation_cache_dir)
    assert folder == one_compilation_cache_for_the_run
    root = tmp_path_factory.getbasetemp()
    assert folder.name == "xla-cache" and folder.parent in (root, root.parent)
    before = set(folder.iterdir())
    jax.jit(lambda x: jnp.sin(x) + 7.654321)(jnp.ones(5)).block_until_ready()
    assert any(entry.name.startswith("jit__lambda") for entry in set(folder.iterdir()) - before)


def test_the_default_folder_follows_xdg_cache_home_and_a_new_folder_takes_effect(tmp_path, monkeypatch):
    saved = jax.config.jax_compilation_cache_dir
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    try:
        folder = enable_compilation_cache()
        assert folder == tmp_path / "sgmcmc-bench" / "jax"
        jax.jit(lambda x: jnp.tan(x) - 2.468)(jnp.ones(6)).block_until_ready()
        assert any(entry.name.startswith("jit__lambda") for entry in folder.iterdir())
    finally:
        if saved is None:
            jax.config.update("jax_compilation_cache_dir", None)
            compilation_cache.reset_cache()
        else:
            enable_compilation_cache(saved)
