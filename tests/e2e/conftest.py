"""End-to-end set-up: a live ``streamlit run app.py`` and Playwright driving Debian's Chromium.

Fixtures:

- ``streamlit_server`` (session: one per pytest-xdist worker that runs these tests): starts the server the way the
  README does, ``streamlit run app.py`` from the repository root, with the ``streamlit`` script of the interpreter
  that runs pytest and no command-line flags: the app's own ``.streamlit/config.toml`` sets everything else
  (headless, the file watcher), so these tests see what a user sees. Only the port differs: a free one, given
  through the ``STREAMLIT_SERVER_PORT`` environment variable. It waits for ``/_stcore/health`` and stops the
  process (and only it) afterwards. The server gets a private, empty fit cache, so every training in these tests
  is a real one.
- ``app_url``: the server's base URL (``http://127.0.0.1:<port>``).
- ``events``: the server's event log so far (``FAIRDASH_EVENT_LOG``, one JSON line per event).
- ``browser`` (module): Chromium from ``/usr/bin/chromium`` (never a Playwright download), for every
  module here (tests/e2e/test_report_browser.py opens its report files in it too). Module scope on
  purpose: Playwright's sync API runs one instance at a time in a thread, and it is closed before the
  tests outside this directory run.
- ``page``: a fresh browser context (a new Streamlit session) with a 1280x800 viewport.
- ``shared_browser`` (module) and ``shared_page``: one browser context kept for a whole module, and a new tab in it
  per test. A module whose read-only tests all read the same trained work trains it once, in a module fixture of
  its own that opens a ``shared_page``-like tab in ``shared_browser`` and returns the session's ``?session=``
  address; each such test then opens that address in its ``shared_page`` (the same browser, so the same session)
  instead of uploading and training again. Tests that change the work keep their own ``page``.
- ``st_ui``: the helpers every browser test shares for driving Streamlit (open or reload the app and wait until
  it is drawn, wait until the script is idle, go to a page, read a metric, upload a table and confirm it, check
  that no traceback is shown, take a screenshot, and the waits of ``waits.py``: on a condition, never a fixed
  time), as a fixture so the test modules need no import from this file and carry no copies of them.

Screenshots (issue 48, item 7: the suite leaves the checkout as it found it): the tests that picture the app and
the report (tests/e2e/test_dashboard.py, test_trust.py, test_report_browser.py) write them into
:func:`screenshot_dir`: a temporary folder, unless ``FAIRDASH_SCREENSHOTS`` names a folder (relative to the
repository root): ``FAIRDASH_SCREENSHOTS=docs/screenshots python -m pytest tests/e2e/test_dashboard.py
tests/e2e/test_trust.py tests/e2e/test_report_browser.py`` remakes the README's pictures.

The whole e2e directory is skipped only when ``/usr/bin/chromium`` is missing.
"""
from __future__ import annotations

import functools
import os
import re
import tempfile
from pathlib import Path

import pytest

from live_server import free_port, live_streamlit
from waits import RUN_WATCH, run_began, runs_begun, wait_drawn, wait_until

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--no-first-run", "--disable-sync", "--disable-quic"]
SKIP_REASON = "Debian's chromium is not installed (apt-get install chromium)"
VIEWPORT = {"width": 1280, "height": 800}


@pytest.hookimpl(tryfirst=True)  # before ``-m "not e2e"`` deselects
def pytest_collection_modifyitems(config, items):
    """Every test in this directory is marked ``e2e`` (the fast subset leaves them out), and skipped with
    :data:`SKIP_REASON` where Debian's Chromium is missing."""
    skip = None if Path(CHROMIUM).exists() else pytest.mark.skip(reason=SKIP_REASON)
    for item in items:
        if HERE in Path(str(item.fspath)).resolve().parents:
            item.add_marker(pytest.mark.e2e)
            if skip is not None:
                item.add_marker(skip)


@pytest.fixture(scope="session")
def streamlit_server():
    """A live ``streamlit run app.py``; yields ``(base_url, log_path)``."""
    with live_streamlit(Path(tempfile.mkdtemp(prefix="fairdash-e2e-")), free_port()) as (url, log_path):
        yield url, log_path


@pytest.fixture(scope="session")
def app_url(streamlit_server):
    return streamlit_server[0]


@pytest.fixture(scope="session")
def events(streamlit_server):
    """The server's event log so far (``FAIRDASH_EVENT_LOG``): a list of dicts, oldest first."""
    import json

    path = streamlit_server[1].parent / "events.jsonl"
    return lambda: [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.exists() else []


@pytest.fixture(scope="session")
def server_log(streamlit_server):
    """The server's combined stdout/stderr so far (for assertion messages: a traceback shows here)."""
    return lambda: streamlit_server[1].read_text(errors="replace")[-4000:]


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            yield b
        finally:
            b.close()


def new_context(browser, viewport: dict | None = None):
    """A new browser context (its own cookies: another browser to the app), 1280x800 unless ``viewport`` says,
    downloads on, with the waits' watch of the app's runs (:data:`waits.RUN_WATCH`) in each of its pages."""
    ctx = browser.new_context(viewport=viewport or VIEWPORT, accept_downloads=True)
    ctx.set_default_timeout(60_000)
    ctx.add_init_script(RUN_WATCH)
    return ctx


@pytest.fixture
def page(browser):
    ctx = new_context(browser)
    pg = ctx.new_page()
    try:
        yield pg
    finally:
        ctx.close()


@pytest.fixture(scope="module")
def shared_browser(browser):
    """One browser context for the whole module: the home of a session that its read-only tests share."""
    ctx = new_context(browser)
    try:
        yield ctx
    finally:
        ctx.close()


@pytest.fixture
def shared_page(shared_browser):
    """A new tab in the module's ``shared_browser`` (the shared session's own browser), closed after the test."""
    pg = shared_browser.new_page()
    try:
        yield pg
    finally:
        pg.close()


# --------------------------------------------------------------------------------------------------
# Driving Streamlit
# --------------------------------------------------------------------------------------------------
APP_IDLE = '[data-testid="stApp"][data-test-script-state="notRunning"]'
APP_BUSY = '[data-testid="stApp"]:not([data-test-script-state="notRunning"])'


def wait_idle(page, timeout: float = 60.0, settle: float = 0.3) -> None:
    """Wait until the app's script (and any fragment) has finished: the ``stApp`` element says
    ``notRunning`` and the "Running..." status widget is gone. ``settle`` first gives a just-sent
    widget change up to that long to start its rerun, so an idle state from before the action does not count;
    a rerun that has begun since the last action (even one already over) ends that wait at once."""
    if settle:
        run_began(page, APP_BUSY, settle)
    page.wait_for_selector(APP_IDLE, timeout=timeout * 1000)
    page.wait_for_selector('[data-testid="stStatusWidget"]', state="hidden", timeout=timeout * 1000)


_TYPED_IN = """() => { const e = document.activeElement;
  return !!e && (e.tagName === 'TEXTAREA' || (e.tagName === 'INPUT' && ['text', 'number'].includes(e.type) &&
                 e.getAttribute('role') !== 'combobox')); }"""


def goto_page(page, title: str, timeout: float = 60.0) -> None:
    """Click the sidebar link ``title`` and wait for that page's title and an idle app.

    The title is matched whole ("Data" is in "Score new data"). Where a box that one types into has the focus,
    the click can blur it and its change then reruns the new page: the app is briefly idle between the two runs
    with the new page half drawn. So then the wait is for a second run too, for at most half a second."""
    typed_in, runs = page.evaluate(_TYPED_IN), runs_begun(page)
    page.locator('[data-testid="stSidebarNav"] a', has_text=title).first.click()
    heading = page.locator("h1").filter(has_text=re.compile(rf"^\s*{re.escape(title)}\s*$")).first
    heading.wait_for(timeout=timeout * 1000)
    wait_idle(page, timeout, settle=0)  # the heading is the new page's run's: it has begun
    if typed_in:
        try:
            page.wait_for_function(f"() => !window.__fairdashRuns || window.__fairdashRuns.runs >= {runs + 2}",
                                   timeout=500)
        except Exception:  # noqa: BLE001 - the blur changed nothing: no second run
            pass
        wait_idle(page, timeout, settle=0)
    heading.wait_for(timeout=timeout * 1000)


def open_app(page, url: str, session: bool = False, timeout: float = 90.0) -> None:
    """Open ``url`` (the app or one of its pages) and wait until the page is drawn and the app idle; with
    ``session``, also until the page has given the browser its session (``?session=`` in the address) and its
    browser id (a cookie): before a reload, or before the address is opened in another browser (a reload before
    the cookie is set is another browser's)."""
    page.goto(url)
    _loaded(page, session, timeout)


def reload_app(page, session: bool = False, timeout: float = 90.0) -> None:
    """Reload the page, then wait as :func:`open_app` does."""
    page.reload()
    _loaded(page, session, timeout)


def _loaded(page, session: bool, timeout: float) -> None:
    page.locator('[data-testid="stSidebarNav"]').wait_for(timeout=timeout * 1000)
    page.locator("h1").first.wait_for(timeout=timeout * 1000)
    wait_idle(page, timeout=timeout)
    if session:
        page.wait_for_function("() => !!new URLSearchParams(location.search).get('session')", timeout=timeout * 1000)
        page.wait_for_function("() => document.cookie.includes('fairdash_browser=')", timeout=timeout * 1000)


SLIDER_SETTLED = """() => {
  const status = document.querySelector('[data-testid="stStatusWidget"]');  // "Running...", while it is visible
  const busy = !!status && status.getClientRects().length > 0 && getComputedStyle(status).visibility !== 'hidden';
  const idle = !!document.querySelector('[data-testid="stApp"][data-test-script-state="notRunning"]') && !busy;
  const slider = document.querySelector('.st-key-pr_t_slider input[type="range"]');
  const box = document.querySelector('.st-key-pr_t_input input');
  const agree = !!idle && !!slider && !!box && box.value === Number(slider.getAttribute('value')).toFixed(3);
  window.__sliderSettled = agree ? (window.__sliderSettled || 0) + 1 : 0;
  return window.__sliderSettled >= 2;
}"""


def wait_slider_settled(page, timeout: float = 60.0) -> None:
    """Wait until the Target page's PR_t slider and its number box (which the server draws) agree, with the app idle,
    over two animation frames: every slider move has reached the server and its rerun is drawn."""
    page.evaluate("() => { window.__sliderSettled = 0; }")
    page.wait_for_function(SLIDER_SETTLED, polling="raf", timeout=timeout * 1000)


def no_exception(page, server_log) -> None:
    """No Streamlit traceback on the page (the server's log in the message where there is one)."""
    exc = page.locator('[data-testid="stException"]')
    assert exc.count() == 0, f"a traceback is shown on the page:\n{exc.first.inner_text()}\n{server_log()}"


def main_text(page) -> str:
    return page.locator('[data-testid="stMain"]').inner_text()


def metric_text(page, key: str, label: str | None = None) -> str:
    """The value of the ``st.metric`` inside the container with ``key`` (the first, or the one with
    ``label``)."""
    metrics = page.locator(f'.st-key-{key} [data-testid="stMetric"]')
    if label is not None:
        metrics = metrics.filter(has=page.locator('[data-testid="stMetricLabel"]', has_text=label))
    return metrics.first.locator('[data-testid="stMetricValue"]').inner_text().strip()


_TEMPORARY_SHOTS: list[Path] = []  # pytest's temporary folder for this session's screenshots (the st_ui fixture's)


@functools.cache
def screenshot_dir() -> Path:
    """Where the screenshots go: the folder ``FAIRDASH_SCREENSHOTS`` names (relative to the repository root; the
    README's pictures are ``docs/screenshots``), else a temporary folder (pytest's, kept for the last three runs
    as its ``tmp_path`` folders are), so that a test run leaves the checkout as it found it."""
    asked = os.environ.get("FAIRDASH_SCREENSHOTS", "").strip()
    if asked:
        out = ROOT / asked
    else:
        out = _TEMPORARY_SHOTS[0] if _TEMPORARY_SHOTS else Path(tempfile.mkdtemp(prefix="fairdash-screenshots-"))
    out.mkdir(parents=True, exist_ok=True)
    return out


def screenshot(page, name: str) -> Path:
    """<name>.png in :func:`screenshot_dir` at the page's viewport (1280x800), after the app is idle."""
    out = screenshot_dir() / f"{name}.png"
    wait_idle(page, settle=0.1)
    wait_drawn(page)  # Plotly and the data grids have finished drawing
    page.screenshot(path=str(out), full_page=False, animations="disabled")
    return out


def upload(page, name: str, raw: bytes, confirm: bool = True) -> None:
    """Go to the Data page and upload ``raw`` as the file ``name``; then confirm its suggested choices, or, with
    ``confirm=False``, leave it a pending table (choose its columns, then :func:`confirm_upload`)."""
    goto_page(page, "Data")
    page.locator(".st-key-data_source").get_by_text("Upload a file", exact=True).click()
    wait_idle(page)
    page.locator('.st-key-upload_file input[type="file"]').set_input_files(
        files=[{"name": name, "mimeType": "text/csv", "buffer": raw}])
    # an upload's guessed columns become the task only when confirmed (issue 12)
    page.locator(".st-key-confirm_task button").wait_for(timeout=90_000)
    wait_idle(page)
    if confirm:
        confirm_upload(page, name)


def confirm_upload(page, name: str) -> None:
    """Use the pending upload ``name`` with the choices shown (answering whether a positive label is favourable
    where the page asks)."""
    button = page.locator(".st-key-confirm_task button")
    assert button.inner_text().strip() == f"Use {name} with these choices", button.inner_text()
    answer_if_asked(page)
    button.click()
    page.get_by_text(f"{name} is now the current data set").wait_for(timeout=90_000)
    wait_idle(page)


def answer_if_asked(page, answer: str = "Favourable") -> None:
    """Where the Data page asks whether a positive label is favourable for the person (the label's words do not
    say; issue 36, item 5: the Use button waits for the answer), answer it (``"Favourable"`` or ``"Unfavourable"``)."""
    question = page.locator(".st-key-positive_is")
    if question.count() and not question.locator("input:checked").count():
        question.locator("label").filter(has_text=re.compile(rf"^{answer} \(")).click()
        wait_idle(page)
        page.locator(".st-key-confirm_task button:not([disabled])").wait_for(timeout=60_000)


def download(page, key: str, folder, name: str, timeout: float = 60_000):
    """Press the download button with ``key`` and save what it downloads as ``folder / name`` (returned); a button
    with help is drawn twice, so the visible one is pressed."""
    button = page.locator(f".st-key-{key} button:visible").first
    button.wait_for(timeout=120_000)
    with page.expect_download(timeout=timeout) as info:
        button.click()
    assert info.value.failure() is None, info.value.failure()
    path = Path(folder) / name
    info.value.save_as(path)
    return path


class _StUi:
    download = staticmethod(download)
    new_context = staticmethod(new_context)
    upload = staticmethod(upload)
    confirm_upload = staticmethod(confirm_upload)
    answer_if_asked = staticmethod(answer_if_asked)
    wait_idle = staticmethod(wait_idle)
    wait_slider_settled = staticmethod(wait_slider_settled)
    goto_page = staticmethod(goto_page)
    open_app = staticmethod(open_app)
    reload_app = staticmethod(reload_app)
    no_exception = staticmethod(no_exception)
    wait_drawn = staticmethod(wait_drawn)
    wait_until = staticmethod(wait_until)
    main_text = staticmethod(main_text)
    metric_text = staticmethod(metric_text)
    screenshot = staticmethod(screenshot)
    screenshot_dir = staticmethod(screenshot_dir)


@pytest.fixture(scope="session")  # stateless: module fixtures that train a shared session use it too
def st_ui(tmp_path_factory):
    if not _TEMPORARY_SHOTS:
        _TEMPORARY_SHOTS.append(tmp_path_factory.mktemp("screenshots"))
    return _StUi
