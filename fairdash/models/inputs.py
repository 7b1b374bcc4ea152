"""The estimators' side of scikit-learn's input contract, in one place: ``fit``'s ``X`` and ``y`` through
scikit-learn's ``validate_data`` (which records ``n_features_in_`` and, for a data frame,
``feature_names_in_``), any two labels encoded as 0/1 with ``classes_`` as given (the second of the sorted
labels is the positive one, as in ``LogisticRegression``), and ``predict``'s ``X`` checked the same way
(finite numbers, the fitted number of columns). scikit-learn's ``ValueError``\\ s come out as one plain
:class:`~fairdash.errors.FairDashError` (itself a ``ValueError``).
"""
from __future__ import annotations

import numpy as np

from ..errors import FairDashError


class BinaryClassifierMixin:
    """Tells scikit-learn (its tags) that the classifier takes two classes only. Listed before
    ``ClassifierMixin`` (which sets fresh classifier tags): ``class M(BinaryClassifierMixin, ClassifierMixin,
    BaseEstimator)``."""

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags


class InputTypeError(FairDashError, TypeError):
    """A value of the wrong type in the input (e.g. a dict in the feature matrix): a FairDashError for the
    dashboard and command line, and the ``TypeError`` scikit-learn's conventions expect."""


def _plain(error: Exception) -> FairDashError:
    text = str(error)
    if isinstance(error, TypeError):
        return InputTypeError(text.splitlines()[0] if text else "The input holds a value of the wrong type.")
    if "Reshape your data" in text:
        return FairDashError(text.splitlines()[0] + " " + text.splitlines()[-1].strip())
    if "NaN" in text or "infinity" in text:
        return FairDashError("The feature matrix holds missing or infinite values; preprocess it first.")
    if "Complex data not supported" in text:
        return FairDashError("Complex data not supported: the feature matrix must hold real numbers.")
    return FairDashError(text.splitlines()[0] if text else type(error).__name__)


def _numeric_X(X):
    """Sparse input is refused in the words scikit-learn's checks expect (the models need a dense matrix)."""
    import scipy.sparse

    if scipy.sparse.issparse(X):
        raise FairDashError("A sparse feature matrix is not supported; pass a dense array (e.g. X.toarray()).")


def fit_inputs(est, X, y):
    """``fit``'s ``X`` (float64, finite, 2-D, at least one row) and ``y`` (exactly two label values, any
    type) checked; sets ``est.classes_`` and ``est.n_features_in_``. Returns ``(X, y01)`` with ``y01`` the
    labels as 0/1 (``int64``: 1 for ``classes_[1]``)."""
    from sklearn.utils.multiclass import check_classification_targets, type_of_target
    from sklearn.utils.validation import validate_data

    _numeric_X(X)
    if y is None:
        raise FairDashError(f"{type(est).__name__} requires y to be passed, but the target y is None.")
    try:
        X, y = validate_data(est, X, y, dtype=np.float64, y_numeric=False)
        check_classification_targets(y)
    except (ValueError, TypeError) as e:
        raise _plain(e) from None
    classes, y01 = np.unique(y, return_inverse=True)
    if len(classes) < 2:
        raise FairDashError("The training labels hold one class only; a classifier needs two (e.g. 0 and 1).")
    if len(classes) > 2 or type_of_target(y) != "binary":
        raise FairDashError(f"Only binary classification is supported. {type(est).__name__} needs labels y with "
                            f"exactly two values, not {len(classes)}.")
    est.classes_ = classes
    return X, y01.astype(np.int64).reshape(-1)


def predict_X(est, X) -> np.ndarray:
    """``predict``'s ``X``: float64, finite, 2-D, with the number of columns ``est`` was fitted on."""
    from sklearn.utils.validation import validate_data

    _numeric_X(X)
    try:
        return validate_data(est, X, dtype=np.float64, reset=False)
    except (ValueError, TypeError) as e:
        raise _plain(e) from None


def labels(est, positive: np.ndarray) -> np.ndarray:
    """Boolean decisions as ``est.classes_`` labels (``True``: the positive label ``classes_[1]``)."""
    return est.classes_[np.asarray(positive, dtype=bool).astype(np.int64)]
