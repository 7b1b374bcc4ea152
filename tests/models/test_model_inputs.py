"""Every registered model, as a scikit-learn estimator: non-finite input is refused at predict as at fit
(issue 19, item 14), and each is a classifier to scikit-learn (item 15: ``is_classifier``, so
cross-validation picks a stratified splitter)."""
import numpy as np
import pytest
from sklearn.base import is_classifier
from sklearn.model_selection import StratifiedKFold, check_cv

from fairdash.errors import FairDashError
from fairdash.models.registry import MODELS, make_model

FAST = {"fair-gp": dict(num_inducing=8, max_epochs=2, batch_size=64, max_seconds=None),
        "gp": dict(num_inducing=8, max_epochs=2, batch_size=64, max_seconds=None),
        "agarwal": dict(max_iter=3)}


def _data(n=120, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    s = (rng.random(n) < 0.5).astype(int)
    y = ((X[:, 0] + 0.5 * s + rng.normal(scale=0.7, size=n)) > 0).astype(int)
    return X, y, s


@pytest.fixture(scope="module")
def fitted():
    X, y, s = _data()
    out = {}
    for name in MODELS:
        opts = FAST.get(name, {})
        est = make_model(name, seed=0, device="cpu", **opts)
        out[name] = est.fit(X, y, s)
    return out


@pytest.mark.slow
@pytest.mark.parametrize("name", list(MODELS))
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_predict_refuses_non_finite_rows_as_fit_does(fitted, name, bad):
    X, y, s = _data(10, seed=1)
    X[3, 1] = bad
    est = fitted[name]
    for method in ("predict", "predict_proba", "decision_function"):
        if not hasattr(est, method):
            continue
        with pytest.raises(FairDashError, match="missing or infinite"):
            getattr(est, method)(X)
    with pytest.raises(FairDashError, match="missing or infinite"):
        make_model(name, seed=0, device="cpu", **FAST.get(name, {})).fit(X, np.r_[y[:9], 1 - y[0]], s)


@pytest.mark.parametrize("name", list(MODELS))
def test_predict_refuses_the_wrong_number_of_features(fitted, name):
    with pytest.raises(FairDashError, match="feature"):
        fitted[name].predict(np.zeros((4, 5)))


@pytest.mark.parametrize("name", list(MODELS))
def test_every_model_is_a_classifier_to_scikit_learn(name):
    est = make_model(name, seed=0)
    assert is_classifier(est)
    assert est.__sklearn_tags__().estimator_type == "classifier"
    X, y, _ = _data()
    assert isinstance(check_cv(3, y, classifier=is_classifier(est)), StratifiedKFold)
