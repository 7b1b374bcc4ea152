"""The guard around Streamlit's upload endpoint (``PUT /_stcore/upload_file/<session>/<file>``): bytes that reach the
server by that door count against the same limits as the pages' (issue 46, item 3).

Streamlit offers a way in for this and we take it: ``streamlit run app.py`` serves an ``st.App`` where app.py
makes one, with this class as its first ASGI middleware (:func:`middleware`). Each upload request is answered here,
before Streamlit reads a byte of its body, with one line and a status where:

- the server runs with a protection switched off (:func:`fairdash.app.server.limits.insecure_settings`) and the team
  did not choose it (``FAIRDASH_ALLOW_INSECURE``): 403, as the pages refuse to serve (:func:`fairdash.app.views.
  refuse_insecure_server`);
- sign-in is on (:func:`fairdash.app.server.signin.configured`) and the request carries no sign-in cookie this
  server issued (its signature checked as Streamlit checks it on the page's connection, :func:`_signed_in`): 401 (the
  pages draw nothing but the sign-in before it either);
- it does not say its length (``Content-Length``), or says more than the upload cap (the smaller of FairDash's
  200 MB and ``server.maxUploadSize``): 411 / 413;
- the session would hold more than :data:`MAX_SESSION_FILES` files or :data:`SESSION_CAP_FACTOR` times the upload
  cap in bytes (counted from the PUTs this guard let through, less the DELETEs; Streamlit keeps a session's files
  until they are deleted or the session ends): 429;
- the server is above its memory guard (``FAIRDASH_MEMORY_GUARD_MB``): 503.

Each refusal is a ``refusal`` event (``kind`` upload_endpoint). Everything else passes to Streamlit unchanged, and
stays in memory: Starlette's form parser, which Streamlit's handler uses, writes a file part larger than
``MultiPartParser.spool_max_size`` (1 MB by default) to an unnamed temporary file, so :func:`middleware` raises that
size to the largest upload this guard lets through (:func:`keep_uploads_in_memory`). An upload's bytes never reach
the disk; they count against the session's share here and against the server's memory guard.
"""
from __future__ import annotations

import threading

from ...data.reading.read import MAX_BYTES
from ...errors import FairDashError
from ...events import log_event
from . import limits, signin

UPLOAD_PATH = "/_stcore/upload_file/"
MAX_SESSION_FILES = 4  # the app's three uploaders, and one file being replaced
SESSION_CAP_FACTOR = 2  # a session holds at most twice the upload cap in uploaded bytes
FRAMING_BYTES = 1 << 20  # a multipart form's framing around the file, over the cap (Streamlit allows as much)
SIGN_IN_COOKIE = "_streamlit_user"  # the cookie Streamlit's sign-in (st.login) sets; tests check the name
SIGN_IN_MAX_AGE_S = 31 * 86400  # it lives 30 days; Streamlit accepts it a day longer, and so does this guard


def _get_option(name: str):
    import streamlit as st  # lazy: Streamlit's options are read per request, as the pages read them

    return st.get_option(name)


def middleware() -> list:
    """The middleware ``st.App`` takes (app.py): this guard, first."""
    from starlette.middleware import Middleware  # lazy: only the process that serves the app needs Starlette

    keep_uploads_in_memory()
    return [Middleware(UploadGuard)]


def keep_uploads_in_memory() -> int:
    """Raise Starlette's spool size (``MultiPartParser.spool_max_size``, its documented setting) to the largest
    upload the guard lets through, so that no accepted upload is written to a temporary file; the size set."""
    from starlette.formparsers import MultiPartParser  # lazy: only the process that serves the app parses forms

    largest = int(MAX_BYTES) + FRAMING_BYTES
    if not hasattr(MultiPartParser, "spool_max_size"):  # a Starlette that moved it: said, and caught by the tests
        log_event("refusal", reason="spool_setting_missing", kind="upload_endpoint", bytes=0)
        return 0
    MultiPartParser.spool_max_size = max(int(MultiPartParser.spool_max_size), largest)
    return MultiPartParser.spool_max_size


class UploadGuard:
    """ASGI middleware: Streamlit's upload endpoint inside FairDash's limits (see the module's words)."""

    def __init__(self, app):
        self.app = app
        self._lock = threading.Lock()
        self._held: dict[str, dict[str, int]] = {}  # Streamlit session -> {file id: bytes}

    async def __call__(self, scope, receive, send):
        path = scope.get("path", "") if scope.get("type") == "http" else ""
        at = path.find(UPLOAD_PATH)
        if at < 0 or scope.get("method") not in ("PUT", "DELETE"):
            return await self.app(scope, receive, send)
        session, _, file_id = path[at + len(UPLOAD_PATH):].partition("/")
        if scope["method"] == "DELETE":
            self._release(session, file_id)
            return await self.app(scope, receive, send)
        refused = self.refusal(_headers(scope), session, file_id)
        if refused is not None:
            status, words, reason, size = refused
            log_event("refusal", reason=reason, kind="upload_endpoint", bytes=size)
            return await _answer(send, status, words)
        status = await self._pass(scope, receive, send)
        if not 200 <= status < 300:
            self._release(session, file_id)

    def _release(self, session: str, file_id: str) -> None:
        """A file no longer held (deleted, or refused by Streamlit); a session holding none is forgotten."""
        with self._lock:
            held = self._held.get(session, {})
            held.pop(file_id, None)
            if not held:
                self._held.pop(session, None)

    async def _pass(self, scope, receive, send) -> int:
        seen = {"status": 500}

        async def watching(message):
            if message.get("type") == "http.response.start":
                seen["status"] = int(message.get("status", 500))
            await send(message)

        await self.app(scope, receive, watching)
        return seen["status"]

    def refusal(self, headers: dict, session: str, file_id: str) -> tuple[int, str, str, int] | None:
        """``(status, words, reason, bytes)`` where this upload is refused, else ``None`` (its bytes then count
        against its session until a DELETE or a refusal by Streamlit)."""
        found = limits.insecure_settings(_get_option, MAX_BYTES / 2**20)
        if found and not limits.insecure_allowed():
            return 403, ("This server refuses uploads: " + "; ".join(w for _, w in found) + "."), "insecure", 0
        if signin.configured() and not _signed_in(headers.get("cookie", "")):
            return 401, "Sign in first: this server is open to its team only.", "signin", 0
        try:
            size = int(headers.get("content-length", ""))
        except ValueError:
            return 411, "An upload must say its length (Content-Length).", "no_length", 0
        cap = int(min(MAX_BYTES, float(_get_option("server.maxUploadSize") or 0) * 2**20))  # the smaller cap
        if size < 0 or size > cap + FRAMING_BYTES:
            return 413, f"An upload is at most {cap / 2**20:g} MB.", "upload_cap", max(size, 0)
        try:
            limits.check_memory("uploads")
        except FairDashError as e:
            return 503, str(e), "memory_guard", size
        with self._lock:
            held = self._held.setdefault(session, {})
            others = {k: v for k, v in held.items() if k != file_id}
            if len(others) + 1 > MAX_SESSION_FILES or sum(others.values()) + size > SESSION_CAP_FACTOR * cap:
                return 429, (f"This session already holds {len(others)} uploaded files "
                             f"({sum(others.values()) / 2**20:.0f} MB); remove one before uploading another."), \
                    "session_uploads", size
            held[file_id] = size
        return None

    def held_bytes(self, session: str) -> int:
        """The bytes this guard counts as held by a Streamlit session's uploads."""
        with self._lock:
            return sum(self._held.get(session, {}).values())


def _headers(scope) -> dict:
    return {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}


def _signed_in(cookie_header: str) -> bool:
    """Whether the request carries a sign-in cookie this server issued and that has not expired: Streamlit signs
    it with ``itsdangerous`` (the sign-in's cookie secret, the cookie's name as salt) and checks it so on the page's
    own connection. A large cookie is split; its first part keeps the name and is signed like a whole one. A cookie
    made up, signed with another secret or expired is no sign-in."""
    from itsdangerous import BadData, URLSafeTimedSerializer  # lazy: only where sign-in is on
    from starlette.requests import Request  # lazy: only the process that serves the app needs Starlette

    value = Request({"type": "http", "headers": [(b"cookie", cookie_header.encode("latin-1"))]}).cookies.get(
        SIGN_IN_COOKIE)
    secret = signin.cookie_secret()
    if not value or not secret:
        return False
    try:
        URLSafeTimedSerializer(secret, salt=SIGN_IN_COOKIE).loads(value, max_age=SIGN_IN_MAX_AGE_S)
    except BadData:
        return False
    return True


async def _answer(send, status: int, words: str) -> None:
    body = words.encode("utf-8")
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"text/plain; charset=utf-8"),
                            (b"content-length", str(len(body)).encode("ascii"))]})
    await send({"type": "http.response.body", "body": body})
