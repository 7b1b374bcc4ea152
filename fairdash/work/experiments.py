"""Experiments: models x target rates x seeds on the protocol of docs/METHOD.md, as a tidy table.

``fit_model`` trains one model on one split and returns a :class:`TrainedModel` (preprocessing +
estimator + what it was asked and what it measured); ``run_experiment`` runs an :class:`ExperimentPlan` (what to
run: task, models, target rates, seeds, target, rules, options, device), its independent fits one after another or in
parallel through joblib (a Dask cluster when FAIRDASH_DASK_ADDRESS or ``dask_address`` is set), and returns one row
per (model, target, seed). One fit is :mod:`fairdash.work.fitting`, its measurement :mod:`fairdash.work.measure`.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np
import pandas as pd

from ..data import Arrays, Task, split_arrays
from ..data.preprocess import folded_levels, folded_words
from ..errors import FairDashError
from ..evaluation.blindness import add_price_columns
from ..evaluation.gaps import mark_moves
from ..evaluation.matched_price import Side, group_rates, split_prices
from ..evaluation.metric_table import EVAL_PREFIX, POP_PREFIX, lead_columns
from ..evaluation.metrics import flag_below_majority, measure_of
from ..evaluation.who_pays.table import add_who_pays_columns
from ..files.scoring import training_schema
from ..models.registry import model_info
from ..progress import as_progress, counted_progress, scaled_progress
from ..targeting.criteria import EO, Criterion
from ..targeting.decision import check_rule, predicts_with_s, rule_info
from ..targeting.target_spec import TargetSpec
from .fit_cache import FitCache
from .fitting import Fit, TrainedModel, device_label, fit_on_arrays, requested_target, target_of
from .measure import scored
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

MAX_SWEEP_RUNS = 2000  # larger grids are refused with a message (see issue: limits)


def fit_model(task: Task, name: str, *, target: TargetSpec | None = None, seed: int = 0, options: dict | None = None,
              device="auto", cache: FitCache | None = None, progress=None,
              arrays: Arrays | None = None) -> TrainedModel:
    """Train one model on the seed's training split and measure it on its test split.

    ``target`` is the :class:`TargetSpec` (:func:`make_target_spec`; ``None``: the task's default request).
    The target's decision rule (``target.decision``) is fitted on the training rows and used for every decision."""
    spec = requested_target(target, task)
    arrays = arrays or split_arrays(task, seed)
    f = fit_on_arrays(name, arrays, spec, seed=seed, device=device, options=options, cache=cache, progress=progress,
                      group_names=task.group_names)
    metrics = scored(f, arrays, spec.criterion_info, cache, task.group_names)
    return TrainedModel(name, f.est, arrays.preprocessor, task.spec, task.features, task.categorical_features,
                        task.group_names, task.label_names, spec.criterion, f.t, seed, metrics, task.fingerprint,
                        f.seconds, device_label(f.est, device), f.target, f.fitted_at, f.decision,
                        training_schema(task, arrays.split.train))


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


def _row(name, spec: TargetSpec, seed, f: Fit, metrics, device, sees_s: bool = False) -> dict:
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
            "fit_seconds": float(f.seconds), "fitted_at": f.fitted_at, "device": device_label(f.est, device),
            "cached": f.hit}


def _fit_and_score(name, arrays, spec, seed, device, options, cache, progress, group_names, sees_s, price=False):
    """One fit of the sweep, measured: its results row and the fit (with ``price``, what the price of deciding
    without s needs of it: :func:`_side`)."""
    f = fit_on_arrays(name, arrays, spec, seed=seed, device=device, options=options, cache=cache, progress=progress,
                      group_names=group_names)
    m = scored(f, arrays, spec.criterion_info, cache, group_names)
    row = _row(name, spec, seed, f, m, device, sees_s)
    if price:
        f.side = _side(row, f, arrays, spec.criterion_info)
    return row, f


def _side(row, f: Fit, arrays, criterion: Criterion) -> Side | None:
    """The fit as the price sees it (:class:`fairdash.evaluation.matched_price.Side`): a blind rule's rates on the
    training rows and decisions on the test rows, a with-s rule's estimator; ``None`` for a model that saw s or a
    fit with no target to land on."""
    if row["sees_s"] or f.goal is None:
        return None
    G = len(f.goal.group)
    t = row["target_rate"]
    if f.decision.needs_s or predicts_with_s(f.est):
        return Side(row["label"], row["seed"], t, True, estimator=None if predicts_with_s(f.est) else f.est)
    train = f.decision.decide(f.est, arrays.X_train)
    rates, counts = group_rates(train, arrays.y_train, arrays.s_train, G, criterion)
    tnr = ()
    # explicit TPR and TNR targets: landing means both (TNR: the negatives' "TPR" of 1 - p)
    if f.goal.other is not None:
        rates_n, counts_n = group_rates(1 - np.asarray(train), 1 - np.asarray(arrays.y_train), arrays.s_train, G, EO)
        tnr = (tuple(rates_n), tuple(counts_n), tuple(f.goal.other))
    return Side(row["label"], row["seed"], t, False, tuple(rates), tuple(counts), tuple(f.goal.group),
                np.asarray(f.decision.decide(f.est, arrays.X_test), dtype=np.int8), tnr=tnr,
                train_accuracy=measure_of("accuracy").value(np.asarray(arrays.y_train), np.asarray(train)))


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


def serving_models(models, criterion: Criterion, only_serving: bool = True) -> tuple[list, list]:
    """The models a job trains (each once, in order) and those it skips with the reason: a model made for
    another criterion is skipped when ``only_serving`` (else it runs and its rows say what it serves)."""
    kept, skipped = [], []
    for m in dict.fromkeys(models):
        info = model_info(m)
        if not info.serves(criterion) and only_serving:
            skipped.append((m, f"{info.label} serves {'/'.join(info.criteria)} only, not '{criterion.name}'"))
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


@dataclass(frozen=True)
class ExperimentPlan:
    """What an experiment runs (:func:`run_experiment`): ``models`` on ``task`` at every point of the sweep's grid
    ``target_rates`` (each point ``target.with_rate(t)``; ``None``: the spec as it is; models that ignore the target
    train once per seed), on every seed's split in ``seeds``, under the decision rules ``decisions``
    (:mod:`fairdash.targeting.decision`: models x rules in one sweep; ``None``: the target's own rule). ``target`` is
    the :class:`TargetSpec` (``None``: the task's default request). ``options``: each model's own settings by its
    name; ``device``: where the models fit. Models that do not serve the criterion are skipped with a reason when
    ``only_serving`` (else they run and their rows say what they serve). A run holding a rule that decides with s gets
    the price of deciding without s (:func:`priced`; ``price``: keep what it needs of each fit in
    ``Experiment.sides`` whatever the rules, ``None``: where one needs s). ``keep_models``: keep every fit as a
    :class:`TrainedModel` in ``Experiment.models``."""

    task: Task
    models: tuple
    target_rates: tuple = (None,)
    seeds: tuple = (0,)
    target: TargetSpec | None = None
    decisions: tuple | None = None
    options: dict = field(default_factory=dict)  # model name -> its settings
    device: str = "auto"
    only_serving: bool = True
    price: bool | None = None
    keep_models: bool = False

    def __post_init__(self):
        object.__setattr__(self, "models", tuple(self.models))
        object.__setattr__(self, "target_rates", tuple(self.target_rates) or (None,))
        object.__setattr__(self, "seeds", tuple(self.seeds))
        object.__setattr__(self, "options", dict(self.options or {}))
        if self.decisions is not None:
            object.__setattr__(self, "decisions", tuple(self.decisions))


@dataclass
class _Collected:
    """What a run keeps of its fits as they finish, in the plan's order: the rows, the models (``keep_models``) and
    what the price of deciding without s needs of each fit."""

    plan: ExperimentPlan
    arrays: dict  # seed -> Arrays
    decisions: list  # the rules as the plan checked and named them
    rows: list = field(default_factory=list)
    fitted: dict = field(default_factory=dict)
    sides: list = field(default_factory=list)

    def keep(self, row, f: Fit, sp: TargetSpec):
        self.rows.append(row)
        if f.side is not None:
            self.sides.append(f.side)
        if self.plan.keep_models:
            t = None if np.isnan(row["target_rate"]) else row["target_rate"]
            key = (row["model"], row["target_rate"], row["seed"]) + ((row["decision"],) if len(self.decisions) > 1
                                                                     else ())
            self.fitted[key] = _trained(self.plan.task, row["model"], f, self.arrays[row["seed"]], row, t,
                                        self.plan.device, sp)


def run_experiment(plan: ExperimentPlan, *, cache: FitCache | None = None, n_jobs: int = 1, progress=None,
                   dask_address: str | None = None) -> Experiment:
    """Run ``plan`` (:class:`ExperimentPlan`): one row per (model, target, seed). The fits go through ``cache``
    where there is one, one after another (``n_jobs`` 1) or in parallel through joblib (``n_jobs`` workers, -1: one a
    core; a Dask cluster when FAIRDASH_DASK_ADDRESS or ``dask_address`` is set); ``progress`` hears of each."""
    spec = requested_target(plan.target, plan.task)
    progress = as_progress(progress)
    models, skipped = serving_models(plan.models, spec.criterion_info, plan.only_serving)
    if not models:
        raise FairDashError("None of the chosen models serves this criterion.")
    jobs = plan_fits(models, spec, plan.target_rates, plan.seeds, plan.decisions)
    decisions = list(dict.fromkeys(f.target.decision for f in jobs))  # the rules as the plan checked and named them
    if len(jobs) > MAX_SWEEP_RUNS:
        raise FairDashError(f"This sweep has {len(jobs)} runs; the limit is {MAX_SWEEP_RUNS}. Use fewer targets or "
                            "repeats.")
    if len(jobs) > 1:  # each message says which fit of how many, and the time left once a few are done
        progress = counted_progress(progress, len(jobs))
    progress(0.0, f"Preparing {len(plan.seeds)} split(s)")
    arrays = {seed: split_arrays(plan.task, seed) for seed in plan.seeds}
    n_jobs = max(1, int(n_jobs)) if n_jobs != -1 else (os.cpu_count() or 1)
    # a rule with s beside blind ones asks for the price
    price = any(rule_info(d).needs_s for d in decisions) if plan.price is None else plan.price
    run = _Collected(plan, arrays, decisions)
    if n_jobs == 1 and not (dask_address or os.environ.get("FAIRDASH_DASK_ADDRESS")):
        _fit_in_turn(run, jobs, cache, progress, price)
    else:
        _fit_in_parallel(run, jobs, cache, progress, price, n_jobs, dask_address)
    results = _finished(run, spec, cache, progress, price)
    return Experiment(results, run.fitted, skipped, spec, run.sides)


def _fit_in_turn(run: _Collected, jobs, cache, progress, price: bool):
    """The plan's fits one after another in this process, each reporting inside its fit."""
    plan = run.plan
    for i, (m, sp, seed) in enumerate(jobs):
        label = model_info(m).label
        what = f"Training {label} (seed {seed}{'' if sp.target_rate is None else f', PR_t {sp.target_rate:.3f}'})"
        progress(i / len(jobs), what)
        step = scaled_progress(progress, i / len(jobs), (i + 1) / len(jobs))
        row, est = _fit_and_score(
            m, run.arrays[seed], sp, seed, plan.device, plan.options.get(m), cache,
            lambda f, msg="", step=step, what=what: step(f, f"{what}: {msg}" if msg else what),
            plan.task.group_names, plan.task.spec.s_as_feature, price)
        run.keep(row, est, sp)


def _fit_in_parallel(run: _Collected, jobs, cache, progress, price: bool, n_jobs: int, dask_address):
    """The plan's fits in ``n_jobs`` joblib workers (or on a Dask cluster), kept in the plan's order."""
    plan = run.plan
    cache_dir = cache.directory if cache is not None else None
    ctx, client = parallel_config(dask_address, _job)
    threads = 1 if (os.cpu_count() or 1) <= n_jobs else max(1, (os.cpu_count() or 1) // n_jobs)
    from joblib import Parallel, delayed

    try:
        with ctx:
            # max_nbytes=None: the arrays go to the workers in memory, never memory-mapped to a temporary file
            gen = Parallel(n_jobs=n_jobs, return_as="generator", max_nbytes=None)(
                delayed(_job)(m, run.arrays[seed], sp, seed, plan.device, plan.options.get(m), cache_dir,
                              plan.keep_models, threads, plan.task.group_names, plan.task.spec.s_as_feature, price)
                for m, sp, seed in jobs)
            for i, ((_, sp, _), (row, est)) in enumerate(zip(jobs, gen)):  # the generator keeps the order
                progress((i + 1) / len(jobs), f"Finished {row['label']} (seed {row['seed']})")
                run.keep(row, est, sp)
    finally:
        if client is not None:
            client.close()


def _finished(run: _Collected, spec: TargetSpec, cache, progress, price: bool) -> pd.DataFrame:
    """The run's rows as its results table: no gap for a plain model that ran once for several targets, the moves,
    the price of deciding without s, the rows below the majority class flagged, the columns in their order."""
    task, results = run.plan.task, pd.DataFrame(run.rows)
    once = [d for d in run.decisions if not rule_info(d).aims_at_target]
    if len(run.plan.target_rates) > 1 and once:  # a plain model ran once for several targets: no gap
        plain = ~results["model"].map(lambda m: model_info(m).uses_target_rate) & results["decision"].isin(once)
        for c in [c for c in results.columns if c.startswith(("target_", POP_PREFIX + "gap_", EVAL_PREFIX + "gap_"))
                  or c.endswith(("worst_gap", "worst_gap_group"))]:
            results.loc[plain, c] = "" if c.endswith("_group") else np.nan
    if price and any(x.with_s for x in run.sides):
        progress(1.0, "Measuring the price of deciding without s")
    results = priced(task, mark_moves(results, task.group_names), run.sides, spec.criterion_info,
                     device=run.plan.device, cache=cache, arrays=run.arrays)
    progress(1.0, "Done")
    majority = {seed: float(max(a.y_test.mean(), 1 - a.y_test.mean())) for seed, a in run.arrays.items()
                if len(a.y_test)}
    results = flag_below_majority(results, majority)
    folded = {seed: folded_words(folded_levels(a.preprocessor)) for seed, a in run.arrays.items()}
    if any(folded.values()):  # a feature the one-hot cap cut is said wherever the results are
        results["folded_levels"] = results["seed"].map(folded).astype(object).fillna("").astype(str)
    return results[[c for c in RESULT_COLUMNS if c in results.columns]
                   + [c for c in results.columns if c not in RESULT_COLUMNS]]


def priced(task: Task, results: pd.DataFrame, sides, criterion: Criterion, *, device="auto", cache=None,
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
    prices = split_prices(sides, arrays, criterion, G, device=device, cache=cache,
                          group_names=task.group_names)
    return add_who_pays_columns(add_price_columns(results, prices), prices)


def _trained(task, name, f: Fit, arrays, row, t, device, spec) -> TrainedModel:
    metrics = {k: v for k, v in row.items() if k not in (
        "model", "label", "criterion", "target_rate", "target", "seed", "sees_s", "decision", "decides_with_s",
        "rule_reached", "rule_note", "converged", "fit_seconds", "fitted_at", "device", "cached")}
    return TrainedModel(name, f.est, arrays.preprocessor, task.spec, task.features, task.categorical_features,
                        task.group_names, task.label_names, spec.criterion, t, row["seed"], metrics,
                        task.fingerprint, row["fit_seconds"], device_label(f.est, device),
                        target_of(name, spec), row["fitted_at"], f.decision, training_schema(task, arrays.split.train))
