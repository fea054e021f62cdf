r"""Kernel Stein discrepancy (KSD) with the inverse multiquadric (IMQ) kernel.

Liu, Lee & Jordan (2016) and Chwialkowski, Strathmann & Gretton (2016) define, for a kernel
:math:`k` and the score :math:`s = \nabla \log p` of the target, the Stein kernel

.. math:: k_0(x, y) = s(x)^\top s(y)\, k(x, y) + s(x)^\top \nabla_y k(x, y)
          + s(y)^\top \nabla_x k(x, y) + \operatorname{tr} \nabla_x \nabla_y^\top k(x, y),

and :math:`\mathrm{KSD}^2(q, p) = E_{x, y \sim q}[k_0(x, y)]`, zero iff :math:`q = p` (MAMBA
paper, section 2.2, eq. (3), with :math:`s = -\nabla U`). With the IMQ
kernel :math:`k = (c^2 + \lVert x - y\rVert^2)^\beta`, :math:`c > 0`, :math:`\beta \in (-1, 0)`
(Gorham & Mackey 2017, "Measuring sample quality with kernels": it detects non-convergence), and
:math:`r = x - y`, :math:`u = c^2 + \lVert r\rVert^2`:

.. math:: k_0 = s(x)^\top s(y)\, u^\beta - 2\beta u^{\beta-1} (s(x) - s(y))^\top r
          - 4\beta(\beta-1) \lVert r\rVert^2 u^{\beta-2} - 2\beta d\, u^{\beta-1}.

Estimates from draws :math:`x_1..x_n` with scores :math:`s_i`: the V-statistic
:math:`\frac1{n^2}\sum_{i,j} k_0(x_i, x_j)` (:math:`\ge 0`, biased by the diagonal
:math:`k_0(x_i, x_i) = c^{2\beta}\lVert s_i\rVert^2 - 2\beta d\,c^{2\beta-2}`) and the U-statistic
:math:`\frac1{n(n-1)}\sum_{i\ne j} k_0(x_i, x_j)` (unbiased for iid draws, may be negative).
Scores may be stochastic (MAMBA appendix B.2): with noise drawn independently per draw, the
U-statistic keeps its expectation, and the V-statistic gains :math:`c^{2\beta} E\lVert e\rVert^2 / n`.

Computed in JAX over (B, B) tiles of the upper triangle of the (n, n) matrix, one
:math:`2B \times d` by :math:`d \times 2B` product per tile, the tiles summed in a ``lax.scan``:
memory O(B^2 + n d), never O(n^2) (an (n, n) float64 matrix is 800 MB at n = 10^4). Measured on
a shared 2-core CPU (n = 10^4, float64, B = 512; ``bench/perf/asv/benchmarks/ksd.py``): 0.4 to 1.1 s
and +97 MB peak RSS in d = 10; 5 to 10 s and +354 MB (about 3 copies of the n x d inputs) in d = 1000.
"""

from __future__ import annotations

import functools
import numbers

import jax
import jax.numpy as jnp
import numpy as np

from sgbench.base.arguments import integer_at_least, one_of, positive_finite
from sgbench.base.float64 import in_float64_mode
from sgbench.reference.metrics import register
from sgbench.reference.metrics.scores import chain_groups, check_samples_and_scores, target_scores

STATISTICS = ("v", "u")
DTYPES = ("float64", "float32")
DEFAULT_BLOCK_SIZE = 512  # fastest of 128..2048 measured for n = 10^4, d in (10, 1000) on CPU


def check_beta(beta) -> float:
    """``beta`` as a float, or an error unless it is a number in (-1, 0).

    Args:
        beta: the IMQ kernel's exponent.

    Returns:
        float.

    Raises:
        TypeError: ``beta`` is not a real number (a bool is not one).
        ValueError: ``beta`` is not in (-1, 0).
    """
    if isinstance(beta, bool) or not isinstance(beta, numbers.Real):
        raise TypeError(f"beta must be a real number in (-1, 0), got {beta!r}")
    if not -1 < beta < 0:
        raise ValueError(f"beta must be a number in (-1, 0), got {beta!r}")
    return float(beta)


def imq_stein_kernel(ss, s_dot_r, r_sq, c_sq, beta, d):
    r""":math:`k_0` of the IMQ kernel (module docstring) from :math:`s(x)^\top s(y)` (``ss``),
    :math:`(s(x) - s(y))^\top r` (``s_dot_r``), :math:`\lVert r\rVert^2` (``r_sq``), :math:`c^2`, beta and the
    dimension ``d``; elementwise, in NumPy or JAX.

    Args:
        ss: :math:`s(x)^\top s(y)`, an array.
        s_dot_r: :math:`(s(x) - s(y))^\top r`, broadcastable to ``ss``.
        r_sq: :math:`\lVert r\rVert^2`, broadcastable to ``ss``.
        c_sq: :math:`c^2`, > 0.
        beta: the exponent, in (-1, 0).
        d: the dimension.

    Returns:
        :math:`k_0`, the broadcast shape of the inputs.
    """
    u = c_sq + r_sq
    u_beta = u**beta
    u_beta_1 = u_beta / u
    return (ss * u_beta - 2 * beta * u_beta_1 * s_dot_r
            - 4 * beta * (beta - 1) * r_sq * u_beta_1 / u - 2 * beta * d * u_beta_1)


def stein_kernel_matrix(x, s, c=1.0, beta=-0.5) -> np.ndarray:
    """The (n, n) matrix :math:`k_0(x_i, x_j)` of draws ``x`` (n, d) with scores ``s`` (n, d), IMQ
    kernel, in NumPy float64 (O(n^2) memory: for the bootstrap of ``ksd_test``; :func:`ksd` never forms
    it). Its mean is the V-statistic, its off-diagonal mean the U-statistic.

    Args:
        x: draws, shape (n, d).
        s: their scores, shape (n, d).
        c: the IMQ kernel's scale, > 0.
        beta: its exponent, in (-1, 0).

    Returns:
        float64 array of shape (n, n).

    Raises:
        TypeError: ``beta`` is not a real number.
        ValueError: ``c`` is not finite and > 0, or ``beta`` is not in (-1, 0).
    """
    c = positive_finite("c", c)
    beta = check_beta(beta)
    x, s = np.asarray(x, dtype=np.float64), np.asarray(s, dtype=np.float64)
    x = x - x.mean(axis=0)  # as in _stein_kernel_sums
    d = x.shape[1]
    x_sq, s_dot_x = np.sum(x * x, axis=1), np.sum(s * x, axis=1)
    sx = s @ x.T  # s_i . x_j
    r_sq = np.maximum(x_sq[:, None] + x_sq[None, :] - 2 * (x @ x.T), 0.0)
    np.fill_diagonal(r_sq, 0.0)
    s_dot_r = (s_dot_x[:, None] - sx) - (sx.T - s_dot_x[None, :])
    return imq_stein_kernel(s @ s.T, s_dot_r, r_sq, c * c, beta, d)


@functools.partial(jax.jit, static_argnames=("block_size",))
def _stein_kernel_sums(x, s, c, beta, block_size):
    """(sum over i != j, sum over i) of the IMQ Stein kernel k_0(x_i, x_j) of draws ``x`` (n, d),
    over tiles (I, J) of nominal blocks I <= J of ``block_size`` <= n rows; the last block's tile
    starts at n - block_size and masks the rows of the block before (no padded copies)."""
    n, d = x.shape
    x = x - x.mean(axis=0)  # k_0 depends on x - y only; centring reduces cancellation in |r|^2
    x_sq, s_dot_x = jnp.sum(x * x, axis=1), jnp.sum(s * x, axis=1)
    c_sq = c * c
    offsets = jnp.arange(block_size)

    def tile(total, pair):
        block_i, block_j = pair[0] * block_size, pair[1] * block_size
        i, j = jnp.minimum(block_i, n - block_size), jnp.minimum(block_j, n - block_size)
        rows = jax.lax.dynamic_slice_in_dim
        a = jnp.concatenate([rows(s, i, block_size), rows(x, i, block_size)])
        b = jnp.concatenate([rows(s, j, block_size), rows(x, j, block_size)])
        g = a @ b.T  # blocks: s_i.s_j, s_i.x_j / x_i.s_j, x_i.x_j
        ss, sx, xs, xx = (g[:block_size, :block_size], g[:block_size, block_size:],
                          g[block_size:, :block_size], g[block_size:, block_size:])
        r_sq = jnp.maximum(rows(x_sq, i, block_size)[:, None] + rows(x_sq, j, block_size)[None, :] - 2 * xx, 0.0)
        # s(x)^T r - s(y)^T r with r = x_i - x_j
        s_dot_r = (rows(s_dot_x, i, block_size)[:, None] - sx) - (xs - rows(s_dot_x, j, block_size)[None, :])
        k0 = imq_stein_kernel(ss, s_dot_r, r_sq, c_sq, beta, d)
        row, col = (i + offsets)[:, None], (j + offsets)[None, :]
        keep = (row >= block_i) & (col >= block_j) & (row != col)
        weight = jnp.where(pair[0] == pair[1], 1.0, 2.0)  # an off-diagonal tile stands for its mirror too
        return total + weight * jnp.sum(jnp.where(keep, k0, 0.0)), None

    num_blocks = -(-n // block_size)
    upper = jnp.asarray(np.stack(np.triu_indices(num_blocks), axis=1))
    off_diagonal, _ = jax.lax.scan(tile, jnp.zeros((), x.dtype), upper)
    diagonal = c_sq**beta * jnp.sum(s * s) - 2 * beta * d * c_sq ** (beta - 1) * n
    return off_diagonal, diagonal


@register("ksd")
@in_float64_mode
def ksd(samples, scores, *, c=1.0, beta=-0.5, statistic="v", over_chains="pooled", thin=1,
        block_size=DEFAULT_BLOCK_SIZE, dtype="float64"):
    r""":math:`\mathrm{KSD}^2` (the square) of draws ``samples`` whose scores
    :math:`\nabla \log p` are ``scores`` (same shape, (n, d) or (chains, n, d); full batch or
    stochastic), with the IMQ kernel :math:`(c^2 + \lVert x-y\rVert^2)^\beta`, ``c`` > 0,
    ``beta`` in (-1, 0) (MAMBA eq. (3); Gorham & Mackey 2017).

    ``statistic``: "v" (:math:`\frac1{n^2}\sum_{i,j} k_0`) or "u" (:math:`\frac1{n(n-1)}\sum_{i\ne j} k_0`).
    ``over_chains``: "pooled" (one value for the draws of all chains together: the discrepancy of
    the pooled empirical distribution) or "per_chain" (one value per chain, an array (chains,)).
    ``thin``: keep every ``thin``-th draw first. ``block_size``: tile side B (memory O(B^2 + n d)).
    Non-finite samples or scores raise ValueError with their count; nothing is dropped.

    Args:
        samples: draws, shape (n, d) or (chains, n, d).
        scores: :math:`\nabla\log p` at the draws, the shape of ``samples``.
        c: the IMQ kernel's scale, > 0.
        beta: its exponent, in (-1, 0).
        statistic: ``"v"`` or ``"u"``.
        over_chains: ``"pooled"`` or ``"per_chain"``.
        thin: keep every ``thin``-th draw first, >= 1.
        block_size: the tile side B, >= 1 (capped at n).
        dtype: ``"float64"`` or ``"float32"``, the precision of the tiles.

    Returns:
        :math:`\mathrm{KSD}^2`: a float (pooled, or one chain of shape (n, d)), else a float64 array (chains,).

    Raises:
        TypeError: ``beta`` is not a real number.
        ValueError: an argument outside its accepted range, a shape mismatch, or a non-finite value.
    """
    c = positive_finite("c", c)
    beta = check_beta(beta)
    one_of("statistic", statistic, set(STATISTICS))
    integer_at_least("block_size", block_size, 1)
    one_of("dtype", dtype, set(DTYPES))
    x, s = check_samples_and_scores(samples, scores, thin)
    values = []
    for xg, sg in zip(chain_groups(x, over_chains), chain_groups(s, over_chains)):
        n = xg.shape[0]
        off, diag = _stein_kernel_sums(jnp.asarray(xg, dtype=dtype), jnp.asarray(sg, dtype=dtype),
                                       c, beta, min(block_size, n))
        values.append(float(off) / (n * (n - 1)) if statistic == "u" else (float(off) + float(diag)) / n**2)
    return values[0] if over_chains == "pooled" or np.ndim(samples) == 2 else np.asarray(values)

def ksd_of_target(samples, target, *, stochastic=False, key=None, thin=1, **ksd_options):
    """:func:`ksd` of ``samples`` with the scores of ``target`` (a ``targets`` Target) at the kept
    draws: full batch (``grad_logdensity``), or ``stochastic`` (``stochastic_grad``, one independent
    draw per sample from the JAX PRNG ``key``), after thinning by ``thin`` (so only kept draws cost
    a gradient). ``ksd_options``: the keywords of :func:`ksd`.

    Args:
        samples: draws, shape (n, d) or (chains, n, d), d the target's dimension.
        target: a ``sgbench.targets`` Target.
        stochastic: whether to use the stochastic gradient instead of the exact one.
        key: a JAX PRNG key (required with ``stochastic``).
        thin: keep every ``thin``-th draw first, >= 1.
        **ksd_options: the keywords of :func:`ksd` (``c``, ``beta``, ``statistic``, ``over_chains``,
            ``block_size``, ``dtype``).

    Returns:
        KSD^2, as :func:`ksd` returns it.

    Raises:
        ValueError: as :func:`~sgbench.reference.metrics.scores.target_scores` and :func:`ksd`.
    """
    x, s = target_scores(samples, target, stochastic=stochastic, key=key, thin=thin)
    return ksd(x, s, **ksd_options)

