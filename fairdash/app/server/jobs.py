"""Training that survives navigation, the session's side: a training started on the Train page waits and runs in
the server's queue (:mod:`fairdash.app.training.queue`, plain Python, which holds the jobs, their turns, cancelling
and the memory watch), so going to another page (which ends the page's script run) does not stop it.
A UI-helper module: it imports Streamlit.

- :func:`start_training`, :func:`current`, :func:`forget`: this session's job in the server's registry
  (:func:`~fairdash.app.training.queue.registry`), by the session's token; drawing it tells the job a tab is open.
- :func:`collect`: called by app.py on every script run of the session (any page): a finished job's run
  joins the run history with ``session.add_run`` and a note in the sidebar says so; a failed or cancelled job leaves
  a note. Session state is written only here, from the session's own script thread, never by the worker.
- :func:`sidebar_job`: the sidebar's box on every page: the job's place in the queue or its progress,
  and a Cancel button, refreshed by ``st.fragment(run_every=...)`` while the job runs; then the outcome's note.
"""
from __future__ import annotations

import copy

import streamlit as st

from ..training import queue
from ..training.queue import JobState, TrainingJob
from ..ui import text, training
from . import session, state

REFRESH_S = 2.0  # how often the sidebar's progress box is redrawn while a job runs (a fragment-only rerun)
QUEUED_REFRESH_S = 5.0  # ... and while it waits in the queue (a place changes seldom; each redraw costs the server)


def _token():
    return state.current().token


def current() -> TrainingJob | None:
    """This session's running (or queued) job, or ``None``; drawing it tells the job a tab is open."""
    job = queue.registry().get(_token())
    if job is None or not job.running:
        return None
    job.seen()
    return job


def forget(token) -> bool:
    """Forget: cancel the session ``token``'s training and drop it (nobody collects it)."""
    return queue.registry().forget(token)


def start_training(task, spec, *, title: str, **train_kwargs) -> TrainingJob:
    """Start ``runs.train_run(task, spec, **train_kwargs)`` in the background for this session (it waits
    in the server's queue while ``FAIRDASH_MAX_TRAININGS`` others run). Refused with a
    :class:`~fairdash.errors.FairDashError` while the server is short of memory. Everything the worker needs
    is passed in here (the fit cache object included): it reads no session state. While it runs, the
    caller reruns the app so that every part of it shows the job."""
    running = current()
    if running is not None:  # (a second click that reached the page before the button was disabled)
        return running
    server = queue.registry()
    job = server.train(_token(), task, spec, title=title, **train_kwargs)
    del state.current().job_note
    if server.settings.wait_in_script:
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
    job = queue.registry().take_finished(_token())
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
        place = queue.registry().place(job) if job.queued else None
        if place is not None:
            st.progress(0.0, text=f"Queued: place {place[0]} of {place[1]} waiting")
        else:
            st.progress(job.fraction, text=job.message)
        if job.cancelling:
            st.caption(f"Cancelling: the training stops when its current step ends (it has run for "
                       f"{job.elapsed():.0f} s); no run is added to the history.")
        else:
            if place is not None:
                st.caption(f"Waiting for {job.elapsed():.0f} s: this server runs {job.settings.max_running} "
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
        waits = job.queued and queue.registry().full  # (no place free for it)
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
