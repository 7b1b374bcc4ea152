"""The fairness criteria and what each carries: its per-group rate and the rows that rate is measured on
(fairlearn's "event": every row, or the rows with a positive label), its fairness ratio and Theorem 2's
ceiling over it, the rows the paper's protocol evaluates it on, its fairlearn constraint, and its words.

The one module where a criterion's rate is written as ``"pr"`` or ``"tpr"``, and no module compares a rate's name with
them (``tests/test_structure.py``): what depends on the rate is a field of each :class:`Criterion` (its words, the other
rate, Theorem 2's ceiling), and other modules ask the criterion. Inside the library a function takes the
:class:`Criterion` itself; a name is looked up once, where it comes in (``criterion_info(name)``: the command line's
options, a page's widget or session, a results, configuration or model file, an estimator's ``criterion=``; or
``criterion_of_rate(rate)`` where a results row holds a rate's name; ``tests/test_structure.py``). And the one module
that writes a criterion's name (besides the CLI's parser; ``tests/test_literals.py``): others name it as ``DP.name``,
``EO.name``, ``DEFAULT`` (the criterion asked for where none is named), ``CRITERIA`` (all, in order) or a Target page
mode of ``MODES``; the names themselves (``dp``, ``eo``) stay what results files, JSON and model files hold.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..errors import FairDashError


# Theorem 2's ceiling over each criterion's fairness ratio (:meth:`Criterion.ratio_ceiling`)
def pr_ratio_ceiling(rates, shares, n: int = 101) -> tuple[np.ndarray, np.ndarray]:
    """The highest accuracy Theorem 2 allows a classifier whose positive-rate ratio (min/max over the
    groups) is at least ``ratio``, for ``ratio`` in [0, 1]: all group rates lie in ``[ratio*T, T]`` for
    some ``T``, each as close to its base rate as it can be, so the ceiling is
    ``max_T 1 - sum_s p_s |clip(r_s, ratio*T, T) - r_s|``. The loss is piecewise linear in ``T`` with
    breaks at ``T = r_s`` and ``T = r_s / ratio``, so the maximum is exact over those candidates.
    At ratio 1 it is the parity ceiling."""
    r = np.asarray(rates, dtype=float)
    p = np.asarray(shares, dtype=float)
    ratio = np.linspace(0.0, 1.0, n)
    with np.errstate(divide="ignore"):
        over = np.where(ratio[:, None] > 0, r[None, :] / np.maximum(ratio[:, None], 1e-300), 1.0)
    cand = np.concatenate([np.broadcast_to(r, (n, r.size)), np.clip(over, 0.0, 1.0),
                           np.ones((n, 1)), np.zeros((n, 1))], axis=1)  # (n, C)
    lo = ratio[:, None, None] * cand[:, :, None]  # (n, C, 1)
    hi = cand[:, :, None]
    loss = (p * np.abs(np.clip(r[None, None, :], lo, hi) - r[None, None, :])).sum(axis=2)
    return ratio, 1.0 - loss.min(axis=1)


def tpr_ratio_ceiling(rates, shares, n: int = 101) -> tuple[np.ndarray, np.ndarray]:
    """The highest accuracy for each true-positive-rate ratio ``min/max``: every negative right, the
    best group's TPR 1 and the cheapest other group's TPR at the ratio:
    ``1 - min_s p_s PR_b^s (1 - ratio)`` (Theorem 2's argument applied to the positives)."""
    r = np.asarray(rates, dtype=float)
    p = np.asarray(shares, dtype=float)
    ratio = np.linspace(0.0, 1.0, n)
    return ratio, 1.0 - float(np.min(p * r)) * (1.0 - ratio)



@dataclass(frozen=True)
class Criterion:
    """What a fairness criterion means everywhere it is measured and shown: its fairness ratio and the
    per-group rate behind it, the rows the paper's protocol evaluates it on, and the ceiling of accuracy
    over its ratio (Theorem 2). One object instead of branches on the criterion's name."""

    name: str  # "dp" | "eo"
    words: str
    rate: str  # the per-group rate it compares, by the name results columns and files hold: "pr" or "tpr" (pr_0...)
    rate_words: str
    balanced_eval: bool  # the paper evaluates parity on the balanced test set, opportunity on the test set
    measured_words: str = ""  # what it asks and where it is measured, for the report's choices
    ratio_plain: str = ""  # its ratio in plain words
    supports_strata: bool = False  # a legitimate factor (conditional parity) applies
    paper_grid: tuple = ()  # the target rates the paper sweeps for it (empty: the target as given)
    positives_only: bool = False  # fairlearn's "event": its rate is measured on the rows with a positive label
    fairlearn: str = ""  # its constraint in fairlearn.reductions (Agarwal et al.'s reduction)
    fairlearn_threshold: str = ""  # its constraint's name in fairlearn's ThresholdOptimizer (post-processing)
    other_rate: str = ""  # the other criterion's rate, by its columns' name (shown beside its own)
    rate_name: str = ""  # its per-group rate in words (singular): "positive rate", "true positive rate"
    ratio_words: str = ""  # its ratio as an axis or a column says it
    ceiling_name: str = ""  # the name of Theorem 2's ceiling over its ratio, in a figure's legend
    ceiling: Callable = pr_ratio_ceiling  # Theorem 2's ceiling over its ratio: (rates, shares, n) -> (ratio, ceiling)

    @property
    def ratio(self) -> str:
        """The results column of its fairness ratio (min over max of the groups' rates)."""
        return f"{self.rate}_ratio"

    @property
    def rows_words(self) -> str:
        """The rows its rate is measured on, as words after "rows" (empty: every row)."""
        return " with a positive label" if self.positives_only else ""

    @property
    def eval_set(self) -> str:
        return "balanced test" if self.balanced_eval else "test"

    def rows(self, y) -> np.ndarray:
        """Which rows its rate is measured on (a boolean mask over ``y``): every row, or the positive ones."""
        y = np.asarray(y)
        return (y == 1) if self.positives_only else np.ones(y.shape, dtype=bool)

    def fairlearn_constraint(self, **kwargs):
        """Its fairlearn constraint object (``DemographicParity``, ``TruePositiveRateParity``), fresh."""
        from fairlearn import reductions

        return getattr(reductions, self.fairlearn)(**kwargs)

    def ratio_ceiling(self, rates, shares, n: int = 101):
        """Theorem 2's accuracy ceiling at every value of this criterion's ratio: ``(ratio, ceiling)``."""
        return self.ceiling(rates, shares, n)


DP = Criterion("dp", "demographic parity", "pr", "positive rates", True,
               "demographic parity (equal positive rates), measured on the population and on the paper's balanced "
               "test set",
               "positive-rate ratio (how evenly the groups receive positive predictions; 1 is equal)",
               supports_strata=True, fairlearn="DemographicParity", fairlearn_threshold="demographic_parity",
               other_rate="tpr", rate_name="positive rate",
               ratio_words="positive-rate ratio min/max (1 = demographic parity)",
               ceiling_name="accuracy ceiling (Theorem 2)", ceiling=pr_ratio_ceiling)
EO = Criterion("eo", "equality of opportunity", "tpr", "true positive rates", False,
               "equality of opportunity (equal true positive rates), evaluated on the ordinary test set",
               "true-positive-rate ratio (how evenly the groups' actual positives are recognised; 1 is equal)",
               paper_grid=(0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9), positives_only=True,
               fairlearn="TruePositiveRateParity", fairlearn_threshold="true_positive_rate_parity",
               other_rate="pr", rate_name="true positive rate",
               ratio_words="true-positive-rate ratio min/max (1 = equal opportunity)",
               ceiling_name="accuracy ceiling for this TPR ratio", ceiling=tpr_ratio_ceiling)
CRITERIA_INFO = {c.name: c for c in (DP, EO)}
CRITERIA = tuple(CRITERIA_INFO)  # the criteria's names, in order: the CLI's choices, the estimators' options
DEFAULT = DP.name  # the criterion asked for where none is named (a signature's default, an old results file's)
CRITERION_NAMES = {k: c.words for k, c in CRITERIA_INFO.items()}
# the Target page's modes: a criterion by its name, or equality of opportunity with explicit TPR/TNR targets
EXPLICIT_MODE = f"{EO.name}-targets"
MODES = (*CRITERIA, EXPLICIT_MODE)


def criterion_info(name) -> Criterion:
    """The :class:`Criterion` named ``"dp"`` or ``"eo"`` (a Criterion passes through)."""
    if isinstance(name, Criterion):
        return name
    if name not in CRITERIA_INFO:
        raise FairDashError(f"Unknown fairness criterion {name!r}: use 'dp' (demographic parity) or 'eo' "
                            "(equality of opportunity).")
    return CRITERIA_INFO[name]


def criterion_of_rate(rate: str) -> Criterion:
    """The criterion whose per-group rate is ``rate`` (``"pr"``: demographic parity, ``"tpr"``: opportunity)."""
    for c in CRITERIA_INFO.values():
        if c.rate == rate:
            return c
    raise FairDashError(f"Unknown rate {rate!r}: use 'pr' (positive rate) or 'tpr' (true positive rate).")


def mode_criterion(mode) -> Criterion:
    """The :class:`Criterion` of a Target page's mode (``MODES``): the criterion it names, or equality of
    opportunity for explicit TPR/TNR targets (``EXPLICIT_MODE``)."""
    return EO if str(mode) == EXPLICIT_MODE else criterion_info(str(mode))
