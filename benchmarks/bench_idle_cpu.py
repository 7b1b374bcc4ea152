"""Does the served dashboard stay idle? (issue 13). Run by hand, not in CI:

    .venv/bin/python -m benchmarks.bench_idle_cpu                # 60 s, prints a Markdown table
    .venv/bin/python -m benchmarks.bench_idle_cpu --seconds 120

It starts the server exactly as the README does, ``.venv/bin/streamlit run app.py`` from the repository
root (the ``streamlit`` script next to this interpreter, no command-line flags; only the port is chosen
through the ``STREAMLIT_SERVER_PORT`` environment variable, so it cannot collide with another server on
8501). Then it connects one headless Chromium session (``/usr/bin/chromium``), waits for the Data page
to be drawn and the app idle, and samples, every 5 s for ``--seconds``:

- the server process's CPU time (utime + stime from ``/proc/PID/stat``) -> % of one core per window;
- the size of its log (stdout + stderr), and the "Inotify queue overflowed" lines in it.

Target: under 15% of one core over the minute, and the log does not grow.
"""
from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.common import CHROMIUM, Recording
from benchmarks.readme_server import ROOT, free_port, healthy

IDLE = '[data-testid="stApp"][data-test-script-state="notRunning"]'
TICK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """utime + stime of the process (its threads included), in seconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK  # fields 14 and 15 of proc(5), after pid and comm


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=int, default=60)
    ap.add_argument("--window", type=int, default=5)
    args = ap.parse_args(argv)
    with Recording("bench_idle_cpu", vars(args), browser=True, extra_software=("streamlit", "playwright")) as rec:
        print(rec.machine_line(), flush=True)
        return measure(args, rec)


def measure(args, rec) -> int:

    streamlit = Path(sys.executable).parent / "streamlit"
    port = free_port()
    work = Path(tempfile.mkdtemp(prefix="fairdash-idle-"))
    log_path = work / "streamlit.log"
    env = dict(os.environ, STREAMLIT_SERVER_PORT=str(port))
    log = open(log_path, "wb")
    proc = subprocess.Popen([str(streamlit), "run", "app.py"], cwd=ROOT, env=env, stdout=log,
                            stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://localhost:{port}"
    try:
        end = time.monotonic() + 120
        while not healthy(url):
            if proc.poll() is not None or time.monotonic() > end:
                raise RuntimeError(f"the server did not start:\n{log_path.read_text(errors='replace')}")
            time.sleep(0.25)
        from playwright.sync_api import sync_playwright

        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox"])
            page = browser.new_page(viewport={"width": 1280, "height": 800})
            page.goto(url)
            page.get_by_role("heading", name="Groups and base rates").wait_for(timeout=180_000)
            page.wait_for_selector(IDLE, timeout=180_000)
            time.sleep(5)  # let the first render's work finish
            rows = []
            c0, s0, t0 = cpu_seconds(proc.pid), log_path.stat().st_size, time.monotonic()
            c_prev, t_prev = c0, t0
            while time.monotonic() - t0 < args.seconds:
                time.sleep(args.window)
                c, t = cpu_seconds(proc.pid), time.monotonic()
                rows.append((t - t0, 100 * (c - c_prev) / (t - t_prev), log_path.stat().st_size))
                c_prev, t_prev = c, t
            c1, s1, t1 = cpu_seconds(proc.pid), log_path.stat().st_size, time.monotonic()
            browser.close()
        text = log_path.read_text(errors="replace")
        overflow = text.count("Inotify queue overflowed")
        lines = [f"server: {streamlit.relative_to(ROOT) if streamlit.is_relative_to(ROOT) else streamlit} run app.py "
                 f"(cwd {ROOT}), one Chromium session connected",
                 f"load average at end: {' / '.join(f'{x:.1f}' for x in os.getloadavg())}\n",
                 "| t (s) | CPU in the window (% of one core) | log size (bytes) |", "|---:|---:|---:|"]
        lines += [f"| {t:.0f} | {pct:.1f} | {size} |" for t, pct, size in rows]
        lines.append(f"\n**over {t1 - t0:.0f} s: {100 * (c1 - c0) / (t1 - t0):.1f}% of one core; log {s0} -> {s1} "
                     f"bytes (+{s1 - s0}); 'Inotify queue overflowed' lines in the whole log: {overflow}**")
        print("\n".join(lines))
        rec.markdown = "\n".join(lines)
        rec.results = {"windows": [{"t_s": t, "cpu_pct_one_core": pct, "log_bytes": size} for t, pct, size in rows],
                       "cpu_pct_one_core": 100 * (c1 - c0) / (t1 - t0), "seconds": t1 - t0,
                       "log_bytes_before": s0, "log_bytes_after": s1, "inotify_overflow_lines": overflow}
        return 0
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
        log.close()


if __name__ == "__main__":
    sys.exit(main())
