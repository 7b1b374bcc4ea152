"""One live server shared by a team (issue 25): N sessions start a training at about the same time while
another session moves the PR_t slider. Run by hand, not in CI:

    python -m benchmarks.bench_team_load                      # N = 6 trainings, 30 slider moves
    python -m benchmarks.bench_team_load --idle-only          # the slider alone: the idle reference
    python -m benchmarks.bench_team_load --env FAIRDASH_MAX_TRAININGS=2 --out /tmp/team-cap2.json
    python -m benchmarks.bench_team_load --repo /path/to/other/checkout   # its app.py, its fairdash

It starts ONE ``streamlit run app.py`` (headless, a free port on 127.0.0.1, a private fit cache) from
``--repo`` and drives Debian's Chromium (``/usr/bin/chromium``, never a Playwright download):

1. N browser contexts (each its own session, on the bundled Adult sample loaded by default). Each sets its
   own PR_t on the Target page (0.20, 0.21, ...: so no session's FairLR fits come from another's through
   the shared fit cache of the samples), goes to the Train page, keeps FairLR only (LR's fits do not
   depend on PR_t, so they would be shared) with ``--repeats`` repeats, and then all N click Train one
   after the other (within a second or so). Each page records, inside the page (``Date.now()`` in a
   timer every 200 ms, so the numbers do not depend on when Python looks): the click, the first and last
   time any sidebar text contains "queue" (case-insensitive: "Queued: place 2") = the queue wait, the
   first "Running for" in the sidebar's training box, and the time the run is in its history (the Train
   page's "Results" heading or the sidebar's "... is in the run history") = the training wall time, or
   "Training failed"/"cancelled". A run that has not arrived after ``--train-timeout`` s is lost.
2. Meanwhile context N+1, on the Target page, moves the PR_t slider ``--moves`` times about 1 s apart
   (ArrowRight/ArrowLeft alternately, one 0.001 step) and times each move inside the page, as
   bench_slider_latency.py does: keydown -> the "Accuracy ceiling" readout's text changes.
3. A thread samples the server's process tree RSS (VmRSS of the streamlit process and all its
   descendants, from /proc) every 0.5 s; the peak is reported.

``--idle-only``: step 2 with no trainings (the reference). Things are found by their visible text and the
widgets' keys, so the same benchmark runs against code with a training cap and a queue.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from benchmarks.bench_slider_latency import ARM_JS, METRIC, OBSERVER_JS
from benchmarks.common import CHROMIUM, ROOT, Recording, load_average
from benchmarks.readme_server import IDLE, VIEWPORT, free_port, healthy

CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--no-first-run", "--disable-sync", "--disable-quic", "--disable-renderer-backgrounding",
                 "--disable-background-timer-throttling", "--disable-backgrounding-occluded-windows"]
BUSY = '[data-testid="stApp"]:not([data-test-script-state="notRunning"])'
SIDEBAR = '[data-testid="stSidebar"]'
GIB = 2 ** 30


# --------------------------------------------------------------------------------------------------
# The server and its memory
# --------------------------------------------------------------------------------------------------
class LiveServer:
    """``<venv>/bin/streamlit run app.py`` in ``repo`` (its own process group), headless, on a free port of
    127.0.0.1, with a private fit cache and ``env`` added; its log in ``work``."""

    def __init__(self, repo: Path, work: Path, env: dict | None = None):
        self.repo = Path(repo).resolve()
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        full = dict(os.environ, STREAMLIT_SERVER_PORT=str(self.port), STREAMLIT_SERVER_HEADLESS="true",
                    STREAMLIT_SERVER_ADDRESS="127.0.0.1", STREAMLIT_BROWSER_GATHER_USAGE_STATS="false",
                    FAIRDASH_CACHE_DIR=str(work / f"fit-cache-{self.port}"), PYTHONUNBUFFERED="1")
        full.update(env or {})
        self.env_extra = dict(env or {})
        self.log_path = work / f"streamlit-{self.port}.log"
        self._log = open(self.log_path, "wb")
        self.started = time.monotonic()
        self.proc = subprocess.Popen([str(Path(sys.executable).parent / "streamlit"), "run", "app.py"],
                                     cwd=self.repo, env=full, stdout=self._log, stderr=subprocess.STDOUT,
                                     start_new_session=True)

    def wait(self, timeout: float = 180) -> float:
        end = time.monotonic() + timeout
        while not healthy(self.url):
            if self.proc.poll() is not None or time.monotonic() > end:
                raise RuntimeError(f"server {self.url} did not start (see {self.log_path})")
            time.sleep(0.2)
        return time.monotonic() - self.started

    def alive(self) -> bool:
        return self.proc.poll() is None

    def kill(self) -> None:
        """SIGKILL to the server's process group (only the group this object started)."""
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass

    def stop(self) -> None:
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.kill()
                self.proc.wait(timeout=15)
        self._log.close()

    def tracebacks(self, most: int = 5) -> list:
        """The server log's first ``most`` Python tracebacks (each up to 40 lines): a failed training's."""
        try:
            lines = self.log_path.read_text(errors="replace").splitlines()
        except OSError:
            return []
        out = []
        for i, line in enumerate(lines):
            if line.startswith("Traceback (most recent call last)") and len(out) < most:
                block = lines[max(0, i - 1):i + 40]
                end = next((j for j, b in enumerate(block[2:], 2) if b and not b.startswith(" ")), len(block) - 1)
                out.append("\n".join(block[:end + 1]))
        return out

    def log_tail(self, n: int = 3000) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-n:]
        except OSError:
            return ""


def _children_map() -> dict:
    kids: dict = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                stat = f.read()
            ppid = int(stat[stat.rindex(")") + 2:].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        kids.setdefault(ppid, []).append(int(d))
    return kids


def tree_rss(pid: int) -> int:
    """Bytes: the sum of VmRSS of ``pid`` and all its descendants (0 when it is gone)."""
    kids = _children_map()
    total, todo, seen = 0, [pid], set()
    while todo:
        p = todo.pop()
        if p in seen:
            continue
        seen.add(p)
        try:
            with open(f"/proc/{p}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1]) * 1024
                        break
        except OSError:
            pass
        todo.extend(kids.get(p, ()))
    return total


class RssSampler(threading.Thread):
    """Samples :func:`tree_rss` of the server every ``interval`` s (at most ``max_s`` s in all). With
    ``kill_above`` (bytes) it kills the server's process group as soon as a sample exceeds it."""

    def __init__(self, server: LiveServer, interval: float = 0.5, kill_above: float | None = None,
                 max_s: float = 3600.0):
        super().__init__(daemon=True, name="rss-sampler")
        self.server, self.interval, self.kill_above, self.max_s = server, interval, kill_above, max_s
        self.samples: list = []  # (seconds since start, bytes)
        self.peak = 0
        self.killed_at = None  # (seconds since start, bytes) when the kill switch fired
        self.t0 = time.monotonic()
        self._halt = threading.Event()

    def mark(self) -> None:
        """Restart the clock (the times of samples and of a kill count from here)."""
        self.t0 = time.monotonic()

    def run(self) -> None:
        end = time.monotonic() + self.max_s
        while not self._halt.is_set() and time.monotonic() < end:
            if not self.server.alive():
                break
            rss = tree_rss(self.server.proc.pid)
            t = time.monotonic() - self.t0
            self.samples.append((round(t, 2), rss))
            self.peak = max(self.peak, rss)
            if self.kill_above is not None and rss > self.kill_above and self.killed_at is None:
                self.killed_at = (t, rss)
                self.server.kill()
                break
            self._halt.wait(self.interval)

    def stop(self) -> None:
        self._halt.set()
        self.join(timeout=10)


# --------------------------------------------------------------------------------------------------
# Driving the pages
# --------------------------------------------------------------------------------------------------
def launch(p, nice: int = 0, work: Path | None = None):
    """Debian's Chromium; with ``nice``, started through ``nice -n`` (a wrapper script in ``work``)."""
    exe = CHROMIUM
    if nice:
        wrapper = Path(work) / "chromium-nice.sh"
        wrapper.write_text(f"#!/bin/sh\nexec nice -n {int(nice)} {CHROMIUM} \"$@\"\n")
        wrapper.chmod(0o755)
        exe = str(wrapper)
    return p.chromium.launch(executable_path=exe, headless=True, args=CHROMIUM_ARGS)


def wait_idle(page, timeout: float = 120.0, settle: float = 0.3) -> None:
    if settle:
        try:
            page.wait_for_selector(BUSY, timeout=settle * 1000)
        except Exception:  # noqa: BLE001 - the rerun may be over already
            pass
    page.wait_for_selector(IDLE, timeout=timeout * 1000)


def new_session(browser, url: str, timeout: float = 180.0):
    """A new context (a new Streamlit session) on the Data page with the default sample loaded."""
    ctx = browser.new_context(viewport=VIEWPORT)
    ctx.set_default_timeout(timeout * 1000)
    page = ctx.new_page()
    page.goto(url)
    page.get_by_role("heading", name="Groups and base rates").wait_for(timeout=timeout * 1000)
    wait_idle(page, timeout)
    return ctx, page


def goto(page, title: str, timeout: float = 180.0) -> None:
    """Click the sidebar link ``title``; wait for its heading and an idle app (twice: see tests/e2e)."""
    page.locator('[data-testid="stSidebarNav"] a', has_text=title).first.click()
    page.locator("h1", has_text=title).first.wait_for(timeout=timeout * 1000)
    wait_idle(page, timeout)
    wait_idle(page, timeout, settle=0.5)
    page.locator("h1", has_text=title).first.wait_for(timeout=timeout * 1000)


def set_pr_t(page, value: float, timeout: float = 120.0) -> None:
    """Type PR_t into the Target page's number box; wait until the slider shows it."""
    box = page.locator(".st-key-pr_t_input input")
    box.fill(f"{value:g}")
    box.press("Enter")
    wait_idle(page, timeout)
    page.wait_for_function(
        "(v) => { const s = document.querySelector('.st-key-pr_t_slider input[type=range]');"
        " return s && Math.abs(parseFloat(s.value) - v) < 1e-9; }", arg=value, timeout=timeout * 1000)
    wait_idle(page, timeout, settle=0.1)


# the in-page latency observer (keydown -> changed readout) is bench_slider_latency's: OBSERVER_JS, ARM_JS


def open_slider(browser, url: str, start: float = 0.5):
    """The slider session: Target page, PR_t = ``start`` (above both Adult base rates, where every 0.001
    step changes the 4-decimal ceiling), the in-page observer installed, the thumb focused."""
    ctx, page = new_session(browser, url)
    goto(page, "Target")
    page.locator(METRIC).first.wait_for()
    set_pr_t(page, start)
    page.evaluate(OBSERVER_JS, METRIC)
    page.locator('.st-key-pr_t_slider input[type="range"]').focus()
    return ctx, page


LAST_SERVER_MS: list = []  # the server's own time for the last measured move's rerun (see slider_move)


def slider_move(page, key: str, timeout: float = 60.0) -> float | None:
    """One key press on the focused thumb; seconds from keydown to the changed readout (None: no change
    within ``timeout`` s). Waits (bounded) for the app to go idle afterwards, so moves do not overlap. The
    server time the Target page reports for that rerun (its ``readout_timing`` caption: FairDash's own work,
    without the wait for a CPU, the network and the browser's drawing) goes to ``LAST_SERVER_MS``."""
    page.evaluate(ARM_JS, METRIC)
    page.keyboard.press(key)
    try:
        page.wait_for_function("() => window.__fd.lat !== null", timeout=timeout * 1000, polling=10)
        lat = page.evaluate("() => window.__fd.lat") / 1000.0
    except Exception:  # noqa: BLE001 - a lost or very late move is recorded as such
        lat = None
    try:
        wait_idle(page, timeout=timeout, settle=0.05)
    except Exception:  # noqa: BLE001
        pass
    LAST_SERVER_MS.clear()
    try:
        m = re.search(r"([0-9.]+)\s*ms", page.locator(".st-key-readout_timing").first.inner_text(timeout=2000))
        if m:
            LAST_SERVER_MS.append(float(m.group(1)))
    except Exception:  # noqa: BLE001 - an older page without the caption
        pass
    return lat


def slider_series(page, moves: int, spacing: float = 1.0, timeout: float = 60.0) -> list:
    """``moves`` moves, one every ``spacing`` s (or 0.2 s after the previous one is done, if later),
    ArrowRight/ArrowLeft alternately. Each: {"t" (s since the first), "key", "latency_s"}."""
    page.locator('.st-key-pr_t_slider input[type="range"]').focus()
    out, t0, due = [], time.monotonic(), time.monotonic()
    for i in range(moves):
        if time.monotonic() < due:
            time.sleep(due - time.monotonic())
        key = "ArrowRight" if i % 2 == 0 else "ArrowLeft"
        start = time.monotonic()
        lat = slider_move(page, key, timeout)
        out.append({"t": round(start - t0, 2), "key": key, "latency_s": lat,
                    "server_ms": LAST_SERVER_MS[0] if LAST_SERVER_MS else None})
        due = max(start + spacing, time.monotonic() + 0.2)  # ~1 s apart; never back to back after a slow one
    return out


# In-page monitor of one training session: timestamps by Date.now() (ms since the epoch, the same clock
# for every page of this machine), every 200 ms, bounded to max_s seconds.
MONITOR_JS = """([maxS]) => {
  const M = window.__team = {click: null, queue_first: null, queue_last: null, queue_texts: [],
                             running_first: null, done: null, failed: null, cancelled: null, text: null,
                             job_box_first: null, ticks: 0};
  const btn = () => document.querySelector('.st-key-train_button button');
  document.addEventListener('click', (e) => {
    const b = btn(); if (M.click === null && b && b.contains(e.target)) M.click = Date.now(); }, true);
  const start = Date.now();
  const tick = () => {
    const now = Date.now();
    M.ticks += 1;
    const sb = document.querySelector('[data-testid="stSidebar"]');
    const side = sb ? sb.innerText : '';
    const mainEl = document.querySelector('[data-testid="stMain"]');
    const main = mainEl ? mainEl.innerText : '';
    if (M.click !== null) {
      const q = side.split('\\n').filter(l => /queue/i.test(l));
      if (q.length) {
        if (M.queue_first === null) M.queue_first = now;
        M.queue_last = now;
        for (const l of q) {
          if (M.queue_texts.length < 20 && !M.queue_texts.includes(l.trim())) M.queue_texts.push(l.trim());
        }
      }
      if (M.job_box_first === null && document.querySelector('.st-key-training_job')) M.job_box_first = now;
      if (M.running_first === null && /Running for/.test(side)) M.running_first = now;
      if (M.done === null && (/is in the run history/.test(side) || /Results \\(mean/.test(main))) {
        M.done = now;
        const m = side.match(/Trained [^\\n]*run history\\.?/); M.text = m ? m[0] : null;
      }
      if (M.failed === null && /Training failed/.test(side + main)) {
        M.failed = now; const m = (side + '\\n' + main).match(/Training failed[^\\n]*/); M.text = m ? m[0] : null; }
      if (M.cancelled === null && /Training cancelled/.test(side + main)) M.cancelled = now;
    }
    if (now - start < maxS * 1000 && M.done === null && M.failed === null && M.cancelled === null) {
      setTimeout(tick, 200);
    }
  };
  tick();
}"""


def prepare_trainer(browser, url: str, pr_t: float, repeats: int) -> tuple:
    """A session ready to click Train: its own PR_t, FairLR only, ``repeats`` repeats."""
    ctx, page = new_session(browser, url)
    goto(page, "Target")
    set_pr_t(page, pr_t)
    goto(page, "Train")
    models = page.locator(".st-key-train_models")
    chips = lambda: [c.strip() for c in models.locator("[data-tag]:visible").all_inner_texts()]  # noqa: E731
    for _ in range(5):  # remove every chip but FairLR's (Backspace in the multiselect removes the last one)
        now = chips()
        if all(c.startswith("FairLR") for c in now) or not now:
            break
        if not now[-1].startswith("FairLR"):
            models.locator("input").first.click()
            page.keyboard.press("Backspace")
            page.keyboard.press("Escape")
            wait_idle(page)
        else:
            break
    now = chips()
    if not (len(now) == 1 and now[0].startswith("FairLR")):
        raise RuntimeError(f"could not choose FairLR alone on the Train page: chips {now}")
    box = page.locator(".st-key-repeats input")
    box.fill(str(repeats))
    box.press("Enter")
    wait_idle(page)
    page.wait_for_function("(r) => document.querySelector('.st-key-repeats input').value === String(r)", arg=repeats)
    # the page's count of fits follows the repeats once their rerun is drawn: wait for it (bounded)
    caption = page.get_by_text(re.compile(rf"^{repeats} fit\(s\)\. Fits already made")).first
    caption.wait_for(timeout=120_000)
    wait_idle(page, settle=0.1)
    caption = caption.inner_text()
    return ctx, page, caption.strip()


# --------------------------------------------------------------------------------------------------
# Figures
# --------------------------------------------------------------------------------------------------
def pct(xs, q: float):
    xs = sorted(x for x in xs if x is not None)
    if not xs:
        return None
    k = (len(xs) - 1) * q / 100.0
    lo, hi = int(k), min(int(k) + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (k - lo)


def summary(res: dict) -> dict:
    lat = [m["latency_s"] for m in res.get("slider", [])]
    done = [lat_ for lat_ in lat if lat_ is not None]
    s = {"slider_n": len(lat), "slider_lost": len(lat) - len(done),
         "slider_p50_ms": (pct(done, 50) or 0) * 1000 if done else None,
         "slider_p90_ms": (pct(done, 90) or 0) * 1000 if done else None,
         "slider_max_ms": max(done) * 1000 if done else None,
         "server_ms_p50": pct([m["server_ms"] for m in res.get("slider", []) if m.get("server_ms") is not None], 50),
         "server_ms_p90": pct([m["server_ms"] for m in res.get("slider", []) if m.get("server_ms") is not None], 90),
         "rss_peak_gib": res["rss_peak"] / GIB if res.get("rss_peak") else None}
    tr = res.get("trainings") or []
    if tr:
        walls = [t["wall_s"] for t in tr if t.get("wall_s") is not None]
        queues = [t.get("queue_s") or 0.0 for t in tr]
        s.update({"n": len(tr), "training_wall_p50_s": pct(walls, 50),
                  "training_wall_max_s": max(walls) if walls else None,
                  "training_wall_min_s": min(walls) if walls else None,
                  "queued_sessions": sum(1 for t in tr if t.get("queue_s") is not None),
                  "queue_wait_max_s": max(queues) if queues else None,
                  "queue_wait_p50_s": pct(queues, 50),
                  "runs_lost": sum(1 for t in tr if t.get("lost")),
                  "runs_failed": sum(1 for t in tr if t.get("failed"))})
    return s


def _f(x, fmt="{:.0f}", none="-"):
    return none if x is None else fmt.format(x)


def markdown(res: dict, s: dict, args, rec) -> str:
    env = " ".join(f"{k}={v}" for k, v in res["env"].items()) or "(none)"
    rows = [f"Team load (issue 25), `python -m benchmarks.bench_team_load {' '.join(res['argv'])}`",
            f"code {res['repo_commit'][:10]} ({res['repo']}), env {env}; {rec.machine_line()}", "",
            "| code | N | slider p50 / p90 / max (ms) | server's own ms p50 / p90 | slider moves lost "
            "| training wall p50 / max (s) | queue waits (s) | runs lost | server peak RSS | load average before -> "
            "after |",
            "|---|---:|---|---|---:|---|---|---:|---:|---|"]
    tr = res.get("trainings") or []
    qs = ", ".join(_f(t.get("queue_s"), "{:.0f}", "0") for t in tr) if tr else "-"
    rows.append(f"| {res['repo_commit'][:10]} {env if res['env'] else ''} | {s.get('n', 0)} "
                f"| {_f(s['slider_p50_ms'])} / {_f(s['slider_p90_ms'])} / {_f(s['slider_max_ms'])} "
                f"| {_f(s.get('server_ms_p50'))} / {_f(s.get('server_ms_p90'))} | {s['slider_lost']} "
                f"| {_f(s.get('training_wall_p50_s'), '{:.1f}')} / {_f(s.get('training_wall_max_s'), '{:.1f}')} "
                f"| {qs} | {s.get('runs_lost', '-')} | {_f(s['rss_peak_gib'], '{:.2f}')} GiB "
                f"| {' / '.join(map(str, res['load_before']))} -> {' / '.join(map(str, res['load_after']))} |")
    if tr:
        rows += ["", "| session | PR_t | click -> in history (s) | queued (s) | first 'Running for' after click (s) | "
                     "outcome |",
                 "|---:|---:|---:|---:|---:|---|"]
        for i, t in enumerate(tr):
            rows.append(f"| {i + 1} | {t['pr_t']:.2f} | {_f(t.get('wall_s'), '{:.1f}')} | "
                        f"{_f(t.get('queue_s'), '{:.1f}')} | {_f(t.get('running_after_s'), '{:.1f}')} | "
                        f"{t.get('outcome')} |")
    return "\n".join(rows) + "\n"


# --------------------------------------------------------------------------------------------------
def git_commit(repo: Path) -> str:
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True, timeout=30)
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=repo,
                               capture_output=True, text=True, timeout=30).stdout.strip()
        return out.stdout.strip() + ("-dirty" if dirty else "") if out.returncode == 0 else "?"
    except (OSError, subprocess.SubprocessError):
        return "?"


def parse_env(items) -> dict:
    env = {}
    for item in items or ():
        if "=" not in item:
            raise SystemExit(f"--env wants KEY=VALUE, got {item!r}")
        k, v = item.split("=", 1)
        env[k] = v
    return env


def measure(args, res: dict) -> None:
    from playwright.sync_api import sync_playwright

    work = Path(tempfile.mkdtemp(prefix="fairdash-team-"))
    server = LiveServer(Path(args.repo), work, res["env"])
    sampler = None
    try:
        res["server_start_s"] = server.wait()
        sampler = RssSampler(server, interval=args.rss_interval, max_s=args.train_timeout + 1800)
        sampler.start()
        with sync_playwright() as p:
            browser = launch(p)
            # the trainers' pages: on a real team their browsers run on other machines, not on the server's
            # cores; --trainer-nice runs them in a Chromium of their own at that lower CPU priority
            trainer_browser = launch(p, nice=args.trainer_nice, work=work) if args.trainer_nice else browser
            ctxs = []
            try:
                trainers = []
                if not args.idle_only:
                    for i in range(args.n):
                        pr_t = round(args.pr_t_from + args.pr_t_step * i, 3)
                        ctx, page, caption = prepare_trainer(trainer_browser, server.url, pr_t, args.repeats)
                        ctxs.append(ctx)
                        page.evaluate(MONITOR_JS, [args.train_timeout + 60])
                        trainers.append({"page": page, "pr_t": pr_t, "caption": caption})
                        print(f"session {i + 1}: PR_t {pr_t}, {caption}", flush=True)
                ctx_s, slider = open_slider(browser, server.url)
                ctxs.append(ctx_s)
                for _ in range(3):  # warm-up, not counted
                    slider_move(slider, "ArrowRight")
                    slider_move(slider, "ArrowLeft")
                res["load_at_clicks"] = load_average()
                res["rss_before_clicks"] = tree_rss(server.proc.pid)
                t_click = time.time()
                for t in trainers:
                    t["page"].locator(".st-key-train_button button").click(timeout=30_000)
                res["clicks_spread_s"] = time.time() - t_click
                res["slider"] = slider_series(slider, args.moves, args.spacing, args.move_timeout)
                lat = [m["latency_s"] for m in res["slider"]]
                print("slider moves (ms):", [None if x is None else round(x * 1000) for x in lat], flush=True)
                end = time.monotonic() + args.train_timeout
                states = []
                while trainers and time.monotonic() < end:
                    states = [t["page"].evaluate("() => window.__team") for t in trainers]
                    if all(s["done"] or s["failed"] or s["cancelled"] for s in states):
                        break
                    time.sleep(2)
                res["trainings"] = []
                for t, s in zip(trainers, states):
                    click = s["click"]
                    rel = lambda x: None if x is None or click is None else (x - click) / 1000.0  # noqa: E731
                    queue = None if s["queue_first"] is None else (s["queue_last"] - s["queue_first"]) / 1000.0
                    outcome = ("done" if s["done"] else "failed" if s["failed"] else "cancelled" if s["cancelled"]
                               else "lost" if click is not None else "not clicked")
                    res["trainings"].append({
                        "pr_t": t["pr_t"], "caption": t["caption"], "wall_s": rel(s["done"]), "queue_s": queue,
                        "queue_texts": s["queue_texts"], "queue_from_click_s": rel(s["queue_first"]),
                        "running_after_s": rel(s["running_first"]), "job_box_after_s": rel(s["job_box_first"]),
                        "outcome": outcome, "lost": outcome == "lost", "failed": outcome == "failed",
                        "text": s["text"], "click_epoch": click})
                    print(f"PR_t {t['pr_t']}: {outcome}, wall {rel(s['done'])}, queue {queue} {s['queue_texts']}",
                          flush=True)
            finally:
                for c in ctxs:
                    try:
                        c.close()
                    except Exception:  # noqa: BLE001
                        pass
                browser.close()
                if trainer_browser is not browser:
                    trainer_browser.close()
    finally:
        try:
            if sampler is not None:
                sampler.stop()
                res["rss_peak"] = sampler.peak
                res["rss_samples_n"] = len(sampler.samples)
                res["rss_series"] = sampler.samples[::max(1, len(sampler.samples) // 400)]  # at most ~400 points
            res["server_alive_at_end"] = server.alive()
            res["server_log_tail"] = server.log_tail(2000)
            res["server_tracebacks"] = server.tracebacks()
        finally:
            server.stop()  # whatever failed above, the server this run started goes


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repo", default=str(ROOT), help="the checkout whose app.py is served (default: this one)")
    ap.add_argument("--env", action="append", default=[], metavar="KEY=VALUE",
                    help="extra server environment (repeatable)")
    ap.add_argument("--n", type=int, default=6, help="sessions that train at once")
    ap.add_argument("--repeats", type=int, default=20, help="FairLR repeats per training (1..20)")
    ap.add_argument("--pr-t-from", type=float, default=0.20, help="PR_t of the first session")
    ap.add_argument("--pr-t-step", type=float, default=0.01, help="PR_t step between sessions (keeps fits apart)")
    ap.add_argument("--moves", type=int, default=30, help="slider moves measured")
    ap.add_argument("--trainer-nice", type=int, default=0,
                    help="run the training sessions' browser at this lower CPU priority (0: one browser for all)")
    ap.add_argument("--spacing", type=float, default=1.0, help="seconds between slider moves' starts")
    ap.add_argument("--move-timeout", type=float, default=60.0,
                    help="a move whose readout has not changed by then is lost")
    ap.add_argument("--train-timeout", type=float, default=900.0, help="a run not in its history by then is lost")
    ap.add_argument("--rss-interval", type=float, default=0.5)
    ap.add_argument("--idle-only", action="store_true", help="no trainings: the slider alone (the reference)")
    ap.add_argument("--out", default=None, help="JSON result (default benchmarks/results/bench_team_load[-idle].json)")
    args = ap.parse_args(argv)
    if args.idle_only:
        args.n = 0
    if not 1 <= args.repeats <= 20:
        ap.error("--repeats is 1..20 (the Train page's limit)")
    name = "bench_team_load" + ("-idle" if args.idle_only else "")
    res = {"repo": str(Path(args.repo).resolve()), "repo_commit": git_commit(Path(args.repo)),
           "env": parse_env(args.env), "argv": list(sys.argv[1:] if argv is None else argv),
           "load_before": load_average()}
    rec = Recording(name, vars(args), browser=True, extra_software=("streamlit", "plotly", "playwright"))
    if args.out:
        rec.path = Path(args.out)
    with rec:
        rec.results = res
        try:
            measure(args, res)
        finally:
            res["load_after"] = load_average()
            s = res["summary"] = summary(res)
            rec.markdown = markdown(res, s, args, rec)
            print(rec.markdown, flush=True)
            print(json.dumps(s, indent=1), flush=True)


if __name__ == "__main__":
    main()
