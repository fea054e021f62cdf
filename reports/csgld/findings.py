r"""Reproductions of the findings on blackjax 1.7.1's contour SGLD (``blackjax/sgmcmc/csgld.py``) against Deng,
Lin & Liang (2020), Algorithm 1, with blackjax's public API (``blackjax.csgld``) on a 2-d standard normal with
exact energies :math:`U = |x|^2/2`, whose partitions have the masses :math:`\pi(E_i) = e^{-u_{i-1}}(1 -
e^{-\Delta u})` (:math:`U` is exponential): :math:`\log\pi(E_i)` falls by :math:`\Delta u` per partition.

    PYTHONPATH=. python reports/csgld/findings.py [gain|lower|top|zeta0 ...]

- ``gain``: the stochastic-approximation gain is :math:`\theta_k(J)` (csgld.py line 167), not the paper's
  :math:`\theta_k^\zeta(J)` (eq. 9): ``energy_pdf`` converges to :math:`\pi(E_i)^{1/\zeta}` normalised, not to
  :math:`\pi(E_i)`, and the chain visits every partition equally often whatever :math:`\zeta` (the paper:
  visits :math:`\propto \pi(E_i)^{1-\zeta}`).
- ``lower``: the gradient multiplier reads ``energy_pdf[idx - 1]`` (line 140) where the paper reads
  :math:`\theta((J - 1)\vee 1)` (eq. 8); at :math:`J = 1` that is entry 0, which no position ever enters
  (line 155 clips the index to 1..m-1), so it decays geometrically and the multiplier of the first partition
  grows without bound with the run's length. Measured: that multiplier, and the weighted estimate of the
  variance, against the same kernel with :math:`(J - 1)\vee 1`.
- ``top``: ``init`` (lines 49-53) gives the last two entries the ratio 1/2, so a partition never visited has the
  multiplier :math:`1 - \zeta T\ln 2/\Delta u`, negative when :math:`\Delta u < \zeta T \ln 2`: a chain there is
  pushed up in energy until the stochastic approximation has raised that partition's entry.
- ``zeta0``: at :math:`\zeta = 0` (documented as SGLD) the multiplier is :math:`1 + 0\cdot(\log\theta(1) -
  \log\theta(0))`, NaN once entry 0 underflows (float32 here).
"""

from __future__ import annotations

import sys
from pathlib import Path

import blackjax
import jax
import jax.numpy as jnp
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import variants  # noqa: E402

jax.config.update("jax_enable_x64", True)


def logdensity(position, minibatch):
    return -0.5 * jnp.sum(position**2)


def gradient(position, minibatch):
    return -position


def run(csgld_step, init_state, *, chains, steps, step_size, step_size_stoch, temperature=1.0, seed=0,
        record_every=None):
    """``steps`` steps of ``chains`` chains from ``init_state`` (vmapped), with per-chain running sums over the
    second half: the index histogram, and the weighted sums of |x|^2 with theta(J)^zeta weights (zeta given
    with the step). Returns (final states, histogram, recorded log energy_pdf[0] and multipliers)."""

    def chain(key, state):
        def one(carry, t):
            state, hist = carry
            state = csgld_step(jax.random.fold_in(key, t), state, None, step_size, step_size_stoch, temperature)
            scored = t >= steps // 2
            hist = hist.at[state.energy_idx].add(jnp.where(scored, 1, 0))
            return (state, hist), (jnp.log(state.energy_pdf[0]), state.energy_idx, jnp.sum(state.position**2),
                                   jnp.log(state.energy_pdf[state.energy_idx]), state.energy_pdf[1])

        hist = jnp.zeros(state.energy_pdf.shape[0], jnp.int64)
        (state, hist), trace = jax.lax.scan(one, (state, hist), jnp.arange(steps))
        return state, hist, trace

    keys = jax.random.split(jax.random.key(seed), chains)
    states = jax.vmap(lambda _: init_state)(jnp.arange(chains))
    return jax.jit(jax.vmap(chain))(keys, states)


def weighted_r(trace, zeta, steps, windows):
    """Relative variance error of the theta(J)^zeta-weighted estimate of E|x|^2/2 (truth 1 per coordinate)
    pooled over chains, over each window (start, stop) of steps."""
    _, _, sq, log_theta, _ = (np.asarray(v) for v in trace)
    out = []
    for start, stop in windows:
        lw = zeta * log_theta[:, start:stop]
        w = np.exp(lw - lw.max())
        out.append(float((w * sq[:, start:stop]).sum() / w.sum() / 2 - 1))
    return out


def gain(zeta=0.5, du=0.5, m=30, steps=40_000, chains=32):
    print(f"--- gain: zeta = {zeta}, energy_gap = {du}, {m} partitions, min_energy = 0")
    public = blackjax.csgld(logdensity, gradient, zeta=zeta, num_partitions=m, energy_gap=du, min_energy=0.0)
    for name, step in (("blackjax as it is", public.step),
                       ("blackjax with (J - 1) v 1 (its gain theta(J))", _kernel_step(zeta, m, du, "paper", "one")),
                       ("the paper (gain theta^zeta(J))", _kernel_step(zeta, m, du, "paper", "zeta"))):
        state = blackjax.sgmcmc.csgld.init(jnp.array([1.0, 0.0]), m)
        final, hist, _ = run(step, state, chains=chains, steps=steps, step_size=0.01, step_size_stoch=0.01)
        parts = np.arange(3, 13)
        finite = np.all(np.isfinite(np.asarray(final.position)), axis=1) & np.all(
            np.asarray(final.energy_pdf)[:, parts] > 0, axis=1)
        theta = np.log(np.asarray(final.energy_pdf)[finite][:, parts]).mean(axis=0)
        visits = np.asarray(hist)[finite].sum(axis=0)
        slope = np.polyfit(parts, theta, 1)[0]
        visit_slope = np.polyfit(parts, np.log(visits[parts]), 1)[0]
        print(f"{name}: log energy_pdf changes by {slope:+.3f} per partition over partitions 3-12 (pi(E), the "
              f"paper's fixed point: {-du:+.3f}; pi(E)^(1/zeta): {-du / zeta:+.3f}); log visits by "
              f"{visit_slope:+.3f} (the paper's flattened density: {-(1 - zeta) * du:+.3f}; a flat histogram: 0); "
              f"{chains - finite.sum()} of {chains} chains left out (a position not finite, or an entry 0 in "
              "partitions 3-12)")


def lower(zeta=1.0, du=0.25, m=40, steps=100_000, chains=32):
    print(f"--- lower: zeta = {zeta}, energy_gap = {du}, {m} partitions, min_energy = 0 (the first partition "
          "[0, 0.25) holds the minimum energy and has mass 0.22)")
    windows = [(steps // 10, steps // 5), (steps // 2, steps)]
    for name, kernel in (("blackjax (J - 1)", blackjax.csgld(logdensity, gradient, zeta=zeta, num_partitions=m,
                                                               energy_gap=du, min_energy=0.0).step),
                         ("paper (J - 1) v 1", _kernel_step(zeta, m, du, "paper", "one"))):
        state = blackjax.sgmcmc.csgld.init(jnp.array([1.0, 0.0]), m)
        _, _, trace = run(kernel, state, chains=chains, steps=steps, step_size=0.01, step_size_stoch=0.01)
        log0, _, _, _, theta1 = (np.asarray(v) for v in trace)
        multiplier = 1 + zeta * (np.log(theta1) - log0) / du
        at = [1_000, 10_000, steps - 1]
        print(f"{name}: multiplier of the first partition after {at} steps (median over chains): "
              f"{[round(float(np.median(multiplier[:, t])), 1) for t in at]}"
              + (" (not used: (J - 1) v 1 gives 1)" if "paper" in name else ""))
        r = weighted_r(trace, zeta, steps, windows)
        print(f"  weighted relative variance error over steps {windows}: {[round(v, 3) for v in r]}")


def _kernel_step(zeta, m, du, lower, gain):
    """blackjax's kernel with the lines ``lower`` and ``gain`` of ``variants.paper_kernel``, as a step."""
    kernel = variants.paper_kernel(m, du, 0.0, lower=lower, gain=gain)

    def step(key, state, minibatch, step_size, step_size_stoch, temperature):
        return kernel(key, state, logdensity, gradient, minibatch, step_size, step_size_stoch, zeta, temperature)

    return step


def top(zeta=1.0, du=0.25, m=20):
    print(f"--- top: zeta = {zeta}, energy_gap = {du} < zeta T ln 2 = {zeta * np.log(2):.3f}, {m} partitions "
          f"(the last holds U >= {du * (m - 2):.2f}); a chain started at U = 8")
    sampler = blackjax.csgld(logdensity, gradient, zeta=zeta, num_partitions=m, energy_gap=du, min_energy=0.0)
    state = sampler.init(jnp.array([4.0, 0.0]))
    pdf = np.asarray(state.energy_pdf)
    print(f"initial multiplier of the last partition: 1 + zeta ln({pdf[-1]:.4f}/{pdf[-2]:.4f}) / du = "
          f"{1 + zeta * np.log(pdf[-1] / pdf[-2]) / du:.3f}")
    final, _, trace = run(sampler.step, state, chains=8, steps=2000, step_size=0.01, step_size_stoch=1e-3)
    sq = np.asarray(trace[2])
    print(f"|x|^2 after 10, 100, 1000, 2000 steps (median of 8 chains): "
          f"{[float(np.median(sq[:, t])) for t in (9, 99, 999, 1999)]}")


def zeta0(du=0.25, m=40, steps=20_000):
    print(f"--- zeta0: zeta = 0 in float32, energy_gap = {du}, min_energy = 0, step_size_stoch = 0.1")
    sampler = blackjax.csgld(logdensity, gradient, zeta=0.0, num_partitions=m, energy_gap=du, min_energy=0.0)
    state = sampler.init(jnp.array([1.0, 0.0], jnp.float32))
    state = state._replace(energy_pdf=state.energy_pdf.astype(jnp.float32))

    def step(*args):  # blackjax returns float64 noise under JAX's 64-bit mode: keep the chain in float32
        new = sampler.step(*args)
        return new._replace(position=new.position.astype(jnp.float32),
                            energy_pdf=new.energy_pdf.astype(jnp.float32))

    final, _, trace = run(step, state, chains=8, steps=steps, step_size=jnp.float32(0.01),
                          step_size_stoch=jnp.float32(0.1), temperature=jnp.float32(1.0))
    sq = np.asarray(trace[2])
    first_nan = [int(np.argmax(~np.isfinite(s))) if not np.all(np.isfinite(s)) else -1 for s in sq]
    print(f"first non-finite step per chain (-1: none): {first_nan}; energy_pdf[0] at the end: "
          f"{np.asarray(final.energy_pdf)[:, 0].tolist()}")


if __name__ == "__main__":
    chosen = sys.argv[1:] or ["gain", "lower", "top", "zeta0"]
    for name in chosen:
        globals()[name]()
