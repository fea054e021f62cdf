"""The base layer: what targets, samplers and everything above them share, importing none of them.

- ``base.arguments``: input validation that names the parameter and the accepted range;
- ``base.registry``: registries of named objects (samplers, targets, noise models);
- ``base.variates``: the laws of random variates and the ``Variate`` spec; ``base.draws`` draws them
  in NumPy or JAX, ``base.philox`` is the JAX float stream;
- ``base.backend``: the array namespace of an input, so one formula serves NumPy and JAX;
- ``base.provenance``: the machine and library versions stored with results.
"""
