"""KSD^2 with the IMQ kernel (c = 1, beta = -1/2, V-statistic, float64, default block size) of
n = 10^4 draws of N(0, I) with their exact scores, in d = 10 and d = 1000 (seed 0).

- ``TimeKSD.time_ksd``: one evaluation, compilation excluded (``setup`` compiles and runs it once).
- ``PeakMemKSD.peakmem_ksd``: peak RSS of a process that builds the inputs and computes KSD^2 once,
  compilation included; ``peakmem_inputs`` is the same process without the KSD (imports and the
  two n x d float64 inputs), so the difference is what the blockwise computation adds (an
  n x n float64 matrix alone would add 800 MB).
"""

from __future__ import annotations

import numpy as np

from sgbench.reference.metrics.ksd import ksd

NUM_DRAWS = 10_000
DIMS = (10, 1000)


def _inputs(dim: int):
    x = np.random.default_rng(0).standard_normal((NUM_DRAWS, dim))
    return x, -x


class TimeKSD:
    params = (DIMS,)
    param_names = ("dim",)
    number = 1
    repeat = (1, 3, 60.0)
    warmup_time = 0.0
    timeout = 300

    def setup(self, dim):
        self.x, self.s = _inputs(dim)
        ksd(self.x, self.s)

    def time_ksd(self, dim):
        ksd(self.x, self.s)


class PeakMemKSD:
    params = (DIMS,)
    param_names = ("dim",)
    timeout = 300

    def setup(self, dim):
        self.x, self.s = _inputs(dim)

    def peakmem_inputs(self, dim):
        pass

    def peakmem_ksd(self, dim):
        ksd(self.x, self.s)
