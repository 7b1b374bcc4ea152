"""A training in a worker process of its own, so that the server's pages never wait for it. Plain Python:
no Streamlit here.

Why a process and not a thread: a training is mostly Python (gpytorch, the optimisers' loops) between
torch's kernels, and in the server's process it holds the interpreter lock half of the time, so every
page's rerun (a slider's readout) queues behind it; a lower thread priority cannot help with that. In a
process of its own, at a lower CPU priority (``FAIRDASH_TRAINING_NICE``, applied to the whole process: its
torch and joblib threads too), the pages run first, a training that dies (out of memory, say) takes
only itself down, and its memory is returned to the system when it ends.

- :class:`ProcessWork`: ``work(progress)`` runs ``fn(*args, progress=..., **kwargs)`` in a worker
  process and returns its result; the child's progress calls reach ``progress`` in the calling thread,
  which may raise (a cancel) to stop it: the child is asked to stop at its next progress call, and ended
  after ``CANCEL_GRACE_S`` if it has not. An exception in the child is raised again here (its trace is in
  the server's log); a child that dies without a word raises a :class:`~fairdash.errors.FairDashError`.
- Workers are forked from a fork server that has imported FairDash's training code once
  (``multiprocessing``'s "forkserver" start method, Linux and macOS), so a training starts in
  milliseconds and never inherits the server's threads. Where there is no fork server (Windows), the
  "spawn" method is used.
- A worker never runs the dashboard's script: ``multiprocessing`` prepares a child by running the parent's
  ``__main__`` again from its file, and under ``streamlit run`` that module is the app script (Streamlit
  installs each script run's module as ``__main__``). Every training would run ``app.py`` once more, bare
  (Streamlit's "missing ScriptRunContext" warnings in the server's log, and a second of CPU). A
  ``__main__`` without a spec is given one named ``__main__`` before a start, which tells
  ``multiprocessing`` there is nothing to run again (:func:`_main_not_run_again`).
- A fit cache passed as ``cache=`` comes back: the fits the child made join the caller's cache (an
  upload's fits live in the session's memory only, so they must come back to it).
"""
from __future__ import annotations

import os
import sys
import traceback

from ...data.reading import isolated
from ...errors import FairDashError

CANCEL_GRACE_S = 3.0  # after a cancel, how long the child may take to reach its next progress call
isolated.preload("fairdash.work.runs")  # imported once by the fork server: every worker starts with it loaded


class _Cancelled(Exception):
    """Raised in the child by its progress callback once the parent asked it to stop."""


def context():
    """The multiprocessing context workers start from: the fork server that reads tables too (one per server
    process, :func:`fairdash.data.reading.isolated.forkserver_context`)."""
    return isolated.forkserver_context()


_main_not_run_again = isolated.main_not_run_again


def _niceness(nice: int) -> int | None:
    """The niceness a worker runs at: ``nice`` steps below the server's process (its main thread's), whatever
    the niceness of the thread that starts it (``None``: the fork server's own, where ``nice`` is 0)."""
    if nice <= 0 or not hasattr(os, "getpriority"):
        return None
    return min(19, os.getpriority(os.PRIO_PROCESS, os.getpid()) + int(nice))


def _child(conn, stop, niceness: int | None, environ: dict, fn, args, kwargs) -> None:
    """The worker process's body: run ``fn``, sending progress, then the outcome, to the parent."""
    os.environ.clear()  # the server's environment now (the fork server's dates from its start):
    os.environ.update(environ)  # FAIRDASH_* settings read during a training are the server's
    if niceness is not None:  # set, not added: a fork server started by a lowered thread is lowered already
        try:
            if os.getpriority(os.PRIO_PROCESS, 0) < niceness:
                os.setpriority(os.PRIO_PROCESS, 0, niceness)
        except OSError:
            pass
    cache = kwargs.get("cache")
    before = cache.keys_now() if cache is not None and hasattr(cache, "keys_now") else None

    def progress(fraction, message=""):
        if stop.is_set():
            raise _Cancelled
        conn.send(("progress", float(fraction), str(message)))

    try:
        result = fn(*args, progress=progress, **kwargs)
    except _Cancelled:
        conn.send(("cancelled",))
    except BaseException as e:  # noqa: BLE001 - the parent raises it again; the trace goes to the log
        traceback.print_exc(file=sys.stderr)
        try:
            conn.send(("failed", e))
        except Exception:  # an exception that cannot be pickled: its words travel instead
            conn.send(("failed", FairDashError(f"{type(e).__name__}: {e}")))
    else:
        new_fits = cache.new_since(before) if before is not None else None
        conn.send(("done", result, new_fits))
    finally:
        conn.close()


class ProcessWork:
    """``fn(*args, progress=..., **kwargs)`` in a worker process; call it with the progress callback."""

    def __init__(self, fn, *args, nice: int = 0, **kwargs):
        self.fn, self.args, self.kwargs, self.nice = fn, args, kwargs, int(nice)
        self.pid: int | None = None  # the worker's process id while it runs

    def __call__(self, progress):
        ctx = context()
        parent, child = ctx.Pipe(duplex=False)
        stop = ctx.Event()
        proc = ctx.Process(target=_child, args=(child, stop, _niceness(self.nice), dict(os.environ), self.fn, self.args,
                                                self.kwargs),
                           name="fairdash-training", daemon=True)
        if getattr(self.fn, "__module__", None) != "__main__":  # (a function of __main__ needs it run again)
            _main_not_run_again()
        proc.start()
        child.close()
        self.pid = proc.pid
        last = (0.0, "Starting")
        try:
            while True:
                if parent.poll(0.25):
                    try:
                        message = parent.recv()
                    except (EOFError, OSError):
                        break
                    if message[0] == "progress":
                        last = message[1:]
                        progress(*last)
                        continue
                    return self._outcome(message)
                progress(*last)  # no news: still the caller's chance to cancel (or a closed tab's)
            proc.join(60)  # (its pipe is closed: it is ending; a busy machine may take a while to say how)
            raise FairDashError("The training's worker process ended without a result"
                                + (f" (exit code {proc.exitcode}" + (": killed, perhaps for lack of memory)"
                                                                     if proc.exitcode == -9 else ")")
                                   if proc.exitcode is not None else "") + ".",
                                reason="worker_killed" if proc.exitcode == -9 else "worker_ended")
        except BaseException:
            stop.set()
            proc.join(CANCEL_GRACE_S)
            raise
        finally:
            if proc.is_alive():
                proc.terminate()
                proc.join(2)
                if proc.is_alive():
                    proc.kill()
                    proc.join()
            parent.close()
            self.pid = None

    def _outcome(self, message):
        kind = message[0]
        if kind == "done":
            result, new_fits = message[1], message[2]
            cache = self.kwargs.get("cache")
            if new_fits is not None and cache is not None:
                cache.merge(new_fits)
            return result
        if kind == "failed":
            raise message[1]
        raise FairDashError("The training stopped in its worker process before it ended.")  # ("cancelled")


def train_run_detached(task, spec, **kwargs):
    """The worker's side of a training (``runs.train_run``): the run goes back without its task (the
    parent has the table already; :func:`attach_task` puts it back), so the table crosses once."""
    from ...work.runs import train_run  # lazy: heavy, defers numpy, pandas (and read at call time)

    run = train_run(task, spec, **kwargs)
    run.task = None
    return run


def attach_task(run, task):
    """The run from :func:`train_run_detached` with its task again (the very object the session holds)."""
    run.task = task
    return run
