"""A randomised mixture of logistic regressions from fairlearn's ``ExponentiatedGradient``, composed into the two
reductions that decide by it (:class:`~fairdash.models.baselines.AgarwalReduction` and
:class:`~fairdash.models.target_reduction.TargetReduction`): neither inherits from the other (docs/ARCHITECTURE.md:
no estimator imports another for a helper).

:func:`fit_exponentiated_gradient` runs fairlearn's public ``ExponentiatedGradient`` on FairDash's ``WeightedLR``
(its best responses share a ``weighted_lr.FitMemory``) and counts its fits for ``progress``; :func:`store_mixture`
keeps the fitted mixture on the estimator as arrays (``coefs_``, ``intercepts_``, ``weights_``, ``best_gap_``,
``n_oracle_calls_``, ``last_iter_``, ``n_iter_``, ``device_``); :func:`positive_probs` is the mixture's probability
of a positive (fairlearn's ``_pmf_predict``); :func:`mixture_state` and :func:`mixture_from_state` its safe state.
"""
from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted

from ...device import resolve_device
from ...errors import FairDashError
from ...progress import as_progress
from . import inputs as I
from .common import one_blas_thread
from .weighted_lr import FitMemory, WeightedLR

LR_MAX_ITER = 1000  # L-BFGS iterations for every inner logistic regression (at most; Adult needs 25-100)


def inner_lr(*, C: float, device="auto") -> WeightedLR:
    """The inner learner of Kamiran & Calders and the reductions: ``WeightedLR`` (scikit-learn's weighted logistic
    regression problem on FairDash's L-BFGS solver, on ``device``); its fit is deterministic (nothing to seed)."""
    return WeightedLR(C=C, max_iter=LR_MAX_ITER, device=device)


class CountingFits(ClassifierMixin, BaseEstimator):
    """``estimator`` (cloned, then fitted) that calls ``on_fit()`` after each fit: how a reduction's progress is
    counted. fairlearn's ``ExponentiatedGradient`` clones the estimator it is given and fits one best response per
    iteration; it has no progress hook of its own. Predicts exactly as the fitted estimator does (``fitted_``).

    ``memory``: a ``weighted_lr.FitMemory`` handed to every fit of a ``WeightedLR`` (its ``fit``'s ``memory``), so
    that the best responses of one reduction share the prepared matrix and start from each other's solutions; it
    also spares ``predict`` the checks of a matrix it has already checked. ``None`` for any other estimator."""

    def __init__(self, *, estimator=None, on_fit=None, memory=None):
        self.estimator = estimator
        self.on_fit = on_fit
        self.memory = memory

    def fit(self, X, y, sample_weight=None):
        from sklearn.base import clone  # lazy: as fairlearn calls it, once per best response

        extra = {} if self.memory is None else {"memory": self.memory}
        self.fitted_ = clone(self.estimator).fit(X, y, sample_weight=sample_weight, **extra)
        self.classes_ = self.fitted_.classes_
        if self.on_fit is not None:
            self.on_fit()
        return self

    def predict(self, X):
        if self.memory is not None and self.memory.holds(X):  # fairlearn's many predictions on the training X
            return self.fitted_.labels_of_decision(self.memory.scores(self.fitted_))
        return self.fitted_.predict(X)


def fit_exponentiated_gradient(constraint, X, y, s, *, C, eps, max_iter, device, progress, words: str):
    """The fitted fairlearn ``ExponentiatedGradient`` with ``constraint`` (inputs already checked), its best
    responses ``inner_lr(C, device)``; ``progress`` told of each fit, as ``k / (k + 30)`` after ``k`` fits (the
    number of fits is not known in advance), its messages naming the model (``words``)."""
    import warnings

    from fairlearn.reductions import ExponentiatedGradient  # lazy: heavy, defers fairlearn

    report = as_progress(progress)
    fits = [0]

    def one_more_fit() -> None:  # a plain function: fairlearn's clone() keeps it as it is
        fits[0] += 1
        k = fits[0]
        report(k / (k + 30), f"{words}: best-response fit {k} (exponentiated gradient, at most {max_iter} iterations)")

    report(0.0, f"{words}: starting the exponentiated gradient")
    inner = inner_lr(C=C, device=device)
    # the best responses of this fit share the prepared matrix and their solutions (made here, dropped with the fit)
    memory = FitMemory() if isinstance(inner, WeightedLR) else None
    counted = CountingFits(estimator=inner, on_fit=one_more_fit, memory=memory)
    eg = ExponentiatedGradient(counted, constraints=constraint, eps=eps, max_iter=max_iter)
    with warnings.catch_warnings(), one_blas_thread():
        warnings.simplefilter("ignore", FutureWarning)
        eg.fit(X, y, sensitive_features=s)
    report(1.0, f"{words}: done after {int(eg.last_iter_) + 1} iteration(s), {fits[0]} fit(s)")
    return eg


def store_mixture(est, eg, d: int) -> None:
    """Keep the fitted ``ExponentiatedGradient``'s mixture on ``est`` as arrays (and where its fits ran)."""
    coefs, intercepts, weights = [], [], []
    for idx in eg.weights_.index:  # the order fairlearn's _pmf_predict sums in
        fitted = getattr(eg.predictors_[idx], "fitted_", eg.predictors_[idx])  # unwrap CountingFits
        if hasattr(fitted, "coef_"):
            if list(fitted.classes_) != [0, 1]:
                raise FairDashError("Unexpected classes in a best-response classifier.")
            coefs.append(np.asarray(fitted.coef_, dtype=np.float64).ravel())
            intercepts.append(float(fitted.intercept_[0]))
        else:  # DummyClassifier(strategy="constant")
            const = int(np.asarray(fitted.constant).ravel()[0])
            coefs.append(np.zeros(d))
            intercepts.append(1.0 if const == 1 else -1.0)
        weights.append(float(eg.weights_[idx]))
    est.coefs_ = np.asarray(coefs, dtype=np.float64).reshape(-1, d)
    est.intercepts_ = np.asarray(intercepts, dtype=np.float64)
    est.weights_ = np.asarray(weights, dtype=np.float64)
    est.best_gap_ = float(eg.best_gap_)
    est.n_oracle_calls_ = int(eg.n_oracle_calls_)
    est.last_iter_ = int(eg.last_iter_)
    est.n_iter_ = est.last_iter_ + 1  # exponentiated-gradient iterations run (scikit-learn's name)
    est.device_ = str(resolve_device(est.device))  # where its inner fits ran


def positive_probs(est, X) -> np.ndarray:
    """Each row's probability of a positive under ``est``'s mixture (``X`` checked against the fit)."""
    check_is_fitted(est, "coefs_")
    X = I.predict_X(est, X)
    preds = np.zeros((len(X), len(est.weights_)))
    for j in range(len(est.weights_)):
        if est.weights_[j] != 0:  # fairlearn leaves zero-weight predictors at 0
            # the same expression as LogisticRegression.decision_function, for identical rounding
            scores = (X @ est.coefs_[j:j + 1].T + est.intercepts_[j:j + 1]).ravel()
            preds[:, j] = (scores > 0).astype(np.int64)
    return preds.dot(est.weights_)


def mixture_state(est) -> tuple[dict, dict]:
    """The mixture's ``(arrays, meta)`` for ``make_state``."""
    check_is_fitted(est, "coefs_")
    arrays = {"coefs": est.coefs_, "intercepts": est.intercepts_, "weights": est.weights_}
    meta = {"best_gap": est.best_gap_, "n_oracle_calls": est.n_oracle_calls_, "last_iter": est.last_iter_,
            "classes": est.classes_.tolist()}
    return arrays, meta


def mixture_from_state(m, arrays: dict, meta: dict):
    """``m`` (an unfitted reduction) with the mixture :func:`mixture_state` stored."""
    m.coefs_ = np.asarray(arrays["coefs"], dtype=np.float64)
    m.intercepts_ = np.asarray(arrays["intercepts"], dtype=np.float64).ravel()
    m.weights_ = np.asarray(arrays["weights"], dtype=np.float64).ravel()
    m.best_gap_ = float(meta.get("best_gap", float("nan")))
    m.n_oracle_calls_ = int(meta.get("n_oracle_calls", 0))
    m.last_iter_ = int(meta.get("last_iter", 0))
    m.n_iter_ = m.last_iter_ + 1
    m.classes_ = np.asarray(meta.get("classes", [0, 1]))
    m.n_features_in_ = m.coefs_.shape[1]
    return m
