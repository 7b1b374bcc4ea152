"""Decisions that land on the target (issue 18), in Chromium against the live app: FairLR trained on Adult at
PR_t 0.30 with each decision rule, the target view on Compare, and the report exported from Export naming
the rule and saying "decides with s"."""
from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from test_trust import _chips, _export_report, _radio, _select, _set_models, _shot, _train, _wait_figures

RULE_WORDS = {  # the Train page's radio labels (fairdash.targeting.decision.RULES[...].words)
    "threshold": "score above 1/2 (the paper's rule)",
    "overall-rate": "one cut for everyone, set to the overall target rate",
    "group-rates": "one cut per group, set to each group's target (decides with s)",
}


def _set_pr_t(page, st_ui, value: str) -> None:
    st_ui.goto_page(page, "Target")
    box = page.locator(".st-key-pr_t_input input")
    box.fill(value)
    box.press("Enter")
    expect(page.locator('.st-key-pr_t_slider input[type="range"]')).to_have_attribute("value", value)
    st_ui.wait_idle(page)


@pytest.mark.timeout(900)
def test_each_rule_trains_shows_the_target_view_and_the_report_names_it(page, app_url, st_ui, server_log, tmp_path):
    st_ui.open_app(page, app_url)
    _set_pr_t(page, st_ui, "0.3")
    st_ui.goto_page(page, "Train")
    _set_models(page, st_ui, ["FairLR"])
    for rule, words in RULE_WORDS.items():
        _radio(page, st_ui, "decision", words)
        _train(page, st_ui, server_log)
        main = st_ui.main_text(page)
        assert "FairLR" in main
        if rule == "group-rates":
            assert "decides with s" in main

    st_ui.goto_page(page, "Compare")
    # runs you can tell apart (issue 20, item 5): three labels, each with its number, time, data, s and y,
    # criterion, target and (where there is one) its rule; no two alike
    page.locator(".st-key-compare_runs input[role=combobox]").click()
    titles = sorted({t for t in page.get_by_role("option").all_inner_texts() + _chips(page, "compare_runs")
                     if t.startswith("Run ")})  # (the list also offers "Select all")
    page.keyboard.press("Escape")
    st_ui.wait_idle(page)
    assert len(titles) == 3 and all(re.match(r"Run [123] \(\d\d:\d\d UTC\): FairLR · Adult", t) for t in titles), titles
    assert all("s = sex, y = salary · demographic parity, PR_t 0.300" in t for t in titles), titles
    assert (sum("overall-rate" in t for t in titles) == 1
            and sum("group-rates (decides with s)" in t for t in titles) == 1)
    for label in ("Run 1 (", "Run 2 ("):  # show every run of the session together
        chips = _chips(page, "compare_runs")
        if not any(c.startswith(label) for c in chips):
            _select(page, st_ui, "compare_runs", label, exact=False)
    _wait_figures(page, 3)
    st_ui.no_exception(page, server_log)
    target = page.locator(".st-key-fig_target")
    expect(target).to_have_count(1)
    text = page.evaluate("() => Array.from(document.querySelectorAll('.st-key-fig_target svg text'))"
                         ".map(e => e.textContent).join(' | ')")
    assert re.search(r"[-+]0\.\d{3}", text), text  # the signed gaps are written on the figure
    assert "decides with s" in st_ui.main_text(page)
    _shot(page, st_ui, "compare_target_view", ".st-key-fig_target")

    st_ui.goto_page(page, "Export")
    _select(page, st_ui, "export_run", "group-rates", exact=False)
    html = _export_report(page, st_ui, server_log, tmp_path).read_text(encoding="utf-8")
    assert "group-rates" in html and "decides with s" in html
    assert "Decision rule" in html and "worst gap" in html
