"""What the torch wrappers share: all chains in one float64 tensor of shape (chains, dim), stepped eagerly by the
batched driver (``sgbench.bench.running.batched_driver``; the NumPy driver runs them one chain at a time, shape
(dim,)), and the check that a step treats its chains independently.

A torch update written for one parameter tensor maps every chain on its own when it is elementwise (SGLD, pSGLD,
SGHMC as torch optimizers are), so stacking the chains as rows of one tensor runs them all at once. One that is not
(a global gradient norm, a thermostat averaged over the tensor) would couple the chains silently. :func:`coupling`
finds it before the run: three steps from the same start and seeds, under two gradients that differ only in the
rows other than the first (by a factor of a thousand); the first row must come out bit for bit the same. A coupling
that these three steps do not show (a threshold beyond their gradients) is not found.
"""

from __future__ import annotations

from collections.abc import Callable

import jax
import numpy as np

from sgbench.bench.running.sampler_fault import ContractError

PROBE_STEPS = 3


def torch_or_say(wrapper: str):
    """The ``torch`` module; ImportError naming the extra that installs it where it is absent."""
    try:
        import torch
    except ImportError as missing:
        raise ImportError(f"{wrapper} needs torch, which sgmcmc-bench installs with its torch extra: "
                          "python -m pip install 'sgmcmc-bench[torch]'") from missing
    return torch


class Box:
    """The author's torch objects (an optimizer, a state of tensors) inside a chain's State: a pytree with no
    leaves, all boxes one structure, so the suite's drivers carry it unseen."""

    def __init__(self, content):
        self.content = content

    def __eq__(self, other):
        return isinstance(other, Box)

    def __hash__(self):
        return hash(Box)


jax.tree_util.register_static(Box)


class TensorGradient:
    """The step's oracle for torch code: its gradient at a position tensor, as a float64 tensor, counting the calls."""

    def __init__(self, grad_fn):
        self.grad_fn, self.calls = grad_fn, 0

    def __call__(self, position):
        import torch

        self.calls += 1
        return torch.from_numpy(np.array(self.grad_fn(position.detach().numpy()), dtype=np.float64))


class ProbeDensity:
    """A log density of a (chains, dim) tensor, summed over the chains, and its gradient: the standard normal's in
    every row, or (``other_rows``) in the rows after the first one a thousand times as steep, off centre (so that a
    norm over the tensor, or a threshold on it, sees the difference)."""

    def __init__(self, other_rows: bool):
        self.other_rows = other_rows

    def _rows(self, position):
        """1 in the rows after the first where ``other_rows``, else 0 (a constant of the position's shape)."""
        import torch

        rows = torch.zeros_like(position.detach())
        if self.other_rows:
            rows[1:] = 1.0
        return rows

    def __call__(self, position):
        rows = self._rows(position)
        return ((1 - rows) * (-0.5 * position**2) + rows * (-500.0 * position**2 + 10.0 * position)).sum()

    def gradient(self, position):
        rows = self._rows(position)
        return (1 - rows) * -position + rows * (-1000.0 * position + 10.0)


def coupling(run: Callable, x: np.ndarray, how: str, where: str) -> None:
    """ContractError where ``run(x, density, steps) -> position tensor`` (the author's update, fresh from ``x``, seeded
    the same on each call, on a :class:`ProbeDensity`) gives the first chain another path when only the other chains'
    density changes (module docstring); nothing for one chain. ``how``: what the author can do instead, in words."""
    import torch

    if np.ndim(x) < 2 or np.shape(x)[0] < 2:
        return
    one, other = run(x, ProbeDensity(False), PROBE_STEPS), run(x, ProbeDensity(True), PROBE_STEPS)
    if not torch.equal(one[0], other[0]):
        raise ContractError("its update of one chain depends on the other chains' gradients (a norm or an average "
                            "over the whole tensor?), so the chains cannot share one tensor: " + how, where)
