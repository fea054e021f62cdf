"""JAX's persistent compilation cache, for commands that compile the same programs run after run."""

from __future__ import annotations

import os
from pathlib import Path


def enable_compilation_cache(folder=None) -> Path:
    """Keep JAX's compiled programs on disk: the runs of a reproduction compile the same programs for each seed or
    resumed cell, and a cached one loads in milliseconds. Every program compiled afterwards is kept, however short its
    compilation. JAX opens a cache folder once and keeps it; the cache is reset here when the folder changes, so that a
    call naming another folder takes effect.

    Args:
        folder: the cache folder (made if missing); None: the folder JAX has already (``JAX_COMPILATION_CACHE_DIR``
            or an earlier call), else ``$XDG_CACHE_HOME/sgmcmc-bench/jax``.

    Returns:
        the folder.
    """
    import jax
    from jax.experimental.compilation_cache import compilation_cache

    if folder is None:
        base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
        folder = jax.config.jax_compilation_cache_dir or Path(base) / "sgmcmc-bench" / "jax"
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    if jax.config.jax_compilation_cache_dir != str(folder):
        jax.config.update("jax_compilation_cache_dir", str(folder))
        compilation_cache.reset_cache()
    return folder
