"""Dashboard sessions kept on the server, one per owner, so that a reload returns to the same table,
task, target, run history and running training; and snapshots, the one way to share a session.

**The address is the owner's.** A session lives under an unguessable token (in the page's URL) and
belongs to the browser that made it: the store keeps a one-way hash of that browser's id (a random
value in a cookie, see ``fairdash.app.server.session``). :meth:`SessionStore.open` answers a token with
``"own"`` (the same browser: a reload, a second tab: the same session, not a copy), ``"foreign"``
(another browser holds the address: nothing of the session is given), ``"deleted"`` (its owner pressed
Forget), ``"restarted"`` (a token of an earlier server process: sessions live in memory only) or
``"unknown"`` (never existed, or aged out). A session is one entry, whatever the number of reloads or
tabs, and is charged once.

**A share is a snapshot.** :meth:`SessionStore.snapshot` freezes a copy of a session's state under a
new id; :meth:`SessionStore.open_snapshot` gives the opener a *copy* of that snapshot to start their own
session from. Neither is connected to the owner's later work or jobs.

**Forget means forgotten.** :meth:`SessionStore.forget` deletes a session and every snapshot made from it
at once, and leaves a tombstone under each of their ids, so every address and snapshot link says that
the owner deleted it, and a stale tab cannot save the session back: :meth:`SessionStore.keep` answers it
``"deleted"`` (never ``"no_room"``), so the tab drops what it holds and says why.

The store is bounded by memory and by age, never by a count that newcomers could fill:

- each saved state is measured (:func:`estimate_bytes`; objects shared by every session, such as the
  bundled samples, count once, as nothing; a snapshot is charged what it holds beyond its session); while
  the total would exceed ``max_bytes`` a save is *not kept* (:meth:`SessionStore.save` says so) instead of
  pushing out someone else's session;
- a state untouched for ``max_age_s`` (a day) is forgotten, unless its session is live: one of whose
  ``owner`` objects (a marker in a browser session's state) still exists.
"""
from __future__ import annotations

import hashlib
import re
import secrets
import string
import sys
import threading
import time
import types
import weakref
from dataclasses import dataclass, field

_OLD_TOKEN = re.compile(r"^[A-Za-z0-9_-]{22}$")  # the format before sessions carried their server's boot id
_TOKEN = re.compile(r"^[A-Za-z0-9]{4}[A-Za-z0-9_-]{22}$")
ENTRY_BYTES = 16 * 1024  # what any saved state costs besides its contents (dicts, small values)
MAX_TOMBSTONES = 100_000  # ids of deleted sessions and snapshots remembered (the oldest go first)
# what :meth:`SessionStore.keep` answers
KEPT, DELETED, FOREIGN, NO_ROOM = "kept", "deleted", "foreign", "no_room"


def estimate_bytes(obj, skip=frozenset(), _seen=None, _depth=0) -> int:
    """A cheap estimate of the memory ``obj`` holds: arrays and tensors by their ``nbytes``, tables by their
    columns (text columns from a sample of their values), containers and plain objects by their parts.
    Objects whose ``id`` is in ``skip`` (shared by every session) and objects met before count nothing."""
    seen = set() if _seen is None else _seen
    if id(obj) in seen or id(obj) in skip:
        return 0
    seen.add(id(obj))
    if obj is None or isinstance(obj, (bool, int, float, complex)):
        return 0
    if isinstance(obj, (str, bytes, bytearray)):
        return len(obj)
    if hasattr(obj, "memory_usage") and hasattr(obj, "dtypes"):  # pandas DataFrame / Series
        return _frame_bytes(obj)
    nbytes = getattr(obj, "nbytes", None)  # numpy arrays, torch tensors
    if isinstance(nbytes, int):
        return nbytes
    if _depth >= 6 or isinstance(obj, (type, types.ModuleType, types.FunctionType, types.MethodType)):
        return 64
    parts = ()
    if isinstance(obj, dict):
        parts = [*obj.keys(), *obj.values()]
    elif isinstance(obj, (list, tuple, set, frozenset)):
        parts = obj
    elif hasattr(obj, "__dict__"):
        parts = vars(obj).values()
    elif hasattr(obj, "__slots__"):
        parts = [getattr(obj, a, None) for a in obj.__slots__]
    return sys.getsizeof(obj, 64) + sum(estimate_bytes(p, skip, seen, _depth + 1) for p in parts)


def _frame_bytes(frame) -> int:
    import pandas as pd

    frame = frame.to_frame() if isinstance(frame, pd.Series) else frame
    total = int(frame.memory_usage(index=True, deep=False).sum())
    for name in frame.columns[frame.dtypes.to_numpy() == object]:  # noqa: E721 (dtypes compared one by one)
        col = frame[name]
        if len(col):
            sample = col.iloc[:: max(1, len(col) // 200)]
            total += int(sum(sys.getsizeof(v) for v in sample) / len(sample) * len(col))
    return total


def browser_hash(browser_id: str | None) -> str | None:
    """The one-way hash of a browser's id that the store keeps (never the id itself)."""
    return hashlib.sha256(browser_id.encode()).hexdigest() if browser_id else None


def copy_containers(state: dict) -> dict:
    """A copy of ``state`` whose lists, dicts and sets are copies too, so that the copy's owner's changes (a
    new run, a kept widget value) never reach the original."""
    return {k: (type(v)(v) if isinstance(v, (list, dict, set)) else v) for k, v in state.items()}


@dataclass
class _Entry:
    state: dict
    touched: float
    nbytes: int
    browser: str | None = None  # browser_hash of the owner's browser (sessions only)
    owners: weakref.WeakSet = field(default_factory=weakref.WeakSet)
    version: int = 0
    snapshots: set = field(default_factory=set)  # ids of the snapshots made from this session
    origin: str | None = None  # the session a snapshot was made from

    def live(self) -> bool:
        return len(self.owners) > 0


@dataclass(frozen=True)
class Opened:
    """What an address opened: ``kind`` is ``own``, ``foreign``, ``deleted``, ``restarted``, ``unknown`` or
    ``invalid``; ``state`` is given for ``own`` only."""
    kind: str
    state: dict | None = None
    version: int = 0


DEFAULT_MAX_BYTES = 2 * 1024**3  # memory for saved sessions (FAIRDASH_SESSIONS_MB: the README's default 2048 MB)


class SessionStore:
    def __init__(self, max_bytes: int = DEFAULT_MAX_BYTES, max_age_s: float = 24 * 3600):
        self.max_bytes = int(max_bytes)
        self.max_age_s = float(max_age_s)
        # this server process's id: every token it makes starts with it, so a token of an earlier process is
        # told apart from one that aged out ("the server restarted")
        self.boot = "".join(secrets.choice(string.ascii_letters + string.digits) for _ in range(4))
        self._items: dict[str, _Entry] = {}  # sessions and snapshots (their ids never collide: 128 random bits)
        self._sizes: dict[str, dict] = {}  # id -> {key: (id, len, bytes)}: unchanged values are not measured again
        self._shared: dict[int, object] = {}  # id -> object shared by every session (kept alive so ids stay unique)
        self._deleted: dict[str, float] = {}  # tombstones: ids whose owner pressed Forget
        self._lock = threading.RLock()

    # ---- tokens ------------------------------------------------------------------------------------
    def new_token(self) -> str:
        """A fresh id: this process's boot id and 16 random bytes, URL-safe (26 characters)."""
        return self.boot + secrets.token_urlsafe(16)

    @staticmethod
    def valid(token) -> bool:
        return isinstance(token, str) and bool(_TOKEN.match(token) or _OLD_TOKEN.match(token))

    def _why_missing(self, token: str) -> str:
        if token in self._deleted:
            return "deleted"
        if not token.startswith(self.boot) or len(token) != 26:
            return "restarted"
        return "unknown"

    # ---- sessions ----------------------------------------------------------------------------------
    def share(self, *objects) -> None:
        """Mark ``objects`` as shared by every session (a bundled sample's table and task): a state that
        holds them is not charged for them."""
        with self._lock:
            for o in objects:
                self._shared[id(o)] = o

    def save(self, token: str, state: dict, owner=None, browser: str | None = None) -> bool:
        """:meth:`keep`, answered ``True`` (kept) or ``False`` (not kept, for any of its reasons)."""
        return self.keep(token, state, owner, browser) == KEPT

    def keep(self, token: str, state: dict, owner=None, browser: str | None = None) -> str:
        """Keep ``state`` under ``token``, the session of the browser whose id is ``browser``; ``owner`` (any
        object that lives exactly as long as a browser session, e.g. a marker in its Streamlit state) makes the
        entry live. Answers :data:`KEPT`, or why not: :data:`DELETED` (its owner pressed Forget: a stale tab
        never brings it back), :data:`FOREIGN` (``token`` is another browser's session) or :data:`NO_ROOM`
        (the store has no room for it: nothing is kept under ``token`` and no other session loses anything)."""
        if not self.valid(token):
            raise ValueError("not a session token")
        with self._lock:
            if token in self._deleted:
                return DELETED
            old = self._items.get(token)
            hashed = browser_hash(browser)
            if old is not None and old.browser is not None and hashed != old.browser:
                return FOREIGN
            nbytes = self._measure(token, state)
            self._forget_old()
            self._items.pop(token, None)
            if self.nbytes + nbytes > self.max_bytes:  # the last state that fitted stays, if any
                if old is not None:
                    self._items[token] = old
                    self._sizes.pop(token, None)  # (measured afresh at the next save)
                else:
                    self._sizes.pop(token, None)
                return NO_ROOM
            entry = _Entry(dict(state), time.monotonic(), nbytes, hashed or (old.browser if old else None))
            if old is not None:
                entry.owners, entry.version, entry.snapshots = old.owners, old.version + 1, old.snapshots
            if owner is not None:
                entry.owners.add(owner)
            self._items[token] = entry
            return KEPT

    def open(self, token, browser: str | None) -> Opened:
        """What ``token`` opens for the browser whose id is ``browser`` (see the module's docstring)."""
        if not self.valid(token):
            return Opened("invalid")
        with self._lock:
            self._forget_old()
            item = self._items.get(token)
            if item is None or item.origin is not None:  # (a snapshot's id is not a session's address)
                return Opened(self._why_missing(token))
            if item.browser is None or browser_hash(browser) != item.browser:
                return Opened("foreign")
            item.touched = time.monotonic()
            return Opened("own", dict(item.state), item.version)

    def version(self, token) -> int | None:
        """How many times the session was saved (tabs of one session reload from it when it moved on), or
        ``None`` when it is gone (deleted, or never kept)."""
        with self._lock:
            item = self._items.get(token)
            return None if item is None else item.version

    def deleted(self, token) -> bool:
        """Whether ``token``'s owner pressed Forget (its tabs start afresh on their next run)."""
        with self._lock:
            return token in self._deleted

    def load(self, token) -> dict | None:
        """The state saved under ``token`` (a copy of the mapping), or ``None``; for the store's own users and
        tests, not for opening an address (that is :meth:`open`, which checks the browser)."""
        if not self.valid(token):
            return None
        with self._lock:
            self._forget_old()
            item = self._items.get(token)
            if item is None:
                return None
            item.touched = time.monotonic()
            return dict(item.state)

    # ---- snapshots ---------------------------------------------------------------------------------
    def snapshot(self, token: str, keys) -> str | None:
        """Freeze a copy of the session ``token``'s saved ``keys`` under a new id (the share link's), or
        ``None`` when the session is not kept. The snapshot is charged what it holds beyond its session."""
        with self._lock:
            item = self._items.get(token)
            if item is None or item.origin is not None:
                return None
            state = copy_containers({k: v for k, v in item.state.items() if k in keys})
            held = {id(v) for v in item.state.values()}
            for v in item.state.values():
                if isinstance(v, (list, tuple, set)):
                    held.update(id(x) for x in v)
                elif isinstance(v, dict):
                    held.update(id(x) for x in v.values())
            snap = self.new_token()
            nbytes = ENTRY_BYTES + sum(estimate_bytes(v, self._shared.keys() | held) for v in state.values())
            if self.nbytes + nbytes > self.max_bytes:
                return None
            self._items[snap] = _Entry(state, time.monotonic(), nbytes, origin=token)
            item.snapshots.add(snap)
            return snap

    def open_snapshot(self, snap) -> Opened:
        """A snapshot to start a session from: ``own`` with a copy of its state (the opener's to change), or
        why there is none (``deleted``, ``restarted``, ``unknown``, ``invalid``)."""
        if not self.valid(snap):
            return Opened("invalid")
        with self._lock:
            self._forget_old()
            item = self._items.get(snap)
            if item is None or item.origin is None:
                return Opened(self._why_missing(snap))
            item.touched = time.monotonic()
            return Opened("own", copy_containers(item.state))

    # ---- forgetting --------------------------------------------------------------------------------
    def forget(self, token) -> list[str]:
        """Delete the session ``token`` and every snapshot made from it, now; their ids answer ``deleted``
        from then on. Returns the ids deleted."""
        with self._lock:
            item = self._items.get(token)
            gone = [token, *(item.snapshots if item is not None else ())]
            for t in gone:
                self._drop(t)
                self._deleted[t] = time.monotonic()
            while len(self._deleted) > MAX_TOMBSTONES:
                self._deleted.pop(next(iter(self._deleted)))
            return gone

    def live(self, token) -> bool:
        with self._lock:
            item = self._items.get(token)
            return item is not None and item.live()

    @property
    def nbytes(self) -> int:
        """The estimated memory held by the saved states."""
        return sum(e.nbytes for e in self._items.values())

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, token) -> bool:
        return token in self._items

    def _drop(self, token) -> None:
        self._items.pop(token, None)
        self._sizes.pop(token, None)

    def _measure(self, token: str, state: dict) -> int:
        memo = self._sizes.setdefault(token, {})
        total = ENTRY_BYTES
        for k, v in state.items():
            try:  # an estimate: an object that cannot be measured counts as small, never stops a save
                sig = (id(v), len(v) if hasattr(v, "__len__") else None)
                if k not in memo or memo[k][:2] != sig:
                    memo[k] = (*sig, estimate_bytes(v, self._shared.keys()))
            except Exception:  # noqa: BLE001
                memo[k] = (id(v), None, 64)
            total += memo[k][2]
        for k in set(memo) - set(state):
            del memo[k]
        return total

    def _forget_old(self) -> None:
        now = time.monotonic()
        for token in [t for t, e in self._items.items() if now - e.touched > self.max_age_s and not e.live()]:
            self._drop(token)  # (a snapshot ages by its own last opening; it outlives its session's age-out)
