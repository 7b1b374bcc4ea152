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
from .backend import FitCache, as_progress, cache_key, device_description, scaled_progress, seed_everything, source_version
from .data import Arrays, Task, TaskSpec, categorical_as_text, split_arrays
from .errors import FairDashError
from .metrics import group_metrics
from .models.registry import make_model, model_info

RESULT_COLUMNS = ("model", "label", "criterion", "target_rate", "seed", "accuracy", "pr_0", "pr_1", "tpr_0",
                  "tpr_1", "tnr_0", "tnr_1", "acc_0", "acc_1", "pr_ratio", "pr_ratio_01", "pr_diff", "tpr_ratio",
                  "tpr_diff", "tnr_ratio", "accuracy_bound", "ceiling_at_target", "eval_set", "n_eval",
                  "fit_seconds", "device", "cached")

MAX_SWEEP_RUNS = 2000  # larger grids are refused with a message (see issue: limits)


def data_fingerprint(task: Task) -> str:
    """A short content hash of the task's rows (features, y, s): the same table gives the same print.
    Remembered on the task object (a task is never changed after ``build_task``)."""
    known = task.__dict__.get("_fingerprint")
    if known is not None:
        return known
    h = hashlib.sha256()
    h.update(pd.util.hash_pandas_object(task.X, index=False).to_numpy().tobytes())
    h.update(np.ascontiguousarray(task.y).tobytes())
    h.update(np.ascontiguousarray(task.s).tobytes())
    h.update(repr(task.features).encode())
    task.__dict__["_fingerprint"] = h.hexdigest()[:16]
    return task.__dict__["_fingerprint"]


@dataclass
class TrainedModel:
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

    @property
    def label(self) -> str:
        return model_info(self.name).label

    @property
    def transition_table(self):
        return getattr(self.estimator, "transition_table_", None)

    def transform(self, df: pd.DataFrame) -> np.ndarray:
        missing = [c for c in self.feature_columns if c not in df.columns]
        if missing:
            raise FairDashError(f"The table lacks column(s) the model was trained on: {', '.join(map(repr, missing))}.")
        X = categorical_as_text(df[list(self.feature_columns)], self.categorical_features)
        return np.asarray(self.preprocessor.transform(X), dtype=np.float64)

    def predict_proba(self, df: pd.DataFrame) -> np.ndarray:
        return self.estimator.predict_proba(self.transform(df))

    def predict(self, df: pd.DataFrame) -> np.ndarray:
        return self.estimator.predict(self.transform(df))


def evaluate(estimator, arrays: Arrays, criterion: str, target_rate=None) -> dict:
    """Test metrics: on the balanced test set for demographic parity, the ordinary one for opportunity.
    Also Theorem 2's ceiling at the measured group rates (``accuracy_bound``) and at the target."""
    idx = arrays.balanced_test if criterion == "dp" else np.arange(len(arrays.y_test))
    y, s = arrays.y_test[idx], arrays.s_test[idx]
    G = int(max(arrays.s_train.max(), arrays.s_test.max())) + 1
    pred = np.asarray(estimator.predict(arrays.X_test[idx])).astype(int)
    m = group_metrics(y, pred, s, G)
    r = targets.base_rates(y, s, G)
    p = targets.group_shares(s, G)
    m["accuracy_bound"] = targets.accuracy_ceiling(r, p, [m[f"pr_{j}"] for j in range(G)])
    m["ceiling_at_target"] = targets.accuracy_ceiling(r, p, target_rate) if target_rate is not None else float("nan")
    m["eval_set"] = "balanced test" if criterion == "dp" else "test"
    m["n_eval"] = int(len(idx))
    return m


def _resolved_target(name, arrays, target_rate, criterion, tpr_target, tnr_target):
    info = model_info(name)
    if not info.uses_target_rate or (criterion == "eo" and tpr_target is not None and tnr_target is not None):
        return None
    if target_rate is None:
        return targets.presets(targets.base_rates(arrays.y_train, arrays.s_train))["avg"]
    return float(targets.check_target_rate(target_rate))


def _fit_on_arrays(name, arrays, *, target_rate, criterion, seed, device, delta, tpr_target, tnr_target,
                   options, cache, progress):
    info = model_info(name)
    if criterion not in ("dp", "eo"):
        raise FairDashError("The criterion must be 'dp' or 'eo'.")
    t = _resolved_target(name, arrays, target_rate, criterion, tpr_target, tnr_target)
    est = make_model(name, target_rate=t, criterion=criterion, seed=seed, device=device, delta=delta,
                     tpr_target=tpr_target, tnr_target=tnr_target, **(options or {}))
    if progress is not None and "progress" in est.get_params():
        est.set_params(progress=progress)
    seed_everything(seed)
    strata = arrays.strata_train if info.uses_target_rate else None
    t0 = time.perf_counter()
    if cache is not None:
        est, hit = cache.fit(est, arrays.X_train, arrays.y_train, arrays.s_train, strata)
    else:
        kw = {"strata": strata} if strata is not None else {}
        est.fit(arrays.X_train, arrays.y_train, arrays.s_train, **kw)
        hit = False
    seconds = time.perf_counter() - t0
    if not np.all(np.isfinite(est.predict_proba(arrays.X_test[:5]))):
        raise FairDashError(f"{info.label} did not converge (its outputs are not numbers); try another setting.")
    return est, t, seconds, hit


def fit_model(task: Task, name: str, *, target_rate=None, criterion: str = "dp", seed: int = 0, delta: float = 1.0,
              tpr_target=None, tnr_target=None, options: dict | None = None, device="auto",
              cache: FitCache | None = None, progress=None, arrays: Arrays | None = None) -> TrainedModel:
    """Train one model on the seed's training split and measure it on its test split."""
    arrays = arrays or split_arrays(task, seed)
    est, t, seconds, hit = _fit_on_arrays(name, arrays, target_rate=target_rate, criterion=criterion, seed=seed,
                                          device=device, delta=delta, tpr_target=tpr_target, tnr_target=tnr_target,
                                          options=options, cache=cache, progress=progress)
    metrics = scored(est, arrays, criterion, t, cache)
    return TrainedModel(name, est, arrays.preprocessor, task.spec, task.features, task.categorical_features,
                        task.group_names, task.label_names, criterion, t, seed, metrics, data_fingerprint(task),
                        seconds, _device_label(est, device))


def scored(estimator, arrays: Arrays, criterion: str, target_rate=None, cache: FitCache | None = None) -> dict:
    """``evaluate``, answered from the fit cache when the same fitted model (by its state's content) was
    already scored on the same test rows by the same code: a repeated request skips the scoring too
    (a GP scores Adult's test set in about 70 ms; the cached answer takes about 1 ms)."""
    if cache is None:
        return evaluate(estimator, arrays, criterion, target_rate)
    from .models.state import to_jsonable

    state = estimator.get_state()
    key = cache_key(arrays.X_test, arrays.y_test, arrays.s_test, arrays.balanced_test,
                    *[np.ascontiguousarray(state["arrays"][k]) for k in sorted(state["arrays"])],
                    config={"meta": to_jsonable(state["meta"]), "criterion": criterion, "target_rate": target_rate},
                    code_version=source_version("experiments.py", "metrics.py", "targets.py"))
    value, _ = cache.result(key, lambda: to_jsonable(evaluate(estimator, arrays, criterion, target_rate)))
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


def _job(name, arrays, target_rate, seed, criterion, device, delta, tpr_target, tnr_target, options, cache_dir,
         keep_model, n_threads):
    if n_threads:
        import torch

        torch.set_num_threads(n_threads)
    cache = FitCache(cache_dir) if cache_dir is not None else None
    est, t, seconds, hit = _fit_on_arrays(name, arrays, target_rate=target_rate, criterion=criterion, seed=seed,
                                          device=device, delta=delta, tpr_target=tpr_target, tnr_target=tnr_target,
                                          options=options, cache=cache, progress=None)
    m = scored(est, arrays, criterion, t, cache)
    row = {"model": name, "label": model_info(name).label, "criterion": criterion,
           "target_rate": np.nan if t is None else t, "seed": seed, **m, "fit_seconds": seconds,
           "device": _device_label(est, device), "cached": hit}
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


def run_experiment(task: Task, models, target_rates=(None,), seeds=(0,), *, criterion: str = "dp",
                   delta: float = 1.0, tpr_target=None, tnr_target=None, options: dict | None = None,
                   device="auto", cache: FitCache | None = None, n_jobs: int = 1, progress=None,
                   keep_models: bool = False, dask_address: str | None = None,
                   only_serving: bool = True) -> Experiment:
    """Train ``models`` at every target rate (models that ignore the target train once per seed) on
    every seed's split; one row per (model, target, seed). Models that do not serve ``criterion`` are
    skipped with a reason when ``only_serving`` (else they run and their rows say what they serve)."""
    from joblib import Parallel, delayed

    progress = as_progress(progress)
    models = list(dict.fromkeys(models))
    seeds = list(seeds)
    target_rates = list(target_rates) or [None]
    skipped = []
    for m in list(models):
        info = model_info(m)
        if not info.serves(criterion) and only_serving:
            skipped.append((m, f"{info.label} serves {'/'.join(info.criteria)} only, not '{criterion}'"))
            models.remove(m)
    if not models:
        raise FairDashError("None of the chosen models serves this criterion.")
    options = options or {}
    jobs = [(m, t, seed) for seed in seeds for m in models
            for t in (target_rates if model_info(m).uses_target_rate else [None])]
    if len(jobs) > MAX_SWEEP_RUNS:
        raise FairDashError(f"This sweep has {len(jobs)} runs; the limit is {MAX_SWEEP_RUNS}. Use fewer targets or repeats.")
    progress(0.0, f"Preparing {len(seeds)} split(s)")
    arrays = {seed: split_arrays(task, seed) for seed in seeds}
    cache_dir = cache.directory if cache is not None else None
    n_jobs = max(1, int(n_jobs)) if n_jobs != -1 else (os.cpu_count() or 1)
    rows, fitted = [], {}
    if n_jobs == 1 and not (dask_address or os.environ.get("FAIRDASH_DASK_ADDRESS")):
        for i, (m, t, seed) in enumerate(jobs):
            label = model_info(m).label
            what = f"Training {label} (seed {seed}{'' if t is None else f', PR_t {t:.3f}'})"
            progress(i / len(jobs), what)
            step = scaled_progress(progress, i / len(jobs), (i + 1) / len(jobs))
            est, tt, seconds, hit = _fit_on_arrays(
                m, arrays[seed], target_rate=t, criterion=criterion, seed=seed, device=device, delta=delta,
                tpr_target=tpr_target, tnr_target=tnr_target, options=options.get(m), cache=cache,
                progress=lambda f, msg="", step=step, what=what: step(f, f"{what}: {msg}" if msg else what))
            met = scored(est, arrays[seed], criterion, tt, cache)
            rows.append({"model": m, "label": label, "criterion": criterion,
                         "target_rate": np.nan if tt is None else tt, "seed": seed, **met, "fit_seconds": seconds,
                         "device": _device_label(est, device), "cached": hit})
            if keep_models:
                fitted[(m, rows[-1]["target_rate"], seed)] = _trained(task, m, est, arrays[seed], criterion, tt, seed,
                                                                    met, seconds, device)
    else:
        ctx, client = _parallel_config(dask_address)
        threads = 1 if (os.cpu_count() or 1) <= n_jobs else max(1, (os.cpu_count() or 1) // n_jobs)
        try:
            with ctx:
                gen = Parallel(n_jobs=n_jobs, return_as="generator")(
                    delayed(_job)(m, arrays[seed], t, seed, criterion, device, delta, tpr_target, tnr_target,
                                  options.get(m), cache_dir, keep_models, threads)
                    for m, t, seed in jobs)
                for i, (row, est) in enumerate(gen):
                    rows.append(row)
                    progress((i + 1) / len(jobs), f"Finished {row['label']} (seed {row['seed']})")
                    if keep_models:
                        seed = row["seed"]
                        t = None if np.isnan(row["target_rate"]) else row["target_rate"]
                        fitted[(row["model"], row["target_rate"], seed)] = _trained(
                            task, row["model"], est, arrays[seed], criterion, t, seed, row, row["fit_seconds"], device)
        finally:
            if client is not None:
                client.close()
    progress(1.0, "Done")
    results = pd.DataFrame(rows)
    results = results[[c for c in RESULT_COLUMNS if c in results.columns]
                      + [c for c in results.columns if c not in RESULT_COLUMNS]]
    return Experiment(results, fitted, skipped)


def _trained(task, name, est, arrays, criterion, t, seed, metrics, seconds, device) -> TrainedModel:
    return TrainedModel(name, est, arrays.preprocessor, task.spec, task.features, task.categorical_features,
                        task.group_names, task.label_names, criterion, t, seed, dict(metrics),
                        data_fingerprint(task), seconds, _device_label(est, device))
