"""Sweeps: run suites, the sweep over a grid, the SQLite results store, the HTML report."""
