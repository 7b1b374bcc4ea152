"""One registry of model names: what each is, which criterion it serves, and how to build it.

Every model is a scikit-learn style classifier with ``fit(X, y, s=None)`` (FairLR and FairGP: also ``strata``),
``predict(X)`` and ``predict_proba(X)`` on the preprocessed feature matrix ``X`` (a float numpy
array), two-valued labels ``y`` (``classes_`` as given; FairDash passes 0/1) and integer group codes ``s``
(0 = protected group). ``s`` is used at fit time only.

:func:`make_model` builds one by name from the run's :class:`~fairdash.targeting.target_spec.TargetSpec` and the
model's own settings. What a model takes from the target is declared here, in its :class:`ModelInfo`
(``target_param``): the fair models the whole spec (``target=``), the criterion-dependent baselines its
criterion (``criterion=``), the others nothing. The run's ``seed`` (as each model's ``random_state``) and
``device`` go to the models that declare them (``shared``).
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass

from ..errors import FairDashError
from ..targeting.criteria import CRITERIA, DP, EO, Criterion
from ..targeting.target_spec import TargetSpec, criterion_info


@dataclass(frozen=True)
class ModelInfo:
    name: str  # command-line name, e.g. "fair-lr"
    label: str  # the paper's name, e.g. "FairLR"
    target: str  # "module:Class" under fairdash.models
    criteria: tuple  # the names of the criteria the model serves (criteria.DP.name...), or () for a plain model
    uses_target_rate: bool  # does PR_t change the model?
    description: str
    # the paper's set-ups (--paper) in which it solves in the numeric columns' own units, as the paper's runs
    # did (see zafar.py); everywhere else it solves on the standardised columns every model trains on
    raw_units: tuple = ()
    # what the model takes from the run's TargetSpec: "target" (the spec itself, FairLR/FairGP), "criterion"
    # (the spec's criterion name, for a baseline whose constraint depends on it) or None (nothing)
    target_param: str | None = None
    # the settings every run gives, which this model's constructor takes (make_model passes them)
    shared: tuple = ()

    def target_options(self, target) -> dict:
        """The constructor keywords this model takes from ``target`` (a TargetSpec, or None: none)."""
        if target is None or self.target_param is None:
            return {}
        return {self.target_param: target if self.target_param == "target" else target.criterion}

    def label_under(self, rule_needs_s: bool) -> str:
        """Its label in a results row: under a rule that decides with s (its scores cut per group) the words that
        say it decides without s are left out, so that a label never says both."""
        return self.label.replace(" (decides without s, randomised)", "") if rule_needs_s else self.label

    def load_class(self):
        module, cls = self.target.split(":")
        return getattr(importlib.import_module(f"fairdash.models.{module}"), cls)

    def serves(self, criterion: Criterion) -> bool:
        """Plain models (no fairness machinery) serve every comparison as a reference."""
        return not self.criteria or criterion.name in self.criteria

    def serves_words(self) -> str:
        """Which criteria the model serves, in words (a plain model is the reference for every one)."""
        if not self.criteria:
            return "plain model (reference for every criterion)"
        return "serves " + " and ".join(criterion_info(c).words for c in self.criteria)

    def choice_words(self, criterion: Criterion) -> str:
        """The model in a list of models to train for ``criterion``: its label, what it serves, and a warning
        where it was made for another criterion."""
        return (f"{self.label}: {self.serves_words()}"
                + ("" if self.serves(criterion) else f" (NOT {criterion.words})"))


MODELS: dict[str, ModelInfo] = {
    m.name: m
    for m in [
        ModelInfo("fair-lr", "FairLR", "fair_lr:FairLR", CRITERIA, True,
                  "Logistic regression trained on the target-label likelihood (the paper's method).",
                  target_param="target", shared=("random_state", "device")),
        ModelInfo("fair-gp", "FairGP", "fair_gp:FairGP", CRITERIA, True,
                  "Sparse variational Gaussian process trained on the target-label likelihood.",
                  target_param="target", shared=("random_state", "device")),
        ModelInfo("lr", "LR", "fair_lr:LR", (), False, "Plain logistic regression (C = 1).",
                  shared=("random_state", "device")),
        ModelInfo("gp", "GP", "fair_gp:GP", (), False, "Plain sparse variational GP classifier.",
                  shared=("random_state", "device")),
        ModelInfo("svm", "SVM", "baselines:SVM", (), False,
                  "RBF support vector machine (C = 1, gamma = 1/n_features)."),
        ModelInfo("kamiran", "Kamiran & Calders", "baselines:KamiranReweighing", (DP.name,), False,
                  "Logistic regression on rows reweighed so that s and y look independent.",
                  shared=("random_state", "device")),
        ModelInfo("agarwal", "Agarwal et al.", "baselines:AgarwalReduction", CRITERIA, False,
                  "fairlearn's exponentiated-gradient reduction around logistic regression.",
                  target_param="criterion", shared=("random_state", "device")),
        ModelInfo("target-reduction", "Target reduction (decides without s, randomised)",
                  "target_reduction:TargetReduction", CRITERIA, True,
                  "Agarwal et al.'s exponentiated-gradient reduction with each group's rate constrained to the "
                  "analyst's target (within a tolerance): reaches the target without s when deciding, by a seeded "
                  "random draw.", target_param="target", shared=("random_state", "device")),
        ModelInfo("threshold-optimizer", "Threshold optimizer (post-processing, decides with s)",
                  "postprocessing:ThresholdOptimizerModel", CRITERIA, False,
                  "fairlearn's ThresholdOptimizer on logistic regression: one randomised threshold per group, so it "
                  "decides with s.", target_param="criterion", shared=("random_state",)),
        ModelInfo("zafar-fairness", "ZafarFairness", "zafar:ZafarFairness", (DP.name,), False,
                  "Logistic loss minimised under a bound on the covariance of s and the decision value."),
        ModelInfo("zafar-accuracy", "ZafarAccuracy", "zafar:ZafarAccuracy", (DP.name,), False,
                  "Covariance of s and the decision value minimised within (1 + gamma) of the best loss. On "
                  "standardised columns; in the paper's Adult set-ups (adult-sex, adult-race) in raw units, "
                  "as the paper ran it, and labelled so.",
                  raw_units=("adult-sex", "adult-race")),
        ModelInfo("zafar-eqopp", "ZafarEqOpp", "zafar:ZafarEqOpp", (EO.name,), False,
                  "Disparate mistreatment: equal false negative rates by the convex-concave procedure."),
    ]
}

# the models' settings in words, for the dashboard's inputs
PARAMETER_NAMES = {"num_inducing": "inducing points", "max_epochs": "max epochs", "lr": "learning rate",
                   "C": "C (1 / L2 strength)", "tol": "tolerance", "max_seconds": "time limit (s)",
                   "max_iter": "max iterations", "weight_decay": "weight decay",
                   "difference_bound": "allowed difference (the paper's 0.1; 0.01 for parity on the population "
                                       "without s)",
                   "ngd_lr": "natural-gradient step",
                   "tolerance": "tolerance (how far each group's training rate may stay from its target)",
                   "patience": "patience (epochs)"}

AGARWAL_PAPER_BOUND = 0.1  # the paper's allowed difference for Agarwal et al.'s reduction


def check_agarwal_bound(value) -> float:
    """Agarwal et al.'s allowed difference, as the estimator's own constraint has it (a number in (0, 1]:
    ``AgarwalReduction._parameter_constraints``, the one home of the rule), checked before any training."""
    from .baselines import AgarwalReduction  # lazy: heavy, defers numpy, scipy, sklearn

    try:
        bound = float(value)
    except (TypeError, ValueError):
        raise FairDashError(f"The Agarwal bound must be a number; got {value!r}.") from None
    if not any(c.accepts(bound) for c in AgarwalReduction._parameter_constraints["difference_bound"]):
        raise FairDashError(f"The Agarwal bound must lie in (0, 1] (the paper uses {AGARWAL_PAPER_BOUND}); "
                            f"got {bound:g}.")
    return bound


PAPER_DP_MODELS = ("gp", "lr", "svm", "fair-gp", "fair-lr", "zafar-accuracy", "zafar-fairness", "kamiran", "agarwal")
PAPER_EO_MODELS = ("fair-lr", "lr", "zafar-eqopp", "agarwal")
PAPER_MODELS = {DP.name: PAPER_DP_MODELS, EO.name: PAPER_EO_MODELS}  # the paper's comparison for each criterion


def model_info(name: str) -> ModelInfo:
    try:
        return MODELS[name]
    except KeyError:
        raise FairDashError(f"Unknown model {name!r}. Known models: {', '.join(MODELS)}.") from None


def make_model(name: str, target=None, *, seed=None, device=None, **options):
    """Build an unfitted model by name.

    ``target``: the run's :class:`~fairdash.targeting.target_spec.TargetSpec` (``None``: each model's default); the
    model takes what its :class:`ModelInfo` declares (``target_param``). ``seed`` (the run's: each model's
    ``random_state``) and ``device`` (``None``: the model's default) go to the models that declare them
    (``shared``); every other keyword is one of the model's own settings, passed as it is (an unknown one is a
    :class:`FairDashError`).
    """
    info = model_info(name)
    if target is not None and not isinstance(target, TargetSpec):
        raise FairDashError("make_model's target must be a TargetSpec "
                            f"(fairdash.targeting.target_spec.make_target_spec), not a {type(target).__name__}.")
    cls = info.load_class()
    own = dict(options)
    if target is not None and info.target_param in own:
        raise FairDashError(f"{info.label}: give the target once (make_model's target), not also as "
                            f"{info.target_param}=.")
    own.update(info.target_options(target))
    for key, value in (("random_state", seed), ("device", device)):
        if value is not None and key in info.shared:
            own[key] = value
    known = set(cls().get_params(deep=False))
    unknown = sorted(set(own) - known)
    if unknown:
        raise FairDashError(f"{info.label} has no setting {unknown[0]!r} (its settings: {', '.join(sorted(known))}).")
    return cls(**own)
