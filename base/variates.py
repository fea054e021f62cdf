"""Random variates as data: the laws a step can consume and the :class:`Variate` spec of one block.

A sampler's ``draw_spec`` and a target's gradient ``draw_spec`` are dicts of :class:`Variate`; the
drivers draw them (``sgbench.base.draws``) and hand the same draws to the reference and optimized steps.
"""

from __future__ import annotations

from typing import NamedTuple

LAWS = {
    "normal": "independent standard normal entries",
    "uniform": "independent uniform entries on [0, 1)",
    "exponential": "independent exponential entries with rate 1",
    "index": "independent uniform integers in [0, high): minibatch indices, drawn with replacement",
}


class Variate(NamedTuple):
    """A block of independent random numbers of one law (a key of ``LAWS``) and shape, per chain
    and step; ``high`` bounds the integers of the ``index`` law.

    Attributes:
        law: a key of ``LAWS``.
        shape: the block's shape, per chain and step.
        high: the exclusive upper bound of the ``index`` law's integers (0 for the other laws).
    """

    law: str
    shape: tuple[int, ...]
    high: int = 0
