"""The one estimator base (issue 37 item 4): every registered model is a ``models.core.base.Estimator`` whose ``fit``
validates its parameters before it looks at the data; constructors are keyword-only; the seed is ``random_state``;
the target reduction composes the mixture instead of inheriting from Agarwal et al.'s reduction."""
from __future__ import annotations

import inspect
from pathlib import Path

import numpy as np
import pytest

from fairdash.errors import FairDashError
from fairdash.models.baselines import SVM, AgarwalReduction
from fairdash.models.core.base import Estimator
from fairdash.models.core.weighted_lr import WeightedLR
from fairdash.models.registry import MODELS
from fairdash.models.target_reduction import TargetReduction


@pytest.mark.parametrize("name", list(MODELS))
def test_one_base_keyword_only_and_random_state(name):
    cls = MODELS[name].load_class()
    assert issubclass(cls, Estimator) and "fit" not in vars(cls), name  # the base's fit, not one of its own
    params = list(inspect.signature(cls).parameters.values())
    assert all(p.kind is p.KEYWORD_ONLY for p in params), name
    names = {p.name for p in params}
    assert "seed" not in names and "target_rate" not in names, name
    assert ("random_state" in names) == ("random_state" in MODELS[name].shared), name


@pytest.mark.parametrize("name", list(MODELS))
def test_fit_checks_the_parameters_before_the_data(name):
    cls = MODELS[name].load_class()
    bad = next(k for k in ("C", "c", "max_iter", "num_inducing", "gamma") if k in cls().get_params())
    with pytest.raises(FairDashError, match=f"'{bad}' parameter of {cls.__name__}"):
        cls(**{bad: -5}).fit(None, None)


def test_the_weighted_inner_solver_validates_through_the_base():
    """WeightedLR keeps scikit-learn's ``fit(X, y, sample_weight=None)`` (fairlearn and scikit-learn look for
    ``sample_weight``) and hands its keywords to the base's validating ``fit``; no estimator checks by hand."""
    assert issubclass(WeightedLR, Estimator)
    assert list(inspect.signature(WeightedLR.fit).parameters)[:4] == ["self", "X", "y", "sample_weight"]
    with pytest.raises(FairDashError, match="'C' parameter of WeightedLR"):
        WeightedLR(C=-5).fit(None, None, sample_weight=np.ones(3))
    models = Path(__file__).resolve().parents[2] / "fairdash" / "models"
    by_hand = [str(p) for p in models.rglob("*.py")
               if p.name not in ("base.py", "params.py") and "check_params(" in p.read_text(encoding="utf-8")]
    assert not by_hand, by_hand


def test_a_model_without_strata_refuses_them_in_words():
    X = np.random.default_rng(0).normal(size=(20, 2))
    y = np.arange(20) % 2
    with pytest.raises(FairDashError, match="does not take strata"):
        SVM().fit(X, y, None, np.zeros(20))


def test_the_target_reduction_composes_the_mixture():
    assert not issubclass(TargetReduction, AgarwalReduction)
