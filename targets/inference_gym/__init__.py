"""Inference Gym models as suite targets (``targets.get("inference_gym", model=...)``, the gym extra): their log
densities on the unconstrained space, truth from Inference Gym's authors (``_target``)."""

from sgbench.targets.inference_gym._models import MODELS
from sgbench.targets.inference_gym._target import InferenceGymTarget

__all__ = ["MODELS", "InferenceGymTarget"]
