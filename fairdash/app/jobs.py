"""Training that survives navigation: a training started on the Train page runs in a background
thread, so going to another page (which ends the page's script run) does not stop it. A UI-helper
module: it imports Streamlit.

- :class:`TrainingJob`: one training (``runs.train_run``) in a daemon thread, holding its progress,
  its :class:`~fairdash.experiments.Run` or its error message, and a cancel flag that the progress
  callback checks, so the experiment runner stops at its next progress call.
- :func:`registry`: the process-wide jobs, one per session token (one job per session at a time).
- :func:`collect`: called by app.py on every script run of the session (any page): a finished job's run
  joins the run history with ``session.add_run`` and a note in the sidebar says so; a failed or cancelled job leaves
  a note. Session state is written only here, from the session's own script thread, never by the worker.
- :func:`sidebar_job`: the sidebar's box on every page: the job's progress and a Cancel button,
  refreshed by ``st.fragment(run_every=...)`` while the job runs; then the outcome's note.
"""
from __future__ import annotations

import copy
import logging
import threading
import time

import streamlit as st

from . import ui, session

REFRESH_S = 2.0  # how often the sidebar's progress box is redrawn while a job runs (a fragment-only rerun)
KEEP_S = 3600.0  # a finished job nobody collected (its browser tab was closed) is dropped after this
# True: the Train button's script run waits for its job (which still runs in its own thread) and
# collects it at once. Only for AppTest tests, where no browser polls the sidebar's fragment
# (tests/conftest.py sets it; the tests of the background behaviour itself leave it off).
WAIT_IN_SCRIPT = False
NOTE_KEY = "fd_job_note"  # (kind, text) of a failed or cancelled job, in the sidebar until dismissed
OUTCOME_KEY = "fd_job_outcome"  # (kind, text) of the job collected in this script run: "done", "failed", "cancelled"

_log = logging.getLogger(__name__)


class TrainingCancelled(Exception):
    """Raised inside the worker by the progress callback once Cancel was clicked."""


class TrainingJob:
    """One training in a daemon thread. ``work(progress)`` returns the :class:`Run`; the thread only
    writes this object's attributes, never Streamlit's session state."""

    def __init__(self, work, title: str):
        self.title = title
        self.fraction, self.message = 0.0, "Starting"
        self.state = "running"  # -> "done", "failed" or "cancelled"
        self.result = None
        self.error = ""
        self.started = time.monotonic()
        self.finished = None
        self.collected_by: set = set()  # the sessions (tokens) that have taken its outcome
        self._work = work
        self._cancel = threading.Event()
        self.thread = threading.Thread(target=self._run, name="fairdash-training", daemon=True)

    @property
    def running(self) -> bool:
        return self.state == "running"

    @property
    def cancelling(self) -> bool:
        return self._cancel.is_set() and self.running

    def cancel(self) -> None:
        """Ask the job to stop: the runner stops at its next progress call (a model's next epoch)."""
        self._cancel.set()

    def elapsed(self) -> float:
        return (self.finished or time.monotonic()) - self.started

    def _progress(self, fraction: float, message: str) -> None:
        if self._cancel.is_set():
            raise TrainingCancelled
        self.fraction, self.message = float(min(max(fraction, 0.0), 1.0)), str(message)

    def _run(self) -> None:
        try:
            result = self._work(self._progress)
        except TrainingCancelled:
            state = "cancelled"
        except BaseException as e:  # noqa: BLE001 - the analyst gets a message, the log the trace
            _log.exception("training failed")
            self.error = ui.error_text(e)
            state = "failed"
        else:
            self.result, state = result, "done"
        self._work = None  # the task and its table are not held by a finished job (nor by a fit's callback)
        self.finished = time.monotonic()
        self.state = state  # last: a reader that sees a finished state sees its result or error

    def start(self) -> TrainingJob:
        self.thread.start()
        return self


class JobRegistry:
    """The running and not yet collected jobs, one per session token."""

    def __init__(self):
        self._jobs: dict[str, TrainingJob] = {}
        self._lock = threading.Lock()

    def get(self, token) -> TrainingJob | None:
        return self._jobs.get(token) if token else None

    def find(self, token, origin=None) -> tuple[str, TrainingJob] | tuple[None, None]:
        """The job of the session ``token``, or of the session it was copied from (``origin``: a reload or a
        link opened while that session trained), with the token it is kept under."""
        for key in (token, origin):
            if key and key in self._jobs:
                return key, self._jobs[key]
        return None, None

    def start(self, token: str, job: TrainingJob) -> TrainingJob:
        with self._lock:
            now = time.monotonic()
            for t, old in list(self._jobs.items()):  # uncollected jobs of sessions that went away
                if not old.running and now - old.finished > KEEP_S:
                    del self._jobs[t]
            old = self._jobs.get(token)
            if old is not None and old.running:
                raise RuntimeError("this session already has a training running")
            self._jobs[token] = job.start()
        return job

    def take_finished(self, token, origin=None) -> TrainingJob | None:
        """The session's finished job, once per session (only one script run of it gets it). A session
        copied from the job's session gets it too; the job leaves the registry when its own session has
        taken it (or, uncollected, after ``KEEP_S``)."""
        with self._lock:
            key, job = self.find(token, origin)
            if job is None or job.running or token in job.collected_by:
                return None
            job.collected_by.add(token)
            if key == token:
                self._jobs.pop(key)
            return job


@st.cache_resource(show_spinner=False)
def registry() -> JobRegistry:
    return JobRegistry()


def _token():
    return st.session_state.get("fd_token")


def current() -> TrainingJob | None:
    """This session's running job (or the running job of the session it was copied from), or ``None``."""
    _, job = registry().find(_token(), st.session_state.get("fd_copied_from"))
    return job if job is not None and job.running else None


def owns(job) -> bool:
    """Whether ``job`` was started by this session (only it may cancel it)."""
    return registry().get(_token()) is job


def start_training(task, spec, *, title: str, **train_kwargs) -> TrainingJob:
    """Start ``runs.train_run(task, spec, **train_kwargs)`` in the background for this session.
    Everything the worker needs is passed in here (the fit cache object included): it reads no session
    state. While it runs, the caller reruns the app so that every part of it shows the job."""
    from ..runs import train_run

    running = current()
    if running is not None:  # (a second click that reached the page before the button was disabled)
        return running
    st.session_state.pop(NOTE_KEY, None)
    job = TrainingJob(lambda progress: train_run(task, spec, progress=progress, **train_kwargs), title)
    registry().start(_token(), job)
    if WAIT_IN_SCRIPT:
        job.thread.join()
        collect()
    return job


def collect() -> None:
    """If this session's job has finished, take it: its run joins the history, or it failed (its message,
    never a traceback) or was cancelled (nothing added); a note in the sidebar says which, on every page,
    until dismissed (a note, not a toast: Streamlit's toasts are dialogs without an accessible name).
    Called at the start of every script run of the session (app.py)."""
    ss = st.session_state
    ss.pop(OUTCOME_KEY, None)
    job = registry().take_finished(_token(), ss.get("fd_copied_from"))
    if job is None:
        return
    if job.state == "done":
        run = copy.copy(job.result)  # each session numbers its own copy of the run
        session.add_run(run)
        ss.pop("compare_target", None)
        cached = int(run.results["cached"].sum()) if "cached" in run.results else 0
        outcome = ss[NOTE_KEY] = ("done", f"Trained {len(run.results)} fit(s) in {run.seconds:.1f} s"
                                  + (f" ({cached} from the cache)" if cached else "")
                                  + f": run {run.number} is in the run history.")
    elif job.state == "failed":
        outcome = ss[NOTE_KEY] = ("failed", f"Training failed: {job.error}")
    else:
        outcome = ss[NOTE_KEY] = ("cancelled", f"Training cancelled after {job.elapsed():.0f} s: nothing was added "
                                               "to the run history.")
    ss[OUTCOME_KEY] = outcome


def outcome() -> tuple[str, str] | None:
    """``(kind, text)`` of the job collected in this script run (the Train page's status line), else ``None``."""
    return st.session_state.get(OUTCOME_KEY)


def note() -> tuple[str, str] | None:
    """``(kind, text)`` of a failed or cancelled job, kept until the next training or until dismissed."""
    return st.session_state.get(NOTE_KEY)


def _dismiss() -> None:
    st.session_state.pop(NOTE_KEY, None)


def _job_box() -> None:
    """The running job's progress and Cancel button (a fragment, rerun every REFRESH_S seconds)."""
    job = current()
    if job is None:  # it has just finished: a full run collects it and redraws the page
        st.rerun()
    with st.container(key="training_job", border=True):
        st.markdown(f"**{job.title}**")
        st.progress(job.fraction, text=job.message)
        if job.cancelling:
            st.caption(f"Cancelling: it stops at the next step ({job.elapsed():.0f} s).")
        elif not owns(job):
            st.caption(f"Running for {job.elapsed():.0f} s, started in the session this one was opened from; the "
                       "run joins this history too when it ends.")
        else:
            st.caption(f"Running for {job.elapsed():.0f} s. Other pages can be used meanwhile; the run joins "
                       "the run history when it ends.")
            st.button("Cancel training", key="cancel_training", icon=":material/cancel:", on_click=job.cancel,
                      help="Stops the training at its next step; nothing is added to the run history.")


def sidebar_job() -> None:
    """The training box (app.py draws it in the sidebar, on every page): the running job (refreshed
    while it runs), or the note of a failed or cancelled one (with a button to dismiss it)."""
    if current() is not None:
        st.fragment(_job_box, run_every=REFRESH_S)()
        return
    kept = note()
    if kept is None:
        return
    with st.container(key="training_note"):
        show, icon = {"failed": (st.error, ":material/warning:"), "done": (st.success, ":material/check_circle:")
                      }.get(kept[0], (st.info, ":material/cancel:"))
        show(ui.literal(kept[1]), icon=icon)
        st.button("Dismiss", key="dismiss_training_note", on_click=_dismiss)
