"""Models: the fair likelihood, FairLR, FairGP and the paper's baselines, behind one registry."""
from .registry import MODELS, ModelInfo, make_model, model_info

__all__ = ["MODELS", "ModelInfo", "make_model", "model_info"]
