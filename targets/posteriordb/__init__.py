"""posteriordb posteriors as suite targets (``targets.get("posteriordb", posterior=...)``): the models written in
JAX from their Stan programs, truth from posteriordb's reference draws (``_target``)."""

from sgbench.targets.posteriordb._models import Model
from sgbench.targets.posteriordb._target import POSTERIORS, PosteriordbTarget

__all__ = ["POSTERIORS", "Model", "PosteriordbTarget"]
