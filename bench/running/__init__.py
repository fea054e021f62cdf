"""Running chains: the configuration, the JAX and NumPy drivers, results, scoring, traces."""
