"""Measuring a fit on its split's test rows (docs/METHOD.md, "Evaluation protocol"): ``evaluate`` on the paper's
evaluation rows and on the population, ``scored`` answered from the fit cache where the same fitted model was already
measured the same way.
"""
from __future__ import annotations

import numpy as np

from ..data import Arrays
from ..evaluation.calibration import calibration_errors, calibration_intervals
from ..evaluation.ceiling import ceiling_at_target
from ..evaluation.gaps import cell_gaps, group_gaps, tnr_gaps
from ..evaluation.intervals import bootstrap_intervals
from ..evaluation.metric_table import (
    EVAL,
    EVAL_PREFIX,
    INTERVAL_BOUNDS,
    POP,
    POP_PREFIX,
    TRAIN,
    column_of,
    gap_metrics,
    group_column,
    population_copied,
)
from ..evaluation.metrics import conditional_ratio, group_metrics, one_class_note
from ..jsonable import to_jsonable
from ..targeting import targets
from ..targeting.criteria import Criterion
from ..targeting.decision import FittedDecision, positive_scores
from ..targeting.target_spec import ResolvedTarget, TargetSpec
from .fit_cache import FitCache, cache_key, source_version
from .fitting import Fit

TOO_GOOD = 0.99  # a held-out accuracy at or above this is flagged: "too good: look for a leak"


def _measured(estimator, X, y, s, strata, G, target: ResolvedTarget, group_names, decision, prefix,
              strata_names=None) -> dict:
    pred = decision.decide(estimator, X, s)
    m = group_metrics(y, pred, s, G)
    scores = positive_scores(estimator, X, s)
    m.update(calibration_errors(scores, y, s, G))
    m.update(calibration_intervals(scores, y, s, G))
    m["ceiling_at_measured"] = targets.accuracy_ceiling(targets.base_rates(y, s, G), targets.group_shares(s, G),
                                                   [m[column_of("pr", EVAL, j)] for j in range(G)])
    m["ceiling_at_target"] = ceiling_at_target(target, y, s, strata, G)
    goal = target.goal
    m["one_class"] = one_class_note(pred, s, G, group_names)
    m["cond_pr_ratio"], m["cond_pr_ratio_mean"] = (conditional_ratio(pred, s, strata, G) if strata is not None
                                                   else (float("nan"), float("nan")))
    if goal is not None:
        m.update(group_gaps([m[column_of(goal.rate, EVAL, j)] for j in range(G)], goal.group, group_names, prefix))
        if goal.other is not None:  # explicit TPR/TNR: the TNR gaps beside, the worst gap over both
            m.update(tnr_gaps([m[group_column("gap", j, prefix)] for j in range(G)],
                              [m[column_of("tnr", EVAL, j)] for j in range(G)],
                              goal.other, group_names, prefix))
        if goal.cells is not None and strata is not None:  # conditional: the worst (stratum, group) cell
            m.update(cell_gaps(pred, y, s, strata, goal.cells, group_names, strata_names, goal.criterion, prefix))
    plain_worst = goal is not None and goal.other is None and (goal.cells is None or strata is None)
    m.update(bootstrap_intervals(y, pred, s, G, criterion=None if goal is None else goal.criterion,
                                 targets=None if goal is None else goal.group, prefix=prefix, worst=plain_worst))
    return m


def evaluate(estimator, arrays: Arrays, target: ResolvedTarget | None = None, group_names=None,
             decision: FittedDecision | None = None) -> dict:
    """Test metrics, measured twice (docs/METHOD.md, "Evaluation protocol"):

    - on the paper's evaluation rows: the balanced test set for demographic parity, the ordinary test
      set for equality of opportunity (``eval_set``);
    - on the population, the ordinary test set as it comes (``pop_`` keys), with ``target_gap``.

    Each set carries Theorem 2's ceiling at the measured group rates (``ceiling_at_measured``) and at the
    target (``ceiling_at_target``), both computed on that set's own rows. ``target`` is the one
    :class:`~fairdash.targeting.target_spec.ResolvedTarget` the model is measured against (its criterion, the model's
    own spec and PR_t, and the run's ``goal``: each group's target, and so the gaps ``target_<g>``,
    ``pop_gap_<g>``, ``bal_gap_<g>``, the worst of each; :mod:`fairdash.evaluation.gaps`). Decisions come from
    ``decision`` (the paper's rule by default)."""
    decision = decision or FittedDecision()
    target = target or ResolvedTarget()
    crit, spec, goal = target.criterion, target.spec, target.goal
    G = int(max(arrays.s_train.max(), arrays.s_test.max())) + 1
    test = np.arange(len(arrays.y_test))
    idx = arrays.balanced_test if crit.balanced_eval else test
    strata = arrays.strata_test if spec is not None and spec.conditional else None

    def rows(i):
        return arrays.X_test[i], arrays.y_test[i], arrays.s_test[i], None if strata is None else strata[i]

    args = (G, target, group_names, decision)
    named = getattr(arrays, "strata_names", None) or None  # the worst cell says its stratum's value, not its code
    m = _measured(estimator, *rows(idx), *args, EVAL_PREFIX if crit.balanced_eval else "eval_", named)
    m["eval_set"] = crit.eval_set
    m["n_eval"] = int(len(idx))
    pop = _measured(estimator, *rows(test), *args, POP_PREFIX, named) if crit.balanced_eval else m
    for metric in population_copied():  # what the table measures on both sets, with its interval
        for j in range(G) if metric.per_group else [None]:  # unprefixed in each set's own measurement
            for b in ("", *INTERVAL_BOUNDS) if metric.interval else ("",):
                m[metric.column(POP, j) + b] = pop[metric.column(EVAL, j) + b]
    if goal is not None:
        for j in range(G):
            m[column_of("target", TRAIN, j)] = float(goal.group[j])
        gaps = [g.base(j) + b for g in gap_metrics()
                for b in (("", *INTERVAL_BOUNDS) if g.interval else ("",)) for j in range(G if g.per_group else 1)]
        for k in [k for k in gaps if POP_PREFIX + k in pop or "eval_" + k in pop]:
            m[POP_PREFIX + k] = pop.get(POP_PREFIX + k, pop.get("eval_" + k))
            m[EVAL_PREFIX + k] = m.get(EVAL_PREFIX + k, float("nan") if k != "worst_gap_group" else "")
            m.pop("eval_" + k, None)
    m["n_pop"] = int(len(test))
    gaps = [m.get(column_of("gap", POP, j), float("nan")) for j in range(G)]
    m["target_gap"] = float(np.mean(np.abs(gaps))) if np.isfinite(gaps).all() else float("nan")
    m["too_good"] = bool(max(m["accuracy"], m[column_of("accuracy", POP)]) >= TOO_GOOD)
    return m


def scored(fit: Fit, arrays: Arrays, criterion: Criterion, cache: FitCache | None = None, group_names=None) -> dict:
    """``evaluate``, answered from the fit cache when the same fitted model (by its state's content) was
    already scored on the same test rows, with the same decision rule and targets, by the same code: a
    repeated request skips the scoring too (a GP scores Adult's test set in about 70 ms; the cached
    answer takes about 1 ms)."""
    spec = fit.target or criterion.name  # a model that ignores targets: its key holds the criterion's name
    target = ResolvedTarget(criterion, fit.target, fit.t, fit.goal)

    def run():
        return evaluate(fit.est, arrays, target, group_names, fit.decision)

    if cache is None:
        return run()

    state = fit.est.get_state()
    extra = [] if arrays.strata_test is None else [arrays.strata_test]
    goal = None if fit.goal is None else {"group": fit.goal.group, "overall": fit.goal.overall, "rate": fit.goal.rate,
                                          "cells": fit.goal.cells, "other": fit.goal.other}
    key = cache_key(arrays.X_test, arrays.y_test, arrays.s_test, arrays.balanced_test, *extra,
                    *[np.ascontiguousarray(state["arrays"][k]) for k in sorted(state["arrays"])],
                    config={"meta": to_jsonable(state["meta"]), "target_rate": fit.t,
                            "spec": spec.to_dict() if isinstance(spec, TargetSpec) else spec,
                            "decision": fit.decision.to_dict(), "goal": to_jsonable(goal),
                            "group_names": list(map(str, group_names or ()))},
                    code_version=source_version("work/measure.py", "evaluation/metrics.py", "targeting/targets.py",
                                                "targeting/target_spec.py", "evaluation/gaps.py",
                                                "targeting/decision.py", "evaluation/calibration.py",
                                                "evaluation/intervals.py", "evaluation/metric_table.py"))
    value, _ = cache.result(key, lambda: to_jsonable(run()))
    return {k: _from_json_number(v) for k, v in value.items()}


def _from_json_number(v):
    if v in ("nan", "inf", "-inf"):
        return float(v)
    return v
