"""The persistent compilation cache: ``enable_compilation_cache`` takes effect after a first compilation and when it
names another folder, keeps a folder JAX has already, and a second process loads what the first compiled."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import jax
import jax.numpy as jnp
from jax.experimental.compilation_cache import compilation_cache

from sgbench.bench.running.compilation_cache import enable_compilation_cache

# Compiles once before enabling the cache, then a program unique to the test, and prints the cache events it saw.
_PROCESS = """
import json, sys
import jax, jax.numpy as jnp
from sgbench.bench.running.compilation_cache import enable_compilation_cache
events = []
jax.monitoring.register_event_listener(lambda name, **kwargs: events.append(name))
jax.jit(lambda x: x * 2.0)(jnp.ones(3)).block_until_ready()
enable_compilation_cache(sys.argv[1])
jax.jit(lambda x: jnp.cos(x) * 1.234567)(jnp.ones(7)).block_until_ready()
print(json.dumps([name.rsplit("/", 1)[-1] for name in events if "compilation_cache" in name]))
"""


def _cache_events(folder: Path) -> list[str]:
    environment = {name: value for name, value in os.environ.items() if name != "JAX_COMPILATION_CACHE_DIR"}
    done = subprocess.run([sys.executable, "-c", _PROCESS, str(folder)], capture_output=True, text=True, check=True,
                          cwd=Path(__file__).resolve().parents[1], env=environment)
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_late_enabled_cache_is_written_then_loaded_by_the_next_process(tmp_path):
    folder = tmp_path / "cache"
    first = _cache_events(folder)
    assert "cache_misses" in first and "cache_hits" not in first
    assert any(entry.name.startswith("jit__lambda") for entry in folder.iterdir())
    second = _cache_events(folder)
    assert "cache_hits" in second and "cache_misses" not in second


def test_the_default_folder_follows_xdg_cache_home_and_a_new_folder_takes_effect(tmp_path, monkeypatch):
    saved = jax.config.jax_compilation_cache_dir
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    try:
        enable_compilation_cache(tmp_path / "first")  # JAX opens this folder at the next compilation
        jax.jit(lambda x: jnp.tan(x) + 1.357)(jnp.ones(6)).block_until_ready()
        jax.config.update("jax_compilation_cache_dir", None)
        folder = enable_compilation_cache()
        assert folder == tmp_path / "sgmcmc-bench" / "jax"
        assert enable_compilation_cache() == folder  # a folder JAX has already is kept
        jax.jit(lambda x: jnp.tan(x) - 2.468)(jnp.ones(6)).block_until_ready()
        assert any(entry.name.startswith("jit__lambda") for entry in folder.iterdir())
    finally:
        jax.config.update("jax_compilation_cache_dir", saved)
        compilation_cache.reset_cache()
