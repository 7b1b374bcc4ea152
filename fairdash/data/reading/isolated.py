"""Every table from outside (an upload on the dashboard, a ``--data`` file, a table to score) is read in a
process of its own under a hard memory limit, so that a file whose size the estimates cannot see (a cheap
refusal before reading: :mod:`fairdash.data.reading.budget`) ends only that process, with the same one-line refusal,
and never the server (issue 35).

How the limit holds, whatever the file claims about itself:

- the child's address space is capped (``RLIMIT_AS``) at what it holds when it starts plus the budget
  (``FAIRDASH_TABLE_MB``) plus :data:`ADDRESS_SLACK` for the allocators' reservations: an allocation past it
  fails inside the child (a ``MemoryError``, or an abort in a C++ reader);
- the parent watches the child's resident memory every :data:`WATCH_S` seconds and ends it at once when it
  has grown by more than the budget since it started (the cap above is the backstop between two looks);
- a caller may pass ``watch``: called on every look, it may raise (the server's memory guard,
  :func:`fairdash.app.server.limits.check_memory`), which ends the read too.

The child sends the table back one column at a time, so it never holds a second copy of the whole table.
On Linux and macOS the child is forked: from the calling process where it runs no other thread (the command
line, a test), else from ``multiprocessing``'s fork server, whose modules are preloaded once
(:func:`preload`; the dashboard's training worker shares it, :mod:`fairdash.app.server.worker`). Where processes
cannot be limited (Windows), the table is read in this process, with the estimates alone.

A refusal here is a :class:`FairDashError` whose ``reason`` says which limit (``table_budget``,
``memory_guard``), for the server's event log.
"""
from __future__ import annotations

import importlib.machinery
import multiprocessing
import os
import signal
import sys
import threading
import time
import traceback

import pandas as pd

from ...errors import FairDashError
from . import budget, read

WATCH_S = 0.01  # how often the parent looks at the child's memory
CALLER_WATCH_S = 0.25  # how often it calls the caller's ``watch`` (the server's guard reads every process's memory)
ADDRESS_SLACK = 512 * 2**20  # address space reserved but not used (malloc arenas, thread stacks), over the budget
_PRELOAD = ["fairdash.data.reading.read"]
_context_lock = threading.Lock()
_context = None


def preload(*modules: str) -> None:
    """Modules the fork server imports once, before its first child (call before the first read or training:
    a fork server that is already running keeps what it has)."""
    for m in modules:
        if m not in _PRELOAD:
            _PRELOAD.append(m)


def forkserver_context():
    """The fork server's context (made once per process), or the spawn context where there is none (Windows)."""
    global _context
    with _context_lock:
        if _context is None:
            if "forkserver" in multiprocessing.get_all_start_methods():
                _context = multiprocessing.get_context("forkserver")
                _context.set_forkserver_preload(list(_PRELOAD))
            else:
                _context = multiprocessing.get_context("spawn")
        return _context


def _nothing() -> None:
    """A child that does nothing (:func:`warm`)."""


def warm() -> threading.Thread:
    """Start the fork server in the background (its preloaded modules take seconds to import), so that the first
    upload and the first training do not wait for it; returns the thread doing it."""
    def start():
        try:
            main_not_run_again()
            child = forkserver_context().Process(target=_nothing, name="fairdash-warm", daemon=True)
            child.start()
            child.join()
        except Exception:  # noqa: BLE001 - a warm-up only: the first real child starts it instead
            pass

    thread = threading.Thread(target=start, name="fairdash-forkserver-warm", daemon=True)
    thread.start()
    return thread


def main_not_run_again() -> None:
    """Name the running ``__main__`` by a spec where it has none, so that a child started now does not run
    its file again (multiprocessing runs a ``__main__`` known only by its path, and leaves one named
    ``__main__`` alone). Under ``streamlit run`` it is the script run's own module (the app script: every
    child would run ``app.py`` once more); a script or a test run from a module keeps its spec."""
    main = sys.modules.get("__main__")
    if main is not None and getattr(main, "__spec__", None) is None and getattr(main, "__file__", None):
        main.__spec__ = importlib.machinery.ModuleSpec("__main__", None)


def _limitable() -> bool:
    try:
        import resource  # noqa: F401 - (only to learn whether this system has it)
    except ImportError:
        return False
    return os.path.exists("/proc/self/statm")


def _context_here():
    """Fork this process where nothing but its main thread runs (fast, nothing to import); else the fork server."""
    if threading.active_count() == 1 and "fork" in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("fork")
    main_not_run_again()
    return forkserver_context()


def _statm(pid) -> tuple[int, int]:
    """(virtual size, resident size) of a process in bytes."""
    with open(f"/proc/{pid}/statm") as f:
        size, resident = f.read().split()[:2]
    page = os.sysconf("SC_PAGE_SIZE")
    return int(size) * page, int(resident) * page


def read_table(source, name: str | None = None, watch=None) -> pd.DataFrame:
    """:func:`fairdash.data.reading.read.read_table` in a child process under a hard memory limit of the table budget
    (see the module's words); the same table, notes and refusals, and one more: a read that passes the budget
    while it runs is ended and refused in one line naming the memory it reached and the limit."""
    raw, default_name = read.table_bytes(source)
    name = name or default_name
    if len(raw) > read.MAX_BYTES:
        raise FairDashError(read.too_big(name, len(raw)), reason="table_budget")
    allowed = budget.table_budget()
    if not _limitable():
        return read.read_table(raw, name)
    ctx = _context_here()
    parent, child = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child, args=(child, raw, name, allowed, dict(os.environ)), name="fairdash-read",
                       daemon=True)
    proc.start()
    child.close()
    del raw
    try:
        return _receive(parent, proc, name, allowed, watch)
    finally:
        if proc.is_alive():
            proc.kill()
        proc.join()
        parent.close()


def _receive(conn, proc, name: str, allowed: int, watch) -> pd.DataFrame:
    """The child's table, column by column, while its memory is watched."""
    start, peak, columns, head, watched = None, 0, {}, None, time.monotonic()
    while True:
        if conn.poll(WATCH_S):
            try:
                message = conn.recv()
            except (EOFError, OSError):
                break
            kind = message[0]
            if kind == "start":
                start = message[1]
            elif kind == "failed":
                raise message[1]
            elif kind == "head":
                head = message[1:]
            elif kind == "column":
                columns[message[1]] = message[2]
            elif kind == "done":
                return _assembled(head, columns)
            continue
        try:
            grown = _statm(proc.pid)[1] - start if start is not None else 0
        except (OSError, ValueError):
            grown = 0  # (it has ended: its last words are in the pipe)
        peak = max(peak, grown)
        if grown > allowed:
            proc.kill()
            raise _over(name, grown, allowed)
        if watch is not None and time.monotonic() - watched >= CALLER_WATCH_S:
            watched = time.monotonic()
            watch()
    proc.join(10)
    code = proc.exitcode
    if code is not None and (code < 0 or code == 137):  # killed (by the limit, for memory, an abort in a C++ reader)
        raise _over(name, max(peak, allowed), allowed)
    raise FairDashError(f"{name} could not be read: the reading process ended without a table (exit code {code}).")


def _over(name: str, reached: float, allowed: int) -> FairDashError:
    return FairDashError(f"{name} needs more than {budget.size_text(allowed)} of memory to read (reading stopped at "
                         f"{budget.size_text(reached)}); FairDash reads at most {budget.size_text(allowed)} per table "
                         f"({budget.TABLE_MB_ENV}). Use a sample of its rows or fewer columns.", reason="table_budget")


def _assembled(head, columns: dict) -> pd.DataFrame:
    names, attrs = head
    df = pd.DataFrame({i: columns[i] for i in range(len(names))}, copy=False)
    df.columns = names
    df.attrs.update(attrs)
    return df


def _child(conn, raw: bytes, name: str, allowed: int, environ: dict) -> None:
    """The reading process: cap its address space, read, send the table a column at a time."""
    import resource

    os.environ.clear()  # the caller's settings now (a fork server's date from its start)
    os.environ.update(environ)
    try:
        size, resident = _statm("self")
        cap = size + allowed + ADDRESS_SLACK
        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        if hard == resource.RLIM_INFINITY or cap < hard:
            resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
        conn.send(("start", resident))
        df = read.read_table(raw, name)
        del raw
        conn.send(("head", list(df.columns), dict(df.attrs)))
        for i in range(df.shape[1]):
            conn.send(("column", i, df.iloc[:, i].reset_index(drop=True)))
        conn.send(("done",))
    except MemoryError:
        _send_failure(conn, _over(name, allowed, allowed))
    except FairDashError as e:
        _send_failure(conn, e)
    except BaseException as e:  # noqa: BLE001 - a reader's own failure: its first line, as the read says it
        traceback.print_exc(file=sys.stderr)
        first = (str(e).strip().splitlines() or [type(e).__name__])[0][:200]
        _send_failure(conn, FairDashError(f"{name} could not be read as a table: {first}", reason="malformed"))
    finally:
        conn.close()


def _send_failure(conn, error: FairDashError) -> None:
    try:
        conn.send(("failed", error))
    except MemoryError:  # no room left even to say it: the parent sees the process killed, and says why
        os.kill(os.getpid(), signal.SIGKILL)
