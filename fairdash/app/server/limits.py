"""The limits a team sets on one dashboard server, from environment variables with safe defaults (the
README's settings table lists them), and the server memory guard. Plain Python: no Streamlit here.

- ``FAIRDASH_MAX_TRAININGS``: trainings that run at once on the server (default: the number of cores);
  the rest wait in a queue (:mod:`fairdash.app.training.queue`, whose settings
  :meth:`~fairdash.app.training.queue.QueueSettings.from_env` reads from here), their place shown in their sidebar
  (:mod:`fairdash.app.server.jobs`).
- ``FAIRDASH_MEMORY_GUARD_MB``: above this resident memory of the server process, new uploads and
  trainings are refused with a line saying so, instead of the server dying (default: 75% of the
  machine's memory).
- ``FAIRDASH_CLOSED_TAB_GRACE_S``: a training whose session has no open tab for this long is cancelled
  (default 300 s).
- ``FAIRDASH_TRAINING_NICE``: how much lower than the pages' a training's CPU priority is (Linux
  niceness, 0-19; default 10): its worker process's (:mod:`fairdash.app.training.worker`), torch and joblib threads
  included, so that a slider's readout is not queued behind the trainings on a busy server.

- ``FAIRDASH_ALLOW_INSECURE``: ``1`` lets the server run with XSRF protection or the CORS check off, or an upload
  cap above FairDash's own (:func:`insecure_settings`); without it such a server refuses to serve, and with
  it the event log says it ran so.

A malformed value is an error at the first use, naming the variable (a server set up wrongly says so
rather than running without the limit).
"""
from __future__ import annotations

import os
from dataclasses import dataclass

from ...errors import FairDashError
from ...settings import env_number


def machine_memory_bytes() -> int | None:
    """The machine's memory (Linux: /proc/meminfo; elsewhere ``os.sysconf``), or ``None`` if unknown."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):
        return None


def process_rss_bytes() -> int | None:
    """This process's resident memory now (Linux: /proc/self/statm), or ``None`` if unknown."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError, AttributeError):
        return None


def _rss_of(pid) -> int:
    with open(f"/proc/{pid}/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def server_rss_bytes() -> int | None:
    """The resident memory of this process and every process under it (the trainings' worker processes,
    their fork server, joblib's workers): what the memory guard compares with its threshold. Linux reads
    /proc; elsewhere only this process's own (:func:`process_rss_bytes`)."""
    own = process_rss_bytes()
    if own is None:
        return None
    try:
        parents: dict[int, list[int]] = {}
        for entry in os.scandir("/proc"):
            if entry.name.isdigit():
                try:
                    with open(f"/proc/{entry.name}/stat") as f:
                        ppid = int(f.read().rsplit(")", 1)[1].split()[1])
                except (OSError, ValueError, IndexError):
                    continue  # (a process that ended meanwhile)
                parents.setdefault(ppid, []).append(int(entry.name))
    except OSError:
        return own
    total, todo = own, list(parents.get(os.getpid(), []))
    while todo:
        pid = todo.pop()
        try:
            total += _rss_of(pid)
        except (OSError, ValueError, IndexError):
            pass
        todo.extend(parents.get(pid, []))
    return total


@dataclass(frozen=True)
class ServerLimits:
    max_trainings: int
    memory_guard_bytes: int | None
    closed_tab_grace_s: float
    training_nice: int = 10

    @classmethod
    def from_env(cls) -> ServerLimits:
        cores = os.cpu_count() or 1
        machine = machine_memory_bytes()
        guard_mb = env_number("FAIRDASH_MEMORY_GUARD_MB", 0.0, minimum=0.0)
        guard = int(guard_mb * 2**20) if guard_mb else (int(machine * 0.75) if machine else None)
        return cls(max_trainings=env_number("FAIRDASH_MAX_TRAININGS", cores, minimum=1, whole=True),
                   memory_guard_bytes=guard,
                   closed_tab_grace_s=env_number("FAIRDASH_CLOSED_TAB_GRACE_S", 300.0, minimum=1.0),
                   training_nice=min(env_number("FAIRDASH_TRAINING_NICE", 10, minimum=0, whole=True), 19))


def lower_thread_priority(nice: int) -> bool:
    """Give the calling thread (a training's) a lower CPU priority: Linux niceness is per thread, and a
    process may always lower its own threads' priority. Returns whether it was done (not where the
    system has no per-thread niceness)."""
    if nice <= 0:
        return False
    try:
        import threading

        tid = threading.get_native_id()
        os.setpriority(os.PRIO_PROCESS, tid, min(19, os.getpriority(os.PRIO_PROCESS, tid) + nice))
        return True
    except (AttributeError, OSError):
        return False


def _gb(n: int) -> str:
    return f"{n / 2**30:.1f} GB"


def check_memory(action: str, limits: ServerLimits | None = None, rss: int | None = None) -> None:
    """Refuse ``action`` ("uploads", "trainings") with a plain line when the server's memory is above its
    guard (the server's process and the trainings' worker processes together); nothing is refused where
    the memory cannot be read."""
    limits = limits or ServerLimits.from_env()
    rss = server_rss_bytes() if rss is None else rss
    if limits.memory_guard_bytes is None or rss is None or rss <= limits.memory_guard_bytes:
        return
    raise FairDashError(f"The server is short of memory ({_gb(rss)} in use, above its {_gb(limits.memory_guard_bytes)} "
                        f"guard, FAIRDASH_MEMORY_GUARD_MB): new {action} are paused until others finish or sessions "
                        "are forgotten. Your session and its runs are kept; try again in a few minutes.",
                        reason="memory_guard")


ALLOW_INSECURE_ENV = "FAIRDASH_ALLOW_INSECURE"
SECURE_SETTINGS = (  # (Streamlit option, the value it must have, the event log's code where it has not)
    ("server.enableXsrfProtection", True, "xsrf_off"),
    ("server.enableCORS", True, "cors_off"),
)


def insecure_settings(get_option, max_upload_mb: float) -> list[tuple[str, str]]:
    """The server settings that switch a protection off, as ``(code, words)``: XSRF protection (another site could
    post an upload in a user's name), the CORS check (another origin could open the app's WebSocket), and an upload
    cap (``server.maxUploadSize``) above ``max_upload_mb``, the largest table FairDash reads (a larger upload is
    held in memory only to be refused). ``get_option``: Streamlit's ``st.get_option``, however the setting was
    given (the config file, the command line, an environment variable)."""
    found = [(code, f"{option} is {get_option(option)!r}, not {want!r}") for option, want, code in SECURE_SETTINGS
             if get_option(option) is not want]
    cap = get_option("server.maxUploadSize")
    if cap is None or float(cap) > max_upload_mb:
        found.append(("upload_cap", f"server.maxUploadSize is {cap!r} MB, above FairDash's {max_upload_mb:g} MB"))
    return found


def insecure_allowed() -> bool:
    """Whether the team chose to run without a protection (``FAIRDASH_ALLOW_INSECURE=1``)."""
    return os.environ.get(ALLOW_INSECURE_ENV, "").strip() == "1"
