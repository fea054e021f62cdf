"""How a run is carried out (chains, steps, thinning, seed, backend), validated on construction."""

from __future__ import annotations

import dataclasses

import numpy as np

from sgbench.base.arguments import integer_at_least, one_of

BACKENDS = ("jax", "numpy", "batched")
DTYPES = ("float32", "float64")
# Upper bounds, so that a typo is refused by name instead of failing deep inside a driver or the store.
MAX_SEED = 2**63 - 1  # a signed 64-bit integer: the results store's column, JAX's key
MAX_TOTAL_STEPS = 2**32  # steps per chain (burn-in included) and block_size: block indices become 32-bit keys
MAX_CHAINS = 2**20
MAX_CHECKPOINTS = 10_000  # each one is a host copy of the running moments


@dataclasses.dataclass(frozen=True)
class RunConfig:
    """``num_steps`` recorded steps after ``num_burnin`` discarded ones; every ``thin``-th recorded
    step enters the streaming moments (``num_steps // thin`` draws per chain). ``keep_samples`` keeps the draws
    of every ``keep_every``-th recorded step (0: the moments' steps, every ``thin``-th), so a run can average
    every step and keep a few of them. The reference
    (``numpy``) backend and the ``batched`` one (all chains in one eager step, for a sampler whose step is elementwise
    over chains) run in float64; ``jax`` in ``dtype`` with float64 statistics.
    ``block_size`` steps of random numbers are drawn at once by the JAX driver (None: the largest up to 1024 that
    divides the steps, :func:`dividing_block_size`, which ``bench.run`` shrinks to one that fits the JAX driver's
    memory limit; the config holds the size chosen, which ``dataclasses.replace`` keeps unless given
    ``block_size=None``).
    ``num_checkpoints`` > 0 records the running moments at about that many steps, log-spaced
    block boundaries ending at the last step (for the running-average curve b^2(t)).
    Sizes are bounded by ``MAX_CHAINS``, ``MAX_TOTAL_STEPS``, ``MAX_SEED`` and ``MAX_CHECKPOINTS``.
    """

    num_chains: int = 10
    num_steps: int = 10_000
    num_burnin: int = 0
    thin: int = 1
    seed: int = 0
    backend: str = "jax"
    dtype: str = "float64"
    keep_samples: bool = False
    keep_every: int = 0
    block_size: int | None = None
    num_checkpoints: int = 0

    def __post_init__(self):
        integer_at_least("num_chains", self.num_chains, 1, MAX_CHAINS)
        integer_at_least("num_steps", self.num_steps, 1, MAX_TOTAL_STEPS)
        integer_at_least("num_burnin", self.num_burnin, 0, MAX_TOTAL_STEPS - self.num_steps)
        integer_at_least("thin", self.thin, 1)
        if self.thin > self.num_steps:
            raise ValueError(f"thin must be an integer in [1, num_steps={self.num_steps}], got {self.thin}")
        integer_at_least("keep_every", self.keep_every, 0, self.num_steps)
        integer_at_least("seed", self.seed, 0, MAX_SEED)
        if self.block_size is None:  # frozen: set once, so that the config (and its hash) names the size run
            object.__setattr__(self, "block_size", dividing_block_size(self.total_steps))
        integer_at_least("block_size", self.block_size, 1, MAX_TOTAL_STEPS)
        integer_at_least("num_checkpoints", self.num_checkpoints, 0, MAX_CHECKPOINTS)
        one_of("backend", self.backend, BACKENDS)
        one_of("dtype", self.dtype, DTYPES)
        if not isinstance(self.keep_samples, bool):
            raise TypeError(f"keep_samples must be True or False, got {self.keep_samples!r}")
        if self.backend != "jax" and self.dtype != "float64":
            raise ValueError(f"dtype must be 'float64' for the {self.backend} backend, got {self.dtype!r}")

    @property
    def sample_every(self) -> int:
        """Recorded steps between kept draws: ``keep_every``, or ``thin`` when it is 0."""
        return self.keep_every or self.thin

    @property
    def num_kept(self) -> int:
        """Draws kept per chain with ``keep_samples``."""
        return self.num_steps // self.sample_every

    @property
    def total_steps(self) -> int:
        return self.num_burnin + self.num_steps

    @property
    def checkpoint_steps(self) -> np.ndarray:
        """Steps done (burn-in included) after which the running moments are recorded: log-spaced
        multiples of ``block_size`` and the last step; empty without checkpoints."""
        if not self.num_checkpoints:
            return np.zeros(0, dtype=np.int64)
        num_blocks = self.total_steps // self.block_size
        blocks = np.geomspace(1, num_blocks, self.num_checkpoints) if num_blocks else np.zeros(0)
        steps = np.unique(np.round(blocks).astype(np.int64)) * self.block_size
        return np.unique(np.append(steps, self.total_steps))

    def is_kept(self, t):
        """Whether step ``t`` (0-based, counting burn-in) yields a recorded draw (one the moments average)."""
        return (t >= self.num_burnin) & ((t - self.num_burnin + 1) % self.thin == 0)

    def is_sampled(self, t):
        """Whether ``keep_samples`` keeps step ``t``'s draw (every ``sample_every``-th recorded step)."""
        return (t >= self.num_burnin) & ((t - self.num_burnin + 1) % self.sample_every == 0)


def dividing_block_size(total_steps: int, most: int = 1024) -> int:
    """The largest ``block_size`` up to ``most`` that divides ``total_steps``, so that the JAX driver compiles no
    separate final short block (which nearly doubles its compile time: 6.4 s against 3.6 s for the quick gate's
    PX-SGHMC cell on linreg, docs/performance.md); ``most`` itself where every divisor up to it is under
    ``most // 4`` (blocks that short cost more per step than the second compilation).

    Args:
        total_steps: the run's steps per chain, burn-in included (``RunConfig.total_steps``).
        most: the largest block wanted.

    Returns:
        the block size.
    """
    integer_at_least("total_steps", total_steps, 1, MAX_TOTAL_STEPS)
    integer_at_least("most", most, 1, MAX_TOTAL_STEPS)
    largest = next(size for size in range(min(most, total_steps), 0, -1) if total_steps % size == 0)
    return largest if largest >= most // 4 or total_steps <= most else most
