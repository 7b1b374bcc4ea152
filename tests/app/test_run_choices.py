"""A choice that depends on the run is the run's own (issue 47, item 2): on Export and Score new data, switching the
run never carries one run's model choice over to another's list, the box and the file agree, and the download
button names its file before the click. Through streamlit.testing.v1.AppTest."""
from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from fairdash import data
from fairdash.app.server import state
from fairdash.files.run_spec import RunSpec
from fairdash.targeting.target_spec import TargetSpec
from fairdash.work.runs import train_run

import app_state
from app_pages import APP, TIMEOUT

pytestmark = pytest.mark.usefixtures("cpu_only", "app_frame")


def _run(number: int, models: tuple, rate: float):
    task = data.paper_task("compas-race")
    spec = RunSpec(data="compas", task=task.spec, target=TargetSpec(criterion="dp", target_rate=rate),
                   models=models, target_rates=(rate,), seeds=(0,), group_names=task.group_names)
    run = train_run(task, spec, data_name="COMPAS")
    run.number = number
    return run


@pytest.fixture(scope="module")
def runs():
    return [_run(1, ("lr", "fair-lr"), 0.8), _run(9, ("fair-lr", "lr"), 0.9)]


def _page(runs, page: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    app_state.put(at, "runs", runs)
    app_state.put(at, "run", runs[-1])
    at.switch_page(page).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _download(at: AppTest) -> str:
    return next(d.proto.label for d in at.get("download_button") if d.proto.label.startswith("Download the trained"))


@pytest.mark.parametrize("page, run_key, model_key", [("pages/export.py", state.EXPORT_RUN, state.EXPORT_MODEL),
                                                      ("pages/audit.py", state.AUDIT_RUN, state.AUDIT_MODEL)])
def test_switching_runs_shows_and_saves_the_new_run_s_own_model(runs, page, run_key, model_key):
    at = _page(runs, page)
    assert at.selectbox(key=run_key).value == 9
    box = at.selectbox(key=state.run_choice(model_key, 9))
    fair = next(j for j, o in enumerate(box.options) if o.startswith("FairLR"))
    box.set_value(fair).run()
    assert at.selectbox(key=state.run_choice(model_key, 9)).value == fair
    at.selectbox(key=run_key).set_value(1).run()
    assert not at.exception, [e.value for e in at.exception]
    first = at.selectbox(key=state.run_choice(model_key, 1))
    shown = first.options[first.value]  # what the box reads is run 1's own model
    assert shown in [runs[0].model_words(k) for k in runs[0].models]
    if page == "pages/export.py":  # the file is that model's, named on the button
        key = list(runs[0].models)[first.value]
        label = _download(at)
        assert label == f"Download the trained model ({key[0]}_prt{key[1]:.3f}_seed{key[2]}_run1.fairdash)", label
    at.selectbox(key=run_key).set_value(9).run()  # and run 9 keeps its own choice
    assert at.selectbox(key=state.run_choice(model_key, 9)).value == fair
