"""The paper's non-Zafar baselines: an RBF SVM, Kamiran & Calders reweighing, and Agarwal et al.'s
exponentiated-gradient reduction (``docs/METHOD.md``, "Baselines, as the paper's comparison ran them").

All three follow the registry's contract: scikit-learn style, ``fit(X, y, s=None)`` with ``s`` used at
fit time only (and not at all by the SVM), ``predict`` / ``predict_proba`` from ``X`` alone, and a safe
``get_state`` / ``from_state`` (numpy arrays plus JSON metadata; nothing is pickled). Each fitted model
predicts from its stored arrays, so a model rebuilt from its state predicts exactly like the original.
"""
from __future__ import annotations

import numbers

import numpy as np
from scipy.special import expit
from sklearn.base import ClassifierMixin
from sklearn.utils.validation import check_is_fitted

from ..targeting.criteria import CRITERIA, DEFAULT, criterion_info
from .core import inputs as I
from .core import mixture as M
from .core import params as P
from .core.base import FITTED_INPUT_ATTRIBUTES, RANDOM_STATE_OF_DRAWS, Estimator, example
from .core.common import one_blas_thread, proba_from_p1
from .core.inputs import check_s
from .core.state import check_state, make_state

__all__ = ["SVM", "KamiranReweighing", "AgarwalReduction"]

# --------------------------------------------------------------------------------------------------
# SVM
# --------------------------------------------------------------------------------------------------
class _DecisionClassifier:
    """``predict`` (decision value > 0) and ``predict_proba`` (its sigmoid) from ``decision_function``."""

    def predict_proba(self, X) -> np.ndarray:
        return proba_from_p1(expit(self.decision_function(X)))

    def predict(self, X) -> np.ndarray:
        return I.labels(self, self.decision_function(X) > 0)


class SVM(_DecisionClassifier, I.BinaryClassifierMixin, ClassifierMixin, Estimator):
    """RBF support vector machine, as the paper ran it: ``SVC(C=1, kernel="rbf", gamma="auto")``.

    Formulation: libsvm's C-SVC with kernel ``exp(-gamma ||x - x'||^2)``; ``gamma="auto"`` means
    ``1 / n_features`` (not scikit-learn's default ``"scale"``). ``s`` is not used at all (a plain
    model, kept as a reference in every comparison); ``fit`` accepts and ignores it.

    Defaults: ``C=1.0``, ``gamma="auto"``, ``cache_size=2000`` (MB of kernel cache: the one knob that
    makes a fit on Adult's 36k rows take minutes instead of much longer, without changing the result),
    ``tol=1e-3`` and ``max_iter=-1`` (no limit; a positive value bounds the solver's iterations, at the
    price of an unconverged, warned-about solution).

    Scores: ``decision_function(x) = sum_j dual_coef_j * exp(-gamma_ ||x - sv_j||^2) + intercept_``,
    computed from the stored support vectors in chunks (equal to ``SVC.decision_function`` up to
    rounding). ``predict`` is ``decision > 0``. ``predict_proba`` squashes the decision value through
    a logistic sigmoid, ``P(y=1|x) = 1 / (1 + exp(-decision))``: monotone, 0.5 at the boundary, but not
    calibrated (``SVC(probability=True)`` would refit five times with Platt scaling, too slow here).

    Parameters
    ----------
    C : float, default=1.0
        libsvm's penalty of margin violations.
    gamma : {"auto", "scale"} or float, default="auto"
        The RBF kernel's gamma (``"auto"``: ``1 / n_features``, as the paper ran it).
    cache_size : float, default=2000.0
        MB of kernel cache.
    tol : float, default=1e-3
        libsvm's stopping tolerance.
    max_iter : int, default=-1
        Solver iterations; -1: no limit.

    Attributes
    ----------
    %s
    support_vectors_ : ndarray of shape (n_SV, n_features_in_)
        The support vectors.
    dual_coef_ : ndarray of shape (n_SV,)
        Their dual coefficients (signed by class).
    intercept_ : float
        The decision function's constant.
    gamma_ : float
        The gamma used.
    n_support_ : ndarray of shape (2,)
        Support vectors per class.
    n_iter_ : int
        libsvm's iterations.

    %s
    """


    _parameter_constraints = {
        "C": [P.Interval(numbers.Real, 0, None, "neither")],
        "gamma": [P.Options(("auto", "scale")), P.Interval(numbers.Real, 0, None, "neither")],
        "cache_size": [P.Interval(numbers.Real, 0, None, "neither")],
        "tol": [P.Interval(numbers.Real, 0, None, "neither")],
        "max_iter": [P.Interval(numbers.Integral, -1, None)],
    }

    def __init__(self, *, C: float = 1.0, gamma="auto", cache_size: float = 2000.0, tol: float = 1e-3,
                 max_iter: int = -1):
        self.C = C
        self.gamma = gamma
        self.cache_size = cache_size
        self.tol = tol
        self.max_iter = max_iter

    def _fit(self, X, y, s):
        from sklearn.svm import SVC

        X, y = I.fit_inputs(self, X, y)
        gamma = _gamma_value(self.gamma, X)  # scikit-learn's rule for "auto"/"scale", resolved here (public API)
        svc = SVC(C=self.C, kernel="rbf", gamma=gamma, cache_size=self.cache_size, tol=self.tol,
                  max_iter=self.max_iter)
        svc.fit(X, y)
        self.support_vectors_ = np.ascontiguousarray(svc.support_vectors_, dtype=np.float64)
        self.dual_coef_ = np.asarray(svc.dual_coef_, dtype=np.float64).ravel()
        self.intercept_ = float(np.asarray(svc.intercept_).ravel()[0])
        self.gamma_ = gamma
        self.n_support_ = np.asarray(svc.n_support_, dtype=np.int64)
        self.n_iter_ = int(np.asarray(svc.n_iter_).ravel()[0])
        return self

    def decision_function(self, X, chunk_rows: int = 2048) -> np.ndarray:
        check_is_fitted(self, "support_vectors_")
        X = I.predict_X(self, X)
        sv = self.support_vectors_
        sv_sq = np.einsum("ij,ij->i", sv, sv)
        out = np.empty(len(X))
        for start in range(0, len(X), chunk_rows):
            xb = X[start:start + chunk_rows]
            d2 = np.einsum("ij,ij->i", xb, xb)[:, None] + sv_sq[None, :] - 2.0 * (xb @ sv.T)
            np.maximum(d2, 0.0, out=d2)
            np.exp(-self.gamma_ * d2, out=d2)
            out[start:start + chunk_rows] = d2 @ self.dual_coef_ + self.intercept_
        return out

    def get_state(self) -> dict:
        check_is_fitted(self, "support_vectors_")
        arrays = {"support_vectors": self.support_vectors_, "dual_coef": self.dual_coef_,
                  "n_support": self.n_support_}
        meta = {"intercept": self.intercept_, "gamma_value": self.gamma_, "n_iter": self.n_iter_,
                "classes": self.classes_.tolist()}
        return make_state(self, arrays, meta)

    @classmethod
    def from_state(cls, state: dict) -> "SVM":
        arrays, meta = check_state(state, cls)
        m = cls.from_params(meta["params"])
        m.support_vectors_ = np.ascontiguousarray(arrays["support_vectors"], dtype=np.float64)
        m.dual_coef_ = np.asarray(arrays["dual_coef"], dtype=np.float64).ravel()
        m.n_support_ = np.asarray(arrays["n_support"], dtype=np.int64)
        m.intercept_ = float(meta["intercept"])
        m.gamma_ = float(meta["gamma_value"])
        m.n_iter_ = int(meta.get("n_iter", 0))
        m.classes_ = np.asarray(meta.get("classes", [0, 1]))
        m.n_features_in_ = m.support_vectors_.shape[1]
        return m


def _gamma_value(gamma, X) -> float:
    """The RBF kernel's gamma as scikit-learn resolves it: ``"auto"`` is ``1 / n_features``, ``"scale"`` is
    ``1 / (n_features * X.var())`` (1 where the variance is 0), a number is itself."""
    if gamma == "auto":
        return 1.0 / X.shape[1]
    if gamma == "scale":
        var = float(X.var())
        return 1.0 / (X.shape[1] * var) if var != 0 else 1.0
    return float(gamma)


# --------------------------------------------------------------------------------------------------
# Kamiran & Calders
# --------------------------------------------------------------------------------------------------
def kamiran_weights(y, s) -> np.ndarray:
    """Kamiran & Calders reweighing: row in cell ``(s, y)`` gets ``n_s * n_y / (N * n_sy)``.

    That is ``P(s) P(y) / P(s, y)``; the weights sum to ``N`` and, in the weighted data, every cell's
    total weight is ``P(s) P(y) N``, so ``s`` and ``y`` are independent. Works for any number of groups.
    A cell with no rows (a group with only one label) gets no weight, so then the weights sum to less
    than ``N``.
    """
    y = np.asarray(y).astype(np.int64).ravel()
    s = np.asarray(s).astype(np.int64).ravel()
    n = len(y)
    n_s = np.bincount(s)
    n_y = np.bincount(y, minlength=2)
    G = len(n_s)
    n_sy = np.bincount(s * 2 + y, minlength=2 * G).reshape(G, 2)
    with np.errstate(divide="ignore", invalid="ignore"):
        w_cell = n_s[:, None] * n_y[None, :] / (n * n_sy.astype(float))
    return w_cell[s, y]


class KamiranReweighing(_DecisionClassifier, I.BinaryClassifierMixin, ClassifierMixin, Estimator):
    """Kamiran & Calders reweighing, then logistic regression (demographic parity).

    Formulation: each training row in cell ``(s, y)`` gets weight ``P(s) P(y) / P(s, y)`` =
    ``n_s * n_y / (N * n_sy)`` (weights sum to ``N``; in the weighted data ``s`` and ``y`` are
    independent); then a logistic regression (``C=C``, intercept not penalised) is fitted on ``X``
    with these ``sample_weight``: ``WeightedLR``, which solves scikit-learn's
    ``LogisticRegression(C=C).fit(X, y, sample_weight)`` problem on FairDash's L-BFGS solver (on
    ``device``: ``"auto"``, ``"cpu"`` or ``"cuda"``, resolved by ``fairdash.device``). Any number of
    groups works.

    Needs from ``s``: the group code of every training row (``s`` is not a feature and is not used at
    prediction time). A group with a label missing (an empty cell) simply contributes no rows to it.

    Defaults: ``C=1.0``, ``device="auto"``. ``random_state`` is stored for the interface (the fit is
    deterministic).
    Scores: ``decision_function = X @ coef_ + intercept_``, ``predict_proba`` its sigmoid, ``predict``
    is ``decision > 0``.

    Parameters
    ----------
    C : float, default=1.0
        Inverse L2 strength of the weighted logistic regression.
    random_state : int or None, default=0
        Kept for the common interface; the fit is deterministic.
    device : str, default="auto"
        Where the weighted fit runs (``fairdash.device.resolve_device``).

    Attributes
    ----------
    %s
    coef_ : ndarray of shape (n_features_in_,)
        The weights of the decision function.
    intercept_ : float
        Its constant.
    sample_weight_ : ndarray of shape (n_samples,)
        The reweighing's row weights.
    device_ : str
        Where the weighted fit ran.
    converged_ : bool
        Whether the weighted fit reached its tolerance (not its iteration cap); read back from a model file
        where it was written (absent from files written before it was recorded).

    %s
    """


    _parameter_constraints = {
        "C": [P.Interval(numbers.Real, 0, None, "neither")],
        "random_state": [P.SEED, P.NONE],
        "device": [P.DEVICE, P.NONE],
    }

    _words = "Kamiran & Calders reweighing"

    def __init__(self, *, C: float = 1.0, random_state: int | None = 0, device="auto"):
        self.C = C
        self.random_state = random_state
        self.device = device

    def _fit(self, X, y, s):
        X, y = I.fit_inputs(self, X, y)
        s = check_s(s, len(y), self._words)
        w = kamiran_weights(y, s)
        lr = M.inner_lr(C=self.C, device=self.device)
        with one_blas_thread():
            lr.fit(X, y, sample_weight=w)
        self.sample_weight_ = w
        self.device_ = lr.device_  # where the weighted fit ran (what the results' device column says)
        self.converged_ = bool(lr.converged_)
        self.coef_ = np.asarray(lr.coef_, dtype=np.float64).ravel()
        self.intercept_ = float(lr.intercept_[0])
        return self

    def decision_function(self, X) -> np.ndarray:
        check_is_fitted(self, "coef_")
        X = I.predict_X(self, X)
        return X @ self.coef_ + self.intercept_

    def get_state(self) -> dict:
        check_is_fitted(self, "coef_")
        return make_state(self, {"coef": self.coef_}, {"intercept": self.intercept_, "classes": self.classes_.tolist(),
                                                       "converged": getattr(self, "converged_", None)})

    @classmethod
    def from_state(cls, state: dict) -> "KamiranReweighing":
        arrays, meta = check_state(state, cls)
        m = cls.from_params(meta["params"])
        m.coef_ = np.asarray(arrays["coef"], dtype=np.float64).ravel()
        m.intercept_ = float(meta["intercept"])
        m.classes_ = np.asarray(meta.get("classes", [0, 1]))
        m.n_features_in_ = len(m.coef_)
        if meta.get("converged") is not None:
            m.converged_ = bool(meta["converged"])
        return m


# --------------------------------------------------------------------------------------------------
# Agarwal et al.
# --------------------------------------------------------------------------------------------------
class AgarwalReduction(I.BinaryClassifierMixin, ClassifierMixin, Estimator):
    """Agarwal et al.'s reductions approach: fairlearn's ``ExponentiatedGradient`` around a weighted
    logistic regression (``C=C``).

    Formulation: ``ExponentiatedGradient(WeightedLR(C=1), constraints=..., eps=0.1, max_iter=50)``
    fitted with ``sensitive_features=s``. ``WeightedLR`` solves scikit-learn's
    ``LogisticRegression(C=C).fit(X, y, sample_weight)`` problem (the paper's inner learner) on
    FairDash's L-BFGS solver, on ``device`` (``"auto"``, ``"cpu"``, ``"cuda"``; ``fairdash.device``
    decides), in a fraction of its time; the best responses of one fit share a
    ``weighted_lr.FitMemory`` (made per fit: the prepared matrix, warm starts from the last solution
    with the same labels), each still solved to the same tolerance. The constraint is
    ``DemographicParity(difference_bound=0.1)`` for demographic parity and
    ``TruePositiveRateParity(difference_bound=0.1)`` for equality of opportunity (the criterion's
    ``fairlearn`` constraint, :mod:`fairdash.targeting.criteria`); a fresh constraint object
    is made for every fit. In fairlearn >= 0.5 ``eps`` only caps the Lagrange multipliers (``B = 1/eps``);
    the allowed violation is ``difference_bound``, measured between each group's rate and the overall
    rate (so two groups may differ by up to ``bound / largest group share``).

    The result is a randomised classifier: a mixture of the best-response classifiers (each a logistic
    regression, or a constant when a best response needed only one label) with weights ``weights_``.
    ``predict_proba`` is the mixture's probability of a positive (fairlearn's ``_pmf_predict``).
    ``predict`` draws, for row ``i`` of the batch, ``1`` if ``P_i >= u_i`` with
    ``u = RandomState(random_state).rand(n)``, exactly as ``ExponentiatedGradient.predict(X, random_state=...)``
    does: the same batch always gets the same labels, but a row's label can depend on its position in
    the batch.

    Needs from ``s``: the group code of every training row (fit time only). Any number of groups.
    Defaults: ``difference_bound=0.1``, ``eps=0.1``, ``max_iter=50``, ``C=1.0``, ``random_state=0``,
    ``device="auto"``.

    ``progress`` (optional): a callable ``progress(fraction, message)`` (``fairdash.progress``), told of
    every best-response fit (one logistic regression) as it ends. fairlearn has no progress hook, so the
    fits are counted through a thin estimator around the logistic regression (``mixture.CountingFits``; public
    API only: ``mixture.CountingFits``). Each iteration of the exponentiated gradient makes one fit, plus one to
    four for its
    duality-gap check and as many again after its linear-programming step, and the fit stops after 5 to
    ``max_iter`` iterations; so the number of fits is not known in advance, and the fraction reported
    is an estimate, ``k / (k + 30)`` after ``k`` fits (Adult and COMPAS take about 25-40), then 1.0 at
    the end.

    Parameters
    ----------
    criterion : str, default=criteria.DEFAULT (demographic parity)
        The constraint, by its criterion's name in :mod:`fairdash.targeting.criteria` (``criteria.CRITERIA``):
        ``dp``, demographic parity, or ``eo``, true-positive-rate parity (``make_model`` takes it from the
        run's TargetSpec).
    difference_bound : float, default=0.1
        The allowed violation, in (0, 1].
    eps : float, default=0.1
        fairlearn's ``eps`` (caps the Lagrange multipliers at ``1 / eps``).
    max_iter : int, default=50
        Most exponentiated-gradient iterations.
    C : float, default=1.0
        Inverse L2 strength of each best response's logistic regression.
    %s
    progress : callable or None, default=None
        ``progress(fraction, message)``, told of every best-response fit.
    device : str, default="auto"
        Where the best responses are fitted.

    Attributes
    ----------
    %s
    coefs_, intercepts_ : ndarray
        Each best-response classifier's weights and constant (a constant classifier: zeros and +-1).
    weights_ : ndarray of shape (n_predictors,)
        The mixture's weights.
    best_gap_ : float
        fairlearn's best duality gap.
    n_oracle_calls_ : int
        Best-response fits.
    last_iter_ : int
        fairlearn's last iteration index; ``n_iter_`` is ``last_iter_ + 1``.
    n_iter_ : int
        Exponentiated-gradient iterations run.
    device_ : str
        Where the fits ran.

    %s
    """


    _words = "Agarwal et al."  # what its progress messages call it
    _parameter_constraints = {
        "criterion": [P.Options(CRITERIA)],
        "difference_bound": [P.Interval(numbers.Real, 0, 1, "right")],
        "eps": [P.Interval(numbers.Real, 0, None, "neither")],
        "max_iter": [P.Interval(numbers.Integral, 1, None)],
        "C": [P.Interval(numbers.Real, 0, None, "neither")],
        "random_state": [P.SEED, P.NONE],
        "progress": [P.CALLABLE, P.NONE],
        "device": [P.DEVICE, P.NONE],
    }

    def __init__(self, *, criterion: str = DEFAULT, difference_bound: float = 0.1, eps: float = 0.1,
                 max_iter: int = 50, C: float = 1.0, random_state: int | None = 0, progress=None, device="auto"):
        self.criterion = criterion
        self.difference_bound = difference_bound
        self.eps = eps
        self.max_iter = max_iter
        self.C = C
        self.random_state = random_state
        self.progress = progress
        self.device = device

    def _constraint(self):
        """A fresh fairlearn constraint of the criterion (``criteria.Criterion.fairlearn_constraint``)."""
        return criterion_info(self.criterion).fairlearn_constraint(difference_bound=self.difference_bound)

    def _fit_expgrad(self, X, y, s):
        """The fitted fairlearn ``ExponentiatedGradient`` (inputs already checked): ``mixture``'s."""
        return M.fit_exponentiated_gradient(self._constraint(), X, y, s, C=self.C, eps=self.eps,
                                            max_iter=self.max_iter, device=self.device, progress=self.progress,
                                            words=self._words)

    def _fit(self, X, y, s):
        X, y = I.fit_inputs(self, X, y)
        s = check_s(s, len(y), self._words)
        M.store_mixture(self, self._fit_expgrad(X, y, s), X.shape[1])
        return self

    def _positive_probs(self, X) -> np.ndarray:
        return M.positive_probs(self, X)

    def predict_proba(self, X) -> np.ndarray:
        return proba_from_p1(self._positive_probs(X))

    def predict(self, X) -> np.ndarray:
        """Randomised, as fairlearn's: each row positive with its probability, drawn from ``random_state``."""
        from sklearn.utils import check_random_state

        p1 = self._positive_probs(X)
        return I.labels(self, p1 >= check_random_state(self.random_state).rand(len(p1)))

    def get_state(self) -> dict:
        return make_state(self, *M.mixture_state(self))

    @classmethod
    def from_state(cls, state: dict) -> "AgarwalReduction":
        arrays, meta = check_state(state, cls)
        return M.mixture_from_state(cls.from_params(meta["params"]), arrays, meta)


SVM.__doc__ = SVM.__doc__ % (FITTED_INPUT_ATTRIBUTES, example("from fairdash.models.baselines import SVM", "SVM()"))
KamiranReweighing.__doc__ = KamiranReweighing.__doc__ % (FITTED_INPUT_ATTRIBUTES, example(
    "from fairdash.models.baselines import KamiranReweighing", 'KamiranReweighing(device="cpu")'))
AgarwalReduction.__doc__ = AgarwalReduction.__doc__ % (RANDOM_STATE_OF_DRAWS, FITTED_INPUT_ATTRIBUTES, example(
    "from fairdash.models.baselines import AgarwalReduction", 'AgarwalReduction(max_iter=5, device="cpu")',
    "    >>> model.predict_proba(X[:3]).shape\n    (3, 2)"))
