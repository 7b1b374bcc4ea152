"""Experiments: models x target rates x seeds on the protocol of docs/METHOD.md, as a tidy table.

``fit_model`` trains one model on one split and returns a :class:`TrainedModel` (preprocessing +
estimator + what it was asked and what it measured); ``run_experiment`` runs many independent fits in
parallel through joblib (a Dask cluster when FAIRDASH_DASK_ADDRESS or ``dask_address`` is set) and
returns one row per (model, target, seed).
"""
from __future__ import annotations

import hashlib
import os
import time
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from . import targets
from .backend import (FitCache, as_progress, cache_key, device_description, scaled_progress, seed_everything,
                      source_version, utc_now)
from .data import Arrays, Task, TaskSpec, split_arrays
from .data.preprocess import ScoresRawTables
from .errors import FairDashError
from .metrics import conditional_ratio, group_metrics, one_class_note
from .models.registry import make_model, model_info
from .run_spec import RunSpec
from .target_spec import TargetSpec, criterion_info, make_target_spec

RESULT_COLUMNS = ("model", "label", "criterion", "sees_s", "target_rate", "target", "seed", "accuracy", "pr_0", "pr_1", "tpr_0",
                  "tpr_1", "tnr_0", "tnr_1", "acc_0", "acc_1", "pr_ratio", "pr_ratio_01", "pr_diff", "tpr_ratio",
                  "tpr_diff", "tnr_ratio", "cond_pr_ratio", "one_class", "accuracy_bound", "ceiling_at_target",
                  "eval_set", "n_eval", "pop_accuracy", "pop_pr_0", "pop_pr_1", "pop_tpr_0", "pop_tpr_1", "pop_tnr_0",
                  "pop_tnr_1", "pop_pr_ratio", "pop_tpr_ratio", "pop_cond_pr_ratio", "pop_one_class",
                  "pop_accuracy_bound", "pop_ceiling_at_target", "target_gap", "n_pop", "fit_seconds", "fitted_at",
                  "device", "cached")
"""One row per fit. Columns without ``pop_`` are measured on the paper's evaluation rows (``eval_set``: the
balanced test set for demographic parity, the test set for equality of opportunity); ``pop_`` columns on
the ordinary test set, distributed like the data the model will score. ``target_gap`` is the mean over
groups of |pop_pr_s - PR_t| (empty without one PR_t). A ratio whose largest value is 0 is empty (0/0 is
not parity) and ``one_class`` says in words where a model predicts one class for everyone or a group."""

MAX_SWEEP_RUNS = 2000  # larger grids are refused with a message (see issue: limits)


def data_fingerprint(task: Task) -> str:
    """A short content hash of the task's rows (:attr:`fairdash.data.Task.fingerprint`)."""
    return task.fingerprint


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

    @property
    def label(self) -> str:
        return model_info(self.name).label


def _ceiling_at_target(spec: TargetSpec | None, target_rate, y, s, strata, G) -> float:
    """Theorem 2 on these rows at the rates the target asks for (NaN for a model without a target)."""
    if spec is None:
        return float("nan")
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


def _measured(estimator, X, y, s, strata, G, spec, target_rate, group_names) -> dict:
    pred = np.asarray(estimator.predict(X)).astype(int)
    m = group_metrics(y, pred, s, G)
    m["accuracy_bound"] = targets.accuracy_ceiling(targets.base_rates(y, s, G), targets.group_shares(s, G),
                                                   [m[f"pr_{j}"] for j in range(G)])
    m["ceiling_at_target"] = _ceiling_at_target(spec, target_rate, y, s, strata, G)
    m["one_class"] = one_class_note(pred, s, G, group_names)
    m["cond_pr_ratio"] = conditional_ratio(pred, s, strata, G) if strata is not None else float("nan")
    return m


def evaluate(estimator, arrays: Arrays, spec: TargetSpec | str | None = None, target_rate=None,
             group_names=None) -> dict:
    """Test metrics, measured twice (docs/METHOD.md, "Evaluation protocol"):

    - on the paper's evaluation rows: the balanced test set for demographic parity, the ordinary test
      set for equality of opportunity (``eval_set``);
    - on the population, the ordinary test set as it comes (``pop_`` keys), with ``target_gap``.

    Each set carries Theorem 2's ceiling at the measured group rates (``accuracy_bound``) and at the
    target (``ceiling_at_target``), both computed on that set's own rows. ``spec`` is the model's
    :class:`TargetSpec` (``None`` for a model without a target; a criterion name is accepted for it)."""
    crit = criterion_info(spec if isinstance(spec, str) else (spec.criterion if spec is not None else "dp"))
    spec = spec if isinstance(spec, TargetSpec) else None
    G = int(max(arrays.s_train.max(), arrays.s_test.max())) + 1
    test = np.arange(len(arrays.y_test))
    idx = arrays.balanced_test if crit.balanced_eval else test
    strata = arrays.strata_test if spec is not None and spec.conditional else None

    def rows(i):
        return arrays.X_test[i], arrays.y_test[i], arrays.s_test[i], None if strata is None else strata[i]

    m = _measured(estimator, *rows(idx), G, spec, target_rate, group_names)
    m["eval_set"] = crit.eval_set
    m["n_eval"] = int(len(idx))
    pop = m if not crit.balanced_eval else _measured(estimator, *rows(test), G, spec, target_rate, group_names)
    for k in ("accuracy", "pr_ratio", "tpr_ratio", "cond_pr_ratio", "one_class", "accuracy_bound",
              "ceiling_at_target", *(f"{r}_{j}" for r in ("pr", "tpr", "tnr") for j in range(G))):
        m[f"pop_{k}"] = pop[k]
    m["n_pop"] = int(len(test))
    m["target_gap"] = (float(np.mean([abs(pop[f"pr_{j}"] - target_rate) for j in range(G)]))
                       if target_rate is not None and (spec is None or not spec.conditional) else float("nan"))
    return m


def _target_of(name: str, spec: TargetSpec) -> TargetSpec | None:
    """The target a model trains for: the spec for models whose training uses it, else none."""
    return spec if model_info(name).uses_target_rate else None


def _fit_on_arrays(name, arrays, spec: TargetSpec, *, seed, device, options, cache, progress):
    info = model_info(name)
    target = _target_of(name, spec)
    params = target.estimator_params() if target is not None else {"criterion": spec.criterion}
    # in the paper's set-ups the numeric columns' own units, as the paper ran it; elsewhere the standardised
    # columns, where it beats the majority class (in raw units it did not on COMPAS race: issue 19, item 5)
    if arrays.paper_setup in info.raw_units:
        from .models.zafar import raw_units

        scale, offset = raw_units(arrays.preprocessor, arrays.X_train.shape[1])
        params.update(feature_scale=scale.tolist(), feature_offset=offset.tolist())
    est = make_model(name, seed=seed, device=device, **params, **(options or {}))
    if progress is not None and "progress" in est.get_params():
        est.set_params(progress=progress)
    seed_everything(seed)
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
    if not np.all(np.isfinite(est.predict_proba(arrays.X_test[:5]))):
        raise FairDashError(f"{info.label} did not converge (its outputs are not numbers); try another setting.")
    t = getattr(est, "target_rate_", None) if target is not None else None
    return est, target, t, seconds, hit, fitted_at


def _spec_of(target, criterion, target_rate, delta, tpr_target, tnr_target, strata_column=None) -> TargetSpec:
    """The request as a :class:`TargetSpec`: ``target`` when given, else built from the keyword form."""
    if target is not None:
        return TargetSpec.from_dict(target)
    return make_target_spec(criterion, target_rate, delta, tpr_target, tnr_target, strata_column=strata_column)


def fit_model(task: Task, name: str, *, target: TargetSpec | None = None, target_rate=None, criterion: str = "dp",
              seed: int = 0, delta: float = 1.0, tpr_target=None, tnr_target=None, options: dict | None = None,
              device="auto", cache: FitCache | None = None, progress=None, arrays: Arrays | None = None) -> TrainedModel:
    """Train one model on the seed's training split and measure it on its test split.

    ``target`` is the :class:`TargetSpec` (the keyword form ``target_rate=``, ``criterion=``... builds
    one through :func:`make_target_spec`; a conditional task gets its strata column)."""
    spec = _spec_of(target, criterion, target_rate, delta, tpr_target, tnr_target, task.spec.strata_column)
    arrays = arrays or split_arrays(task, seed)
    est, tgt, t, seconds, hit, fitted_at = _fit_on_arrays(name, arrays, spec, seed=seed, device=device,
                                                         options=options, cache=cache, progress=progress)
    metrics = scored(est, arrays, tgt or spec.criterion, t, cache, task.group_names)
    return TrainedModel(name, est, arrays.preprocessor, task.spec, task.features, task.categorical_features,
                        task.group_names, task.label_names, spec.criterion, t, seed, metrics, data_fingerprint(task),
                        seconds, _device_label(est, device), tgt, fitted_at)


def scored(estimator, arrays: Arrays, spec, target_rate=None, cache: FitCache | None = None, group_names=None) -> dict:
    """``evaluate``, answered from the fit cache when the same fitted model (by its state's content) was
    already scored on the same test rows by the same code: a repeated request skips the scoring too
    (a GP scores Adult's test set in about 70 ms; the cached answer takes about 1 ms)."""
    if cache is None:
        return evaluate(estimator, arrays, spec, target_rate, group_names)
    from .models.state import to_jsonable

    state = estimator.get_state()
    extra = [] if arrays.strata_test is None else [arrays.strata_test]
    key = cache_key(arrays.X_test, arrays.y_test, arrays.s_test, arrays.balanced_test, *extra,
                    *[np.ascontiguousarray(state["arrays"][k]) for k in sorted(state["arrays"])],
                    config={"meta": to_jsonable(state["meta"]), "target_rate": target_rate,
                            "spec": spec.to_dict() if isinstance(spec, TargetSpec) else spec,
                            "group_names": list(map(str, group_names or ()))},
                    code_version=source_version("experiments.py", "metrics.py", "targets.py", "target_spec.py"))
    value, _ = cache.result(key, lambda: to_jsonable(evaluate(estimator, arrays, spec, target_rate, group_names)))
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


SEES_S = " (sees s)"  # the label of a model that was given s as a feature
RAW_UNITS = " (paper's raw units)"  # ZafarAccuracy solved in the paper's coordinates (--paper adult-*)


def _row(name, spec: TargetSpec, seed, est, target, t, metrics, seconds, hit, fitted_at, device,
         sees_s: bool = False) -> dict:
    """One results row: what was asked (criterion, the target in words, the resolved PR_t, which is
    empty where no single rate was used), whether the model saw ``s``, and what was measured."""
    units = RAW_UNITS if getattr(est, "coordinates_", None) == "raw units" else ""
    return {"model": name, "label": model_info(name).label + units + (SEES_S if sees_s else ""), "criterion": spec.criterion,
            "sees_s": bool(sees_s),
            "target_rate": np.nan if t is None else float(t),
            "target": "" if target is None else target.describe(t), "seed": seed, **metrics,
            "fit_seconds": float(seconds), "fitted_at": fitted_at, "device": _device_label(est, device), "cached": hit}


def _fit_and_score(name, arrays, spec, seed, device, options, cache, progress, group_names, sees_s):
    """One fit of the sweep, measured: its results row and the fitted estimator."""
    est, target, t, seconds, hit, fitted_at = _fit_on_arrays(name, arrays, spec, seed=seed, device=device,
                                                            options=options, cache=cache, progress=progress)
    m = scored(est, arrays, target or spec.criterion, t, cache, group_names)
    return _row(name, spec, seed, est, target, t, m, seconds, hit, fitted_at, device, sees_s), est


def _job(name, arrays, spec, seed, device, options, cache_dir, keep_model, n_threads, group_names, sees_s):
    """:func:`_fit_and_score` in a worker process (its own torch threads and fit cache object)."""
    if n_threads:
        import torch

        torch.set_num_threads(n_threads)
    cache = FitCache(cache_dir) if cache_dir is not None else None
    row, est = _fit_and_score(name, arrays, spec, seed, device, options, cache, None, group_names, sees_s)
    return row, (est if keep_model else None)


def _parallel_config(dask_address):
    from contextlib import nullcontext

    import joblib

    address = dask_address or os.environ.get("FAIRDASH_DASK_ADDRESS")
    if not address:
        return nullcontext(), None
    try:
        from dask.distributed import Client
    except ImportError:
        raise FairDashError("A Dask address was given but dask.distributed is not installed "
                            "(pip install 'dask[distributed]').") from None
    timeout = float(os.environ.get("FAIRDASH_DASK_TIMEOUT", 20))
    try:
        client = Client(address, timeout=timeout)
    except (OSError, TimeoutError, ValueError) as e:  # refused, unreachable, malformed address
        reason = (str(e).strip().splitlines() or [type(e).__name__])[0][:160]
        raise FairDashError(f"Could not reach the Dask scheduler at {address!r} within {timeout:g} s ({reason}). "
                            "Check the address (for example tcp://host:8786) and that the scheduler is running, or "
                            "leave the address out to run on this machine.") from None
    return joblib.parallel_config(backend="dask"), client


def run_experiment(task: Task, models, target_rates=(None,), seeds=(0,), *, target: TargetSpec | None = None,
                   criterion: str = "dp", delta: float = 1.0, tpr_target=None, tnr_target=None,
                   options: dict | None = None, device="auto", cache: FitCache | None = None, n_jobs: int = 1,
                   progress=None, keep_models: bool = False, dask_address: str | None = None,
                   only_serving: bool = True) -> Experiment:
    """Train ``models`` at every target rate (models that ignore the target train once per seed) on
    every seed's split; one row per (model, target, seed). ``target`` is the :class:`TargetSpec` (or the
    keyword form builds one); ``target_rates`` is the sweep's grid, each point ``target.with_rate(t)``
    (``None``: the spec as it is). Models that do not serve the criterion are skipped with a reason
    when ``only_serving`` (else they run and their rows say what they serve)."""
    from joblib import Parallel, delayed

    spec = _spec_of(target, criterion, None, delta, tpr_target, tnr_target, task.spec.strata_column)
    progress = as_progress(progress)
    models = list(dict.fromkeys(models))
    seeds = list(seeds)
    target_rates = list(target_rates) or [None]
    if spec.explicit and any(t is not None for t in target_rates):
        raise FairDashError("A sweep over target positive rates does not apply with explicit TPR/TNR targets.")
    specs = [spec if t is None else spec.with_rate(t) for t in target_rates]
    skipped = []
    for m in list(models):
        info = model_info(m)
        if not info.serves(spec.criterion) and only_serving:
            skipped.append((m, f"{info.label} serves {'/'.join(info.criteria)} only, not '{spec.criterion}'"))
            models.remove(m)
    if not models:
        raise FairDashError("None of the chosen models serves this criterion.")
    options = options or {}
    jobs = [(m, sp, seed) for seed in seeds for m in models
            for sp in (specs if model_info(m).uses_target_rate else [spec])]
    if len(jobs) > MAX_SWEEP_RUNS:
        raise FairDashError(f"This sweep has {len(jobs)} runs; the limit is {MAX_SWEEP_RUNS}. Use fewer targets or repeats.")
    progress(0.0, f"Preparing {len(seeds)} split(s)")
    arrays = {seed: split_arrays(task, seed) for seed in seeds}
    cache_dir = cache.directory if cache is not None else None
    n_jobs = max(1, int(n_jobs)) if n_jobs != -1 else (os.cpu_count() or 1)
    rows, fitted = [], {}

    def keep(row, est, sp):
        if keep_models:
            t = None if np.isnan(row["target_rate"]) else row["target_rate"]
            fitted[(row["model"], row["target_rate"], row["seed"])] = _trained(
                task, row["model"], est, arrays[row["seed"]], row, t, device, sp)

    if n_jobs == 1 and not (dask_address or os.environ.get("FAIRDASH_DASK_ADDRESS")):
        for i, (m, sp, seed) in enumerate(jobs):
            label = model_info(m).label
            what = f"Training {label} (seed {seed}{'' if sp.target_rate is None else f', PR_t {sp.target_rate:.3f}'})"
            progress(i / len(jobs), what)
            step = scaled_progress(progress, i / len(jobs), (i + 1) / len(jobs))
            row, est = _fit_and_score(
                m, arrays[seed], sp, seed, device, options.get(m), cache,
                lambda f, msg="", step=step, what=what: step(f, f"{what}: {msg}" if msg else what),
                task.group_names, task.spec.s_as_feature)
            rows.append(row)
            keep(row, est, sp)
    else:
        ctx, client = _parallel_config(dask_address)
        threads = 1 if (os.cpu_count() or 1) <= n_jobs else max(1, (os.cpu_count() or 1) // n_jobs)
        try:
            with ctx:
                gen = Parallel(n_jobs=n_jobs, return_as="generator")(
                    delayed(_job)(m, arrays[seed], sp, seed, device, options.get(m), cache_dir, keep_models, threads,
                                  task.group_names, task.spec.s_as_feature)
                    for m, sp, seed in jobs)
                for i, ((_, sp, _), (row, est)) in enumerate(zip(jobs, gen)):  # the generator keeps the order
                    rows.append(row)
                    progress((i + 1) / len(jobs), f"Finished {row['label']} (seed {row['seed']})")
                    keep(row, est, sp)
        finally:
            if client is not None:
                client.close()
    progress(1.0, "Done")
    results = pd.DataFrame(rows)
    results = results[[c for c in RESULT_COLUMNS if c in results.columns]
                      + [c for c in results.columns if c not in RESULT_COLUMNS]]
    return Experiment(results, fitted, skipped, spec)


def _trained(task, name, est, arrays, row, t, device, spec) -> TrainedModel:
    metrics = {k: v for k, v in row.items() if k not in ("model", "label", "criterion", "target_rate", "target", "seed",
                                                       "sees_s",
                                                       "fit_seconds", "fitted_at", "device", "cached")}
    return TrainedModel(name, est, arrays.preprocessor, task.spec, task.features, task.categorical_features,
                        task.group_names, task.label_names, spec.criterion, t, row["seed"], metrics,
                        data_fingerprint(task), row["fit_seconds"], _device_label(est, device),
                        _target_of(name, spec), row["fitted_at"])


def evaluation_rates(task: Task, criterion: str, seed: int = 0, population: bool = False):
    """Base rates and group shares of the rows a seed's metrics are measured on: the balanced test set
    for demographic parity, the test set for opportunity, or (``population``) the ordinary test set.
    The ceilings drawn beside measured accuracy are computed on these."""
    from .data import split_task

    split = split_task(task, seed=seed)
    idx = split.balanced_test if criterion_info(criterion).balanced_eval and not population else split.test
    return targets.base_rates(task.y[idx], task.s[idx], task.n_groups), targets.group_shares(task.s[idx], task.n_groups)


# --------------------------------------------------------------------------------------------------
# Runs as the dashboard keeps them
# --------------------------------------------------------------------------------------------------
@dataclass
class Run:
    """One training run with everything that describes it: the request (:class:`RunSpec`), the task it
    was trained on, the data's name, its results and fitted models. Export and the report describe the
    run from here, whatever is loaded later."""

    spec: RunSpec
    task: Task
    data_name: str
    results: pd.DataFrame
    models: dict = field(default_factory=dict)
    skipped: list = field(default_factory=list)
    data_description: str = ""
    seconds: float = 0.0
    created: str = field(default_factory=utc_now)
    number: int = 0

    @property
    def key(self) -> str:
        return run_key(self.task, self.spec)

    @property
    def title(self) -> str:
        """A short name for lists of runs: number, models, data and target."""
        labels = ", ".join(dict.fromkeys(self.results["label"].astype(str))) if len(self.results) else "no models"
        data = self.data_name if len(self.data_name) <= 24 else self.data_name[:23] + "…"
        g = self.spec.target
        grid = [t for t in self.spec.target_rates if isinstance(t, float)]
        target = (f"TPR {g.tpr_target:.2f} / TNR {g.tnr_target:.2f}" if g.explicit
                  else f"PR_t {grid[0]:.3f}–{grid[-1]:.3f}" if len(grid) > 1
                  else f"PR_t {(grid or [g.target_rate])[0]:.3f}" if grid or g.target_rate is not None
                  else f"{g.preset} preset")
        return f"Run {self.number}: {labels} · {data} · {target}"


def run_key(task: Task, spec: RunSpec) -> str:
    """Same data and same request, same key (a repeated Train press is recognised before training)."""
    import json

    text = json.dumps(spec.to_dict(), sort_keys=True, default=str) + data_fingerprint(task)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def train_run(task: Task, spec: RunSpec, *, data_name: str, data_description: str = "", number: int = 0,
              only_serving: bool = True, **kwargs) -> Run:
    """``run_experiment`` for a :class:`RunSpec`, kept as a :class:`Run` (models kept)."""
    t0 = time.perf_counter()
    exp = run_experiment(task, list(spec.models), spec.target_rates, spec.seeds, target=spec.target,
                         options=spec.options, keep_models=True, only_serving=only_serving, **kwargs)
    res = exp.results
    if not only_serving:  # a model run outside the criterion it was made for says so everywhere
        for i, m in res["model"].items():
            info = model_info(m)
            if not info.serves(spec.target.criterion):
                res.loc[i, "label"] = f"{res.loc[i, 'label']} (made for {'/'.join(info.criteria)})"
    return Run(spec, task, data_name, res, exp.models, exp.skipped, data_description,
               time.perf_counter() - t0, number=number)

