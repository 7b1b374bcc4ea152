"""An accessibility audit of every page of the live app (issue 20, item 7).

axe-core (installed from the npm registry by ``npm ci``, see ``package.json`` and ``.ci/run``) is
injected by Playwright into the running dashboard on each page: Data, Target, Train (before and after
training), Compare with a trained run, Export and How it works. No page may have a ``serious`` or
``critical`` violation (colour contrast of the caption text was one on every page). Nothing is
downloaded while the test runs: without ``node_modules/axe-core`` the test is skipped with that reason.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from test_trust import _train_quick_fair_lr
from waits import wait_drawn

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"
BAD = ("serious", "critical")
TRAIN_TIMEOUT = 300.0  # FairLR on Adult takes 10-60 s on 2 busy cores; generous on purpose


def _audit(page, where: str) -> list[str]:
    """axe-core's serious and critical violations on the page as it is now, one line per element."""
    if not page.evaluate("() => typeof window.axe !== 'undefined'"):
        page.add_script_tag(path=str(AXE))
    wait_drawn(page)  # Plotly and the data grids have finished drawing
    result = page.evaluate("async () => await window.axe.run(document, {resultTypes: ['violations']})")
    lines = []
    for v in result["violations"]:
        if v.get("impact") not in BAD:
            continue
        for node in v["nodes"]:
            summary = (node.get("failureSummary") or "").replace("\n", " ")
            lines.append(f"{where}: {v['impact']} {v['id']} ({v['help']}) at {node.get('target')}: {summary[:300]}")
    return lines


@pytest.mark.skipif(not AXE.exists(), reason="axe-core is not installed: run `npm ci` (package.json) at the "
                                             "repository root to install it from the npm registry")
@pytest.mark.timeout(600)
def test_no_serious_accessibility_violation_on_any_page(page, app_url, st_ui, server_log):
    found: list[str] = []

    page.goto(app_url)
    page.get_by_role("heading", name="Groups and base rates").wait_for(timeout=90_000)
    st_ui.wait_idle(page)
    st_ui.no_exception(page, server_log)
    found += _audit(page, "Data")

    st_ui.goto_page(page, "Target")
    page.locator(".st-key-ceiling_readout").wait_for()
    st_ui.no_exception(page, server_log)
    found += _audit(page, "Target")

    # Train FairLR alone (one repeat, a loose tolerance, as the dashboard test does) for Compare.
    st_ui.goto_page(page, "Train")
    st_ui.no_exception(page, server_log)
    found += _audit(page, "Train")
    _train_quick_fair_lr(page, st_ui, server_log)
    found += _audit(page, "Train (with results)")

    st_ui.goto_page(page, "Compare")
    page.wait_for_function(
        "() => document.querySelectorAll('[data-testid=\"stPlotlyChart\"] .js-plotly-plot .main-svg').length >= 3",
        timeout=60_000)
    st_ui.no_exception(page, server_log)
    found += _audit(page, "Compare")

    for title in ("Export", "How it works"):
        st_ui.goto_page(page, title)
        st_ui.no_exception(page, server_log)
        found += _audit(page, title)

    assert not found, "serious or critical accessibility violations (axe-core):\n" + "\n".join(found)
