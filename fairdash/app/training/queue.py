"""The training queue of one dashboard server: trainings that go on whatever page the analyst opens, taking turns on
a server a team shares. Plain Python: no Streamlit here (the session's side and the sidebar's box are
:mod:`fairdash.app.server.jobs`).

- :class:`QueueSettings`: how a registry runs its trainings, one frozen record given to it when it is made. The
  server's come from its environment in one place, :meth:`QueueSettings.from_env`
  (:class:`~fairdash.app.server.limits.ServerLimits`: ``FAIRDASH_MAX_TRAININGS``, ``FAIRDASH_CLOSED_TAB_GRACE_S``,
  ``FAIRDASH_TRAINING_NICE``); a test makes a registry with settings of its own.
- :class:`TrainingJob`: one training (``runs.train_run``), watched by a daemon thread, holding its progress, its
  :class:`~fairdash.work.runs.Run` or its error message, and a cancel flag that the progress callback checks, so the
  experiment runner stops at its next progress call. The training itself runs in a worker process
  (:mod:`fairdash.app.training.worker`), so that no page waits for it; while it runs, the server's memory guard is
  read every ``memory_watch_s`` seconds.
- :class:`JobRegistry`: the jobs, one per session token (one job per session at a time; every tab of the session
  sees it and may cancel it). At most ``max_running`` run at once; the others wait in a queue, first come first
  served (:meth:`JobRegistry.place`). A job whose session has no open tab for ``closed_tab_grace_s`` (no tab has
  drawn it: :meth:`TrainingJob.seen`) is cancelled, queued or running; Forget cancels the session's job at once.
- :func:`registry`: the server process's one registry, made at its first use from the environment;
  :func:`configure` puts a new one in its place (the tests: ``training_queue`` in tests/conftest.py). It is this
  module's and not a ``st.cache_resource``: the queue belongs to the process, and Streamlit's cache may be cleared
  (its menu's "Clear cache", ``st.cache_resource.clear()``), which would start a second, empty queue beside the
  trainings still running in the first (more than ``max_running`` at once, every session's job lost to its tabs).
"""
from __future__ import annotations

import logging
import re
import threading
import time
from dataclasses import dataclass, replace
from typing import NamedTuple

from ...errors import error_text
from ...events import log_event
from ..server.limits import ServerLimits, check_memory, lower_thread_priority
from ..server.state import JobState
from . import worker

_log = logging.getLogger(__name__)


@dataclass(frozen=True)
class QueueSettings:
    """How a :class:`JobRegistry` runs its trainings, fixed when it is made. The defaults are a plain registry's;
    the server's are :meth:`from_env`."""
    max_running: int = 1  # trainings that run at once (FAIRDASH_MAX_TRAININGS); the others wait in the queue
    closed_tab_grace_s: float = 300.0  # no open tab of its session this long: the job is cancelled
    training_nice: int = 10  # how much lower a training's CPU priority is than the pages' (FAIRDASH_TRAINING_NICE)
    keep_s: float = 3600.0  # a finished job nobody collected (its tabs were closed) is dropped after this
    memory_watch_s: float = 1.0  # how often a running training reads the server's memory against its guard
    # True: a training runs in a worker process of its own (worker.ProcessWork: the pages never wait for it). False: in
    # its job's thread, in this process; only for tests that replace the training code in this process
    in_worker_process: bool = True
    # True: the script run that starts a training waits for it and collects it at once (fairdash.app.server.jobs). Only
    # for AppTest, where no browser polls the sidebar's box (tests/conftest.py's training_queue turns it on)
    wait_in_script: bool = False

    @classmethod
    def from_env(cls, **changes) -> QueueSettings:
        """The server's settings: its limits read from the environment (:meth:`ServerLimits.from_env`, which names
        a malformed variable), the rest their defaults; ``changes`` replace any of them."""
        limits = ServerLimits.from_env()
        return replace(cls(max_running=limits.max_trainings, closed_tab_grace_s=limits.closed_tab_grace_s,
                           training_nice=limits.training_nice), **changes)


PLAIN = QueueSettings()  # the settings of a job that no registry has started yet


class TrainingCancelled(Exception):
    """Raised inside the job's thread by the progress callback once Cancel was clicked (or the tabs closed)."""


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


END_EVENTS = {JobState.DONE: "training_end", JobState.FAILED: "training_failed", JobState.CANCELLED: "training_cancel"}


class TrainingJob:
    """One training in a daemon thread. ``work(progress)`` returns the :class:`Run`; the thread only
    writes this object's attributes, never Streamlit's session state."""

    def __init__(self, work, title: str, *, session: str | None = None, grace_s: float = PLAIN.closed_tab_grace_s,
                 nice: int = 0):
        self.title = title
        self.fraction, self.message = 0.0, "Waiting for its turn"
        self.state = JobState.RUNNING  # -> DONE, FAILED or CANCELLED (running includes waiting in the queue)
        self.queued = True  # waiting for a free place (QueueSettings.max_running)
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

    @property
    def settings(self) -> QueueSettings:
        """Its registry's settings (:data:`PLAIN` before a registry starts it)."""
        return self.registry.settings if self.registry is not None else PLAIN

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
        if time.monotonic() - self.memory_checked >= self.settings.memory_watch_s:  # the guard watches a training too
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
            self.error = error_text(e)
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
    """The running, queued and not yet collected jobs, one per session token; at most ``max_running`` of them
    (:class:`QueueSettings`) run at once, the rest wait first come, first served. Each registry is a queue of its
    own: two share nothing, whatever their settings."""

    def __init__(self, settings: QueueSettings | None = None):
        self.settings = settings or QueueSettings()
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
                if not old.running and now - old.finished > self.settings.keep_s:
                    del self._jobs[t]
            old = self._jobs.get(token)
            if old is not None and old.running:
                raise RuntimeError("this session already has a training running")
            job.registry = self
            self._jobs[token] = job.start()
        return job

    def train(self, token: str, task, spec, *, title: str, **train_kwargs) -> TrainingJob:
        """Start ``runs.train_run(task, spec, **train_kwargs)`` for the session ``token``, in its turn. Refused with
        a :class:`~fairdash.errors.FairDashError` (and a ``refusal`` event) while the server is short of memory.
        Everything the training needs is passed in here (the fit cache object included)."""
        try:
            check_memory("trainings")
        except Exception:
            log_event("refusal", session=token, reason="memory_guard")
            raise
        work, in_worker = self._work(task, spec, train_kwargs)
        # a worker process sets its own priority (fairdash.app.training.worker): its job's thread here only waits on
        # the pipe and stays at the pages' priority, so the fork server it may start runs at the server's
        job = TrainingJob(work, title, session=token, grace_s=self.settings.closed_tab_grace_s,
                          nice=0 if in_worker is not None else self.settings.training_nice)
        job.worker = in_worker
        return self.start(token, job)

    def _work(self, task, spec, train_kwargs: dict):
        """A training's ``work(progress)`` and its worker process's handle (``None`` where it runs in its thread)."""
        if not self.settings.in_worker_process:
            def in_thread(progress):
                from ...work import runs  # lazy: heavy (numpy, pandas); read at call time, where tests replace it

                return runs.train_run(task, spec, progress=progress, **train_kwargs)
            return in_thread, None
        in_worker = worker.ProcessWork(worker.train_run_detached, task, spec, nice=self.settings.training_nice,
                                       **train_kwargs)

        def work(progress):
            return worker.attach_task(in_worker(progress), task)
        return work, in_worker

    # ---- the queue ----------------------------------------------------------------------------------
    def wait_turn(self, job: TrainingJob) -> None:
        """Block the job's thread until it is first in the queue and a place is free (raises
        :class:`TrainingCancelled` if it is cancelled, or its tab closed, while it waits)."""
        with self._turns:
            self._queue.append(job)
            try:
                while not (self._queue[0] is job and len(self._running) < self.settings.max_running):
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

    @property
    def full(self) -> bool:
        """Whether every place is taken (a queued job waits for one)."""
        return self.running_count >= self.settings.max_running

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
        gets it); it leaves the registry then (or, uncollected, after its settings' ``keep_s``)."""
        with self._lock:
            job = self._jobs.get(token) if token else None
            if job is None or job.running or token in job.collected_by:
                return None
            job.collected_by.add(token)
            self._jobs.pop(token)
            return job


# ---- the server process's registry ----------------------------------------------------------------
_server: JobRegistry | None = None
_server_made = threading.Lock()


def registry() -> JobRegistry:
    """The server process's registry, every session's jobs: made at its first use with
    :meth:`QueueSettings.from_env`."""
    global _server
    with _server_made:
        if _server is None:
            _server = JobRegistry(QueueSettings.from_env())
        return _server


def configure(settings: QueueSettings | None = None) -> JobRegistry | None:
    """Put a new, empty registry made with ``settings`` in the place of the process's (``None``: one made from the
    environment at its next use, as at the start) and return it. The jobs of the one replaced run to their end, but
    no session finds them any more: for the tests, each of which gets a queue of its own (``training_queue`` in
    tests/conftest.py)."""
    global _server
    with _server_made:
        _server = JobRegistry(settings) if settings is not None else None
        return _server
