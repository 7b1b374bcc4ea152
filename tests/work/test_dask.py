"""Sweeps on a Dask cluster: the experiment runner's joblib parallelism switches to a Dask distributed
cluster by an address (``dask_address=`` / ``sweep --dask`` / ``FAIRDASH_DASK_ADDRESS``) with no other
change, and gives the same table as the run on this machine.

The test starts its own LocalCluster (two worker processes, one thread each); it is skipped only when
dask.distributed is not installed (``pip install 'dask[distributed]'``, in requirements-dev.txt).
A cluster that cannot run FairDash (no workers; workers without FairDash, or with another version of it)
is a FairDashError within FAIRDASH_DASK_TIMEOUT, before any job is sent.
"""
from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pandas as pd
import pytest

distributed = pytest.importorskip("distributed", reason="dask.distributed is not installed "
                                                        "(pip install 'dask[distributed]')")

from fairdash import data  # noqa: E402
from fairdash.errors import FairDashError  # noqa: E402
from fairdash.targeting.target_spec import make_target_spec  # noqa: E402
from fairdash.work.experiments import ExperimentPlan, run_experiment  # noqa: E402

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
MODELS = ("fair-lr", "lr")
TARGETS = (0.5,)
SEEDS = (0, 1)
EO = make_target_spec("eo")  # the target of every run here
VOLATILE = ("fit_seconds", "fitted_at", "cached")  # timing, fit times and fit-cache hits differ between runs


@pytest.fixture(scope="module")
def cluster():
    from dask.distributed import LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as c:
        yield c


@pytest.fixture(scope="module")
def task():
    return data.paper_task("compas-race")


@pytest.fixture(scope="module")
def local_results(task):
    return run_experiment(ExperimentPlan(task, MODELS, target_rates=TARGETS, seeds=SEEDS, target=EO), n_jobs=1).results


def comparable(df: pd.DataFrame) -> pd.DataFrame:
    df = df.drop(columns=[c for c in VOLATILE if c in df.columns])
    return df.sort_values(["model", "target_rate", "seed"], na_position="first").reset_index(drop=True)


def jobs_run_on(cluster) -> int:
    """How many of the runner's jobs the cluster's scheduler has seen (joblib batches of ``_job``)."""
    return sum(tp.state_counts.get("memory", 0)
               for name, tp in cluster.scheduler.task_prefixes.items() if "_job" in name)


def test_sweep_on_a_dask_cluster_gives_the_local_table(cluster, task, local_results):
    before = jobs_run_on(cluster)
    remote = run_experiment(ExperimentPlan(task, MODELS, target_rates=TARGETS, seeds=SEEDS, target=EO),
                            dask_address=cluster.scheduler_address).results
    assert jobs_run_on(cluster) > before, "the jobs did not go to the Dask cluster"
    assert len(local_results) == len(SEEDS) * len(MODELS)
    pd.testing.assert_frame_equal(comparable(local_results), comparable(remote), check_exact=False, rtol=1e-9,
                                  atol=1e-12)


def test_the_environment_variable_is_the_one_line_switch(cluster, task, local_results, monkeypatch):
    monkeypatch.setenv("FAIRDASH_DASK_ADDRESS", cluster.scheduler_address)
    before = jobs_run_on(cluster)
    remote = run_experiment(ExperimentPlan(task, MODELS, target_rates=TARGETS, seeds=SEEDS, target=EO)).results
    assert jobs_run_on(cluster) > before
    pd.testing.assert_frame_equal(comparable(local_results), comparable(remote), check_exact=False, rtol=1e-9,
                                  atol=1e-12)


def test_sweep_command_with_dask_option(cluster, tmp_path, local_results):
    out = tmp_path / "sweep.csv"
    proc = subprocess.run(
        [sys.executable, "-m", "fairdash", "sweep", "--paper", "compas-race", "--models", ",".join(MODELS),
         "--pr-t", ",".join(map(str, TARGETS)), "--repeats", str(len(SEEDS)), "--criterion", "eo",
         "--dask", cluster.scheduler_address, "--no-cache", "--out", str(out)],
        capture_output=True, text=True, timeout=600, cwd=ROOT,
    )
    if proc.returncode == 2 and "unrecognized arguments" in proc.stderr:
        pytest.skip(f"the sweep command's options changed: {proc.stderr.strip()}")
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    got = pd.read_csv(out)
    assert len(got) == len(local_results)
    assert set(got["model"]) == set(MODELS)


def test_an_unreachable_scheduler_is_a_clear_error(task, monkeypatch):
    monkeypatch.setenv("FAIRDASH_DASK_TIMEOUT", "2")
    with pytest.raises(FairDashError, match=r"Could not reach the Dask scheduler at 'tcp://127\.0\.0\.1:9'"):
        run_experiment(ExperimentPlan(task, ["lr"], seeds=(0,), target=EO), dask_address="tcp://127.0.0.1:9")


# A cluster that cannot run FairDash is a clear error within FAIRDASH_DASK_TIMEOUT, before any job is sent. No test
# measures the clock (a busy machine stretches it): each fails by pytest-timeout if FairDash waited on the cluster
# for ever, and the error's words say it came from the timeout's path.
TIMEOUT = 3
HANG = 240  # pytest-timeout's seconds: far beyond TIMEOUT, reached only by a wait that does not end


@pytest.mark.timeout(HANG)
def test_a_scheduler_without_workers_is_a_clear_error_within_the_timeout(task, monkeypatch):
    from dask.distributed import LocalCluster

    monkeypatch.setenv("FAIRDASH_DASK_TIMEOUT", str(TIMEOUT))
    with LocalCluster(n_workers=0, processes=True, dashboard_address=":0") as empty:
        with pytest.raises(FairDashError, match=r"The Dask scheduler at '.+' has no workers"):
            run_experiment(ExperimentPlan(task, ["lr"], seeds=(0,), target=EO), dask_address=empty.scheduler_address)


@pytest.mark.timeout(HANG)
def test_workers_that_cannot_import_fairdash_are_a_clear_error_within_the_timeout(task, monkeypatch, tmp_path):
    from dask.distributed import Client, LocalCluster

    # FairDash is imported from the repository's root (not installed): a Python started elsewhere lacks it
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    bare = subprocess.run([sys.executable, "-c", "import fairdash"], cwd=tmp_path, env=env, capture_output=True)
    if bare.returncode == 0:
        pytest.skip("FairDash is installed in this environment, so no worker started here lacks it")
    monkeypatch.setenv("FAIRDASH_DASK_TIMEOUT", str(TIMEOUT))
    with LocalCluster(n_workers=0, processes=True, dashboard_address=":0") as empty:
        worker = subprocess.Popen([sys.executable, "-m", "dask", "worker", empty.scheduler_address, "--nthreads", "1",
                                   "--no-nanny", "--no-dashboard"], cwd=tmp_path, env=env,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            with Client(empty.scheduler_address, timeout=30) as c:
                c.wait_for_workers(1, timeout=60)  # the worker's start is not what is tested
            with pytest.raises(FairDashError, match=r"The Dask workers at '.+' cannot import fairdash "
                                                    r"\(ModuleNotFoundError: No module named 'fairdash'\): install"):
                run_experiment(ExperimentPlan(task, ["lr"], seeds=(0,), target=EO),
                               dask_address=empty.scheduler_address)
        finally:
            worker.terminate()
            worker.wait(timeout=30)


def test_workers_with_another_fairdash_version_are_a_clear_error(cluster, task, monkeypatch):
    import fairdash._version

    monkeypatch.setattr(fairdash._version, "__version__", "0.0.0+not-the-workers")
    with pytest.raises(FairDashError, match=r"run FairDash .+, this machine 0\.0\.0\+not-the-workers: install the "
                                            r"same FairDash version on every worker"):
        run_experiment(ExperimentPlan(task, ["lr"], seeds=(0,), target=EO), dask_address=cluster.scheduler_address)


@pytest.mark.timeout(HANG)
def test_workers_that_do_not_answer_are_a_clear_error_within_the_timeout(cluster, task, monkeypatch):
    from dask.distributed import Client

    stuck = threading.Event()  # a cluster that never answers: set only when the test is over
    monkeypatch.setenv("FAIRDASH_DASK_TIMEOUT", str(TIMEOUT))
    monkeypatch.setattr(Client, "run", lambda self, *a, **k: stuck.wait())
    try:
        with pytest.raises(FairDashError, match=r"The Dask workers at '.+' did not answer within 3 s"):
            run_experiment(ExperimentPlan(task, ["lr"], seeds=(0,), target=EO), dask_address=cluster.scheduler_address)
    finally:
        stuck.set()
