"""The base layer: what targets, samplers and everything above them share, importing none of them.

- ``sgbench.base.arguments``: input validation that names the parameter and the accepted range;
- ``sgbench.base.registry``: registries of named objects (samplers, targets, noise models);
- ``sgbench.base.variates``: the laws of random variates and the ``Variate`` spec; ``sgbench.base.draws`` draws them
  in NumPy or JAX, ``sgbench.base.philox`` is the JAX float stream;
- ``sgbench.base.backend``: the array namespace of an input, so one formula serves NumPy and JAX;
- ``sgbench.base.provenance``: the code version, machine, library versions and time recorded with results,
  computed there alone;
- ``sgbench.base.figures``: the one plotting setup, matplotlib figures and their PNG bytes without pyplot.
"""
