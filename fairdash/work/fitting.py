"""One fit: a model trained on one split for the run's target, with the decision rule fitted on its training rows.

``fit_on_arrays`` makes, fits (through the fit cache where there is one) and checks one estimator, resolves the
run's target on the training split and fits the target's decision rule (a :class:`Fit`); a
:class:`TrainedModel` is such a fit with its preprocessing, what it was asked and what it measured, ready to score a
raw table. Measuring a fit is :mod:`fairdash.work.measure`; many fits are :mod:`fairdash.work.experiments`.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from ..data import Arrays, Task, TaskSpec
from ..device import device_description
from ..errors import FairDashError
from ..evaluation.matched_price import Side
from ..files.scoring import ScoresRawTables
from ..models.registry import make_model, model_info
from ..progress import utc_now
from ..targeting import targets
from ..targeting.decision import FittedDecision, Reached, check_reached, fit_decision, predicts_with_s
from ..targeting.target_spec import TargetSpec, make_target_spec


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
    criterion: str  # its criterion's name, as the model file holds it (files.export)
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


def target_of(name: str, spec: TargetSpec) -> TargetSpec | None:
    """The target a model trains for: the spec for models whose training uses it, else none."""
    return spec if model_info(name).uses_target_rate else None


@dataclass
class Fit:
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


def fit_on_arrays(name, arrays, spec: TargetSpec, *, seed, device, options, cache, progress,
                  group_names=None) -> Fit:
    info = model_info(name)
    target = target_of(name, spec)
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
    crit = spec.criterion_info
    group, overall = (None, None) if goal is None else (goal.group, goal.overall)
    decision = fit_decision(spec.decision, est, arrays.X_train, arrays.y_train, arrays.s_train, group, overall, crit,
                            seed=seed)
    reached = (Reached() if goal is None else
               check_reached(decision, est, arrays.X_train, arrays.y_train, arrays.s_train, group, overall, crit,
                             group_names))
    return Fit(est, target, t, seconds, hit, fitted_at, decision, goal, reached)


def _goal(spec: TargetSpec, arrays: Arrays):
    """The run's target resolved on the training split (every model of a run is held against it, plain
    ones too), or ``None`` where it does not resolve (a group without positives among these rows)."""
    G = int(max(arrays.s_train.max(), arrays.s_test.max())) + 1
    strata = arrays.strata_train if spec.conditional else None
    try:
        return spec.rate_targets(arrays.y_train, arrays.s_train, strata, G)
    except FairDashError:
        return None


def requested_target(target, task: Task) -> TargetSpec:
    """The run's :class:`TargetSpec`: ``target`` (a spec, or its dictionary form), or without one the default
    request for the task (demographic parity at the avg preset; conditional on the task's strata column)."""
    return (TargetSpec.from_dict(target) if target is not None
            else make_target_spec(strata_column=task.spec.strata_column))


def device_label(est, device) -> str:
    used = getattr(est, "device_", None)
    if used is None:
        return "CPU"
    return device_description(used) if str(used).startswith("cuda") else "CPU"
