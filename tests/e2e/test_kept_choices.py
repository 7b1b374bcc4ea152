"""Pages that keep what you chose (issue 36, item 4), in Chromium against the live app: Compare's selection of runs
stays across a visit to another page and across a reload of the session's address; choosing a bundled sample loads
it, and the sample list still shows it after a visit to another page and after a reload."""
from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from test_trust import _chips, _select, _set_models, _sidebar, _train

pytestmark = pytest.mark.e2e


def _compare_chips(page) -> list[str]:
    return sorted(re.match(r"Run \d+", c).group(0) for c in _chips(page, "compare_runs"))


def _expect_compare_chips(page, st_ui, want: list[str], timeout: float = 60.0) -> None:
    """Compare's selection shows the runs ``want``, once the app is idle: waited for, not read once (on a busy
    machine the rerun of a choice, a page or a reload may begin after the idle wait's settle, and a read then
    saw the page before it; a selection that was lost never comes back, and the wait fails with what it saw)."""
    def shown():
        st_ui.wait_idle(page, timeout=timeout, settle=0)
        return _compare_chips(page) == want

    st_ui.wait_until(shown, timeout, lambda _: f"Compare's selection is {_compare_chips(page)}, not {want}")


def _shown_sample(page) -> str:
    """What the sample list shows as chosen (its select box's value, not its label)."""
    return page.locator(".st-key-sample_choice input[role=combobox]").first.input_value()


@pytest.mark.timeout(600)
def test_compares_selection_stays_across_pages_and_a_reload(page, app_url, st_ui, server_log):
    st_ui.open_app(page, app_url + "/train")
    # two runs on the default task: two quick models (what is read is the runs' numbers, not their models)
    for model in ("LR", "Kamiran & Calders"):
        _set_models(page, st_ui, [model])
        _train(page, st_ui, server_log)
    st_ui.goto_page(page, "Compare")
    _expect_compare_chips(page, st_ui, ["Run 2"])  # the newest, on a first visit
    _select(page, st_ui, "compare_runs", "Run 1", exact=False)
    _expect_compare_chips(page, st_ui, ["Run 1", "Run 2"])
    st_ui.goto_page(page, "Export")
    st_ui.goto_page(page, "Compare")
    _expect_compare_chips(page, st_ui, ["Run 1", "Run 2"])
    st_ui.reload_app(page)
    expect(page.locator("h1", has_text="Compare")).to_have_count(1)
    _expect_compare_chips(page, st_ui, ["Run 1", "Run 2"])
    st_ui.no_exception(page, server_log)


@pytest.mark.timeout(300)
def test_choosing_a_sample_loads_it_and_the_list_keeps_it(page, app_url, st_ui, server_log):
    st_ui.open_app(page, app_url)  # the Data page is the app's first page (its address is the app's own)
    _select(page, st_ui, "sample_choice", "COMPAS", exact=False)
    st_ui.wait_idle(page, timeout=90)
    expect(page.locator(".st-key-sidebar_task")).to_contain_text("COMPAS", timeout=60_000)  # loaded: no second button
    chosen = _shown_sample(page)
    assert "COMPAS" in chosen, chosen
    st_ui.goto_page(page, "Target")
    assert "COMPAS" in _sidebar(page)
    st_ui.goto_page(page, "Data")
    assert "COMPAS" in _shown_sample(page)
    st_ui.reload_app(page)
    assert "COMPAS" in _shown_sample(page)
    assert "COMPAS" in _sidebar(page)
    st_ui.no_exception(page, server_log)
