"""Training that survives navigation, on a server a team shares: a training started on the Train page
runs in a worker process watched by a background thread, so going to another page (which ends the
page's script run) does not stop it.
A UI-helper module: it imports Streamlit.

- :class:`TrainingJob`: one training (``runs.train_run``), watched by a daemon thread, holding its progress,
  its :class:`~fairdash.work.runs.Run` or its error message, and a cancel flag that the progress
  callback checks, so the experiment runner stops at its next progress call. The training itself runs in
  a worker process (:mod:`fairdash.app.training.worker`), at a lower CPU priority, so that no page waits for it.
- :class:`JobRegistry` (:func:`registry`): the process-wide jobs, one per session token (one job per
  session at a time; every tab of the session sees it and may cancel it). At most
  ``FAIRDASH_MAX_TRAININGS`` run at once (:mod:`fairdash.app.server.limits`); the others wait in a queue, first
  come first served, their place shown in their sidebar. A job whose session has no open tab for
  ``FAIRDASH_CLOSED_TAB_GRACE_S`` (no tab has drawn the sidebar's progress box, which redraws every
  ``REFRESH_S`` seconds) is cancelled, queued or running. Forget cancels the session's job at once.
- :func:`collect`: called by app.py on every script run of the session (any page): a finished job's run
  joins the run history with ``session.add_run`` and a note in the sidebar says so; a failed or cancelled job leaves
  a note. Session state is written only here, from the session's own script thread, never by the worker.
- :func:`sidebar_job`: the sidebar's box on every page: the job's place in the queue or its progress,
  and a Cancel button, refreshed by ``st.fragment(run_every=...)`` while the job runs; then the outcome's note.
"""
from __future__ import annotations

import copy
import logging
import re
import threading
import time
from typing import NamedTuple

import streamlit as st

from ...events import log_event
from ...work import runs
from ..training import worker
from ..ui import text, training
from . import session, state
from .limits import ServerLimits, check_memory, lower_thread_priority

REFRESH_S = 2.0  # how often the sidebar's progress box is redrawn while a job runs (a fragment-only rerun)
QUEUED_REFRESH_S = 5.0  # ... and while it waits in the queue (a place changes seldom; each redraw costs the server)
KEEP_S = 3600.0  # a finished job nobody collected (its browser tab was closed) is dropped after this
# True: the Train button's script run waits for its job (which still runs in its own thread) and
# collects it at once. Only for AppTest tests, where no browser polls the sidebar's fragment
# (tests/conftest.py sets it; the tests of the background behaviour itself leave it off).
WAIT_IN_SCRIPT = False
NOTE_KEY = state.JOB_NOTE  # state.JobNote of a failed or cancelled job, in the sidebar until dismissed
# True: a training runs in a worker process of its own (fairdash.app.training.worker: the pages never wait for it).
# False: in a thread of the server's process; only for tests that replace the training code in this process.
IN_WORKER_PROCESS = True
OUTCOME_KEY = state.JOB_OUTCOME  # state.JobNote of the job collected in this script run: done, failed or cancelled

_log = logging.getLogger(__name__)


class TrainingCancelled(Exception):
    """Raised inside the worker by the progress callback once Cancel was clicked (or the tab closed)."""


MEMORY_WATCH_S = 1.0  # how often a running training reads the server's memory against its guard


class Failure(NamedTuple):
    """Why a training failed, for the event log (:func:`failure_reason`; empty until it failed)."""
    reason: str = ""  # the rule that refused it (``memory_guard``, ``worker_killed``...) or the error's kind
    outcome: str = ""  # ``refused`` or ``error``

    def logged(self) -> dict:
        """Its fields as the event log writes them."""
        return {"reason": self.reason, "outcome": self.outcome}


def failure_reason(error: BaseException) -> Failure:
    """The :class:`Failure` of a failed training for the event log: the rule that refused it (``memory_guard``,
    ``worker_killed``, ...) and ``refused``, or the error's kind in lower case and ``error``."""
    reason = getattr(error, "reason", None)
    if reason:
        return Failure(reason, "refused")
    if isinstance(error, MemoryError):
        return Failure("out_of_memory", "error")
    return Failure(re.sub(r"[^a-z0-9_]", "", type(error).__name__.lower())[:40] or "error", "error")


JobState = state.JobState  # a training's state (its home is state.py, beside the JobNote that carries it)
END_EVENTS = {JobState.DONE: "training_end", JobState.FAILED: "training_failed", JobState.CANCELLED: "training_cancel"}


class TrainingJob:
    """One training in a daemon thread. ``work(progress)`` returns the :class:`Run`; the thread only
    writes this object's attributes, never Streamlit's session state."""

    def __init__(self, work, title: str, *, session: str | None = None, grace_s: float = 300.0, nice: int = 0):
        self.title = title
        self.fraction, self.message = 0.0, "Waiting for its turn"
        self.state = JobState.RUNNING  # -> DONE, FAILED or CANCELLED (running includes waiting in the queue)
        self.queued = True  # waiting for a free place (FAIRDASH_MAX_TRAININGS)
        self.why_cancelled = ""  # "" (Cancel or Forget) or "closed_tab"
        self.why_failed = Failure()  # for the event log, once it failed (``failure_reason``)
        self.memory_checked = 0.0  # when the server's memory guard was last read during it
        self.result = None
        self.error = ""
        self.session = session  # the session token it belongs to (for the event log, hashed there)
        self.grace_s = float(grace_s)
        self.nice = int(nice)  # how much lower its thread's CPU priority is than the pages' (FAIRDASH_TRAINING_NICE)
        self.started = self.last_seen = time.monotonic()
        self.began = None  # when it left the queue
        self.finished = None
        self.collected_by: set = set()  # the sessions (tokens) that have taken its outcome
        self.registry: JobRegistry | None = None
        self.worker: worker.ProcessWork | None = None  # its worker process's handle (``.pid`` while it runs)
        self._work = work
        self._cancel = threading.Event()
        self.thread = threading.Thread(target=self._run, name="fairdash-training", daemon=True)

    @property
    def running(self) -> bool:
        return self.state is JobState.RUNNING

    @property
    def cancelling(self) -> bool:
        return self._cancel.is_set() and self.running

    def cancel(self) -> None:
        """Ask the job to stop: the runner stops at its next progress call (a model's next epoch)."""
        self._cancel.set()

    def seen(self) -> None:
        """A tab of its session is open (called whenever one draws the job)."""
        self.last_seen = time.monotonic()

    def elapsed(self) -> float:
        return (self.finished or time.monotonic()) - self.started

    def queue_wait(self) -> float:
        return ((self.began or self.finished or time.monotonic()) - self.started)

    def check(self) -> None:
        """Raise :class:`TrainingCancelled` when the job was cancelled, or when no tab of its session has been
        open for ``grace_s`` seconds (then it cancels itself)."""
        if not self._cancel.is_set() and time.monotonic() - self.last_seen > self.grace_s:
            self.why_cancelled = "closed_tab"
            self._cancel.set()
        if self._cancel.is_set():
            raise TrainingCancelled

    def _progress(self, fraction: float, message: str) -> None:
        self.check()
        if time.monotonic() - self.memory_checked >= MEMORY_WATCH_S:  # the guard watches during a training too
            self.memory_checked = time.monotonic()
            check_memory("trainings")
        self.fraction, self.message = float(min(max(fraction, 0.0), 1.0)), str(message)

    def _run(self) -> None:
        holds_place = False
        lower_thread_priority(self.nice)  # the pages' reruns (a slider's readout) come first on a busy server
        try:
            if self.registry is not None:
                self.registry.wait_turn(self)
                holds_place = True
            self.queued, self.began, self.message = False, time.monotonic(), "Starting"
            log_event("training_start", session=self.session, queue_seconds=round(self.queue_wait(), 3))
            result = self._work(self._progress)
        except TrainingCancelled:
            ended = JobState.CANCELLED
        except BaseException as e:  # noqa: BLE001 - the analyst gets a message, the log the trace
            _log.exception("training failed")
            self.error = text.error_text(e)
            self.why_failed = failure_reason(e)
            ended = JobState.FAILED
        else:
            self.result, ended = result, JobState.DONE
        finally:
            if holds_place:
                self.registry.release(self)
        self._work = self.worker = None  # the task and its table are not held by a finished job
        self.finished = time.monotonic()
        self.state = ended  # last: a reader that sees a finished state sees its result or error
        ran = self.finished - (self.began or self.finished)
        log_event(END_EVENTS[ended],
                  session=self.session, seconds=round(ran, 3), queue_seconds=round(self.queue_wait(), 3),
                  **({"reason": self.why_cancelled} if self.why_cancelled and ended is JobState.CANCELLED else {}),
                  **(self.why_failed.logged() if ended is JobState.FAILED else {}))

    def start(self) -> TrainingJob:
        self.thread.start()
        return self


class JobRegistry:
    """The running, queued and not yet collected jobs, one per session token; at most ``max_running`` of
    them run at once, the rest wait first come, first served."""

    def __init__(self, max_running: int = 1):
        self.max_running = int(max_running)
        self._jobs: dict[str, TrainingJob] = {}
        self._lock = threading.Lock()
        self._turns = threading.Condition()
        self._queue: list[TrainingJob] = []
        self._running: set = set()

    def get(self, token) -> TrainingJob | None:
        return self._jobs.get(token) if token else None

    def start(self, token: str, job: TrainingJob) -> TrainingJob:
        with self._lock:
            now = time.monotonic()
            for t, old in list(self._jobs.items()):  # uncollected jobs of sessions that went away
                if not old.running and now - old.finished > KEEP_S:
                    del self._jobs[t]
            old = self._jobs.get(token)
            if old is not None and old.running:
                raise RuntimeError("this session already has a training running")
            job.registry = self
            self._jobs[token] = job.start()
        return job

    # ---- the queue ----------------------------------------------------------------------------------
    def wait_turn(self, job: TrainingJob) -> None:
        """Block the job's thread until it is first in the queue and a place is free (raises
        :class:`TrainingCancelled` if it is cancelled, or its tab closed, while it waits)."""
        with self._turns:
            self._queue.append(job)
            try:
                while not (self._queue[0] is job and len(self._running) < self.max_running):
                    job.check()
                    self._turns.wait(0.25)
            except TrainingCancelled:
                self._queue.remove(job)
                self._turns.notify_all()
                raise
            self._queue.pop(0)
            self._running.add(job)
            self._turns.notify_all()

    def release(self, job: TrainingJob) -> None:
        with self._turns:
            self._running.discard(job)
            self._turns.notify_all()

    def place(self, job: TrainingJob) -> tuple[int, int] | None:
        """``(place, waiting)``: the job's place in the queue (1 = next) and how many wait; ``None`` if it
        is not waiting."""
        with self._turns:
            return (self._queue.index(job) + 1, len(self._queue)) if job in self._queue else None

    @property
    def running_count(self) -> int:
        with self._turns:
            return len(self._running)

    # ---- ending -------------------------------------------------------------------------------------
    def forget(self, token) -> bool:
        """The session is forgotten: cancel its job and drop it, so that nobody collects its outcome.
        Returns whether a training was stopped."""
        with self._lock:
            job = self._jobs.pop(token, None) if token else None
        if job is None:
            return False
        job.cancel()
        return job.running

    def take_finished(self, token) -> TrainingJob | None:
        """The session's finished job, once (only one script run of the session, in any of its tabs,
        gets it); it leaves the registry then (or, uncollected, after ``KEEP_S``)."""
        with self._lock:
            job = self._jobs.get(token) if token else None
            if job is None or job.running or token in job.collected_by:
                return None
            job.collected_by.add(token)
            self._jobs.pop(token)
            return job


@st.cache_resource(show_spinner=False)
def registry() -> JobRegistry:
    return JobRegistry(max_running=ServerLimits.from_env().max_trainings)


def _token():
    return state.current().token


def current() -> TrainingJob | None:
    """This session's running (or queued) job, or ``None``; drawing it tells the job a tab is open."""
    job = registry().get(_token())
    if job is None or not job.running:
        return None
    job.seen()
    return job


def forget(token) -> bool:
    """Forget: cancel the session ``token``'s training and drop it (nobody collects it)."""
    return registry().forget(token)


def start_training(task, spec, *, title: str, **train_kwargs) -> TrainingJob:
    """Start ``runs.train_run(task, spec, **train_kwargs)`` in the background for this session (it waits
    in the server's queue while ``FAIRDASH_MAX_TRAININGS`` others run). Refused with a
    :class:`~fairdash.errors.FairDashError` while the server is short of memory. Everything the worker needs
    is passed in here (the fit cache object included): it reads no session state. While it runs, the
    caller reruns the app so that every part of it shows the job."""

    running = current()
    if running is not None:  # (a second click that reached the page before the button was disabled)
        return running
    limits = ServerLimits.from_env()
    try:
        check_memory("trainings", limits)
    except Exception:
        log_event("refusal", session=_token(), reason="memory_guard")
        raise
    del state.current().job_note
    if IN_WORKER_PROCESS:
        in_worker = worker.ProcessWork(worker.train_run_detached, task, spec, nice=limits.training_nice, **train_kwargs)

        def work(progress):
            return worker.attach_task(in_worker(progress), task)
    else:
        def work(progress):
            return runs.train_run(task, spec, progress=progress, **train_kwargs)
    # a worker process sets its own priority (fairdash.app.training.worker): its thread here only waits on the pipe and
    # stays at the pages' priority, so the fork server it may start runs at the server's
    job = TrainingJob(work, title, session=_token(), grace_s=limits.closed_tab_grace_s,
                      nice=0 if IN_WORKER_PROCESS else limits.training_nice)
    job.worker = in_worker if IN_WORKER_PROCESS else None
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
    ss = state.current()
    del ss.job_outcome
    job = registry().take_finished(_token())
    if job is None:
        return
    if job.state is JobState.DONE:
        run = copy.copy(job.result)  # each session numbers its own copy of the run
        session.add_run(run)
        del ss.compare_target
        cached = int(run.results["cached"].sum()) if "cached" in run.results else 0
        kept_in_memory = getattr(training.fit_cache(), "write_error", None)  # (a full disk: said here, once per run)
        outcome = ss.job_note = state.JobNote(JobState.DONE, f"Trained {len(run.results)} fit(s) in {run.seconds:.1f} s"
                                  + (f" ({cached} from the cache)" if cached else "")
                                  + f": run {run.number} is in the run history."
                                  + (f" {kept_in_memory}" if kept_in_memory else ""))
    elif job.state is JobState.FAILED:
        outcome = ss.job_note = state.JobNote(JobState.FAILED, f"Training failed: {job.error}")
    elif job.why_cancelled == "closed_tab":
        outcome = ss.job_note = state.JobNote(JobState.CANCELLED, f"Training cancelled after {job.elapsed():.0f} s: "
                                              f"no tab of this session was open for {job.grace_s:.0f} s. Nothing was "
                                              "added to the run history.")
    else:
        outcome = ss.job_note = state.JobNote(JobState.CANCELLED, f"Training cancelled after {job.elapsed():.0f} s: "
                                              "nothing was added to the run history.")
    ss.job_outcome = outcome


def outcome() -> state.JobNote | None:
    """The :class:`~fairdash.app.server.state.JobNote` of the job collected in this script run (the Train page's status
    line), else ``None``."""
    return state.current().job_outcome


def note() -> state.JobNote | None:
    """The :class:`~.state.JobNote` of a failed or cancelled job, kept until the next training or until
    dismissed."""
    return state.current().job_note


def _dismiss() -> None:
    del state.current().job_note


def _job_box(drawn_queued: bool = False) -> None:
    """The running job's progress and Cancel button (a fragment, rerun every REFRESH_S seconds, or
    QUEUED_REFRESH_S while the job waits in the queue: ``drawn_queued``)."""
    job = current()
    if job is None or (drawn_queued and not job.queued):  # it has just finished (a full run collects it and
        st.rerun()  # redraws the page), or it has left the queue (the box is redrawn at the running cadence)
    with st.container(key="training_job", border=True):
        st.markdown(f"**{job.title}**")
        place = registry().place(job) if job.queued else None
        if place is not None:
            st.progress(0.0, text=f"Queued: place {place[0]} of {place[1]} waiting")
        else:
            st.progress(job.fraction, text=job.message)
        if job.cancelling:
            st.caption(f"Cancelling: the training stops when its current step ends (it has run for "
                       f"{job.elapsed():.0f} s); no run is added to the history.")
        else:
            if place is not None:
                st.caption(f"Waiting for {job.elapsed():.0f} s: this server runs {registry().max_running} "
                           "training(s) at once, and yours starts when a place is free. Other pages can be used "
                           "meanwhile.")
            else:
                st.caption(f"Running for {job.elapsed():.0f} s. Other pages can be used meanwhile; the run joins "
                           "the run history when it ends.")
            st.button("Cancel training", key="cancel_training", icon=":material/cancel:", on_click=job.cancel,
                      help="Stops the training at its next step; nothing is added to the run history.")


def sidebar_job() -> None:
    """The training box (app.py draws it in the sidebar, on every page): the running job (refreshed
    while it runs), or the note of a failed or cancelled one (with a button to dismiss it)."""
    job = current()
    if job is not None:
        waits = job.queued and registry().running_count >= registry().max_running  # (no place free for it)
        st.fragment(_job_box, run_every=QUEUED_REFRESH_S if waits else REFRESH_S)(waits)
        return
    kept = note()
    if kept is None:
        return
    with st.container(key="training_note"):
        show, icon = {JobState.FAILED: (st.error, ":material/warning:"),
                      JobState.DONE: (st.success, ":material/check_circle:")
                      }.get(kept.kind, (st.info, ":material/cancel:"))
        show(text.literal(kept.text), icon=icon)
        st.button("Dismiss", key="dismiss_training_note", on_click=_dismiss)
