"""Every file from outside (an upload on the dashboard, a ``--data`` file, a table to score, a session file, a model
file) is read in a process of its own under a hard memory limit and a processor-time limit, so that a file whose
size or cost the estimates cannot see (a cheap refusal before reading: :mod:`fairdash.data.reading.budget`) ends only
that process, with the same one-line refusal, and never the server (issues 35 and 46). Tables come back a column at
a time (:func:`read_table`); anything else whole (:func:`call_limited`: the session and model files' readers).

How the limit holds, whatever the file claims about itself:

- the child's address space is capped (``RLIMIT_AS``) at what it holds when it starts plus the budget
  (``FAIRDASH_TABLE_MB``) plus :data:`ADDRESS_SLACK` for the allocators' reservations: an allocation past it
  fails inside the child (a ``MemoryError``, or an abort in a C++ reader);
- the parent watches the child's resident memory every :data:`WATCH_S` seconds and ends it at once when it
  has grown by more than the budget since it started (the cap above is the backstop between two looks);
- the child's processor time is capped (``RLIMIT_CPU``) at ``FAIRDASH_READ_SECONDS`` (:func:`read_seconds`): past
  it the kernel ends the child, and the read is refused in one line naming the limit; a child stuck without using
  the processor is ended by the parent after :data:`WALL_FACTOR` times as long on the clock;
- a caller may pass ``watch``: called on every look, it may raise (the server's memory guard,
  :func:`fairdash.app.server.limits.check_memory`), which ends the read too.

The child sends the table back one column at a time, so it never holds a second copy of the whole table.
On Linux and macOS the child is forked: from the calling process where it runs no other thread (the command
line, a test), else from ``multiprocessing``'s fork server, whose modules are preloaded once
(:func:`preload`; the dashboard's training worker shares it, :mod:`fairdash.app.training.worker`). Where processes
cannot be limited (Windows), the table is read in this process, with the estimates alone.

A refusal here is a :class:`FairDashError` whose ``reason`` says which limit (``table_budget``, ``read_time``,
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
from typing import NamedTuple

import pandas as pd

from ...errors import FairDashError
from ...settings import env_number
from . import budget, read

WATCH_S = 0.01  # how often the parent looks at the child's memory
CALLER_WATCH_S = 0.25  # how often it calls the caller's ``watch`` (the server's guard reads every process's memory)
ADDRESS_SLACK = 512 * 2**20  # address space reserved but not used (malloc arenas, thread stacks), over the budget
READ_SECONDS_ENV = "FAIRDASH_READ_SECONDS"
# processor seconds for one read: the slowest honest table at the default memory budget (an .xlsx of 5.4 million
# cells, the most FAIRDASH_TABLE_MB=1024 admits) takes about 48 s on a 2-core AMD EPYC
DEFAULT_READ_SECONDS = 120.0
MIN_READ_SECONDS = 1.0
WALL_FACTOR, WALL_SLACK_S = 4, 30  # a read stuck without using the processor is ended after this long (wall clock)
_PRELOAD = ["fairdash.data.reading.read"]
_IN_CHILD = False  # set in a reading process
_context_lock = threading.Lock()
_context = None


def preload(*modules: str) -> None:
    """Modules the fork server imports once, before its first child (call before the first read or training:
    a fork server that is already running keeps what it has)."""
    for m in modules:
        if m not in _PRELOAD:
            _PRELOAD.append(m)
    with _context_lock:
        if _context is not None and hasattr(_context, "set_forkserver_preload"):
            _context.set_forkserver_preload(list(_PRELOAD))  # (kept only by a fork server not yet started)


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
    """Fork this process where nothing but its main thread runs (fast, nothing to import) and torch, whose thread
    pools a forked child may find locked, is not loaded; else the fork server."""
    if (threading.active_count() == 1 and "torch" not in sys.modules
            and "fork" in multiprocessing.get_all_start_methods()):
        return multiprocessing.get_context("fork")
    main_not_run_again()
    return forkserver_context()


def _statm(pid) -> tuple[int, int]:
    """(virtual size, resident size) of a process in bytes."""
    with open(f"/proc/{pid}/statm") as f:
        size, resident = f.read().split()[:2]
    page = os.sysconf("SC_PAGE_SIZE")
    return int(size) * page, int(resident) * page


def read_seconds() -> float:
    """The processor time one read may take (``FAIRDASH_READ_SECONDS``, read now), else :data:`DEFAULT_READ_SECONDS`."""
    return env_number(READ_SECONDS_ENV, DEFAULT_READ_SECONDS, minimum=MIN_READ_SECONDS)


def read_table(source, name: str | None = None, watch=None) -> pd.DataFrame:
    """:func:`fairdash.data.reading.read.read_table` in a child process under a hard memory limit of the table budget
    and a processor-time limit (see the module's words); the same table, notes and refusals, and two more: a read
    that passes the budget or the time limit while it runs is ended and refused in one line naming the limit."""
    raw, default_name = read.table_bytes(source)
    name = name or default_name
    if len(raw) > read.MAX_BYTES:
        raise FairDashError(read.too_big(name, len(raw)), reason="table_budget")
    if _IN_CHILD or not _limitable():
        return read.read_table(raw, name)
    return _limited(_read_columns, (raw, name), name, watch, "table")


def call_limited(fn, args: tuple, name: str, *, watch=None, what: str = "file", imports: tuple = ()):
    """``fn(*args)`` in a reading process under the same limits as a table (memory: ``FAIRDASH_TABLE_MB``; processor
    time: ``FAIRDASH_READ_SECONDS``), its result sent back whole (pickled by this code, never read from the file):
    every file from outside (a session file, a model file) is parsed there, not in the server. ``fn`` must be a
    module-level function; its refusals (:class:`FairDashError`) come back as they are; ``what``: the file's kind in
    the words of a refusal; ``imports``: modules ``fn`` may import as it goes, imported before the limits are set
    (a library's code is not the file's cost: torch alone maps more address space than a small budget). Where
    processes cannot be limited, or in a reading process already, it runs here."""
    if _IN_CHILD or not _limitable():
        return fn(*args)
    return _limited(fn, args, name, watch, what, imports)


def _limited(fn, args: tuple, name: str, watch, what: str, imports: tuple = ()):
    limits = _Limits(name, budget.table_budget(), read_seconds(), what)
    ctx = _context_here()
    parent, child = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child, args=(child, fn, args, limits, imports, dict(os.environ)), name="fairdash-read",
                       daemon=True)
    proc.start()
    child.close()
    del args
    try:
        return _receive(parent, proc, limits, watch)
    finally:
        if proc.is_alive():
            proc.kill()
        proc.join()
        parent.close()


class _Limits(NamedTuple):
    name: str
    allowed: int  # bytes the process may grow by
    seconds: float  # processor seconds it may use
    what: str  # "table", "session file", ...


def _receive(conn, proc, limits: _Limits, watch):
    """The child's answer (a table column by column, or one result) while its memory and time are watched."""
    start, peak, columns, head, watched = None, 0, {}, None, time.monotonic()
    began = watched
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
            elif kind == "result":
                return message[1]
            continue
        try:
            grown = _statm(proc.pid)[1] - start if start is not None else 0
        except (OSError, ValueError):
            grown = 0  # (it has ended: its last words are in the pipe)
        peak = max(peak, grown)
        if grown > limits.allowed:
            proc.kill()
            raise _over(limits, grown)
        if time.monotonic() - began > WALL_FACTOR * limits.seconds + WALL_SLACK_S:  # stuck without using the CPU
            proc.kill()
            raise _too_slow(limits)
        if watch is not None and time.monotonic() - watched >= CALLER_WATCH_S:
            watched = time.monotonic()
            watch()
    proc.join(10)
    code = proc.exitcode
    if code == -signal.SIGXCPU:
        raise _too_slow(limits)
    if code is not None and (code < 0 or code == 137):  # killed (by the limit, for memory, an abort in a C++ reader)
        raise _over(limits, max(peak, limits.allowed))
    raise FairDashError(f"{limits.name} could not be read: the reading process ended without an answer "
                        f"(exit code {code}).")


def _over(limits: _Limits, reached: float) -> FairDashError:
    limit = budget.size_text(limits.allowed)
    then = (f"per table ({budget.TABLE_MB_ENV}). Use a sample of its rows or fewer columns." if limits.what == "table"
            else f"per file ({budget.TABLE_MB_ENV}), so this {limits.what} is refused.")
    return FairDashError(f"{limits.name} needs more than {limit} of memory to read (reading stopped at "
                         f"{budget.size_text(reached)}); FairDash reads at most {limit} {then}", reason="table_budget")


def _too_slow(limits: _Limits) -> FairDashError:
    advice = " Use a sample of its rows, or save it again as plain CSV." if limits.what == "table" else ""
    return FairDashError(f"{limits.name} took more than {limits.seconds:g} s of processor time to read and was "
                         f"stopped; FairDash spends at most {limits.seconds:g} s reading one file "
                         f"({READ_SECONDS_ENV}).{advice}", reason="read_time")


def _assembled(head, columns: dict) -> pd.DataFrame:
    names, attrs = head
    df = pd.DataFrame({i: columns[i] for i in range(len(names))}, copy=False)
    df.columns = names
    df.attrs.update(attrs)
    return df


def _read_columns(conn, raw: bytes, name: str) -> None:
    """A table's read in the reading process: sent a column at a time (never a second copy of the whole table)."""
    df = read.read_table(raw, name)
    del raw
    conn.send(("head", list(df.columns), dict(df.attrs)))
    for i in range(df.shape[1]):
        conn.send(("column", i, df.iloc[:, i].reset_index(drop=True)))
    conn.send(("done",))


_read_columns.sends_itself = True


def _set_limits(allowed: int, seconds: float) -> int:
    """Cap this process's address space (what it holds now plus ``allowed`` plus slack) and processor time (what it
    has used plus ``seconds``: past it the kernel ends it with SIGXCPU); returns its resident memory now."""
    import resource  # lazy: POSIX only (where processes cannot be limited, nothing here is called)

    size, resident = _statm("self")
    cap = size + allowed + ADDRESS_SLACK
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard == resource.RLIM_INFINITY or cap < hard:
        resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
    used = resource.getrusage(resource.RUSAGE_SELF)
    cpu = int(used.ru_utime + used.ru_stime + seconds) + 1
    soft, hard = resource.getrlimit(resource.RLIMIT_CPU)
    if hard == resource.RLIM_INFINITY or cpu < hard:
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, hard if hard != resource.RLIM_INFINITY else cpu + 5))
    return resident


def _child(conn, fn, args: tuple, limits: _Limits, imports: tuple, environ: dict) -> None:
    """The reading process: import what ``fn`` needs, set the limits, run ``fn`` and send back what it gives (or
    its refusal)."""
    global _IN_CHILD
    _IN_CHILD = True
    os.environ.clear()  # the caller's settings now (a fork server's date from its start)
    os.environ.update(environ)
    try:
        for module in imports:
            importlib.import_module(module)
        conn.send(("start", _set_limits(limits.allowed, limits.seconds)))
        if getattr(fn, "sends_itself", False):
            fn(conn, *args)
        else:
            result = fn(*args)
            del args
            conn.send(("result", result))
    except MemoryError:
        _send_failure(conn, _over(limits, limits.allowed))
    except FairDashError as e:
        _send_failure(conn, e)
    except BaseException as e:  # noqa: BLE001 - a reader's own failure: its first line, as the read says it
        traceback.print_exc(file=sys.stderr)
        first = (str(e).strip().splitlines() or [type(e).__name__])[0][:200]
        _send_failure(conn, FairDashError(f"{limits.name} could not be read as a {limits.what}: {first}",
                                          reason="malformed"))
    finally:
        conn.close()


def _send_failure(conn, error: FairDashError) -> None:
    try:
        conn.send(("failed", error))
    except MemoryError:  # no room left even to say it: the parent sees the process killed, and says why
        os.kill(os.getpid(), signal.SIGKILL)
