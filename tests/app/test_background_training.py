"""Issue 20, item 1: a training started on the Train page runs in the background (fairdash.app.server.jobs), so it
finishes and joins the run history whatever page the analyst goes to meanwhile; every page's sidebar shows
its progress and a Cancel button; a cancelled training says so and adds nothing; a failed one says why
and keeps the session; one training per session at a time. And a pending upload's choices survive a page
switch until they are confirmed or discarded.

AppTest has no browser polling the sidebar's fragment, so each test here turns off the Train button's
wait (``QueueSettings.wait_in_script``, which tests/conftest.py's ``training_queue`` turns on) and drives the script
runs itself: a run after the job has ended is the "next script run of the session" that collects it."""
import re
import threading

import pytest
from streamlit.testing.v1 import AppTest

import fairdash.work.runs as ex
from fairdash.app.training import queue

import app_state
from app_pages import APP, TIMEOUT, new_app, ok, upload

pytestmark = pytest.mark.usefixtures("cpu_only", "app_frame")

JOIN_S = 300  # generous: the machine may be busy; no assertion is about time


@pytest.fixture(autouse=True)
def _in_the_background(training_queue, one_browser):
    """Trainings in the background; every AppTest here is the same browser (a reload is a reload). The
    tests here replace the training code in this process (a gate, a failure), which a worker process would
    not see: their trainings run in a thread of this process (tests/app/test_worker_process.py runs real ones
    in worker processes)."""
    training_queue(wait_in_script=False, in_worker_process=False)


@pytest.fixture
def gate(monkeypatch):
    """``train_run`` reports some progress, then waits until the test opens the gate, then trains for
    real: the test decides when the job ends, and the run is a real one."""
    opened = threading.Event()
    real = ex.train_run

    def held(task, spec, *, progress, **kw):
        progress(0.05, "Held by the test")
        assert opened.wait(JOIN_S), "the test never opened the gate"
        return real(task, spec, progress=progress, **kw)

    monkeypatch.setattr(ex, "train_run", held)
    return opened


def _job(at: AppTest):
    return queue.registry().get(app_state.get(at, "token"))


def _finish(at: AppTest) -> None:
    """Wait for the session's job to end (a job that ended at once may already be collected)."""
    job = _job(at)
    if job is None:
        return
    job.thread.join(JOIN_S)
    assert not job.thread.is_alive(), "the training did not end"


def _start(at: AppTest, models) -> AppTest:
    at.switch_page("pages/train.py").run()
    at.multiselect(key="train_models").set_value(list(models)).run()
    at.button(key="train_button").click().run()
    ok(at)
    return at


def _sidebar_progress(at: AppTest) -> list:
    return [p for p in at.sidebar.get("progress")]


def _sidebar_text(at: AppTest, kind: str) -> str:
    return " ".join(e.value for e in at.sidebar.get(kind))


@pytest.mark.slow
def test_a_training_goes_on_across_pages_and_joins_the_history(gate):
    at = _start(new_app(), ["fair-lr", "lr"])
    job = _job(at)
    assert job is not None and job.running
    assert not app_state.get(at, "runs")
    # the Train page: the button is off while the job runs, saying why; the sidebar shows the progress
    assert at.button(key="train_button").disabled
    assert any("a training is running" in c.value for c in at.caption)
    assert _sidebar_progress(at) and at.button(key="cancel_training")
    # another page, and another: the progress and Cancel button are there too
    for page in ("pages/compare.py", "pages/target.py"):
        at.switch_page(page).run()
        ok(at)
        bars = _sidebar_progress(at)
        assert bars and "Held by the test" in bars[0].proto.text, [b.proto.text for b in bars]
        assert at.button(key="cancel_training")
        assert job.running and not app_state.get(at, "runs")
    gate.set()
    _finish(at)
    assert job.state == "done", job.error
    at.run()  # the session's next script run, on the Target page, collects the run
    ok(at)
    runs = app_state.get(at, "runs")
    assert [r.number for r in runs] == [1]
    assert set(runs[0].results["model"]) == {"fair-lr", "lr"}
    assert app_state.get(at, "run") is runs[0]
    assert any("run 1 is in the run history" in t.value for t in at.success), [t.value for t in at.success]
    assert not _sidebar_progress(at) and _job(at) is None
    at.switch_page("pages/compare.py").run()
    ok(at)
    assert not any("Nothing trained yet" in i.value for i in at.info)
    # the Train page is free again and keeps the finished training's line
    at.switch_page("pages/train.py").run()
    assert not at.button(key="train_button").disabled
    assert any("Results" in h.value for h in at.subheader)


@pytest.mark.slow
def test_cancel_stops_the_runner_and_adds_nothing():
    """A real FairGP fit on Adult, cancelled from another page: the runner stops at its next progress
    call; the sidebar says it was cancelled; nothing joins the history; Train is free again."""
    at = _start(new_app(), ["fair-gp"])
    at.switch_page("pages/data.py").run()
    job = _job(at)
    assert job is not None and job.running
    at.button(key="cancel_training").click().run()
    ok(at)
    _finish(at)
    assert job.state == "cancelled"
    at.run()
    ok(at)
    assert not app_state.get(at, "runs")
    assert "cancelled" in _sidebar_text(at, "info") and "nothing was added" in _sidebar_text(at, "info")
    assert not _sidebar_progress(at)
    at.button(key="dismiss_training_note").click().run()
    assert "cancelled" not in _sidebar_text(at, "info")
    at.switch_page("pages/train.py").run()
    assert not at.button(key="train_button").disabled


def test_a_failed_training_says_why_on_any_page_and_keeps_the_session(monkeypatch):
    def boom(*a, **k):
        raise ValueError("the solver found no direction\nTraceback (most recent call last): ...")

    monkeypatch.setattr(ex, "run_experiment", boom)
    at = _start(new_app(), ["lr"])
    _finish(at)
    at.switch_page("pages/how_it_works.py").run()
    ok(at)
    side = _sidebar_text(at, "error")
    assert "Training failed" in side and "the solver found no direction" in side, side
    assert "Traceback" not in side
    assert app_state.get(at, "task") is not None and not app_state.get(at, "runs")
    at.switch_page("pages/train.py").run()
    assert any("Training failed" in e.value for e in at.error)
    assert not at.button(key="train_button").disabled


@pytest.mark.slow
def test_one_training_per_session_and_the_repeat_shortcut(gate):
    at = _start(new_app(), ["lr"])
    job = _job(at)
    assert at.button(key="train_button").disabled  # (AppTest, like a browser, cannot click it)
    with pytest.raises(RuntimeError, match="already has a training running"):
        queue.registry().start(app_state.get(at, "token"), queue.TrainingJob(lambda progress: None, "second"))
    assert _job(at) is job
    gate.set()
    _finish(at)
    at.run()  # (still on the Train page: its status line says how it ended, in this run only)
    assert len(app_state.get(at, "runs")) == 1
    assert any(re.match(r"Trained 1 fit\(s\) in [\d.]+ s.*: run 1 is in the run history", s.label)
               and s.state == "complete" for s in at.status), [s.label for s in at.status]
    at.run()  # the next run no longer shows it (the results stay)
    assert not at.status and any("Results" in h.value for h in at.subheader)
    at.button(key="train_button").click().run()  # the same request again: answered at once, no job
    assert any("already here" in s.value for s in at.success)
    assert _job(at) is None and len(app_state.get(at, "runs")) == 1


# --------------------------------------------------------------------------------------------------
# A pending upload's choices
# --------------------------------------------------------------------------------------------------
@pytest.mark.slow
def test_pending_upload_choices_survive_a_page_switch_until_confirmed(adult_1000_csv):
    at = upload(new_app(), "adult_small.csv", adult_1000_csv)
    assert app_state.get(at, "table_id") == "sample:adult"  # pending: nothing committed yet
    at.multiselect(key="y1_values").set_value(["<=50K"]).run()
    at.text_input(key="positive_meaning").set_value("income at most $50K").run()
    at.multiselect(key="features").set_value(["age", "education", "hours-per-week"]).run()
    ok(at)
    for page in ("pages/target.py", "pages/train.py"):
        at.switch_page(page).run()
        at.switch_page("pages/data.py").run()
        ok(at)
        assert at.multiselect(key="y1_values").value == ["<=50K"]
        assert at.text_input(key="positive_meaning").value == "income at most $50K"
        assert at.multiselect(key="features").value == ["age", "education", "hours-per-week"]
        assert app_state.get(at, "table_id") == "sample:adult"
    at.button(key="confirm_task").click().run()
    ok(at)
    spec = app_state.get(at, "spec")
    assert app_state.get(at, "table_name") == "adult_small.csv"
    assert spec.y1_values == ("<=50K",) and spec.positive_meaning == "income at most $50K"
    assert spec.features == ("age", "education", "hours-per-week")


def test_a_pending_upload_can_be_discarded(adult_1000_csv):
    at = upload(new_app(), "adult_small.csv", adult_1000_csv)
    at.text_input(key="positive_meaning").set_value("something").run()
    at.button(key="discard_upload").click().run()
    ok(at)
    assert app_state.get(at, "pending") is None
    assert at.radio(key="data_source").value == "Bundled sample"
    assert app_state.get(at, "table_id") == "sample:adult"
    at.switch_page("pages/train.py").run()
    assert not at.button(key="train_button").disabled


def _reopen(at: AppTest) -> AppTest:
    """The same URL in a new browser session (F5): the session comes back by its token."""
    b = AppTest.from_file(APP, default_timeout=TIMEOUT)
    for k, v in at.query_params.items():
        b.query_params[k] = v[0] if isinstance(v, list) else v
    return b.run()


@pytest.mark.slow
def test_a_reload_during_a_training_finds_it_and_gets_its_run(gate):
    """A reload (or a second tab) returns to the same session (issue 25, item 1): it shows the training that
    is running, with its Cancel button, and the run joins the one history that both tabs show."""
    at = _start(new_app(), ["lr"])
    b = _reopen(at)
    ok(b)
    assert app_state.get(b, "token") == app_state.get(at, "token")
    assert _sidebar_progress(b)
    assert "cancel_training" in [w.key for w in b.button]  # the session's own training: its tabs may stop it
    gate.set()
    _finish(at)
    b.run()
    ok(b)
    assert [r.number for r in app_state.get(b, "runs")] == [1]
    at.run()
    ok(at)
    assert [r.number for r in app_state.get(at, "runs")] == [1]  # one session: one history, one run 1


@pytest.mark.slow
def test_pending_upload_choices_survive_a_reload(adult_1000_csv):
    at = upload(new_app(), "adult_small.csv", adult_1000_csv)
    at.text_input(key="positive_meaning").set_value("kept over a reload").run()
    b = _reopen(at)
    b.switch_page("pages/data.py").run()
    ok(b)
    assert app_state.get(b, "pending") is not None
    assert b.text_input(key="positive_meaning").value == "kept over a reload"
