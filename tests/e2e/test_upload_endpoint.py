"""Issue 46, item 3, live: ``streamlit run app.py`` serves the ``st.App`` whose middleware guards Streamlit's upload
endpoint (fairdash/app/server/upload_guard.py; each rule is tested without a server in
tests/app/test_upload_guard.py).

A server of its own, with Streamlit's upload cap at 2 MB (a safe setting: below FairDash's 200 MB) and a private
temporary folder. A browser session uploads a small table through the page (so the endpoint knows its session and
the browser holds its XSRF cookie); then, with that session's cookie and token, PUTs straight to the endpoint, as
an attacker with a page open could: files of 1.9 MB until the session holds twice the cap, one without a length,
one over the cap. Then a second server with XSRF protection off (not chosen by the team) refuses every PUT.
"""
from __future__ import annotations

import http.client
import tempfile
import uuid
from pathlib import Path

import pytest

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


def _put(url: str, session: str, cookie: str, xsrf: str, size: int | None, chunked: bool = False) -> int:
    """PUT a multipart form holding a file of ``size`` bytes (zeros) to the endpoint; its status."""
    boundary = uuid.uuid4().hex
    head = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"x.csv\"\r\n"
            "Content-Type: text/csv\r\n\r\n").encode()
    tail = f"\r\n--{boundary}--\r\n".encode()
    host, port = url.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=120)
    path = f"/_stcore/upload_file/{session}/{uuid.uuid4()}"
    headers = {"Cookie": cookie, "X-Xsrftoken": xsrf, "Content-Type": f"multipart/form-data; boundary={boundary}"}
    body_size = len(head) + (size or 0) + len(tail)

    def body():
        yield head
        left = size or 0
        while left:
            piece = min(left, MB)
            yield b"0" * piece
            left -= piece
        yield tail

    try:
        if chunked:
            conn.request("PUT", path, body=body(), headers=headers, encode_chunked=True)
        else:
            conn.request("PUT", path, body=body(), headers={**headers, "Content-Length": str(body_size)})
        return conn.getresponse().status
    except (ConnectionError, http.client.HTTPException):  # refused before the body was read: the connection closed
        return -1
    finally:
        conn.close()


def test_the_endpoint_keeps_a_session_within_its_share(browser, st_ui):
    tmp = Path(tempfile.mkdtemp(prefix="fairdash-upload-tmp-"))
    with live_streamlit(Path(tempfile.mkdtemp(prefix="fairdash-e2e-upload-")), free_port(),
                        STREAMLIT_SERVER_MAX_UPLOAD_SIZE="2", TMPDIR=str(tmp)) as (url, _log):
        ctx = st_ui.new_context(browser)
        session, cookie, xsrf = _session_and_cookies(ctx, url, st_ui)
        statuses = [_put(url, session, cookie, xsrf, int(1.9 * MB)) for _ in range(4)]
        assert statuses[:2] == [204, 204] and statuses[2:] == [429, 429], statuses  # twice the cap: 4 MB a session
        assert _put(url, session, cookie, xsrf, 1000, chunked=True) in (411, -1)  # no length said
        assert _put(url, session, cookie, xsrf, 3 * MB) in (413, -1)  # over the cap
        assert _put(url, "not-a-session", cookie, xsrf, 1000) == 400  # (Streamlit's own check still holds)
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
        assert _put(url, "any-session", cookie, cookies.get("_streamlit_xsrf", ""), 1000) == 403
        ctx.close()
