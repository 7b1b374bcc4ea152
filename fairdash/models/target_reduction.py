"""A blind route to the analyst's target: Agarwal et al.'s reduction constrained to each group's *own*
target rate (``docs/METHOD.md``, "A blind route to the target").

fairlearn's ``DemographicParity`` holds every group's positive rate near the *overall* positive rate, a
rate of the reduction's choosing. :class:`TargetRateMoment` is a fairlearn ``ClassificationMoment`` of
FairDash's own whose constraints are ``|rate_g(h) - target_g| <= tolerance`` for every group ``g``, the
targets being the analyst's (``TargetSpec.rate_targets`` on the training rows): under demographic parity
each group's positive rate, under equality of opportunity each group's true positive rate.
:class:`TargetReduction` solves it with fairlearn's public ``ExponentiatedGradient`` on FairDash's weighted
solver, exactly as :class:`~fairdash.models.baselines.AgarwalReduction` does, and decides **without s**:
``s`` is used at fit time only, and its decisions are a seeded random draw from the mixture.
"""
from __future__ import annotations

import numbers

import numpy as np
import pandas as pd
from fairlearn.reductions import ClassificationMoment, ErrorRate

from ..target.criteria import criterion_of_rate
from ..errors import FairDashError
from ..target.target_spec import TargetSpec, make_target_spec
from .inputs import check_s
from . import inputs as I
from . import params as P
from .baselines import AgarwalReduction
from .params import check_params
from .state import check_state
from ..target import targets as T

__all__ = ["TargetRateMoment", "TargetReduction", "DEFAULT_TOLERANCE"]

DEFAULT_TOLERANCE = 0.01  # each group's rate within one point of its target on the training rows


class TargetRateMoment(ClassificationMoment):
    """Each group's rate held within ``tolerance`` of its own target: the constraints
    ``rate_g(h) - target_g <= tolerance`` (index ``("+", g)``) and ``target_g - rate_g(h) <= tolerance``
    (``("-", g)``). ``rate`` is ``"pr"`` (the share of the group's rows predicted positive) or ``"tpr"``
    (the share of the group's positives predicted positive). Public fairlearn API only: ``load_data``,
    ``index``, ``gamma``, ``bound``, ``project_lambda``, ``signed_weights``, ``default_objective``.

    ``signed_weights``: the Lagrangian is ``err(h) + sum_k lambda_k (gamma_k - tolerance)``; a row's signed
    weight is ``-n`` times the Lagrangian's derivative in its prediction, as fairlearn's ``ErrorRate`` has it
    (``2y - 1``), so the constraints add ``-n * sum_g (lambda_+g - lambda_-g) * w_ig`` with ``w_ig`` the row's
    weight in group ``g``'s rate (``1 / n_g`` for its members, 0 otherwise)."""

    short_name = "TargetRates"

    def __init__(self, targets=(), tolerance: float = DEFAULT_TOLERANCE, rate: str = "pr"):
        super().__init__()
        self.targets = np.asarray(targets, dtype=float).ravel()
        self.tolerance = float(tolerance)
        self.rate = rate

    def load_data(self, X, y, *, sensitive_features) -> None:
        y = pd.Series(np.asarray(y).astype(int).ravel())
        s = pd.Series(np.asarray(sensitive_features).astype(int).ravel(), index=y.index)
        super().load_data(X, y, sensitive_features=s)
        G = len(self.targets)
        member = (s.to_numpy()[:, None] == np.arange(G)[None, :]).astype(float)
        crit = criterion_of_rate(self.rate)
        member *= crit.rows(y.to_numpy())[:, None]
        counts = member.sum(axis=0)
        if (counts == 0).any():
            g = int(np.flatnonzero(counts == 0)[0])
            raise FairDashError(f"Group {g} has no training rows{crit.rows_words}: its rate cannot be constrained to "
                                "its target.")
        self.row_weights = member / counts  # (n, G): rate_g(h) = h @ row_weights[:, g]
        self._index = pd.MultiIndex.from_product([["+", "-"], range(G)], names=["sign", "group_id"])

    @property
    def index(self) -> pd.MultiIndex:
        return self._index

    def rates(self, predictions) -> np.ndarray:
        return np.squeeze(np.asarray(predictions, dtype=float)) @ self.row_weights

    def gamma(self, predictor) -> pd.Series:
        diff = self.rates(predictor(self.X)) - self.targets
        return pd.Series(np.concatenate([diff, -diff]), index=self.index)

    def bound(self) -> pd.Series:
        return pd.Series(self.tolerance, index=self.index)

    def project_lambda(self, lambda_vec: pd.Series) -> pd.Series:
        """A group's two multipliers netted (only one side of a constraint can bind): the same or a higher
        Lagrangian for every classifier."""
        net = lambda_vec["+"].to_numpy(float) - lambda_vec["-"].to_numpy(float)
        return pd.Series(np.concatenate([np.maximum(net, 0), np.maximum(-net, 0)]), index=self.index)

    def signed_weights(self, lambda_vec: pd.Series) -> pd.Series:
        net = lambda_vec["+"].to_numpy(float) - lambda_vec["-"].to_numpy(float)
        return pd.Series(-self.total_samples * (self.row_weights @ net), index=self.tags.index)

    def default_objective(self):
        return ErrorRate()


class TargetReduction(AgarwalReduction):
    """Each group's population rate constrained to the analyst's target, deciding without s.

    Formulation: ``ExponentiatedGradient(WeightedLR(C), constraints=TargetRateMoment(targets, tolerance),
    eps, max_iter)`` fitted with ``sensitive_features=s``, where ``targets`` are the run's per-group targets
    resolved on the training rows (``target.rate_targets(y, s)``: each group's target positive rate under
    demographic parity, each group's target TPR under equality of opportunity). The result is the same
    randomised mixture of logistic regressions as :class:`~fairdash.models.baselines.AgarwalReduction`'s,
    stored the same way: ``predict_proba`` the mixture's probability of a positive; ``predict`` a draw per row
    from the row itself and ``seed`` (``inputs.row_draws``: the same person gets the same decision in any order,
    batch or file, and one row scored alone lands where it does in the table), never from global state. A model
    file written before draws were per row (``row_draws_`` false) keeps drawing by position in the batch, as it
    did.

    Needs from ``s``: every training row's group (fit time only); ``predict`` never takes it.

    Parameters
    ----------
    target : TargetSpec or None, default=None
        The run's target (``make_model`` hands it over); ``None``: demographic parity at the avg preset. A
        target conditional on a legitimate factor is refused.
    tolerance : float, default=0.01
        How far each group's training rate may stay from its target, in (0, 1).
    eps : float, default=0.01
        fairlearn's ``eps``: the multipliers are capped at ``1 / eps`` (tight constraints need large ones).
    max_iter : int, default=50
        Most exponentiated-gradient iterations.
    C : float, default=1.0
        Inverse L2 strength of each best response's logistic regression.
    seed : int or None, default=0
        The seed of ``predict``'s draws.
    progress : callable or None, default=None
        ``progress(fraction, message)``, told of every best-response fit.
    device : str, default="auto"
        Where the best responses are fitted.

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
        The two labels seen at fit, sorted; the second is the positive label.
    n_features_in_ : int
        Number of feature columns seen at fit.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Column names of a data frame ``X`` at fit (only then).
    targets_ : ndarray of shape (n_groups,)
        Each group's target rate, as resolved on the training rows.
    target_rate_ : float or None
        The single ``PR_t`` of the target (``None`` for explicit TPR/TNR targets).
    train_rates_ : ndarray of shape (n_groups,)
        Each group's rate under the mixture's probabilities on the training rows.
    row_draws_ : bool
        Whether ``predict`` draws each row's decision from the row itself (every fit; ``False`` only for a
        model file written before, which draws by position in the batch).
    coefs_, intercepts_, weights_, best_gap_, n_oracle_calls_, last_iter_, n_iter_, device_
        As :class:`~fairdash.models.baselines.AgarwalReduction`'s.
    """

    _words = "Target reduction"
    _parameter_constraints = {
        "target": [P.InstanceOf(TargetSpec, "a TargetSpec (fairdash.target.target_spec.make_target_spec)"), P.NONE],
        "tolerance": [P.Interval(numbers.Real, 0, 1, "neither")],
        "eps": [P.Interval(numbers.Real, 0, None, "neither")],
        "max_iter": [P.Interval(numbers.Integral, 1, None)],
        "C": [P.Interval(numbers.Real, 0, None, "neither")],
        "seed": [P.SEED, P.NONE],
        "progress": [P.CALLABLE, P.NONE],
        "device": [P.DEVICE, P.NONE],
    }

    def __init__(self, target=None, tolerance: float = DEFAULT_TOLERANCE, eps: float = 0.01, max_iter: int = 50,
                 C: float = 1.0, seed: int | None = 0, progress=None, device="auto"):
        self.target = target
        self.tolerance = tolerance
        self.eps = eps
        self.max_iter = max_iter
        self.C = C
        self.seed = seed
        self.progress = progress
        self.device = device

    def _spec(self) -> TargetSpec:
        spec = make_target_spec() if self.target is None else self.target
        if spec.conditional:
            raise FairDashError("The target reduction constrains each group's rate over all rows; it cannot be "
                                "combined with a legitimate factor (conditional parity).")
        return spec

    def _constraint(self):
        return TargetRateMoment(self.targets_, self.tolerance, self._rate)

    def fit(self, X, y, s=None, strata=None):
        check_params(self)
        if strata is not None:
            self._spec()  # refuses a conditional target in words
        X, y = I.fit_inputs(self, X, y)
        s = check_s(s, len(y), self._words)

        spec = self._spec()
        y01 = y  # fit_inputs gives the labels as 0/1 (1 for classes_[1])
        G = int(s.max()) + 1
        goal = spec.rate_targets(y01, s, None, G)
        self._rate = goal.rate
        self.targets_ = np.asarray(goal.group, dtype=float)
        self.target_rate_ = spec.rate_for(T.base_rates(y01, s, G))
        self._store_mixture(self._fit_expgrad(X, y, s), X.shape[1])
        moment = TargetRateMoment(self.targets_, self.tolerance, self._rate)
        moment.load_data(X, y01, sensitive_features=s)
        self.train_rates_ = moment.rates(self._positive_probs(X))
        self.row_draws_ = True
        return self

    def predict(self, X) -> np.ndarray:
        """Randomised: each row positive with the mixture's probability, drawn from the row itself and ``seed``."""
        X = I.predict_X(self, X)
        return I.randomised_labels(self, self._positive_probs(X), 0 if self.seed is None else self.seed,
                                   X if self.row_draws_ else None)

    def get_state(self) -> dict:
        state = super().get_state()
        state["arrays"]["targets"] = self.targets_
        state["arrays"]["train_rates"] = self.train_rates_
        state["meta"]["target_rate"] = self.target_rate_
        state["meta"]["draws"] = "row" if self.row_draws_ else "position"
        return state

    @classmethod
    def from_state(cls, state: dict) -> "TargetReduction":
        arrays, meta = check_state(state, cls)
        params = dict(meta["params"])
        if params.get("target") is not None:
            params["target"] = TargetSpec.from_dict(params["target"])
        m = cls._mixture_from_state(cls(**params), arrays, meta)
        m.targets_ = np.asarray(arrays["targets"], dtype=np.float64).ravel()
        m.train_rates_ = np.asarray(arrays["train_rates"], dtype=np.float64).ravel()
        m.target_rate_ = meta.get("target_rate")
        m.row_draws_ = meta.get("draws") == "row"  # files written before draws were per row: by position
        return m
