"""A live dashboard for the browser benchmarks, started the way the README starts it: ``<venv>/bin/streamlit
run <script>`` from the repository root with no flags (the port comes from ``STREAMLIT_SERVER_PORT``;
everything else from the app's own ``.streamlit/config.toml``), and the time a new browser session takes to
see its first page. Shared by bench_first_render.py, bench_idle_cpu.py and bench_slider_latency.py."""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(url + "/_stcore/health", timeout=2) as r:
            return r.status == 200
    except Exception:  # noqa: BLE001 - not up yet
        return False


class Server:
    """``streamlit run <script>`` from the repository root, its log in ``work``, a private fit cache."""

    def __init__(self, script: str, work: Path, **env_extra):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        env = dict(os.environ, STREAMLIT_SERVER_PORT=str(self.port), FAIRDASH_CACHE_DIR=str(work / "fit-cache"),
                   **env_extra)
        self.log_path = work / f"{Path(script).stem}-{self.port}.log"
        self.log = open(self.log_path, "wb")
        self.proc = subprocess.Popen([str(Path(sys.executable).parent / "streamlit"), "run", script], cwd=ROOT,
                                     env=env, stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)

    def wait(self, timeout: float = 120) -> None:
        end = time.monotonic() + timeout
        while not healthy(self.url):
            if self.proc.poll() is not None or time.monotonic() > end:
                raise RuntimeError(f"server {self.url} did not start (see {self.log_path})")
            time.sleep(0.2)

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
        self.log.close()


IDLE = '[data-testid="stApp"][data-test-script-state="notRunning"]'
VIEWPORT = {"width": 1280, "height": 800}


def first_render(browser, url: str, fairdash: bool = True, timeout: float = 180.0) -> tuple[float, float]:
    """(seconds to the first page visible, seconds to the app idle) for a new browser session at ``url``.
    Visible means FairDash's Data page with its group table, or, for the floor app
    (``minimal_slider_app.py``), its metric."""
    ctx = browser.new_context(viewport=VIEWPORT)
    try:
        page = ctx.new_page()
        t0 = time.perf_counter()
        page.goto(url)
        if fairdash:
            page.get_by_role("heading", name="Groups and base rates").wait_for(timeout=timeout * 1000)
            page.locator('[data-testid="stDataFrame"]').last.wait_for(timeout=timeout * 1000)
        else:
            page.locator('[data-testid="stMetricValue"]').first.wait_for(timeout=timeout * 1000)
        visible = time.perf_counter() - t0
        page.wait_for_selector(IDLE, timeout=timeout * 1000)
        return visible, time.perf_counter() - t0
    finally:
        ctx.close()
