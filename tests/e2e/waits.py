"""Waiting on a condition, never for a fixed time (issue 37, item 5): the browser tests' one polling helper and
their one "the page has finished drawing" wait.

- :func:`wait_until` calls a condition until it holds (returning what it returned) or its deadline passes (an
  ``AssertionError`` saying what was awaited and what was last seen). The pause between two tries is the one
  fixed sleep left, and it only paces the polling.
- :func:`wait_drawn` waits in the page itself, frame by frame, until the Streamlit app is idle, every Plotly chart
  has its ``.main-svg``, the fonts are loaded, and the boxes of the figures and data grids have not moved or
  changed size across two animation frames (a scroll, a resize or a redraw has settled): then a screenshot, an
  accessibility audit or a measurement sees the page as a user does.
- :data:`RUN_WATCH` (an init script of every browser context the tests open) keeps, in the page, when the user
  last acted (a press, a key, a typed or chosen value) and when the app's script last began a run, and how many runs
  began: :func:`run_began` waits for a run that began after the last action (the rerun the action asked for) for
  at most a given time, and returns at once when that run has already begun, or even ended.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

POLL_S = 0.05  # the pause between two tries of a condition


def wait_until(condition: Callable[[], Any], timeout: float, what: str | Callable[[Any], str],
               interval: float = POLL_S) -> Any:
    """Call ``condition()`` until it returns something true and return that; after ``timeout`` seconds raise an
    ``AssertionError`` with ``what`` (a string, or a function of the last value returned that says what was
    seen instead)."""
    deadline = time.monotonic() + timeout
    while True:
        got = condition()
        if got:
            return got
        if time.monotonic() >= deadline:
            said = what(got) if callable(what) else what
            raise AssertionError(f"{said} (waited {timeout:g} s)")
        time.sleep(interval)


RUN_WATCH = """(() => {
  const w = window.__fairdashRuns = {input: -1, began: -1, runs: 0};
  for (const type of ['pointerdown', 'keydown', 'input', 'change'])
    document.addEventListener(type, () => { w.input = performance.now(); }, true);
  new MutationObserver(changes => {
    for (const c of changes)
      if (c.oldValue === 'notRunning' && c.target.getAttribute(c.attributeName) !== 'notRunning') {
        w.began = performance.now(); w.runs++;
      }
  }).observe(document, {subtree: true, attributes: true, attributeOldValue: true,
                        attributeFilter: ['data-test-script-state']});
})();"""
_BEGAN = """(busy) => {
  const w = window.__fairdashRuns;
  return !!document.querySelector(busy) || (!!w && w.began >= w.input);
}"""


def run_began(page, busy: str, within: float) -> bool:
    """Whether a run of the app's script has begun since the user's last action in ``page`` (or the app is busy,
    selector ``busy``), waiting at most ``within`` seconds for one: an action that asks for no rerun costs
    ``within``, one whose rerun has come and gone costs nothing."""
    try:
        page.wait_for_function(_BEGAN, arg=busy, timeout=within * 1000)
        return True
    except Exception:  # noqa: BLE001 - Playwright's timeout: no run began
        return False


def runs_begun(page) -> int:
    """How many runs of the app's script have begun in ``page`` since it was loaded (-1 where there is no watch)."""
    return page.evaluate("() => window.__fairdashRuns ? window.__fairdashRuns.runs : -1")


_DRAWN = """(app) => {
  if (document.fonts && document.fonts.status !== 'loaded') return false;
  if (app) {
    const root = document.querySelector('[data-testid="stApp"]');
    if (!root || root.getAttribute('data-test-script-state') !== 'notRunning') return false;
    for (const chart of document.querySelectorAll('[data-testid="stPlotlyChart"]'))
      if (!chart.querySelector('.main-svg')) return false;
  }
  const boxes = Array.from(document.querySelectorAll(
      '.main-svg, [data-testid="stDataFrame"], [data-testid="stDataFrame"] canvas, table'))
    .map(e => { const r = e.getBoundingClientRect(); return [r.x, r.y, r.width, r.height].map(Math.round).join(','); })
    .join(';');
  const seen = window.__fairdashDrawn;
  if (!seen || seen.boxes !== boxes) { window.__fairdashDrawn = {boxes: boxes, frames: 0}; return false; }
  return ++seen.frames >= 2;
}"""


def wait_drawn(page, timeout: float = 60.0, app: bool = True) -> None:
    """Wait until the page has finished drawing (see the module's words); ``app=False`` for a page that is not the
    Streamlit app (an exported report opened from its file)."""
    page.evaluate("() => { delete window.__fairdashDrawn; }")
    page.wait_for_function(_DRAWN, arg=app, polling="raf", timeout=timeout * 1000)
