"""One registry of model names: what each is, which criterion it serves, and how to build it.

Every model is a scikit-learn style classifier with ``fit(X, y, s=None, **fit_params)``,
``predict(X)`` and ``predict_proba(X)`` on the preprocessed feature matrix ``X`` (a float numpy
array), binary ``y`` in {0, 1} and integer group codes ``s`` (0 = protected group). ``s`` is used at
fit time only. Builders take keyword arguments ``target_rate``, ``criterion``, ``seed``, ``device``
and ignore what they do not use.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass

from ..errors import FairDashError


@dataclass(frozen=True)
class ModelInfo:
    name: str  # command-line name, e.g. "fair-lr"
    label: str  # the paper's name, e.g. "FairLR"
    target: str  # "module:Class" under fairdash.models
    criteria: tuple  # criteria the model serves: ("dp",), ("eo",), ("dp", "eo"), or () for a plain model
    uses_target_rate: bool  # does PR_t change the model?
    description: str
    # the paper's set-ups (--paper) in which it solves in the numeric columns' own units, as the paper's runs
    # did (see zafar.py); everywhere else it solves on the standardised columns every model trains on
    raw_units: tuple = ()

    def load_class(self):
        module, cls = self.target.split(":")
        return getattr(importlib.import_module(f"fairdash.models.{module}"), cls)

    def serves(self, criterion: str) -> bool:
        """Plain models (no fairness machinery) serve every comparison as a reference."""
        return not self.criteria or criterion in self.criteria


MODELS: dict[str, ModelInfo] = {
    m.name: m
    for m in [
        ModelInfo("fair-lr", "FairLR", "fair_lr:FairLR", ("dp", "eo"), True,
                  "Logistic regression trained on the target-label likelihood (the paper's method)."),
        ModelInfo("fair-gp", "FairGP", "fair_gp:FairGP", ("dp", "eo"), True,
                  "Sparse variational Gaussian process trained on the target-label likelihood."),
        ModelInfo("lr", "LR", "fair_lr:LR", (), False, "Plain logistic regression (C = 1)."),
        ModelInfo("gp", "GP", "fair_gp:GP", (), False, "Plain sparse variational GP classifier."),
        ModelInfo("svm", "SVM", "baselines:SVM", (), False, "RBF support vector machine (C = 1, gamma = 1/n_features)."),
        ModelInfo("kamiran", "Kamiran & Calders", "baselines:KamiranReweighing", ("dp",), False,
                  "Logistic regression on rows reweighed so that s and y look independent."),
        ModelInfo("agarwal", "Agarwal et al.", "baselines:AgarwalReduction", ("dp", "eo"), False,
                  "fairlearn's exponentiated-gradient reduction around logistic regression."),
        ModelInfo("threshold-optimizer", "Threshold optimizer (post-processing, decides with s)",
                  "postprocessing:ThresholdOptimizerModel", ("dp", "eo"), False,
                  "fairlearn's ThresholdOptimizer on logistic regression: one randomised threshold per group, so it "
                  "decides with s."),
        ModelInfo("zafar-fairness", "ZafarFairness", "zafar:ZafarFairness", ("dp",), False,
                  "Logistic loss minimised under a bound on the covariance of s and the decision value."),
        ModelInfo("zafar-accuracy", "ZafarAccuracy", "zafar:ZafarAccuracy", ("dp",), False,
                  "Covariance of s and the decision value minimised within (1 + gamma) of the best loss. On "
                  "standardised columns; in the paper's Adult set-ups (--paper adult-sex, adult-race) in raw units, "
                  "as the paper ran it, and labelled so.",
                  raw_units=("adult-sex", "adult-race")),
        ModelInfo("zafar-eqopp", "ZafarEqOpp", "zafar:ZafarEqOpp", ("eo",), False,
                  "Disparate mistreatment: equal false negative rates by the convex-concave procedure."),
    ]
}

# the models' settings in words, for the dashboard's inputs
PARAMETER_NAMES = {"num_inducing": "inducing points", "max_epochs": "max epochs", "lr": "learning rate",
                   "C": "C (1 / L2 strength)", "tol": "tolerance", "max_seconds": "time limit (s)",
                   "max_iter": "max iterations", "weight_decay": "weight decay", "difference_bound": "allowed difference (the paper's 0.1; 0.01 for parity on the population without s)",
                   "ngd_lr": "natural-gradient step", "patience": "patience (epochs)"}

AGARWAL_PAPER_BOUND = 0.1  # the paper's allowed difference for Agarwal et al.'s reduction


def check_agarwal_bound(value) -> float:
    """Agarwal et al.'s allowed difference: a number in (0, 1]."""
    try:
        bound = float(value)
    except (TypeError, ValueError):
        raise FairDashError(f"The Agarwal bound must be a number; got {value!r}.") from None
    if not 0.0 < bound <= 1.0:
        raise FairDashError(f"The Agarwal bound must lie in (0, 1] (the paper uses {AGARWAL_PAPER_BOUND}); got {bound:g}.")
    return bound


PAPER_DP_MODELS = ("gp", "lr", "svm", "fair-gp", "fair-lr", "zafar-accuracy", "zafar-fairness", "kamiran", "agarwal")
PAPER_EO_MODELS = ("fair-lr", "lr", "zafar-eqopp", "agarwal")
PAPER_MODELS = {"dp": PAPER_DP_MODELS, "eo": PAPER_EO_MODELS}  # the paper's comparison for each criterion


def model_info(name: str) -> ModelInfo:
    try:
        return MODELS[name]
    except KeyError:
        raise FairDashError(f"Unknown model {name!r}. Known models: {', '.join(MODELS)}.") from None


def make_model(name: str, **options):
    """Build an unfitted model by name; ``options`` such as ``target_rate``, ``criterion``, ``seed`` and
    ``device`` are passed where the class's constructor takes them."""
    import inspect

    cls = model_info(name).load_class()
    accepted = inspect.signature(cls.__init__).parameters
    return cls(**{k: v for k, v in options.items() if k in accepted and v is not None})
