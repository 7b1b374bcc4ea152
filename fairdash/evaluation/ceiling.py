"""Theorem 2's accuracy ceiling on a set of held-out rows at the rates a run's target asks for (the results'
``ceiling_at_target``; the ceiling at the measured rates is ``targets.accuracy_ceiling`` read directly)."""
from __future__ import annotations

import numpy as np

from ..errors import FairDashError
from ..targeting import targets
from ..targeting.target_spec import ResolvedTarget


def ceiling_at_target(target: ResolvedTarget, y, s, strata, G) -> float:
    """Theorem 2 on these rows at the rates the target asks for (NaN for a model without a target). With a
    legitimate factor, each stratum at the targets that were trained (``goal.cells``, resolved on the
    training split), never at targets recomputed from these rows."""
    spec, target_rate, goal = target.spec, target.rate, target.goal
    if spec is None:
        return float("nan")
    if spec.conditional and strata is not None and goal is not None and goal.cells is not None:
        return strata_ceiling(y, s, strata, goal.cells, G)
    r = targets.base_rates(y, s, G)
    p = targets.group_shares(s, G)
    try:
        if spec.conditional and strata is not None:
            return spec.conditional_tables(y, s, strata, n_groups=G).accuracy_ceiling
        if spec.explicit:
            return spec.table(r, p).accuracy_ceiling  # the exact accuracy at explicit targets
    except FairDashError:  # a group without positives among these rows: no target table here
        return float("nan")
    return targets.accuracy_ceiling(r, p, target_rate) if target_rate is not None else float("nan")


def strata_ceiling(y, s, strata, cells, G) -> float:
    """Theorem 2 in every stratum at its (stratum, group) cells' targets, weighted by the strata's shares of
    these rows."""
    y, s, strata = (np.asarray(a).astype(int) for a in (y, s, strata))
    total = 0.0
    for k in range(cells.shape[0]):
        rows = strata == k
        if not rows.any():
            continue
        n, pos = np.bincount(s[rows], minlength=G)[:G], np.bincount(s[rows], weights=y[rows], minlength=G)[:G]
        with np.errstate(invalid="ignore", divide="ignore"):
            r = np.where(n > 0, pos / np.maximum(n, 1), 0.0)
        total += rows.mean() * targets.accuracy_ceiling(r, n / n.sum(), np.nan_to_num(cells[k]))
    return float(total)
