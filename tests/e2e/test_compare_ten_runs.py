"""Readable at 1280 x 800 with 10 runs and long group names (issue 36, item 6), in Chromium against the live app: a
3,000-row Adult table whose two groups are named with 30 characters and more and ten runs of it (opened as a
session file, made in the test's process), on Compare at once. Measured
on the drawn page: every metric of the selected target shows its whole value (none cut to "0.…"); the target view's
row labels, its axis title and its gap labels lie within the figure; no serious axe-core violation on Compare, nor in
the report of the shown runs.

``FAIRDASH_MEASURE_DIR`` (optional): a folder where the measurements (JSON) and screenshots are written."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from playwright.sync_api import expect

from fairdash.data import TaskSpec
from fairdash.targeting.target_spec import make_target_spec

from session_files import open_session_file, session_file
from test_accessibility import AXE, _audit
from test_compare_1280 import _measure, _show_runs
from test_trust import _adult_3k, _wait_figures

pytestmark = pytest.mark.e2e

RUNS = 10
NAMES = {"Female": "Women who answered the 1994 census", "Male": "Men who answered the 1994 census"}

_CUT_VALUES = """() => Array.from(document.querySelectorAll('[data-testid="stMain"] [data-testid="stMetricValue"]'))
  .filter(e => e.scrollWidth > e.clientWidth + 1 || e.innerText.includes('…')).map(e => e.innerText)"""

_AXIS = """(key) => {
  const root = document.querySelector('.st-key-' + key + ' .js-plotly-plot');
  const fig = root.querySelector('.main-svg').getBoundingClientRect();
  const inside = e => { const r = e.getBoundingClientRect();
    return r.width > 0 && r.x >= fig.x - 0.5 && r.x + r.width <= fig.x + fig.width + 0.5
           && r.y >= fig.y - 0.5 && r.y + r.height <= fig.y + fig.height + 0.5; };
  const ticks = Array.from(root.querySelectorAll('.yaxislayer-above .ytick text'));
  const title = root.querySelector('.g-xtitle text');
  const ytitle = root.querySelector('.g-ytitle text');
  return {ticks: ticks.length, ticks_outside: ticks.filter(t => !inside(t)).map(t => t.textContent),
          title: title ? title.textContent : null, title_inside: title ? inside(title) : false,
          ytitle: ytitle ? ytitle.textContent : null, ytitle_inside: ytitle ? inside(ytitle) : true};
}"""


@pytest.mark.skipif(not AXE.exists(), reason="axe-core is not installed: run `npm ci` (package.json) at the "
                                             "repository root to install it from the npm registry")
@pytest.mark.timeout(1200)
def test_compare_reads_at_1280_px_with_ten_runs_and_long_group_names(page, app_url, st_ui, server_log, adult_table,
                                                                      tmp_path):
    page.set_viewport_size({"width": 1280, "height": 800})
    df = _adult_3k(adult_table)
    df["sex"] = df["sex"].map(NAMES)
    spec = TaskSpec("sex", "salary", (NAMES["Male"],), (">50K",), drop=("fnlwgt",), positive_favourable=True)
    # ten different requests (1 to 10 repeats of LR), made here and opened as a session file: this test reads the
    # Compare page of ten runs; the Train page's own path has its tests (test_decisions, test_navigation)
    path = session_file(tmp_path, df, spec, make_target_spec("dp", 0.3),
                        [{"models": ("lr",), "seeds": tuple(range(repeats))} for repeats in range(1, RUNS + 1)],
                        name="adult_long_group_names.csv")
    st_ui.open_app(page, app_url)
    opened = open_session_file(page, st_ui, path)
    assert f"and {RUNS} runs" in opened, opened
    st_ui.goto_page(page, "Compare")
    _show_runs(page, st_ui, RUNS)
    expect(page.locator(".st-key-compare_runs [data-tag]")).to_have_count(RUNS)
    _wait_figures(page, 4)
    st_ui.wait_idle(page)
    st_ui.no_exception(page, server_log)

    cut = page.evaluate(_CUT_VALUES)
    target = _measure(page, "fig_target")
    axis = page.evaluate(_AXIS, "fig_target")
    scatters = {key: page.evaluate(_AXIS, key) for key in ("fig_pr", "fig_tpr")}
    found = _audit(page, "Compare")
    out = os.environ.get("FAIRDASH_MEASURE_DIR")
    if out:
        folder = Path(out)
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "compare_10runs.json").write_text(json.dumps({"cut_values": cut, "target": target, "axis": axis,
                                                                "scatters": scatters}, indent=1))
        page.screenshot(path=str(folder / "compare_10runs_top.png"))
        page.locator(".st-key-fig_target").first.evaluate("e => e.scrollIntoView({block: 'start'})")
        page.screenshot(path=str(folder / "compare_10runs_target_view.png"))
    assert cut == [], cut  # every metric's value is whole
    assert axis["ticks"] >= 2 * RUNS and axis["ticks_outside"] == [], axis  # every row's label within the figure
    assert axis["title"] and axis["title_inside"], axis
    assert target["cut_labels"] == [], target  # the gap written beside each point is within the figure
    assert target["plot_px"][0] >= 400, target  # the long names do not squeeze the plot away
    for key, m in scatters.items():  # the axis titles name the long groups within the figure
        assert m["title_inside"] and m["ytitle_inside"] and "census" in m["ytitle"], (key, m)
    assert found == [], "\n".join(found)
