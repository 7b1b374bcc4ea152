"""The CUDA path end to end: command line, experiments and repeatability on a GPU.

Every test here needs a CUDA GPU and skips, with that reason, where there is none (CI never has one).
They were run on a lent GPU machine with ``benchmarks/gpu_check.sh`` (benchmarks/README.md, "GPU").
"""
import json
import os
import subprocess
import sys

import numpy as np
import pytest
import torch

from fairdash.models.fair_gp import FairGP
from fairdash.models.fair_lr import FairLR

pytestmark = pytest.mark.skipif(
    not torch.cuda.is_available(), reason="no CUDA GPU on this machine; the CUDA path is exercised where one is"
)


def _cli(*args, env=None):
    return subprocess.run([sys.executable, "-m", "fairdash", *args], capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, timeout=600)


def test_cli_trains_on_the_gpu_and_the_file_predicts_on_a_machine_without_one(tmp_path):
    model = tmp_path / "m.fairdash"
    out = _cli("train", "--paper", "adult-sex", "--model", "fair-lr", "--device", "cuda", "--no-cache",
               "--out", str(model), "--json")
    assert out.returncode == 0, out.stderr
    res = json.loads(out.stdout)
    assert res["device"] == torch.cuda.get_device_name(0)
    assert 0.85 < res["bal_accuracy"] and res["bal_pr_ratio"] > 0.8
    # score the raw Adult table with the GPU hidden: the model file carries no device
    raw = tmp_path / "adult.csv"
    from fairdash.data import load_sample

    load_sample("adult").head(500).to_csv(raw, index=False)
    on_cpu = _cli("predict", "--model", str(model), "--data", str(raw), "--out", str(tmp_path / "cpu.csv"),
                  env={"CUDA_VISIBLE_DEVICES": ""})
    assert on_cpu.returncode == 0, on_cpu.stderr
    on_gpu = _cli("predict", "--model", str(model), "--data", str(raw), "--out", str(tmp_path / "gpu.csv"))
    assert on_gpu.returncode == 0, on_gpu.stderr
    import pandas as pd

    a, b = pd.read_csv(tmp_path / "cpu.csv"), pd.read_csv(tmp_path / "gpu.csv")
    np.testing.assert_array_equal(a["prediction"], b["prediction"])
    np.testing.assert_allclose(a["probability"], b["probability"], atol=1e-12)


def test_experiment_on_the_gpu_in_parallel_records_the_device():
    from fairdash.data import paper_task
    from fairdash.work.experiments import ExperimentPlan, run_experiment

    table = run_experiment(ExperimentPlan(paper_task("adult-sex"), ["fair-lr", "lr"], [None], [0, 1], device="cuda"),
                           n_jobs=2).results
    assert len(table) == 4
    assert set(table["device"]) == {torch.cuda.get_device_name(0)}
    fair, plain = (table[table["model"] == m]["pr_ratio"].mean() for m in ("fair-lr", "lr"))
    assert fair > plain + 0.2


def test_same_seed_same_predictions_on_the_gpu(adult_arrays):
    a = adult_arrays
    rng = np.random.default_rng(0)
    idx = rng.choice(a.X_train.shape[0], 4000, replace=False)
    X, y, s = a.X_train[idx], a.y_train[idx], a.s_train[idx]
    fast = dict(num_inducing=64, batch_size=512, max_epochs=4, max_seconds=None, lr=0.05)
    g1 = FairGP(device="cuda", random_state=3, **fast).fit(X, y, s)
    g2 = FairGP(device="cuda", random_state=3, **fast).fit(X, y, s)
    np.testing.assert_array_equal(g1.predict(a.X_test), g2.predict(a.X_test))
    np.testing.assert_allclose(g1.predict_proba(a.X_test), g2.predict_proba(a.X_test), atol=1e-6)
    l1 = FairLR(device="cuda").fit(a.X_train, a.y_train, a.s_train)
    l2 = FairLR(device="cuda").fit(a.X_train, a.y_train, a.s_train)
    np.testing.assert_array_equal(l1.predict(a.X_test), l2.predict(a.X_test))


def test_gpu_and_cpu_fits_agree(adult_arrays):
    """Float rounding differs between the devices, so L-BFGS stops at slightly different points; at a
    tight tolerance both reach the same optimum in every direction that changes a prediction (the
    one-hot columns' shared offset with the intercept changes none, so coefficients are not compared)."""
    a = adult_arrays
    gpu = FairLR(device="cuda", tol=1e-6).fit(a.X_train, a.y_train, a.s_train)
    cpu = FairLR(device="cpu", tol=1e-6).fit(a.X_train, a.y_train, a.s_train)
    assert np.abs(gpu.decision_function(a.X_test) - cpu.decision_function(a.X_test)).max() < 0.1
    assert (gpu.predict(a.X_test) == cpu.predict(a.X_test)).mean() > 0.999


def test_a_dashboard_training_in_a_worker_process_runs_on_the_gpu():
    """The dashboard trains in a worker process forked from a fork server (fairdash.app.training.worker): CUDA is
    initialised in the worker, never in the fork server, and the fitted models come back to the server."""
    from fairdash.app.training import worker
    from fairdash.data import build_paper_task
    from fairdash.files.run_spec import RunSpec
    from fairdash.targeting.target_spec import make_target_spec
    from fairdash.work.fit_cache import FitCache

    task = build_paper_task("adult-sex")
    spec = RunSpec(data="adult", task=task.spec, target=make_target_spec(target_rate=0.3),
                   models=("fair-lr", "fair-gp"), seeds=(0,))
    seen = []
    run = worker.attach_task(worker.ProcessWork(worker.train_run_detached, task, spec, data_name="adult",
                                                cache=FitCache(directory=False))(lambda f, m: seen.append(m)), task)
    assert set(run.results["device"]) == {torch.cuda.get_device_name(0)}, run.results["device"].tolist()
    assert (run.results["accuracy"] > 0.8).all() and seen
    assert len(run.models) == 2  # the fitted models came back to the server's process
