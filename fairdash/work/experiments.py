"""Experiments: models x target rates x seeds on the protocol of docs/METHOD.md, as a tidy table.

``fit_model`` trains one model on one split and returns a :class:`TrainedModel` (preprocessing +
estimator + what it was asked and what it measured); ``run_experiment`` runs many independent fits in
parallel through joblib (a Dask cluster when FAIRDASH_DASK_ADDRESS or ``dask_address`` is set) and
returns one row per (model, target, seed).
"""
from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np
import pandas as pd

from ..data import Arrays, Task, TaskSpec, split_arrays
from ..device import device_description
from ..errors import FairDashError
from ..evaluation.blindness import add_price_columns
from ..evaluation.calibration import calibration_errors
from ..evaluation.ceiling import ceiling_at_target
from ..evaluation.gaps import cell_gaps, group_gaps, mark_moves, tnr_gaps
from ..evaluation.intervals import bootstrap_intervals
from ..evaluation.matched_price import Side, group_rates, split_prices
from ..evaluation.metric_table import (
    EVAL,
    EVAL_PREFIX,
    INTERVAL_BOUNDS,
    POP,
    POP_PREFIX,
    column_of,
    gap_metrics,
    lead_columns,
    population_copied,
)
from ..evaluation.metrics import conditional_ratio, flag_below_majority, group_metrics, one_class_note
from ..files.scoring import ScoresRawTables, training_schema
from ..jsonable import to_jsonable
from ..models.registry import make_model, model_info
from ..progress import as_progress, counted_progress, scaled_progress, utc_now
from ..targeting import targets
from ..targeting.decision import (
    FittedDecision,
    Reached,
    check_reached,
    check_rule,
    fit_decision,
    positive_scores,
    predicts_with_s,
    rule_info,
)
from ..targeting.target_spec import ResolvedTarget, TargetSpec, criterion_info, make_target_spec
from .fit_cache import FitCache, cache_key, source_version
from .parallel import parallel_config

RESULT_COLUMNS = lead_columns()  # the leading column order, from the one table of metrics (metric_table)
"""One row per fit. Columns without ``pop_`` are measured on the paper's evaluation rows (``eval_set``: the
balanced test set for demographic parity, the test set for equality of opportunity); ``pop_`` columns on
the ordinary test set, distributed like the data the model will score. Each group's target
(``target_<g>``), its signed gap on each set (``pop_gap_<g>``, ``bal_gap_<g>``) and the worst gap with
its group (``pop_worst_gap``, ``pop_worst_gap_group``...) are described in :mod:`fairdash.evaluation.gaps`;
``target_gap`` is the mean over groups of |pop_gap_s|: |pop PR_s - target_s| under demographic parity, |pop TPR_s -
target TPR| under equality of opportunity (kept for older readers; never shown alone). A ratio whose largest value is
0 is empty (0/0 is not parity) and ``one_class`` says in words where a model predicts one class for everyone or a group.

Columns present only where they say something, after these: ``rule_reached``, ``rule_note`` (rules that aim at a
rate, :func:`fairdash.targeting.decision.check_reached`), ``converged`` (false: the solver stopped at its iteration
cap), ``price_of_blindness``, ``pop_with_s_accuracy``, ``pop_blind_accuracy`` (results holding a rule that decides
with s, :mod:`fairdash.evaluation.blindness`), ``pop_majority_accuracy``, ``below_majority`` (where some row is
below the majority class), ``pop_tnr_gap_<g>`` (explicit TPR/TNR targets)."""

TOO_GOOD = 0.99  # a held-out accuracy at or above this is flagged: "too good: look for a leak"
MAX_SWEEP_RUNS = 2000  # larger grids are refused with a message (see issue: limits)


@dataclass
class TrainedModel(ScoresRawTables):
    """A fitted model with the preprocessing it needs: ``predict`` takes a raw table."""

    name: str
    estimator: object
    preprocessor: object
    spec: TaskSpec
    feature_columns: tuple
    categorical_features: tuple
    group_names: tuple
    label_names: tuple
    criterion: str
    target_rate: float | None
    seed: int
    metrics: dict = field(default_factory=dict)
    data_fingerprint: str = ""
    fit_seconds: float = 0.0
    device: str = "CPU"
    target: TargetSpec | None = None  # the request it was trained for (None: a model that ignores targets)
    fitted_at: str = ""  # when the fit ran (UTC, ISO 8601); a model from the cache keeps its original time
    decision: FittedDecision = field(default_factory=FittedDecision)  # how its scores become decisions
    schema: dict | None = None  # the training table as the scoring contract compares with it (scoring)

    @property
    def label(self) -> str:
        return model_info(self.name).label


def _measured(estimator, X, y, s, strata, G, target: ResolvedTarget, group_names, decision, prefix,
              strata_names=None) -> dict:
    pred = decision.decide(estimator, X, s)
    m = group_metrics(y, pred, s, G)
    m.update(calibration_errors(positive_scores(estimator, X, s), y, s, G))
    m["ceiling_at_measured"] = targets.accuracy_ceiling(targets.base_rates(y, s, G), targets.group_shares(s, G),
                                                   [m[f"pr_{j}"] for j in range(G)])
    m["ceiling_at_target"] = ceiling_at_target(target, y, s, strata, G)
    goal = target.goal
    m["one_class"] = one_class_note(pred, s, G, group_names)
    m["cond_pr_ratio"], m["cond_pr_ratio_mean"] = (conditional_ratio(pred, s, strata, G) if strata is not None
                                                   else (float("nan"), float("nan")))
    if goal is not None:
        m.update(group_gaps([m[f"{goal.rate}_{j}"] for j in range(G)], goal.group, group_names, prefix))
        if goal.other is not None:  # explicit TPR/TNR: the TNR gaps beside, the worst gap over both
            m.update(tnr_gaps([m[f"{prefix}gap_{j}"] for j in range(G)], [m[f"tnr_{j}"] for j in range(G)],
                              goal.other, group_names, prefix))
        if goal.cells is not None and strata is not None:  # conditional: the worst (stratum, group) cell
            m.update(cell_gaps(pred, y, s, strata, goal.cells, group_names, strata_names, goal.rate, prefix))
    plain_worst = goal is not None and goal.other is None and (goal.cells is None or strata is None)
    m.update(bootstrap_intervals(y, pred, s, G, rate=None if goal is None else goal.rate,
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
    crit, spec, goal = criterion_info(target.criterion), target.spec, target.goal
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
            m[f"target_{j}"] = float(goal.group[j])
        gaps = [f"{g.name}_{j}{b}" if g.per_group else g.name + b for g in gap_metrics()
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


def _target_of(name: str, spec: TargetSpec) -> TargetSpec | None:
    """The target a model trains for: the spec for models whose training uses it, else none."""
    return spec if model_info(name).uses_target_rate else None


@dataclass
class _Fit:
    """One fitted estimator with what it was asked (its target, the resolved PR_t) and how it decides."""

    est: object
    target: TargetSpec | None
    t: float | None
    seconds: float
    hit: bool
    fitted_at: str
    decision: FittedDecision
    goal: object  # RateTargets of the run's target on the training split, or None where none resolves
    reached: Reached = field(default_factory=Reached)  # whether the rule reached its targets on the training rows
    side: Side | None = None  # what the price of deciding without s needs of it (only where a run asks for the price)


def _fit_on_arrays(name, arrays, spec: TargetSpec, *, seed, device, options, cache, progress,
                   group_names=None) -> _Fit:
    info = model_info(name)
    target = _target_of(name, spec)
    params = {}
    # in the paper's set-ups the numeric columns' own units, as the paper ran it; elsewhere the standardised
    # columns, where it beats the majority class (in raw units it did not on COMPAS race: issue 19, item 5)
    if arrays.paper_setup in info.raw_units:
        from ..models.zafar import raw_units  # lazy: heavy, defers scipy, sklearn

        scale, offset = raw_units(arrays.preprocessor, arrays.X_train.shape[1])
        params.update(feature_scale=scale.tolist(), feature_offset=offset.tolist())
    est = make_model(name, spec, seed=seed, device=device, **params, **(options or {}))  # each model seeds its own fit
    if progress is not None and "progress" in est.get_params():
        est.set_params(progress=progress)
    strata = arrays.strata_train if target is not None and target.conditional else None
    if target is not None and target.conditional and strata is None:
        raise FairDashError(f"The target is conditional on {target.strata_column!r}, but the task has no legitimate "
                            "factor; build the task with that strata column.")
    t0 = time.perf_counter()
    if cache is not None:
        est, hit = cache.fit(est, arrays.X_train, arrays.y_train, arrays.s_train, strata)
        seconds, fitted_at = est.fit_seconds_, est.fitted_at_
    else:
        kw = {"strata": strata} if strata is not None else {}
        est.fit(arrays.X_train, arrays.y_train, arrays.s_train, **kw)
        hit, seconds, fitted_at = False, time.perf_counter() - t0, utc_now()
    if progress is not None and "progress" in est.get_params():
        est.set_params(progress=None)  # a fitted model keeps no callback (it travels from a worker process)
    few = {"s": arrays.s_test[:5]} if predicts_with_s(est) else {}
    if not np.all(np.isfinite(est.predict_proba(arrays.X_test[:5], **few))):
        raise FairDashError(f"{info.label} did not converge (its outputs are not numbers); try another setting.")
    t = getattr(est, "target_rate_", None) if target is not None else None
    if target is None and spec.decision_rule.aims_at_target:  # a plain model decided to reach the target
        t = spec.rate_for(targets.base_rates(arrays.y_train, arrays.s_train))
    goal = _goal(spec, arrays)
    if goal is None and spec.decision_rule.aims_at_target:
        raise FairDashError(f"The {spec.decision} decision rule needs the target's rate for every group, and this "
                            "target has none on the training split.")
    rate = criterion_info(spec.criterion).rate
    group, overall = (None, None) if goal is None else (goal.group, goal.overall)
    decision = fit_decision(spec.decision, est, arrays.X_train, arrays.y_train, arrays.s_train, group, overall, rate,
                            seed=seed)
    reached = (Reached() if goal is None else
               check_reached(decision, est, arrays.X_train, arrays.y_train, arrays.s_train, group, overall, rate,
                             group_names))
    return _Fit(est, target, t, seconds, hit, fitted_at, decision, goal, reached)


def _goal(spec: TargetSpec, arrays: Arrays):
    """The run's target resolved on the training split (every model of a run is held against it, plain
    ones too), or ``None`` where it does not resolve (a group without positives among these rows)."""
    G = int(max(arrays.s_train.max(), arrays.s_test.max())) + 1
    strata = arrays.strata_train if spec.conditional else None
    try:
        return spec.rate_targets(arrays.y_train, arrays.s_train, strata, G)
    except FairDashError:
        return None


def _request(target, task: Task) -> TargetSpec:
    """The run's :class:`TargetSpec`: ``target`` (a spec, or its dictionary form), or without one the default
    request for the task (demographic parity at the avg preset; conditional on the task's strata column)."""
    return (TargetSpec.from_dict(target) if target is not None
            else make_target_spec(strata_column=task.spec.strata_column))


def fit_model(task: Task, name: str, *, target: TargetSpec | None = None, seed: int = 0, options: dict | None = None,
              device="auto", cache: FitCache | None = None, progress=None,
              arrays: Arrays | None = None) -> TrainedModel:
    """Train one model on the seed's training split and measure it on its test split.

    ``target`` is the :class:`TargetSpec` (:func:`make_target_spec`; ``None``: the task's default request).
    The target's decision rule (``target.decision``) is fitted on the training rows and used for every decision."""
    spec = _request(target, task)
    arrays = arrays or split_arrays(task, seed)
    f = _fit_on_arrays(name, arrays, spec, seed=seed, device=device, options=options, cache=cache, progress=progress,
                       group_names=task.group_names)
    metrics = scored(f, arrays, spec.criterion, cache, task.group_names)
    return TrainedModel(name, f.est, arrays.preprocessor, task.spec, task.features, task.categorical_features,
                        task.group_names, task.label_names, spec.criterion, f.t, seed, metrics, task.fingerprint,
                        f.seconds, _device_label(f.est, device), f.target, f.fitted_at, f.decision,
                        training_schema(task, arrays.split.train))


def scored(fit: _Fit, arrays: Arrays, criterion: str, cache: FitCache | None = None, group_names=None) -> dict:
    """``evaluate``, answered from the fit cache when the same fitted model (by its state's content) was
    already scored on the same test rows, with the same decision rule and targets, by the same code: a
    repeated request skips the scoring too (a GP scores Adult's test set in about 70 ms; the cached
    answer takes about 1 ms)."""
    spec = fit.target or criterion
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
                    code_version=source_version("work/experiments.py", "evaluation/metrics.py", "targeting/targets.py",
                                                "targeting/target_spec.py", "evaluation/gaps.py",
                                                "targeting/decision.py", "evaluation/calibration.py",
                                                "evaluation/intervals.py", "evaluation/metric_table.py"))
    value, _ = cache.result(key, lambda: to_jsonable(run()))
    return {k: _from_json_number(v) for k, v in value.items()}


def _from_json_number(v):
    if v in ("nan", "inf", "-inf"):
        return float(v)
    return v


def _device_label(est, device) -> str:
    used = getattr(est, "device_", None)
    if used is None:
        return "CPU"
    return device_description(used) if str(used).startswith("cuda") else "CPU"


# --------------------------------------------------------------------------------------------------
# Many runs
# --------------------------------------------------------------------------------------------------
@dataclass
class Experiment:
    results: pd.DataFrame
    models: dict = field(default_factory=dict)  # (model, target_rate, seed) -> TrainedModel, with keep_models
    skipped: list = field(default_factory=list)  # (model, reason)
    target: TargetSpec | None = None  # the request (each sweep point is target.with_rate(PR_t))
    sides: list = field(default_factory=list)  # what the price of deciding without s needs of each fit (``price``)


SEES_S = " (sees s)"  # the label of a model that was given s as a feature
RAW_UNITS = " (paper's raw units)"  # ZafarAccuracy solved in the paper's coordinates (--paper adult-*)


def _row(name, spec: TargetSpec, seed, f: _Fit, metrics, device, sees_s: bool = False) -> dict:
    """One results row: what was asked (criterion, the target in words, the resolved PR_t, which is
    empty where no single rate was used), whether the model saw ``s``, how it decides (and whether that
    needs ``s``), and what was measured."""
    rule = rule_info(f.decision.rule)
    units = RAW_UNITS if getattr(f.est, "coordinates_", None) == "raw units" else ""
    return {"model": name,
            "label": (model_info(name).label_under(rule.needs_s) + units + (SEES_S if sees_s else "")
                      + rule.label_suffix),
            "criterion": spec.criterion, "sees_s": bool(sees_s), "decision": rule.name,
            "decides_with_s": bool(rule.needs_s),
            **({} if f.reached.reached is None else {"rule_reached": bool(f.reached.reached),
                                                      "rule_note": f.reached.note}),
            **({} if getattr(f.est, "converged_", None) is None else {"converged": bool(f.est.converged_)}),
            "target_rate": np.nan if f.t is None else float(f.t),
            "target": "" if f.target is None else f.target.describe(f.t), "seed": seed, **metrics,
            "fit_seconds": float(f.seconds), "fitted_at": f.fitted_at, "device": _device_label(f.est, device),
            "cached": f.hit}


def _fit_and_score(name, arrays, spec, seed, device, options, cache, progress, group_names, sees_s, price=False):
    """One fit of the sweep, measured: its results row and the fit (with ``price``, what the price of deciding
    without s needs of it: :func:`_side`)."""
    f = _fit_on_arrays(name, arrays, spec, seed=seed, device=device, options=options, cache=cache, progress=progress,
                       group_names=group_names)
    m = scored(f, arrays, spec.criterion, cache, group_names)
    row = _row(name, spec, seed, f, m, device, sees_s)
    if price:
        f.side = _side(row, f, arrays, spec.criterion)
    return row, f


def _side(row, f: _Fit, arrays, criterion: str) -> Side | None:
    """The fit as the price sees it (:class:`fairdash.evaluation.matched_price.Side`): a blind rule's rates on the
    training rows and decisions on the test rows, a with-s rule's estimator; ``None`` for a model that saw s or a
    fit with no target to land on."""
    if row["sees_s"] or f.goal is None:
        return None
    G = len(f.goal.group)
    t = row["target_rate"]
    if f.decision.needs_s or predicts_with_s(f.est):
        return Side(row["label"], row["seed"], t, True, estimator=None if predicts_with_s(f.est) else f.est)
    rate = criterion_info(criterion).rate
    train = f.decision.decide(f.est, arrays.X_train)
    rates, counts = group_rates(train, arrays.y_train, arrays.s_train, G, rate)
    tnr = ()
    # explicit TPR and TNR targets: landing means both (TNR: the negatives' "TPR" of 1 - p)
    if f.goal.other is not None:
        rates_n, counts_n = group_rates(1 - np.asarray(train), 1 - np.asarray(arrays.y_train), arrays.s_train, G, "tpr")
        tnr = (tuple(rates_n), tuple(counts_n), tuple(f.goal.other))
    return Side(row["label"], row["seed"], t, False, tuple(rates), tuple(counts), tuple(f.goal.group),
                np.asarray(f.decision.decide(f.est, arrays.X_test), dtype=np.int8), tnr=tnr)


def _job(name, arrays, spec, seed, device, options, cache_dir, keep_model, n_threads, group_names, sees_s, price):
    """:func:`_fit_and_score` in a worker process (its own torch threads and fit cache object)."""
    if n_threads:
        import torch

        torch.set_num_threads(n_threads)
    cache = FitCache(cache_dir) if cache_dir is not None else None
    row, f = _fit_and_score(name, arrays, spec, seed, device, options, cache, None, group_names, sees_s, price)
    if not keep_model:
        f.est = None
    return row, f


class PlannedFit(NamedTuple):
    """One fit of a job: the model, the target it trains for (with its decision rule), the seed."""
    model: str
    target: TargetSpec
    seed: int


def serving_models(models, criterion: str, only_serving: bool = True) -> tuple[list, list]:
    """The models a job trains (each once, in order) and those it skips with the reason: a model made for
    another criterion is skipped when ``only_serving`` (else it runs and its rows say what it serves)."""
    kept, skipped = [], []
    for m in dict.fromkeys(models):
        info = model_info(m)
        if not info.serves(criterion) and only_serving:
            skipped.append((m, f"{info.label} serves {'/'.join(info.criteria)} only, not '{criterion}'"))
        else:
            kept.append(m)
    return kept, skipped


def plan_fits(models, spec: TargetSpec, target_rates=(None,), seeds=(0,), decisions=None) -> list[PlannedFit]:
    """The job plan: every fit a job runs, in order (the one count of a job's fits: the Train page shows
    it, :func:`run_experiment` runs it). Every model at every point of the sweep's grid (``spec.with_rate(t)``;
    ``None``: the spec as it is) under every decision rule (``None``: the target's own), on every seed; a
    model the target does not change trains once per seed, unless its decisions depend on the target (held
    against the sweep's one target where there is one; against none where there are several)."""
    target_rates = list(target_rates) or [None]
    if spec.explicit and any(t is not None for t in target_rates):
        raise FairDashError("A sweep over target positive rates does not apply with explicit TPR/TNR targets.")
    specs = [spec if t is None else spec.with_rate(t) for t in target_rates]
    decisions = [spec.decision] if decisions is None else list(dict.fromkeys(check_rule(d) for d in decisions))
    once = [specs[0] if len(specs) == 1 else spec]

    def ruled(sps, rule):
        return [sp if sp.decision == rule else sp.edited(decision=rule) for sp in sps]

    return [PlannedFit(m, sp, seed) for seed in seeds for m in models for rule in decisions
            for sp in ruled(specs if model_info(m).uses_target_rate or rule_info(rule).aims_at_target else once, rule)]


def run_experiment(task: Task, models, target_rates=(None,), seeds=(0,), *, target: TargetSpec | None = None,
                   options: dict | None = None, device="auto", cache: FitCache | None = None, n_jobs: int = 1,
                   progress=None, keep_models: bool = False, dask_address: str | None = None,
                   only_serving: bool = True, decisions=None, price: bool | None = None) -> Experiment:
    """Train ``models`` at every target rate (models that ignore the target train once per seed) on
    every seed's split; one row per (model, target, seed). ``target`` is the :class:`TargetSpec` (``None``:
    the task's default request); ``target_rates`` is the sweep's grid, each point ``target.with_rate(t)``
    (``None``: the spec as it is). Models that do not serve the criterion are skipped with a reason
    when ``only_serving`` (else they run and their rows say what they serve). ``decisions``: several decision
    rules (:mod:`fairdash.targeting.decision`) to run every model under, models x rules in one sweep (``None``: the
    target's own rule); a run holding a rule that decides with s gets the price of deciding without s (:func:`priced`;
    ``price``: keep what it needs of each fit in ``Experiment.sides`` whatever the rules, ``None``: where one needs
    s)."""
    from joblib import Parallel, delayed

    spec = _request(target, task)
    progress = as_progress(progress)
    seeds, target_rates = list(seeds), list(target_rates) or [None]
    models, skipped = serving_models(models, spec.criterion, only_serving)
    if not models:
        raise FairDashError("None of the chosen models serves this criterion.")
    options = options or {}
    jobs = plan_fits(models, spec, target_rates, seeds, decisions)
    decisions = list(dict.fromkeys(f.target.decision for f in jobs))  # the rules as the plan checked and named them
    if len(jobs) > MAX_SWEEP_RUNS:
        raise FairDashError(f"This sweep has {len(jobs)} runs; the limit is {MAX_SWEEP_RUNS}. Use fewer targets or "
                            "repeats.")
    if len(jobs) > 1:  # each message says which fit of how many, and the time left once a few are done
        progress = counted_progress(progress, len(jobs))
    progress(0.0, f"Preparing {len(seeds)} split(s)")
    arrays = {seed: split_arrays(task, seed) for seed in seeds}
    cache_dir = cache.directory if cache is not None else None
    n_jobs = max(1, int(n_jobs)) if n_jobs != -1 else (os.cpu_count() or 1)
    rows, fitted, sides = [], {}, []
    if price is None:  # a rule with s beside blind ones asks for the price
        price = any(rule_info(d).needs_s for d in decisions)

    def keep(row, f, sp):
        if f.side is not None:
            sides.append(f.side)
        if keep_models:
            t = None if np.isnan(row["target_rate"]) else row["target_rate"]
            key = (row["model"], row["target_rate"], row["seed"]) + ((row["decision"],) if len(decisions) > 1 else ())
            fitted[key] = _trained(
                task, row["model"], f, arrays[row["seed"]], row, t, device, sp)

    if n_jobs == 1 and not (dask_address or os.environ.get("FAIRDASH_DASK_ADDRESS")):
        for i, (m, sp, seed) in enumerate(jobs):
            label = model_info(m).label
            what = f"Training {label} (seed {seed}{'' if sp.target_rate is None else f', PR_t {sp.target_rate:.3f}'})"
            progress(i / len(jobs), what)
            step = scaled_progress(progress, i / len(jobs), (i + 1) / len(jobs))
            row, est = _fit_and_score(
                m, arrays[seed], sp, seed, device, options.get(m), cache,
                lambda f, msg="", step=step, what=what: step(f, f"{what}: {msg}" if msg else what),
                task.group_names, task.spec.s_as_feature, price)
            rows.append(row)
            keep(row, est, sp)
    else:
        ctx, client = parallel_config(dask_address)
        threads = 1 if (os.cpu_count() or 1) <= n_jobs else max(1, (os.cpu_count() or 1) // n_jobs)
        try:
            with ctx:
                # max_nbytes=None: the arrays go to the workers in memory, never memory-mapped to a temporary file
                gen = Parallel(n_jobs=n_jobs, return_as="generator", max_nbytes=None)(
                    delayed(_job)(m, arrays[seed], sp, seed, device, options.get(m), cache_dir, keep_models, threads,
                                  task.group_names, task.spec.s_as_feature, price)
                    for m, sp, seed in jobs)
                for i, ((_, sp, _), (row, est)) in enumerate(zip(jobs, gen)):  # the generator keeps the order
                    rows.append(row)
                    progress((i + 1) / len(jobs), f"Finished {row['label']} (seed {row['seed']})")
                    keep(row, est, sp)
        finally:
            if client is not None:
                client.close()
    results = pd.DataFrame(rows)
    once = [d for d in decisions if not rule_info(d).aims_at_target]
    if len(target_rates) > 1 and once:  # a plain model ran once for several targets: no gap
        plain = ~results["model"].map(lambda m: model_info(m).uses_target_rate) & results["decision"].isin(once)
        for c in [c for c in results.columns if c.startswith(("target_", POP_PREFIX + "gap_", EVAL_PREFIX + "gap_"))
                  or c.endswith(("worst_gap", "worst_gap_group"))]:
            results.loc[plain, c] = "" if c.endswith("_group") else np.nan
    if price and any(x.with_s for x in sides):
        progress(1.0, "Measuring the price of deciding without s")
    results = priced(task, mark_moves(results, task.group_names), sides, spec.criterion, device=device, cache=cache,
                     arrays=arrays)
    progress(1.0, "Done")
    majority = {seed: float(max(a.y_test.mean(), 1 - a.y_test.mean())) for seed, a in arrays.items() if len(a.y_test)}
    results = flag_below_majority(results, majority)
    results = results[[c for c in RESULT_COLUMNS if c in results.columns]
                      + [c for c in results.columns if c not in RESULT_COLUMNS]]
    return Experiment(results, fitted, skipped, spec, sides)


def priced(task: Task, results: pd.DataFrame, sides, criterion: str, *, device="auto", cache=None,
           arrays: dict | None = None) -> pd.DataFrame:
    """``results`` with each split's price of deciding without s (:mod:`fairdash.evaluation.matched_price`), measured
    from the fits' ``sides`` (one run's, or several runs' on the same task and splits together); unchanged where no
    fit decides with s."""
    if not any(x.with_s for x in sides):
        return results
    arrays = arrays or {}
    for seed in dict.fromkeys(x.seed for x in sides):
        if seed not in arrays:
            arrays[seed] = split_arrays(task, seed)
    G = int(max(max(a.s_train.max(), a.s_test.max()) for a in arrays.values())) + 1
    prices = split_prices(sides, arrays, criterion_info(criterion).rate, G, device=device, cache=cache,
                          group_names=task.group_names)
    return add_price_columns(results, prices)


def _trained(task, name, f: _Fit, arrays, row, t, device, spec) -> TrainedModel:
    metrics = {k: v for k, v in row.items() if k not in (
        "model", "label", "criterion", "target_rate", "target", "seed", "sees_s", "decision", "decides_with_s",
        "rule_reached", "rule_note", "converged", "fit_seconds", "fitted_at", "device", "cached")}
    return TrainedModel(name, f.est, arrays.preprocessor, task.spec, task.features, task.categorical_features,
                        task.group_names, task.label_names, spec.criterion, t, row["seed"], metrics,
                        task.fingerprint, row["fit_seconds"], _device_label(f.est, device),
                        _target_of(name, spec), row["fitted_at"], f.decision, training_schema(task, arrays.split.train))
