"""Dashboard sessions kept on the server by an unguessable token, so that a reload or a shared link
returns to the same table, task, target and run history.

A session's state lives in the server process (its table, task, choices and trained runs: plain
Python objects, never written to disk). The browser only holds the token, in the page's URL. Nothing
of one session is reachable from another without its token: tokens are 128-bit random values, and the
store answers only the exact token.

A link cannot harm its owner: opening one (:meth:`SessionStore.fork`) gives the opener a *copy* under a
new token, so only the browser session that made a token ever saves into it.

The store is bounded by memory and by age, never by a count that newcomers could fill:

- each saved state is measured (:func:`estimate_bytes`; objects shared by every session, such as the
  bundled samples, count once, as nothing); while the total would exceed ``max_bytes`` a save is *not
  kept* (:meth:`SessionStore.save` says so) instead of pushing out someone else's link;
- a state untouched for ``max_age_s`` (a day) is forgotten, unless its session is live: one whose
  ``owner`` object (a marker in the browser session's state) still exists.
"""
from __future__ import annotations

import re
import secrets
import sys
import threading
import time
import types
import weakref
from dataclasses import dataclass

_TOKEN = re.compile(r"^[A-Za-z0-9_-]{22}$")
ENTRY_BYTES = 16 * 1024  # what any saved state costs besides its contents (dicts, small values)


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
    for name in frame.columns[frame.dtypes.to_numpy() == object]:
        col = frame[name]
        if len(col):
            sample = col.iloc[:: max(1, len(col) // 200)]
            total += int(sum(sys.getsizeof(v) for v in sample) / len(sample) * len(col))
    return total


@dataclass
class _Entry:
    state: dict
    touched: float
    nbytes: int
    owner: weakref.ref | None = None

    def live(self) -> bool:
        return self.owner is not None and self.owner() is not None


class SessionStore:
    def __init__(self, max_bytes: int = 2 * 1024**3, max_age_s: float = 24 * 3600):
        self.max_bytes = int(max_bytes)
        self.max_age_s = float(max_age_s)
        self._items: dict[str, _Entry] = {}
        self._sizes: dict[str, dict] = {}  # token -> {key: (id, len, bytes)}: unchanged values are not measured again
        self._shared: dict[int, object] = {}  # id -> object shared by every session (kept alive so ids stay unique)
        self._lock = threading.Lock()

    @staticmethod
    def new_token() -> str:
        """A fresh token: 16 random bytes, URL-safe (22 characters)."""
        return secrets.token_urlsafe(16)

    @staticmethod
    def valid(token) -> bool:
        return isinstance(token, str) and bool(_TOKEN.match(token))

    def share(self, *objects) -> None:
        """Mark ``objects`` as shared by every session (a bundled sample's table and task): a state that
        holds them is not charged for them."""
        with self._lock:
            for o in objects:
                self._shared[id(o)] = o

    def save(self, token: str, state: dict, owner=None) -> bool:
        """Keep ``state`` under ``token``; ``owner`` (any object that lives exactly as long as the browser
        session, e.g. a marker in its Streamlit state) makes the entry live. Returns ``False`` when the
        store has no room for it: then nothing is kept under ``token`` and no other session loses anything."""
        if not self.valid(token):
            raise ValueError("not a session token")
        with self._lock:
            nbytes = self._measure(token, state)
            self._forget_old()
            old = self._items.pop(token, None)
            if self.nbytes + nbytes > self.max_bytes:
                self._sizes.pop(token, None)
                return False
            ref = weakref.ref(owner) if owner is not None else (old.owner if old is not None else None)
            self._items[token] = _Entry(dict(state), time.monotonic(), nbytes, ref)
            return True

    def load(self, token) -> dict | None:
        """The state saved under ``token`` (a copy of the mapping), or ``None``."""
        if not self.valid(token):
            return None
        with self._lock:
            self._forget_old()
            item = self._items.get(token)
            if item is None:
                return None
            item.touched = time.monotonic()
            return dict(item.state)

    def fork(self, token) -> tuple[str, dict] | None:
        """Open a link: a new token and a copy of the state saved under ``token`` (``None`` if there is none).
        Lists, dicts and sets in the state are copied too, so the opener's changes (a new run, a kept widget
        value) never reach the original, which stays as its owner left it."""
        state = self.load(token)
        if state is None:
            return None
        copied = {k: (type(v)(v) if isinstance(v, (list, dict, set)) else v) for k, v in state.items()}
        return self.new_token(), copied

    def forget(self, token) -> None:
        """Delete the state saved under ``token`` now (the user's "Forget this session")."""
        with self._lock:
            self._items.pop(token, None)
            self._sizes.pop(token, None)

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
            del self._items[token]
            self._sizes.pop(token, None)
