"""Issue 46, item 3, live: ``streamlit run app.py`` serves the ``st.App`` whose middleware guards Streamlit's upload
endpoint (fairdash/app/server/upload_guard.py; each rule is tested without a server in
tests/app/test_upload_guard.py).

A server of its own, with Streamlit's upload cap at 2 MB (a safe setting: below FairDash's 200 MB) and a private
temporary folder. A browser session uploads a small table through the page (so the endpoint knows its session and
the browser holds its XSRF cookie); then, with that session's cookie and token, PUTs straight to the endpoint, as
an attacker with a page open could: one of 1.9 MB held open before its last line, while the server's open files are
read (it must hold none in the temporary folder: the upload is in memory); files of 1.9 MB until the session holds
twice the cap, one without a length, one over the cap. Then a second server with XSRF protection off (not chosen by
the team) refuses every PUT.
"""
from __future__ import annotations

import os
import socket
import tempfile
import uuid
from pathlib import Path

import pytest

from endpoint import put_file
from live_server import free_port, live_streamlit

pytestmark = pytest.mark.e2e

MB = 2**20
TABLE = b"sex,label,age\n" + b"".join(b"%s,%d,%d\n" % (b"F" if i % 2 else b"M", i % 3 == 0, 20 + i % 40)
                                       for i in range(200))


def _session_and_cookies(ctx, url: str, st_ui) -> tuple[str, str, str]:
    """``(Streamlit session id, Cookie header, XSRF token)`` of a browser session (in ``ctx``, kept open: its
    Streamlit session lives while its tab does) that uploaded a table."""
    page = ctx.new_page()
    seen = []
    page.on("request", lambda r: seen.append(r.url) if "/_stcore/upload_file/" in r.url and r.method == "PUT"
            else None)
    st_ui.open_app(page, url)
    st_ui.upload(page, "small.csv", TABLE, confirm=False)
    st_ui.wait_until(lambda: seen, 60, what=lambda _: "the page's upload never reached the endpoint")
    session = seen[0].split("/_stcore/upload_file/")[1].split("/")[0]
    cookies = {c["name"]: c["value"] for c in ctx.cookies()}
    header = "; ".join(f"{k}={v}" for k, v in cookies.items())
    return session, header, cookies.get("_streamlit_xsrf", "")


def _server_pid(tmp: Path) -> int:
    """The live server's process: ``streamlit run app.py`` started with ``TMPDIR`` set to ``tmp``."""
    for d in Path("/proc").iterdir():
        try:
            if (d.name.isdigit() and f"TMPDIR={tmp}".encode() in (d / "environ").read_bytes().split(b"\0")
                    and b"run\0app.py" in (d / "cmdline").read_bytes()):
                return int(d.name)
        except OSError:  # a process that ended meanwhile, or not ours
            continue
    raise AssertionError(f"no server process with TMPDIR={tmp}")


def _files_under(pid: int, folder: Path) -> list[str]:
    """What the process holds open under ``folder``: an unnamed temporary file shows as ``<folder>/#<n> (deleted)``."""
    found = []
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith(str(folder)) and not target.endswith(".sock"):
            found.append(target)
    return found


def _in_flight(port: int, client_port: int) -> int | None:
    """Bytes of the connection from ``client_port`` to the server on ``port`` that the server's process has not read
    yet: the client's send queue and the server's receive queue (/proc/net/tcp and tcp6); ``None`` where either end
    is not listed."""
    ends = {}
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            local, remote, _state, queues = line.split()[1:5]
            pair = (int(local.rsplit(":", 1)[1], 16), int(remote.rsplit(":", 1)[1], 16))
            tx, rx = (int(q, 16) for q in queues.split(":"))
            if pair == (client_port, port):
                ends["sent"] = tx
            elif pair == (port, client_port):
                ends["received"] = rx
    return ends["sent"] + ends["received"] if len(ends) == 2 else None


def _held_upload_spools(url: str, session: str, cookie: str, xsrf: str, pid: int, tmp: Path, st_ui) -> list[str]:
    """PUT a 1.9 MB file but hold back the form's last line; once the server has read every byte sent, what it holds
    open under ``tmp``; then the rest is sent and the answer must be 204."""
    boundary = uuid.uuid4().hex
    head = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"x.csv\"\r\n"
            "Content-Type: text/csv\r\n\r\n").encode()
    tail = f"\r\n--{boundary}--\r\n".encode()
    size = int(1.9 * MB)
    host, port = url.removeprefix("http://").split(":")
    request = (f"PUT /_stcore/upload_file/{session}/{uuid.uuid4()} HTTP/1.1\r\nHost: {host}:{port}\r\n"
               f"Cookie: {cookie}\r\nX-Xsrftoken: {xsrf}\r\nContent-Type: multipart/form-data; boundary={boundary}"
               f"\r\nContent-Length: {len(head) + size + len(tail)}\r\n\r\n").encode()
    with socket.create_connection((host, int(port)), timeout=120) as conn:
        conn.sendall(request + head + b"0" * size)
        client_port = conn.getsockname()[1]
        st_ui.wait_until(lambda: _in_flight(int(port), client_port) == 0, 60,
                         what=lambda _: "the server never read the upload's bytes")
        held = _files_under(pid, tmp)
        conn.sendall(tail)
        answer = conn.recv(200)
    assert answer.startswith(b"HTTP/1.1 204"), answer
    return held


def test_the_endpoint_keeps_a_session_within_its_share(browser, st_ui):
    tmp = Path(tempfile.mkdtemp(prefix="fairdash-upload-tmp-"))
    with live_streamlit(Path(tempfile.mkdtemp(prefix="fairdash-e2e-upload-")), free_port(),
                        STREAMLIT_SERVER_MAX_UPLOAD_SIZE="2", TMPDIR=str(tmp)) as (url, _log):
        ctx = st_ui.new_context(browser)
        session, cookie, xsrf = _session_and_cookies(ctx, url, st_ui)
        # an upload being read is held in memory, not in a temporary file (Starlette spools a part over 1 MB)
        assert _held_upload_spools(url, session, cookie, xsrf, _server_pid(tmp), tmp, st_ui) == []
        statuses = [put_file(url, session, cookie, xsrf, int(1.9 * MB)) for _ in range(3)]
        assert statuses[:1] == [204] and statuses[1:] == [429, 429], statuses  # twice the cap: 4 MB a session
        assert put_file(url, session, cookie, xsrf, 1000, chunked=True) in (411, -1)  # no length said
        assert put_file(url, session, cookie, xsrf, 3 * MB) in (413, -1)  # over the cap
        assert put_file(url, "not-a-session", cookie, xsrf, 1000) == 400  # (Streamlit's own check still holds)
        # no file under the server's temporary folder (there is multiprocessing's folder, with its socket only)
        assert [p for p in tmp.rglob("*") if p.is_file()] == []
        ctx.close()


def test_a_server_with_a_protection_off_refuses_uploads_at_the_endpoint(browser, st_ui):
    with live_streamlit(Path(tempfile.mkdtemp(prefix="fairdash-e2e-unsafe-")), free_port(),
                        STREAMLIT_SERVER_MAX_UPLOAD_SIZE="5000") as (url, _log):
        ctx = st_ui.new_context(browser)
        page = ctx.new_page()
        page.goto(url)
        st_ui.wait_until(lambda: "refuses to serve" in page.inner_text("body"), 90,
                         what=lambda _: "the page did not refuse to serve")
        cookies = {c["name"]: c["value"] for c in ctx.cookies()}
        cookie = "; ".join(f"{k}={v}" for k, v in cookies.items())
        # any session id: the guard answers before Streamlit looks the session up
        assert put_file(url, "any-session", cookie, cookies.get("_streamlit_xsrf", ""), 1000) == 403
        ctx.close()
