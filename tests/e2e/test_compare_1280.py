"""Compare readable at 1280 px (issue 27, item 5), in Chromium against the live app: three runs of FairLR and
LR (one per decision rule) on a 3,000-row Adult table, with two groups (sex) and with four (race), opened as a
session file made in the test's process and shown together on Compare in a 1280x800 window. Measured on the
drawn page: each figure's plot area as a share of the figure, where its legend sits (beside, below or over the
plot), whether point labels overlap one another or are cut by the figure's edge, and whether the results table's
worst-gap column is within the view without scrolling.

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
from test_trust import _adult_3k, _select, _wait_figures
from waits import wait_drawn

pytestmark = pytest.mark.e2e

RULES = ("threshold", "overall-rate", "group-rates")  # the paper's rule, one cut for everyone, one cut per group
FIGURES = ("fig_pr", "fig_tpr", "fig_accuracy_fairness", "fig_target")

_MEASURE = """(key) => {
  const root = document.querySelector('.st-key-' + key + ' .js-plotly-plot');
  if (!root) return null;
  const box = e => { const r = e.getBoundingClientRect(); return {x: r.x, y: r.y, w: r.width, h: r.height}; };
  const fig = box(root.querySelector('.main-svg'));
  const plot = box(root.querySelector('.nsewdrag') || root.querySelector('.bglayer rect'));
  const leg = root.querySelector('.legend');
  const legend = leg ? box(leg) : null;
  const labels = Array.from(root.querySelectorAll('.scatterlayer .textpoint text'))
    .filter(t => t.textContent.trim()).map(t => Object.assign(box(t), {text: t.textContent}));
  return {fig, plot, legend, labels};
}"""


_LEGENDS_DRAWN = """(keys) => keys.every(k => {
  const leg = document.querySelector('.st-key-' + k + ' .js-plotly-plot .legend');
  return leg && leg.getBoundingClientRect().width > 0;
})"""


def _overlap(a, b) -> float:
    w = min(a["x"] + a["w"], b["x"] + b["w"]) - max(a["x"], b["x"])
    h = min(a["y"] + a["h"], b["y"] + b["h"]) - max(a["y"], b["y"])
    return max(w, 0) * max(h, 0)


def _measure(page, key: str) -> dict | None:
    m = page.evaluate(_MEASURE, key)
    if m is None:
        return None
    fig, plot, legend, labels = m["fig"], m["plot"], m["legend"], m["labels"]
    out = {"figure_px": [round(fig["w"]), round(fig["h"])], "plot_px": [round(plot["w"]), round(plot["h"])],
           "plot_area_fraction": round(plot["w"] * plot["h"] / max(fig["w"] * fig["h"], 1), 3)}
    if legend is not None and legend["w"] > 0:
        where = ("over the plot" if _overlap(legend, plot) > 0.05 * legend["w"] * legend["h"]
                 else "below" if legend["y"] >= plot["y"] + plot["h"] - 1 else
                 "right" if legend["x"] >= plot["x"] + plot["w"] - 1 else
                 "above" if legend["y"] + legend["h"] <= plot["y"] + 1 else "left")
        out.update(legend=where, legend_area_fraction=round(legend["w"] * legend["h"] / max(fig["w"] * fig["h"], 1), 3))
    pairs = [(a["text"], b["text"]) for i, a in enumerate(labels) for b in labels[i + 1:] if _overlap(a, b) > 1.0]
    cut = [a["text"] for a in labels if a["x"] < fig["x"] - 0.5 or a["x"] + a["w"] > fig["x"] + fig["w"] + 0.5
           or a["y"] < fig["y"] - 0.5 or a["y"] + a["h"] > fig["y"] + fig["h"] + 0.5]
    out.update(labels=len(labels), overlapping_label_pairs=pairs, cut_labels=cut)
    return out


def _all_chips(page) -> list[str]:
    return page.locator(".st-key-compare_runs [data-tag]").all_inner_texts()


def _show_runs(page, st_ui, count: int) -> None:
    """Choose runs 1 to ``count`` on Compare, each where it is not shown already."""
    for number in range(1, count + 1):
        if not any(c.startswith(f"Run {number} (") for c in _all_chips(page)):
            _select(page, st_ui, "compare_runs", f"Run {number} (", exact=False)


# the Compare page's results table, in its keyed container (the error rates and confusion matrices below it are
# tables too, and while the page reruns a table of the run before may still stand where this one will be drawn)
RESULTS_TABLE = '.st-key-compare_results [data-testid="stDataFrame"]'


def _results_table(page):
    """The results table's locator, once the page has drawn it."""
    table = page.locator(RESULTS_TABLE)
    table.wait_for(state="visible", timeout=60_000)
    return table


def _table_headers(table) -> list[str]:
    """The results table's column headers that the grid draws in its view: the grid (a canvas) keeps an
    accessible copy of the cells it draws in the DOM, the columns scrolled out of view left out."""
    return table.evaluate("e => Array.from(e.querySelectorAll('[role=columnheader]')).map(c => c.textContent.trim())")


@pytest.mark.timeout(900)
@pytest.mark.parametrize("groups", [2, 4])
def test_compare_reads_at_1280_px_with_three_runs(page, app_url, st_ui, server_log, adult_table, tmp_path, groups):
    df = _adult_3k(adult_table)
    if groups == 4:
        df["race"] = df["race"].where(df["race"].isin(["White", "Black", "Asian-Pac-Islander"]), "Other")
        spec = TaskSpec("race", "salary", y1_values=(">50K",), s_multi=True, drop=("fnlwgt",),
                        positive_favourable=True)
    else:
        spec = TaskSpec("sex", "salary", ("Male",), (">50K",), drop=("fnlwgt",), positive_favourable=True)
    # the three runs (FairLR and LR under each rule), made here and opened as a session file: this test reads the
    # Compare page; the Train page's rules have their own test (test_decisions)
    path = session_file(tmp_path, df, spec, make_target_spec("dp", 0.3),
                        [{"models": ("fair-lr", "lr"), "target": make_target_spec("dp", 0.3, decision=rule)}
                         for rule in RULES], name=f"adult_{groups}groups.csv")
    st_ui.open_app(page, app_url)
    assert "and 3 runs" in open_session_file(page, st_ui, path)
    st_ui.goto_page(page, "Compare")
    _show_runs(page, st_ui, 3)
    expect(page.locator(".st-key-compare_runs [data-tag]")).to_have_count(3)
    _wait_figures(page, 4)
    wait_drawn(page)
    st_ui.no_exception(page, server_log)

    out = os.environ.get("FAIRDASH_MEASURE_DIR")
    measured = {key: _measure(page, key) for key in FIGURES}
    table = _results_table(page)
    table.evaluate("e => e.scrollIntoView({block: 'center'})")
    wait_drawn(page)
    # the grid draws on a canvas, then keeps the accessible copy of its header cells that _table_headers reads
    table.locator("[role=columnheader]").first.wait_for(state="attached", timeout=60_000)
    headers = _table_headers(table)
    view = page.viewport_size["width"]
    box = table.bounding_box()
    measured["table_px"] = [round(box["x"]), round(box["width"])]
    measured["table_headers_in_view"] = headers
    if out:
        folder = Path(out)
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"compare_{groups}groups.json").write_text(json.dumps(measured, indent=1))
        page.screenshot(path=str(folder / f"compare_{groups}groups_table.png"))
        for key in ("fig_pr", "fig_accuracy_fairness", "fig_target"):
            page.locator(f".st-key-{key}").first.evaluate("e => e.scrollIntoView({block: 'start'})")
            wait_drawn(page)
            page.screenshot(path=str(folder / f"compare_{groups}groups_{key}.png"))

    # the worst gap is read without scrolling the table sideways, beside the model and its accuracy
    assert box["x"] + box["width"] <= view, box
    assert "worst gap" in headers[:4], headers
    for key in ("fig_pr", "fig_tpr", "fig_accuracy_fairness"):
        m = measured[key]
        assert m["legend"] in ("below", "above"), (key, m)  # never beside a half-width plot, never over it
        assert not m["overlapping_label_pairs"] and not m["cut_labels"], (key, m)
