"""Dashboard sessions kept on the server by an unguessable token, so that a reload or a shared link
returns to the same table, task, target and run history.

A session's state lives in the server process (its table, task, choices and trained runs: plain
Python objects, never written to disk). The browser only holds the token, in the page's URL. Nothing
of one session is reachable from another without its token: tokens are 128-bit random values, and
:meth:`SessionStore.load` answers only the exact token. The store is bounded, since a session may hold a
large uploaded table: the least recently used sessions beyond ``max_sessions`` (32), and any untouched
for ``max_age_s`` (a day), are forgotten; a live browser session keeps its own state regardless.
"""
from __future__ import annotations

import re
import secrets
import threading
import time
from collections import OrderedDict

_TOKEN = re.compile(r"^[A-Za-z0-9_-]{22}$")


class SessionStore:
    def __init__(self, max_sessions: int = 32, max_age_s: float = 24 * 3600):
        self.max_sessions = int(max_sessions)
        self.max_age_s = float(max_age_s)
        self._items: OrderedDict[str, tuple[float, dict]] = OrderedDict()
        self._lock = threading.Lock()

    @staticmethod
    def new_token() -> str:
        """A fresh token: 16 random bytes, URL-safe (22 characters)."""
        return secrets.token_urlsafe(16)

    @staticmethod
    def valid(token) -> bool:
        return isinstance(token, str) and bool(_TOKEN.match(token))

    def save(self, token: str, state: dict) -> None:
        if not self.valid(token):
            raise ValueError("not a session token")
        with self._lock:
            self._items[token] = (time.monotonic(), dict(state))
            self._items.move_to_end(token)
            self._forget_old()

    def load(self, token) -> dict | None:
        """The state saved under ``token`` (a copy of the mapping), or ``None``."""
        if not self.valid(token):
            return None
        with self._lock:
            self._forget_old()
            item = self._items.get(token)
            if item is None:
                return None
            self._items[token] = (time.monotonic(), item[1])
            self._items.move_to_end(token)
            return dict(item[1])

    def __len__(self) -> int:
        return len(self._items)

    def _forget_old(self) -> None:
        now = time.monotonic()
        while self._items and (len(self._items) > self.max_sessions
                               or now - next(iter(self._items.values()))[0] > self.max_age_s):
            self._items.popitem(last=False)
