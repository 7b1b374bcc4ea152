"""A PUT straight to Streamlit's upload endpoint (``/_stcore/upload_file/<session>/<file>``), as a script with a
page's cookies could send one: tests/e2e/test_upload_endpoint.py and test_signin_browser.py."""
from __future__ import annotations

import http.client
import uuid

MB = 2**20


def put_file(url: str, session: str, cookie: str, xsrf: str, size: int | None, chunked: bool = False) -> int:
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
