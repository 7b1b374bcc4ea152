"""The experiment runner on real data (COMPAS: small enough to train quickly)."""
import numpy as np
import pandas as pd
import pytest

from fairdash.targeting.target_spec import make_target_spec
from fairdash.work.experiments import RESULT_COLUMNS, ExperimentPlan, fit_model, run_experiment
from fairdash.work.fit_cache import FitCache


def test_tidy_table_has_one_row_per_model_target_seed(compas_task, tmp_path):
    exp = run_experiment(ExperimentPlan(compas_task, ["fair-lr", "lr"], [0.3, 0.5], [0, 1],
                                        target=make_target_spec("dp")), cache=FitCache(tmp_path))
    res = exp.results
    assert len(res) == 2 * 2 + 2  # fair-lr at two targets, lr once, per seed
    for col in ("model", "target_rate", "seed", "accuracy", "pr_0", "pr_1", "tpr_0", "tpr_1", "tnr_0", "tnr_1",
                "pr_ratio", "tpr_ratio", "fit_seconds", "device"):
        assert col in res.columns
    assert res.loc[res.model == "lr", "target_rate"].isna().all()
    assert set(res.loc[res.model == "fair-lr", "target_rate"]) == {0.3, 0.5}
    assert (res["eval_set"] == "balanced test").all()
    assert (res["accuracy"] <= res["ceiling_at_measured"] + 1e-12).all()  # Theorem 2 holds on the same data


def test_rerun_is_answered_by_the_cache(compas_task, tmp_path):
    cache = FitCache(tmp_path)
    first = run_experiment(ExperimentPlan(compas_task, ["fair-lr"], [0.4], [0]), cache=cache).results
    again = run_experiment(ExperimentPlan(compas_task, ["fair-lr"], [0.4], [0]),
                           cache=FitCache(tmp_path)).results  # from disk
    assert not first["cached"].any() and again["cached"].all()
    cols = [c for c in RESULT_COLUMNS if c not in ("fit_seconds", "fitted_at", "cached", "device")]
    pd.testing.assert_frame_equal(first[cols], again[cols])


@pytest.mark.slow
def test_parallel_run_gives_the_same_table(compas_task):
    serial = run_experiment(ExperimentPlan(compas_task, ["fair-lr", "lr"], [0.4], [0, 1]), n_jobs=1).results
    parallel = run_experiment(ExperimentPlan(compas_task, ["fair-lr", "lr"], [0.4], [0, 1]), n_jobs=2).results
    cols = [c for c in RESULT_COLUMNS if c not in ("fit_seconds", "fitted_at", "cached", "device")]
    pd.testing.assert_frame_equal(serial[cols], parallel[cols], check_exact=False, atol=1e-9)


def test_models_that_do_not_serve_the_criterion_are_skipped_with_a_reason(compas_task):
    exp = run_experiment(ExperimentPlan(compas_task, ["fair-lr", "kamiran"], [0.4], [0], target=make_target_spec("eo")))
    assert set(exp.results["model"]) == {"fair-lr"}
    assert exp.skipped and "kamiran" == exp.skipped[0][0] and "dp" in exp.skipped[0][1]
    assert (exp.results["eval_set"] == "test").all()


def test_fit_model_predicts_raw_tables(compas_task, compas_table):
    trained = fit_model(compas_task, "fair-lr", target=make_target_spec("dp", 0.45), seed=0)
    raw = compas_table.drop(columns=["race"])  # s is not needed to predict
    proba = trained.predict_proba(raw)
    assert proba.shape == (len(raw), 2) and np.allclose(proba.sum(1), 1)
    assert trained.metrics["accuracy"] > max(compas_task.y.mean(), 1 - compas_task.y.mean())
    assert trained.transition_table is not None
    assert trained.transition_table.target_rates[0] == pytest.approx(0.45)


@pytest.mark.slow
def test_code_version_is_per_model_so_a_change_retrains_only_that_model(tmp_path, monkeypatch):
    """Issue 4: after editing one model's module, only that model's cache keys change."""
    import hashlib
    import shutil

    from fairdash.models.registry import MODELS
    from fairdash.work import fit_cache

    pkg = tmp_path / "fairdash"
    shutil.copytree(fit_cache.Path(fit_cache.__file__).parent.parent, pkg, ignore=shutil.ignore_patterns("__pycache__"))
    root = pkg.resolve()

    def version(module):
        seen = set()
        fit_cache._module_sources(root / "models" / module, root, seen)
        return {str(p.relative_to(root)) for p in seen}, hashlib.sha256(
            b"".join(p.read_bytes() for p in sorted(seen))).hexdigest()

    before = {m: version(m) for m in ("fair_lr.py", "fair_gp.py", "baselines.py", "zafar.py")}
    assert "models/core/likelihood.py" in before["fair_lr.py"][0] and "models/fair_gp.py" not in before["fair_lr.py"][0]
    with open(pkg / "models" / "fair_gp.py", "a") as f:
        f.write("\n# an edit\n")
    after = {m: version(m) for m in before}
    assert after["fair_gp.py"][1] != before["fair_gp.py"][1]
    for m in ("fair_lr.py", "baselines.py", "zafar.py"):
        assert after[m][1] == before[m][1]
    # and the keys the cache uses differ between model families
    versions = {n: fit_cache.code_version(info.load_class()) for n, info in MODELS.items()}
    assert versions["fair-lr"] == versions["lr"] and versions["fair-lr"] != versions["fair-gp"]


def test_progress_moves_within_each_fit_and_ends_at_one(compas_task):
    seen = []
    run_experiment(ExperimentPlan(compas_task, ["fair-lr"], [0.4], [0]), progress=lambda f, m="": seen.append((f, m)))
    fractions = [f for f, _ in seen]
    assert fractions == sorted(fractions) and fractions[-1] == 1.0
    inner = [m for f, m in seen if 0 < f < 1]
    assert inner and all(m.startswith("Training FairLR") for m in inner)
    assert len(seen) > 3  # the model reports inside its fit, not only once per fit


@pytest.mark.slow
def test_a_repeated_request_skips_the_fit_and_the_scoring(compas_task, tmp_path, monkeypatch):
    import fairdash.work.measure as E  # what scored calls

    first = fit_model(compas_task, "fair-lr", target=make_target_spec("dp", 0.45), cache=FitCache(tmp_path))
    calls = []
    real = E.evaluate
    monkeypatch.setattr(E, "evaluate", lambda *a, **k: calls.append(1) or real(*a, **k))
    # fresh cache object: disk
    again = fit_model(compas_task, "fair-lr", target=make_target_spec("dp", 0.45), cache=FitCache(tmp_path))
    assert calls == []
    assert again.metrics.keys() == first.metrics.keys()
    for k, v in first.metrics.items():
        assert again.metrics[k] == pytest.approx(v, nan_ok=True), k
    # another model (another target) is scored; so is the same model on another split
    fit_model(compas_task, "fair-lr", target=make_target_spec("dp", 0.5), cache=FitCache(tmp_path))
    fit_model(compas_task, "fair-lr", target=make_target_spec("dp", 0.45), seed=1, cache=FitCache(tmp_path))
    assert len(calls) == 2
    # without a cache every request scores
    fit_model(compas_task, "lr", cache=None)
    assert len(calls) == 3
