"""A blind route to the analyst's target: Agarwal et al.'s reduction constrained to each group's *own*
target rate (``docs/METHOD.md``, "A blind route to the target").

fairlearn's ``DemographicParity`` holds every group's positive rate near the *overall* positive rate, a
rate of the reduction's choosing. :class:`TargetRateMoment` is a fairlearn ``ClassificationMoment`` of
FairDash's own whose constraints are ``|rate_g(h) - target_g| <= tolerance`` for every group ``g``, the
targets being the analyst's (``TargetSpec.rate_targets`` on the training rows): under demographic parity
each group's positive rate, under equality of opportunity each group's true positive rate.
:class:`TargetReduction` solves it with fairlearn's public ``ExponentiatedGradient`` on FairDash's weighted
solver, as :class:`~fairdash.models.baselines.AgarwalReduction` does (both compose :mod:`~fairdash.models.core.mixture`;
neither inherits from the other), and decides **without s**: ``s`` is used at fit time only, and its decisions
are a seeded random draw from the mixture.
"""
from __future__ import annotations

import numbers

import numpy as np
import pandas as pd
from fairlearn.reductions import ClassificationMoment, ErrorRate
from sklearn.base import ClassifierMixin

from ..errors import FairDashError
from ..targeting import targets as T
from ..targeting.criteria import Criterion, criterion_info
from ..targeting.target_spec import TargetSpec, make_target_spec
from .core import inputs as I
from .core import mixture as M
from .core import params as P
from .core.base import FITTED_INPUT_ATTRIBUTES, Estimator, example
from .core.common import proba_from_p1
from .core.inputs import check_s
from .core.state import check_state, make_state

__all__ = ["TargetRateMoment", "TargetReduction", "DEFAULT_TOLERANCE"]

DEFAULT_TOLERANCE = 0.01  # each group's rate within one point of its target on the training rows


class TargetRateMoment(ClassificationMoment):
    """Each group's rate held within ``tolerance`` of its own target: the constraints
    ``rate_g(h) - target_g <= tolerance`` (index ``("+", g)``) and ``target_g - rate_g(h) <= tolerance``
    (``("-", g)``). The rate is the criterion's (:class:`~fairdash.targeting.criteria.Criterion`, or its name): the
    share of a group's rows predicted positive under demographic parity, of its positives under equality of
    opportunity. Public fairlearn API only: ``load_data``, ``index``, ``gamma``, ``bound``, ``project_lambda``,
    ``signed_weights``, ``default_objective``.

    ``targets``: each group's target, a mapping from the group's label in ``s`` (any labels: numbers or names) to
    its target, or a sequence with one target per group in the sorted order of the labels ``load_data`` sees.
    Checked here: numbers in [0, 1], a tolerance in (0, 1), a known criterion.

    ``signed_weights``: the Lagrangian is ``err(h) + sum_k lambda_k (gamma_k - tolerance)``; a row's signed
    weight is ``-n`` times the Lagrangian's derivative in its prediction, as fairlearn's ``ErrorRate`` has it
    (``2y - 1``), so the constraints add ``-n * sum_g (lambda_+g - lambda_-g) * w_ig`` with ``w_ig`` the row's
    weight in group ``g``'s rate (``1 / n_g`` for its members, 0 otherwise)."""

    short_name = "TargetRates"

    def __init__(self, *, targets, criterion, tolerance: float = DEFAULT_TOLERANCE):
        super().__init__()
        self.criterion: Criterion = criterion_info(criterion)
        if isinstance(targets, dict):
            self.groups = np.asarray(sorted(targets))
            values = [targets[g] for g in self.groups]
        else:
            self.groups = None  # the labels load_data sees, sorted
            values = list(np.ravel(targets))
        self.targets = np.asarray(values, dtype=float)
        if not self.targets.size or not np.all((self.targets >= 0) & (self.targets <= 1)):
            raise FairDashError("Each group's target rate must be a number between 0 and 1; got "
                                f"{self.targets.tolist()}.")
        if isinstance(tolerance, bool) or not isinstance(tolerance, numbers.Real) or not 0 < tolerance < 1:
            raise FairDashError(f"The tolerance must be a number between 0 and 1; got {tolerance!r}.")
        self.tolerance = float(tolerance)

    def load_data(self, X, y, *, sensitive_features) -> None:
        y = pd.Series(np.asarray(y).astype(int).ravel())
        labels = np.asarray(sensitive_features).ravel()
        groups = np.unique(labels) if self.groups is None else self.groups
        if len(groups) != len(self.targets):
            raise FairDashError(f"{len(self.targets)} target(s) for {len(groups)} group(s) in s: give one per group.")
        codes = pd.Series(_codes(labels, groups), index=y.index)
        super().load_data(X, y, sensitive_features=codes)
        member = (codes.to_numpy()[:, None] == np.arange(len(groups))[None, :]).astype(float)
        member *= self.criterion.rows(y.to_numpy())[:, None]
        counts = member.sum(axis=0)
        if (counts == 0).any():
            g = groups[int(np.flatnonzero(counts == 0)[0])]
            raise FairDashError(f"Group {g} has no training rows{self.criterion.rows_words}: its rate cannot be "
                                "constrained to its target.")
        self.row_weights = member / counts  # (n, G): rate_g(h) = h @ row_weights[:, g]
        self._index = pd.MultiIndex.from_product([["+", "-"], range(len(groups))], names=["sign", "group_id"])
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


class TargetReduction(I.BinaryClassifierMixin, ClassifierMixin, Estimator):
    """Each group's population rate constrained to the analyst's target, deciding without s.

    Formulation: ``ExponentiatedGradient(WeightedLR(C), constraints=TargetRateMoment(targets, tolerance),
    eps, max_iter)`` fitted with ``sensitive_features=s``, where ``targets`` are the run's per-group targets
    resolved on the training rows (``target.rate_targets(y, s)``: each group's target positive rate under
    demographic parity, each group's target TPR under equality of opportunity). The result is the same
    randomised mixture of logistic regressions as :class:`~fairdash.models.baselines.AgarwalReduction`'s,
    stored the same way: ``predict_proba`` the mixture's probability of a positive; ``predict`` a draw per row
    from the row itself and ``random_state`` (``inputs.row_draws``: the same person gets the same decision in any order,
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
    random_state : int or None, default=0
        The seed of ``predict``'s draws.
    progress : callable or None, default=None
        ``progress(fraction, message)``, told of every best-response fit.
    device : str, default="auto"
        Where the best responses are fitted.

    Attributes
    ----------
    %s
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
        As :class:`~fairdash.models.baselines.AgarwalReduction`'s (:mod:`~fairdash.models.core.mixture`).

    %s
    """

    _words = "Target reduction"
    _takes_strata = True  # to refuse a conditional target in words
    _parameter_constraints = {
        "target": [P.InstanceOf(TargetSpec, "a TargetSpec (fairdash.targeting.target_spec.make_target_spec)"), P.NONE],
        "tolerance": [P.Interval(numbers.Real, 0, 1, "neither")],
        "eps": [P.Interval(numbers.Real, 0, None, "neither")],
        "max_iter": [P.Interval(numbers.Integral, 1, None)],
        "C": [P.Interval(numbers.Real, 0, None, "neither")],
        "random_state": [P.SEED, P.NONE],
        "progress": [P.CALLABLE, P.NONE],
        "device": [P.DEVICE, P.NONE],
    }

    def __init__(self, *, target=None, tolerance: float = DEFAULT_TOLERANCE, eps: float = 0.01, max_iter: int = 50,
                 C: float = 1.0, random_state: int | None = 0, progress=None, device="auto"):
        self.target = target
        self.tolerance = tolerance
        self.eps = eps
        self.max_iter = max_iter
        self.C = C
        self.random_state = random_state
        self.progress = progress
        self.device = device

    def _spec(self) -> TargetSpec:
        spec = make_target_spec() if self.target is None else self.target
        if spec.conditional:
            raise FairDashError("The target reduction constrains each group's rate over all rows; it cannot be "
                                "combined with a legitimate factor (conditional parity).")
        return spec

    def _moment(self) -> TargetRateMoment:
        groups = dict(enumerate(self.targets_.tolist()))
        return TargetRateMoment(targets=groups, criterion=self._spec().criterion_info, tolerance=self.tolerance)

    def _fit(self, X, y, s, strata=None):
        spec = self._spec()  # refuses a conditional target in words, before the data are looked at
        X, y01 = I.fit_inputs(self, X, y)  # the labels as 0/1 (1 for classes_[1])
        s = check_s(s, len(y01), self._words)
        G = int(s.max()) + 1
        self.targets_ = np.asarray(spec.rate_targets(y01, s, None, G).group, dtype=float)
        self.target_rate_ = spec.rate_for(T.base_rates(y01, s, G))
        eg = M.fit_exponentiated_gradient(self._moment(), X, y01, s, C=self.C, eps=self.eps, max_iter=self.max_iter,
                                          device=self.device, progress=self.progress, words=self._words)
        M.store_mixture(self, eg, X.shape[1])
        moment = self._moment()
        moment.load_data(X, y01, sensitive_features=s)
        self.train_rates_ = moment.rates(self._positive_probs(X))
        self.row_draws_ = True
        return self

    def _positive_probs(self, X) -> np.ndarray:
        return M.positive_probs(self, X)

    def predict_proba(self, X) -> np.ndarray:
        return proba_from_p1(self._positive_probs(X))

    def predict(self, X) -> np.ndarray:
        """Randomised: each row positive with the mixture's probability, drawn from the row itself and
        ``random_state``."""
        X = I.predict_X(self, X)
        return I.randomised_labels(self, self._positive_probs(X), 0 if self.random_state is None else self.random_state,
                                   X if self.row_draws_ else None)

    def get_state(self) -> dict:
        arrays, meta = M.mixture_state(self)
        arrays.update({"targets": self.targets_, "train_rates": self.train_rates_})
        meta.update({"target_rate": self.target_rate_, "draws": "row" if self.row_draws_ else "position"})
        return make_state(self, arrays, meta)

    @classmethod
    def from_state(cls, state: dict) -> "TargetReduction":
        arrays, meta = check_state(state, cls)
        params = dict(meta["params"])
        if params.get("target") is not None:
            params["target"] = TargetSpec.from_dict(params["target"])
        m = M.mixture_from_state(cls.from_params(params), arrays, meta)
        m.targets_ = np.asarray(arrays["targets"], dtype=np.float64).ravel()
        m.train_rates_ = np.asarray(arrays["train_rates"], dtype=np.float64).ravel()
        m.target_rate_ = meta.get("target_rate")
        m.row_draws_ = meta.get("draws") == "row"  # files written before draws were per row: by position
        return m


def _codes(labels: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """Each row's position in ``groups`` (sorted labels); a label with no target is refused."""
    at = np.clip(np.searchsorted(groups, labels), 0, len(groups) - 1)
    if not np.array_equal(groups[at], labels):
        missing = labels[groups[at] != labels][0]
        raise FairDashError(f"Group {missing!r} of s has no target: give every group of s its target.")
    return at


TargetReduction.__doc__ = TargetReduction.__doc__ % (FITTED_INPUT_ATTRIBUTES, example(
    "from fairdash.models.target_reduction import TargetReduction", 'TargetReduction(max_iter=5, device="cpu")',
    "    >>> model.targets_.round(3).tolist()  # each group's target positive rate (the avg preset)\n"
    "    [0.525, 0.525]\n"
    "    >>> bool(abs(model.train_rates_ - model.targets_).max() <= 0.011)  # within the tolerance (0.01)\n    True"))
