"""Waiting on a condition, never for a fixed time (issue 37, item 5): the browser tests' one polling helper and
their one "the page has finished drawing" wait.

- :func:`wait_until` calls a condition until it holds (returning what it returned) or its deadline passes (an
  ``AssertionError`` saying what was awaited and what was last seen). The pause between two tries is the one
  fixed sleep left, and it only paces the polling.
- :func:`wait_drawn` waits in the page itself, frame by frame, until the Streamlit app is idle, every Plotly chart
  has its ``.main-svg``, the fonts are loaded, and the boxes of the figures and data grids have not moved or
  changed size across two animation frames (a scroll, a resize or a redraw has settled): then a screenshot, an
  accessibility audit or a measurement sees the page as a user does.
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
