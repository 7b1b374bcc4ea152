"""The server's event log: one JSON line per event, never the data.

``log_event(event, session=token, **fields)`` writes one line to the ``"fairdash.events"`` logger (INFO)
and, when the environment variable ``FAIRDASH_EVENT_LOG`` names a file, appends it there too (one
``write`` per line under a lock, so lines from many threads never interleave; an unwritable file is
warned once on the logger and never raises into the caller). A line reads::

    {"ts": "2026-11-26T18:55:01.123Z", "event": "training_end", "session": "3f7a1c0b9e2d",
     "model": "fair-lr", "seconds": 4.2, "rows": 6172, "outcome": "ok"}

``ts`` is UTC (ISO 8601, milliseconds). ``session`` is the first 12 hex digits of the sha256 of the
session token: stable, so that a team can follow one session across its lines and across a restart,
and one-way, so that a line never gives the token (which opens the session's link) away. ``None`` when
the event has no session (``server_start``).

**Never data, never column names.** Fields are an allow-list (:data:`FIELDS`): numbers (sizes as
``bytes``, ``rows``, ``columns``; durations as ``seconds``; counts), booleans, and words that are
FairDash's own (``kind``, ``reason``, ``model``, ``format``, ``outcome``, ...), whose strings must also
look like a short code (:data:`WORD`: lower case, no spaces, at most 40 characters). ``user`` (the
signed-in user, where sign-in is on) is always written hashed like ``session``: whatever a caller passes
(an id, by mistake an email), the line holds only the first 12 hex digits of its sha256. Anything else is
dropped, not written: a field the list does not know (its name could be a column's) is only counted in
``"dropped_unknown"``; a known field with a value of the wrong kind (a string for ``rows``, a sentence
for ``reason``) is named in ``"dropped"``. An event name outside :data:`EVENTS` is written as
``"unknown"`` with ``"event"`` in ``"dropped"``. So a slip in a caller loses a field, never leaks one.

The events the dashboard logs, and their usual fields:

===================  =====================================================================================
``server_start``     the server started (its first session): ``bytes`` (the sessions' memory budget)
``insecure_settings`` a setting switches a protection off (once per server process): ``reason`` (``xsrf_off``,
                     ``cors_off``, ``upload_cap``, joined by ``+``), ``outcome`` (``refused``, or ``served`` with
                     ``FAIRDASH_ALLOW_INSECURE=1``)
``upload``           a file was read: ``bytes``, ``rows``, ``columns``, ``seconds``
``confirm``          the task was confirmed: ``rows``, ``columns``, ``kind`` (sample or upload), ``groups``
``training_start``   a run began (left the queue): ``queue_seconds`` (how long it waited for a place)
``training_end``     it finished: ``seconds``, ``runs``, ``cached`` (how many fits came from the cache)
``training_cancel``  it was cancelled: ``seconds``, ``queue_seconds``, ``reason`` (``closed_tab``, or none:
                     Cancel or Forget)
``training_failed``  it failed: ``seconds``, ``reason`` (a short code), ``outcome`` (refused or error)
``export``           a download: ``kind`` (model, report, results, config), ``bytes``
``forget``           the user forgot the session's data: ``snapshots`` (deleted with it),
                     ``training_cancelled``
``snapshot``         a snapshot link was made of the session
``snapshot_opened``  a snapshot link was opened (``session`` is the opener's new session)
``sign_in``          a user signed in (sign-in on: fairdash/app/server/signin.py), once per browser session: ``user``
``sign_out``         the user signed out: ``user``
``refusal``          a request was refused: ``reason`` (``table_budget``, ``memory_guard``, ``queue``, ...),
                     ``kind`` (what was refused: upload, training, session, ...), ``bytes``, ``rows``
===================  =====================================================================================
"""
from __future__ import annotations

import hashlib
import json
import logging
import math
import numbers
import os
import re
import threading
from datetime import datetime, timezone

EVENT_LOG_ENV = "FAIRDASH_EVENT_LOG"
LOGGER_NAME = "fairdash.events"
logger = logging.getLogger(LOGGER_NAME)

EVENTS = frozenset({"insecure_settings", "server_start", "upload", "confirm", "training_start", "training_end",
                    "training_cancel", "training_failed", "export", "forget", "snapshot", "snapshot_opened", "refusal",
                    "sign_in", "sign_out"})

NUMBERS = frozenset({"bytes", "rows", "columns", "seconds", "models", "targets", "seeds", "runs", "groups",
                     "cached", "workers", "limit", "queue", "memory_mb", "queue_seconds", "snapshots"})
FLAGS = frozenset({"sample", "gpu", "dask", "training_cancelled"})
WORDS = frozenset({"kind", "reason", "model", "format", "outcome", "criterion", "decision", "device", "version"})
FIELDS = NUMBERS | FLAGS | WORDS
"""Every field a line may carry: numbers (not booleans), booleans, FairDash's own words (or a number)."""

WORD = re.compile(r"[a-z0-9][a-z0-9_.+-]{0,39}")
"""What a word field's string must look like (a registry name, a format, a reason code, a version)."""

_LOCK = threading.Lock()
_WARNED: set = set()


def session_id(token) -> str | None:
    """The session as the log names it: sha256 of the token, first 12 hex digits (stable, one-way)."""
    if token is None:
        return None
    return hashlib.sha256(str(token).encode("utf-8", "surrogatepass")).hexdigest()[:12]


_REFUSED = object()


def _number(value):
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return _REFUSED
    if isinstance(value, numbers.Integral):
        return int(value)
    value = float(value)
    return value if math.isfinite(value) else None


def _clean(name: str, value):
    """The value as it may be written, or ``_REFUSED``."""
    if value is None:
        return None
    if name in NUMBERS:
        return _number(value)
    if name in FLAGS:
        return bool(value) if type(value).__name__ in ("bool", "bool_") else _REFUSED  # numpy's bool too
    if isinstance(value, str):  # a word field
        return value if WORD.fullmatch(value) else _REFUSED
    return _number(value)  # a word field may carry a number, nothing else


def _utc_now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _append(path: str, line: str) -> None:
    """``line`` appended to ``path``; an unwritable path is warned once (per path) and never raises."""
    try:
        with _LOCK, open(path, "a", encoding="utf-8") as f:
            f.write(line + "\n")  # one short write: whole lines, also beside other processes (O_APPEND)
    except (OSError, ValueError) as e:  # no such folder, no permission, a full disk, a directory, a NUL
        with _LOCK:
            first = path not in _WARNED
            _WARNED.add(path)
        if first:
            reason = getattr(e, "strerror", None) or type(e).__name__
            logger.warning("The event log %s=%s cannot be written (%s): events go to the %r logger only.",
                           EVENT_LOG_ENV, path, reason, LOGGER_NAME)


def log_event(event: str, *, session: str | None = None, **fields) -> dict:
    """Log one event (see the module's docstring): returns the record as written."""
    record: dict = {"ts": _utc_now()}
    dropped: list[str] = []
    if event in EVENTS:
        record["event"] = event
    else:
        record["event"] = "unknown"
        dropped.append("event")
    record["session"] = session_id(session)
    unknown = 0
    for name, value in fields.items():
        if name == "user":  # never the user as given (an email, a name): a one-way hash
            record["user"] = session_id(value)
            continue
        if name not in FIELDS:
            unknown += 1  # its name is not written: it could be a column's
            continue
        clean = _clean(name, value)
        if clean is _REFUSED:
            dropped.append(name)
        else:
            record[name] = clean
    if dropped:
        record["dropped"] = dropped
    if unknown:
        record["dropped_unknown"] = unknown
    line = json.dumps(record, separators=(",", ":"), allow_nan=False, ensure_ascii=True)
    logger.info(line)
    path = os.environ.get(EVENT_LOG_ENV)
    if path:
        _append(path, line)
    return record
