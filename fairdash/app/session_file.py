"""The session file in the dashboard (glue without widgets): "Save this session" (the Export page) downloads the
session's table, task, target and runs with their models as one file (:mod:`fairdash.files.session_file`), made
when the button is pressed; "Open a session file" (the Data page) reads one back, as every upload is read (the
server's memory guard, the table budget, in memory only), and makes it this session's work: the same table,
target and runs, the same numbers. The server keeps nothing of a file beyond the session's memory."""
from __future__ import annotations

import hashlib
import time

from ..events import log_event
from ..files import session_file as files
from ..work.session_runs import restored_runs
from . import target_state
from .server import session, state
from .server.limits import check_memory
from .ui import text, upload, workspace

SUFFIX = files.SUFFIX
# what opening a file keeps of this tab's session: the tab's own keys, its address and its owner in the store, and
# the uploader itself (drawn in this run); everything else (table, task, target, runs, kept widget values) is replaced
KEPT_ON_OPEN = (*state.TAB, state.TOKEN, state.VERSION, state.LIVE, state.NOT_KEPT, state.RESTORED, state.IN_FRAME,
                state.OPEN_SESSION_FILE)
SAVE_HELP = ("One file with this session's table, task, target and every run with its models: open it on the Data "
             "page of any FairDash (after a restart, or on a colleague's machine) to carry on where you left off. "
             "It holds the table: keep it as you keep the data. The server keeps nothing of it.")
OPEN_HELP = ("A .fairdash-session file saved with \"Save this session\" (Export page). Opening it replaces this "
             "session's table, target and runs with the file's; read in memory only, never written to the server.")


def save_download():
    """``(data, file name)`` for the Export page's "Save this session": ``data`` makes the file's bytes when the
    button is pressed (a callable: the models' files are not made on every page view), from the session as it is
    now (its table, task, target and run history)."""
    ss = state.current()
    parts = {"table": ss.table, "table_name": str(ss.get(state.Session.table_name, "")),
             "table_description": str(ss.get(state.Session.table_desc, "") or ""), "task": ss.task,
             "target": target_state.current_or_default(), "runs": tuple(session.runs())}
    token = ss.token

    def data() -> bytes:
        raw = files.session_bytes(**parts)
        log_event("export", session=token, kind="session", bytes=len(raw))
        return raw

    return data, files.session_file_name(parts["table_name"])


def open_uploaded() -> None:
    """The uploader's ``on_change``: open the session file just uploaded (before the page is drawn, so every widget
    is drawn afresh from the file's session), and keep what became of it for :func:`opened_note`."""
    ss = state.current()
    up = ss.open_session_file
    if up is None:
        return
    try:
        note = state.JobNote(state.JobState.DONE, open_file(up))
    except Exception as e:  # noqa: BLE001 - a refusal (or a surprise) is one line on the page; the session is kept
        note = state.JobNote(state.JobState.FAILED, text.error_text(e) + " This session is unchanged.")
    ss.session_file_note = (note, _table_id())


def opened_note():
    """What the last session file opened did (a :class:`~.server.state.JobNote`), while the session holds the table it
    left (the file's, or after a refusal the one it kept): on every run of the Data page, not only the first (a rerun
    right after the opening must not take the sentence away before it is read), until another table is used or
    another file opened; ``None`` otherwise."""
    ss = state.current()
    kept = ss.get(state.Session.session_file_note, None)
    if kept is None:
        return None
    note, table_id = kept
    if table_id != _table_id():
        ss.pop(state.Session.session_file_note)
        return None
    return note


def show_note(slot) -> None:
    """Draw :func:`opened_note`'s sentence in ``slot`` (an ``st.empty``), or empty it where there is none (any more)."""
    opened = opened_note()
    if opened is None:
        slot.empty()
    elif opened.kind == state.JobState.DONE:
        slot.success(text.literal(opened.text), icon=":material/folder_open:")
    else:
        slot.error(text.literal(opened.text), icon=":material/warning:")


def _table_id() -> str:
    return str(state.current().get(state.Session.table_id, "") or "")


def open_file(up) -> str:
    """Open the uploaded session file ``up``: refusals are one-line :class:`fairdash.errors.FairDashError` (not a
    session file, altered, too large, too new, a table over the memory budget) and change nothing; a file opened
    replaces the session's work and returns the sentence to show."""
    started, token = time.monotonic(), state.current().token
    try:
        check_memory("uploads")  # the server's guard, before a byte is parsed
        raw = up.getvalue()
        saved = files.load_session(raw, name=up.name, watch=lambda: check_memory("uploads"))
        runs = restored_runs(saved)
    except Exception as e:
        log_event("refusal", session=token, reason=upload.refusal_reason(e), kind="session_file", bytes=up.size,
                  seconds=round(time.monotonic() - started, 3))
        raise
    _replace_session(saved, runs, f"upload:{hashlib.sha256(raw).hexdigest()[:16]}")
    log_event("upload", session=token, kind="session_file", bytes=up.size, rows=len(saved.table),
              columns=saved.table.shape[1], seconds=round(time.monotonic() - started, 3))
    n = len(runs)
    return (f"Opened {up.name}: the table {saved.table_name} ({len(saved.table):,} rows), its task and target, and "
            f"{n} run{'s' if n != 1 else ''}" + (f" (Run {', '.join(str(r.number) for r in runs)})" if n else "")
            + f", saved {saved.created[:16].replace('T', ' ')} UTC by FairDash {saved.fairdash_version}.")


def _replace_session(saved, runs, table_id: str) -> None:
    """This session's work becomes the file's: every key but :data:`KEPT_ON_OPEN` dropped, then the table and task
    (``workspace.set_task``), the target and the runs set as they were saved."""
    ss = state.current()
    ss.drop(k for k in ss.keys() if k not in KEPT_ON_OPEN)
    workspace.set_task(saved.table, table_id, saved.table_name, saved.task.spec, task=saved.task)
    ss.table_desc = saved.table_description
    ss.target = saved.target
    ss.runs = list(runs)
    if runs:
        ss.run = runs[-1]
