"""Issue 46, item 3: Streamlit's upload endpoint inside FairDash's limits (fairdash/app/server/upload_guard.py).

The guard is ASGI middleware; here it wraps a stand-in for Streamlit's handler (which answers 204 and reads the
body), so every rule is checked without a server: the live wiring (``streamlit run app.py`` serving the ``st.App``
with the guard) is checked in tests/e2e/test_upload_endpoint.py."""
import asyncio
import tempfile

import pytest
from itsdangerous import TimestampSigner, URLSafeTimedSerializer
from starlette.requests import Request

from fairdash.app.server import limits, signin, upload_guard
from fairdash.app.server.upload_guard import SIGN_IN_COOKIE, UploadGuard
from fairdash.errors import FairDashError

MB = 2**20
SAFE = {"server.enableXsrfProtection": True, "server.enableCORS": True, "server.maxUploadSize": 2}


class Handler:
    """Streamlit's upload handler, as the guard sees it: reads the body, answers 204 (or ``status``)."""

    def __init__(self, status=204):
        self.status, self.calls = status, []

    async def __call__(self, scope, receive, send):
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        self.calls.append((scope["method"], scope["path"], len(body)))
        await send({"type": "http.response.start", "status": self.status, "headers": []})
        await send({"type": "http.response.body", "body": b""})


def request(guard, method, file_id, size=None, session="sess1", cookie="", body=None):
    """One request through the guard: ``(status, words)``."""
    headers = [(b"cookie", cookie.encode())]
    if size is not None:
        headers.append((b"content-length", str(size).encode()))
    scope = {"type": "http", "method": method, "path": f"/_stcore/upload_file/{session}/{file_id}",
             "headers": headers}
    sent, payload = [], body if body is not None else b"x" * min(size or 0, 4096)

    async def receive():
        return {"type": "http.request", "body": payload, "more_body": False}

    async def send(message):
        sent.append(message)

    asyncio.run(guard(scope, receive, send))
    start = next(m for m in sent if m["type"] == "http.response.start")
    words = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body").decode()
    return start["status"], words


@pytest.fixture
def options(monkeypatch):
    opts = dict(SAFE)
    monkeypatch.setattr(upload_guard, "_get_option", lambda name: opts.get(name))
    monkeypatch.setattr(signin, "configured", lambda: False)
    monkeypatch.setattr(limits, "check_memory", lambda action, *a, **k: None)
    monkeypatch.delenv(limits.ALLOW_INSECURE_ENV, raising=False)
    return opts


def test_a_session_holds_at_most_twice_the_cap_and_a_delete_frees_its_share(options):
    handler = Handler()
    guard = UploadGuard(handler)
    assert request(guard, "PUT", "a", int(1.9 * MB))[0] == 204
    assert request(guard, "PUT", "b", int(1.9 * MB))[0] == 204
    status, words = request(guard, "PUT", "c", int(1.9 * MB))
    assert status == 429 and "already holds 2 uploaded files" in words
    assert guard.held_bytes("sess1") == 2 * int(1.9 * MB)
    assert request(guard, "PUT", "c", int(1.9 * MB), session="sess2")[0] == 204  # another session: its own share
    assert request(guard, "DELETE", "a")[0] == 204
    assert request(guard, "PUT", "c", int(1.9 * MB))[0] == 204
    assert [c[0] for c in handler.calls] == ["PUT", "PUT", "PUT", "DELETE", "PUT"]  # the refused one never reached it


def test_at_most_four_files_a_session(options):
    guard = UploadGuard(Handler())
    assert [request(guard, "PUT", f"f{i}", 1000)[0] for i in range(6)] == [204, 204, 204, 204, 429, 429]
    assert request(guard, "PUT", "f0", 1000)[0] == 204  # the same file again replaces its own share


def test_an_upload_must_say_its_length_within_the_cap(options):
    guard = UploadGuard(Handler())
    assert request(guard, "PUT", "a", None)[0] == 411
    status, words = request(guard, "PUT", "a", 3 * MB + 1)
    assert status == 413 and words == "An upload is at most 2 MB."
    options["server.maxUploadSize"] = 150
    assert request(guard, "PUT", "a", 151 * MB + 1)[0] == 413


def test_refused_where_a_protection_is_off_unless_the_team_chose_it(options, monkeypatch):
    guard = UploadGuard(Handler())
    options["server.enableXsrfProtection"] = False
    status, words = request(guard, "PUT", "a", 1000)
    assert status == 403 and words.startswith("This server refuses uploads: server.enableXsrfProtection is False")
    options["server.enableXsrfProtection"], options["server.maxUploadSize"] = True, 5000
    assert request(guard, "PUT", "a", 1000)[0] == 403
    monkeypatch.setenv(limits.ALLOW_INSECURE_ENV, "1")
    assert request(guard, "PUT", "a", 1000)[0] == 204


SECRET = "the team's cookie secret"
USER = '{"is_logged_in": true, "origin": "http://localhost:8501", "email": "ana@example.org"}'


class _LongAgo(TimestampSigner):
    def get_timestamp(self) -> int:
        return super().get_timestamp() - upload_guard.SIGN_IN_MAX_AGE_S - 60


def _cookie(value: str) -> str:
    return f"_streamlit_xsrf=2|abc; {SIGN_IN_COOKIE}={value}"


def test_with_sign_in_on_only_a_cookie_this_server_signed_may_upload(options, monkeypatch):
    """A visitor who has not signed in cannot upload: no sign-in cookie, one made up, one signed with another
    secret, one for another cookie's name, or an expired one, are all 401; the cookie Streamlit's sign-in sets
    (made here by Streamlit's own function) passes."""
    from streamlit.web.server.starlette.starlette_app_utils import create_signed_value  # what st.login sets

    monkeypatch.setattr(signin, "configured", lambda: True)
    monkeypatch.setattr(signin, "cookie_secret", lambda: SECRET)
    guard = UploadGuard(Handler())
    refused = ["", "_streamlit_xsrf=2|abc; _streamlit_user_tokens=x", _cookie("signed"),
               _cookie(URLSafeTimedSerializer("another secret", salt=SIGN_IN_COOKIE).dumps(USER)),
               _cookie(URLSafeTimedSerializer(SECRET, salt="_streamlit_user_tokens").dumps(USER)),
               _cookie(URLSafeTimedSerializer(SECRET, salt=SIGN_IN_COOKIE, signer=_LongAgo).dumps(USER))]
    for i, cookie in enumerate(refused):
        assert request(guard, "PUT", f"f{i}", 1000, cookie=cookie)[0] == 401, cookie
    issued = create_signed_value(SECRET, SIGN_IN_COOKIE, USER).decode()
    assert request(guard, "PUT", "ok", 1000, cookie=_cookie(issued))[0] == 204


def test_the_cookie_secret_is_the_one_streamlit_signs_with(monkeypatch):
    from streamlit.web.server.server_util import get_cookie_secret  # Streamlit's own choice of the secret

    monkeypatch.setattr(signin, "_auth", lambda: None)
    assert signin.cookie_secret() == get_cookie_secret()
    monkeypatch.setattr(signin, "_auth", lambda: {"cookie_secret": SECRET, "client_id": "x"})
    assert signin.cookie_secret() == SECRET


def _parse_form(size: int) -> tuple[int, int]:
    """A multipart form holding one file of ``size`` bytes, parsed by ``Request.form()`` as Streamlit's upload
    handler parses it: ``(bytes of the file read back, temporary files made)``."""
    made = []
    real = tempfile.TemporaryFile

    def counted(*a, **k):
        made.append(1)
        return real(*a, **k)

    boundary = "b0undary"
    body = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"x.csv\"\r\n"
            "Content-Type: text/csv\r\n\r\n").encode() + b"7" * size + f"\r\n--{boundary}--\r\n".encode()
    scope = {"type": "http", "method": "PUT", "path": "/", "headers": [
        (b"content-type", f"multipart/form-data; boundary={boundary}".encode()),
        (b"content-length", str(len(body)).encode())]}
    pieces = [body[i:i + 64 * 1024] for i in range(0, len(body), 64 * 1024)]

    async def receive():
        return {"type": "http.request", "body": pieces.pop(0), "more_body": bool(pieces)}

    async def parse():
        form = await Request(scope, receive).form()
        upload = form["file"]
        try:
            return len(await upload.read())
        finally:
            await upload.close()

    tempfile.TemporaryFile = counted
    try:
        return asyncio.run(parse()), len(made)
    finally:
        tempfile.TemporaryFile = real


def test_an_accepted_upload_is_never_written_to_a_temporary_file(monkeypatch):
    """Starlette writes a file part over its spool size (1 MB) to a temporary file; the guard raises that size to
    the largest upload it lets through, so an upload of any accepted size stays in memory."""
    from starlette.formparsers import MultiPartParser

    monkeypatch.setattr(MultiPartParser, "spool_max_size", 1 * MB)  # Starlette's default, restored after
    assert _parse_form(3 * MB) == (3 * MB, 1)  # the default spills (so this test can see a spill)
    assert upload_guard.keep_uploads_in_memory() >= upload_guard.MAX_BYTES + upload_guard.FRAMING_BYTES
    assert _parse_form(3 * MB) == (3 * MB, 0)
    upload_guard.middleware()  # what app.py calls: the same setting
    assert MultiPartParser.spool_max_size >= upload_guard.MAX_BYTES + upload_guard.FRAMING_BYTES


def test_the_server_memory_guard_refuses_uploads(options, monkeypatch):
    def full(action, *a, **k):
        raise FairDashError("The server is short of memory (9.0 GB in use, above its 8.0 GB guard).")

    monkeypatch.setattr(limits, "check_memory", full)
    status, words = request(UploadGuard(Handler()), "PUT", "a", 1000)
    assert status == 503 and "short of memory" in words


def test_an_upload_streamlit_refuses_frees_its_share(options):
    guard = UploadGuard(Handler(status=400))
    assert request(guard, "PUT", "a", int(1.9 * MB))[0] == 400
    assert guard.held_bytes("sess1") == 0


def test_other_requests_pass_untouched(options):
    handler = Handler()
    guard = UploadGuard(handler)
    options["server.enableXsrfProtection"] = False  # (even where uploads are refused)
    scope = {"type": "http", "method": "GET", "path": "/_stcore/health", "headers": []}

    async def receive():
        return {"type": "http.request", "body": b"", "more_body": False}

    sent = []

    async def send(m):
        sent.append(m)

    asyncio.run(guard(scope, receive, send))
    assert handler.calls == [("GET", "/_stcore/health", 0)] and sent[0]["status"] == 204


def test_the_sign_in_cookie_is_streamlits():
    from streamlit.web.server.starlette import starlette_server_config  # the name Streamlit's sign-in sets

    assert SIGN_IN_COOKIE == starlette_server_config.USER_COOKIE_NAME


def test_app_py_serves_the_guarded_app():
    """``streamlit run app.py`` finds the ``st.App`` (Streamlit's own discovery) and it carries the guard."""
    from pathlib import Path

    from streamlit.web.server.app_discovery import discover_asgi_app

    found = discover_asgi_app(Path(__file__).resolve().parents[2] / "app.py")
    assert found.is_asgi_app and found.app_name == "app"
