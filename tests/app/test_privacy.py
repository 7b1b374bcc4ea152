"""Uploads stay private and temporary (issue 20, item 2): training from an uploaded table through the
dashboard writes nothing to the fit cache's folder (its fitted models, an SVM's support vectors among
them, stay in the session's memory), while the bundled samples keep using that folder; "Forget this
session" deletes the session's table, runs, cached fits and saved state at once."""
import hashlib

import numpy as np
import pytest

from fairdash import data
from fairdash.work.fit_cache import default_cache_dir

import app_state
from app_pages import new_app, ok, upload

pytestmark = pytest.mark.usefixtures("cpu_only", "app_frame")


def _files() -> dict:
    root = default_cache_dir()
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in root.rglob("*") if p.is_file()} if root.exists() else {}


@pytest.fixture(scope="module")
def private_csv() -> bytes:
    """Rows no bundled sample has (COMPAS, ages and priors moved by a fraction), so a cached model of them
    could only come from this upload."""
    df = data.load_sample("compas").drop(columns=["c-charge-desc"]).sample(800, random_state=11)
    rng = np.random.default_rng(11)
    df["age"] = df["age"] + rng.integers(1, 1000, len(df)) / 1000
    return df.reset_index(drop=True).to_csv(index=False).encode()


def _train(at, models, repeats=1):
    at.switch_page("pages/train.py").run()
    at.multiselect(key="train_models").set_value(models).run()
    at.number_input(key="repeats").set_value(repeats).run()
    at.button(key="train_button").click().run(timeout=400)
    ok(at)
    return app_state.get(at, "run")


@pytest.mark.slow
def test_an_upload_trains_without_writing_to_disk_and_forget_deletes_it(private_csv):
    at = upload(new_app(), "private.csv", private_csv)
    at.button(key="confirm_task").click().run()
    ok(at)
    assert app_state.get(at, "table_id").startswith("upload:")
    before = _files()
    run = _train(at, ["svm", "lr"], repeats=2)
    assert not bool(run.results["cached"].any()) and len(run.results) == 4
    assert run.data_name == "private.csv" and run.data_description == ""  # not the Adult sample's description
    assert _files() == before, "training from an upload wrote to the fit cache's folder"
    cache = app_state.get(at, "fit_cache")  # the session's own cache, in memory
    assert cache.directory is None and len(cache) == 4
    svm = next(m for m in run.models.values() if m.name == "svm")
    assert len(svm.estimator.support_vectors_) > 0  # rows of the upload: in memory, never on disk

    # fits made before come from the session's cache, still without touching the disk
    again = _train(at, ["lr"], repeats=2)
    assert again is not run and bool(again.results["cached"].all()) and _files() == before

    # "Forget this session": table, runs, cached fits and the saved state, at once
    from fairdash.app.server.session import FORGOTTEN, _sessions

    token = app_state.get(at, "token")
    assert _sessions().load(token) is not None
    at.button(key="forget_session").click().run()
    ok(at)
    assert len(cache) == 0 and _sessions().load(token) is None
    assert app_state.get(at, "token") != token and app_state.get(at, "table_id") == "sample:adult"
    assert not app_state.get(at, "runs")  # no run history left
    assert app_state.get(at, "fit_cache") is None
    assert any(i.value == FORGOTTEN for i in at.info)
    assert at.query_params["session"] != [token] and at.query_params["session"] != token


@pytest.mark.slow
def test_the_bundled_samples_keep_the_disk_cache():
    at = new_app()
    before = _files()
    run = _train(at, ["lr"], repeats=7)  # seeds 0-6: at least one fit is new in this test session's cache
    assert run.results["cached"].sum() < 7 and len(_files()) > len(before)
