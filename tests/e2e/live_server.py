"""One live ``streamlit run app.py`` for the browser tests, started as the README starts it: the session-wide server
(``conftest.streamlit_server``) and the sign-in test's own server with ``[auth]`` set (``test_signin_browser``) are
both this, so they start, wait for health and stop the same way."""
from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import urllib.request
from pathlib import Path

from waits import wait_until

ROOT = Path(__file__).resolve().parents[2]
START_S = 90  # how long a server may take to answer its health check


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(url + "/_stcore/health", timeout=2) as r:
            return r.status == 200 and r.read().strip() == b"ok"
    except Exception:  # noqa: BLE001 - not up yet
        return False


@contextlib.contextmanager
def live_streamlit(work: Path, port: int, **settings: str):
    """``streamlit run app.py`` on ``port``, its fit cache, event log (``events.jsonl``) and log (``streamlit.log``)
    in ``work``, with ``settings`` added to its environment; yields ``(url, log_path)`` once it answers its health
    check, and stops the process group it started (streamlit and any worker it spawned) afterwards."""
    log_path = work / "streamlit.log"
    env = dict(os.environ)
    env["FAIRDASH_CACHE_DIR"] = str(work / "fit-cache")
    env.setdefault("FAIRDASH_DEVICE", "cpu")
    env["PYTHONUNBUFFERED"] = "1"
    env["STREAMLIT_SERVER_PORT"] = str(port)  # the one setting that is not the README's
    env["FAIRDASH_EVENT_LOG"] = str(work / "events.jsonl")  # read by the tests through ``events``
    env.update(settings)
    streamlit = Path(sys.executable).parent / "streamlit"  # the README's `.venv/bin/streamlit`
    if not streamlit.exists():
        raise RuntimeError(f"no streamlit script beside {sys.executable}; install the requirements into this "
                           "environment")
    log = open(log_path, "wb")
    proc = subprocess.Popen([str(streamlit), "run", "app.py"], cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
                            start_new_session=True)
    url = f"http://127.0.0.1:{port}"

    def up() -> bool:
        if proc.poll() is not None:
            raise RuntimeError(f"streamlit exited with {proc.returncode}:\n{log_path.read_text(errors='replace')}")
        return healthy(url)

    try:
        wait_until(up, START_S, interval=0.25,
                   what=lambda _: "streamlit did not become healthy:\n" + log_path.read_text(errors="replace"))
        yield url, log_path
    finally:
        if proc.poll() is None:
            try:  # the session we started (streamlit and any worker it spawned), nothing else
                os.killpg(proc.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=15)
        log.close()
        shutil.rmtree(work / "fit-cache", ignore_errors=True)
