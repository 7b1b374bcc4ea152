"""Post-processing that decides with s: fairlearn's ``ThresholdOptimizer`` (Hardt et al.) on a logistic
regression, the method an analyst who may use the protected attribute when deciding would pick instead.

It fits a logistic regression on ``X`` (without ``s``), then fairlearn's ``ThresholdOptimizer`` chooses,
for each group, a randomised threshold on the regression's probability that maximises accuracy under
the constraint (demographic parity, or true-positive-rate parity for equality of opportunity). Deciding
needs each row's group: ``predict(X, s)``. The randomised draws are reproducible: row ``i`` of a batch is
positive when its probability of a positive is at least ``u_i``, ``u = RandomState(random_state).rand(n)``,
exactly as fairlearn's ``ThresholdOptimizer.predict(X, sensitive_features=s, random_state=random_state)`` does.
"""
from __future__ import annotations

import numbers

import numpy as np
from scipy.special import expit
from sklearn.base import ClassifierMixin
from sklearn.utils.validation import check_is_fitted

from ..errors import FairDashError
from ..targeting.criteria import CRITERIA, DEFAULT, criterion_info
from .core import inputs as I
from .core import params as P
from .core.base import FITTED_INPUT_ATTRIBUTES, RANDOM_STATE_OF_DRAWS, Estimator, example
from .core.inputs import check_s
from .core.state import check_state, make_state

__all__ = ["ThresholdOptimizerModel"]

_RULE_COLUMNS = ("p0", "op0", "t0", "p1", "op1", "t1", "p_ignore", "constant")  # op: +1 for '>', -1 for '<'


class ThresholdOptimizerModel(I.BinaryClassifierMixin, ClassifierMixin, Estimator):
    """Logistic regression (``C``) post-processed by fairlearn's ``ThresholdOptimizer`` with the
    criterion's constraint; ``grid_size`` is fairlearn's threshold grid. Needs ``s`` at fit and at
    prediction (``needs_s_to_predict``): it decides with s.

    Parameters
    ----------
    criterion : str, default=criteria.DEFAULT (demographic parity)
        The constraint, by its criterion's name in :mod:`fairdash.targeting.criteria` (``criteria.CRITERIA``:
        ``dp`` or ``eo``; ``make_model`` takes it from the run's TargetSpec).
    C : float, default=1.0
        Inverse L2 strength of the logistic regression.
    grid_size : int, default=1000
        fairlearn's threshold grid.
    %s

    Attributes
    ----------
    %s
    coef_ : ndarray of shape (n_features_in_,)
        The logistic regression's weights.
    intercept_ : float
        Its constant.
    rules_ : ndarray of shape (n_groups, 8)
        Each group's randomised threshold rule (``p0, op0, t0, p1, op1, t1, p_ignore, constant``).

    %s
    """

    needs_s_to_predict = True

    _parameter_constraints = {
        "criterion": [P.Options(CRITERIA)],
        "C": [P.Interval(numbers.Real, 0, None, "neither")],
        "grid_size": [P.Interval(numbers.Integral, 2, None)],
        "random_state": [P.SEED, P.NONE],
    }

    _words = "The threshold optimizer"

    def __init__(self, *, criterion: str = DEFAULT, C: float = 1.0, grid_size: int = 1000,
                 random_state: int | None = 0):
        self.criterion = criterion
        self.C = C
        self.grid_size = grid_size
        self.random_state = random_state

    def _fit(self, X, y, s):
        import warnings

        from fairlearn.postprocessing import ThresholdOptimizer
        from sklearn.linear_model import LogisticRegression

        X, y = I.fit_inputs(self, X, y)
        s = check_s(s, len(y), self._words)
        lr = LogisticRegression(C=self.C, max_iter=1000).fit(X, y)
        opt = ThresholdOptimizer(estimator=lr, constraints=criterion_info(self.criterion).fairlearn_threshold,
                                 objective="accuracy_score",
                                 grid_size=self.grid_size, prefit=True, predict_method="predict_proba")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            opt.fit(X, y, sensitive_features=s)
        G = int(s.max()) + 1
        rules = np.zeros((G, len(_RULE_COLUMNS)))
        rules[:, 0] = 1.0  # a group fairlearn has no rule for would be predicted by "> inf": never positive
        rules[:, 1], rules[:, 2] = 1.0, np.inf
        for key, r in opt.interpolated_thresholder_.interpolation_dict.items():
            g = int(key)
            rules[g, :6] = (r.p0, _op(r.operation0), r.operation0.threshold, r.p1, _op(r.operation1),
                            r.operation1.threshold)
            if "p_ignore" in r:
                rules[g, 6:] = (r.p_ignore, r.prediction_constant)
        self.coef_ = np.asarray(lr.coef_, dtype=np.float64).ravel()
        self.intercept_ = float(lr.intercept_[0])
        self.rules_ = rules
        return self

    def base_proba(self, X) -> np.ndarray:
        """The logistic regression's probability of a positive, before the per-group rule."""
        check_is_fitted(self, "coef_")
        X = I.predict_X(self, X)
        return expit(X @ self.coef_ + self.intercept_)

    def _positive_probs(self, X, s) -> np.ndarray:
        p = self.base_proba(X)
        if s is None:
            raise FairDashError("The threshold optimizer decides with s: it needs every row's group to decide.")
        s = check_s(s, p.size, self._words, min_groups=1)  # the one check of s, at prediction too
        if s.size and s.max() >= len(self.rules_):
            raise FairDashError("A row belongs to a group the threshold optimizer was not trained on.")
        r = self.rules_[s]
        first = r[:, 0] * _apply(r[:, 1], p, r[:, 2])
        second = r[:, 3] * _apply(r[:, 4], p, r[:, 5])
        out = first + second
        return r[:, 6] * r[:, 7] + (1.0 - r[:, 6]) * out

    def predict_proba(self, X, s=None) -> np.ndarray:
        p1 = self._positive_probs(X, s)
        return np.column_stack([1.0 - p1, p1])

    def predict(self, X, s=None) -> np.ndarray:
        """Randomised, as fairlearn's: each row positive with its probability, drawn from ``random_state``."""
        return I.randomised_labels(self, self._positive_probs(X, s), self.random_state)

    def get_state(self) -> dict:
        check_is_fitted(self, "coef_")
        return make_state(self, {"coef": self.coef_, "rules": self.rules_},
                          {"intercept": self.intercept_, "classes": self.classes_.tolist()})

    @classmethod
    def from_state(cls, state: dict) -> "ThresholdOptimizerModel":
        arrays, meta = check_state(state, cls)
        m = cls.from_params(meta["params"])
        m.coef_ = np.asarray(arrays["coef"], dtype=np.float64).ravel()
        m.rules_ = np.asarray(arrays["rules"], dtype=np.float64).reshape(-1, len(_RULE_COLUMNS))
        m.intercept_ = float(meta["intercept"])
        m.classes_ = np.asarray(meta.get("classes", [0, 1]))
        m.n_features_in_ = len(m.coef_)
        return m


def _op(operation) -> float:
    return 1.0 if operation.operator == ">" else -1.0


def _apply(op, p, t) -> np.ndarray:
    return np.where(op > 0, p > t, p < t).astype(float)


ThresholdOptimizerModel.__doc__ %= (RANDOM_STATE_OF_DRAWS, FITTED_INPUT_ATTRIBUTES, example(
    "from fairdash.models.postprocessing import ThresholdOptimizerModel", "ThresholdOptimizerModel()",
    "    >>> model.predict(X[:3], s[:3]).shape\n    (3,)"))
