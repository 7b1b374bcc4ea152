"""The price of deciding without s on Compare (issue 26, item 2), in Chromium against the live app: LR with
the group-rates rule (decides with s) and the target reduction (decides without s) trained on the bundled Adult
sample at PR_t 0.30, compared side by side: the price sentence and the frontier figure, on the page and in the report
of the compared runs. The two runs are made in the test's process and opened as a session file (this test reads
Compare; the Train page's own path, each rule through its radio, is ``test_decisions``)."""
from __future__ import annotations

import pytest
from playwright.sync_api import expect

from fairdash.app.ui.workspace import sample_spec
from fairdash.targeting.target_spec import make_target_spec

from session_files import open_session_file, session_file
from test_trust import _chips, _select, _shot, _wait_figures


@pytest.mark.timeout(900)
def test_compare_prices_deciding_without_sex(page, app_url, st_ui, server_log, adult_table, tmp_path):
    target = make_target_spec("dp", 0.3)
    path = session_file(tmp_path, adult_table, sample_spec("adult", adult_table), target,
                        [{"models": ("lr",), "target": make_target_spec("dp", 0.3, decision="group-rates")},
                         {"models": ("target-reduction",), "target": target}], name="adult.csv")
    st_ui.open_app(page, app_url)
    opened = open_session_file(page, st_ui, path)
    assert "and 2 runs" in opened, opened
    st_ui.goto_page(page, "Compare")
    for label in ("Run 1 (", "Run 2 ("):
        if not any(c.startswith(label) for c in _chips(page, "compare_runs")):
            _select(page, st_ui, "compare_runs", label, exact=False)
    _wait_figures(page, 4)
    st_ui.no_exception(page, server_log)
    main = st_ui.main_text(page)
    assert "The price of deciding without s" in main
    # the verdict in the browser: its side of zero, the rows and the rates matched, named by group (issue 45)
    assert "Deciding without sex costs 1.46 points of accuracy at PR_t 0.30, measured on the population test rows" \
        in main, main[-3000:]
    assert "matched on each group's positive rate (demographic parity): 0.289 (Female) and 0.291 (Male)" in main
    assert "wholly above zero" in main and "not what a refit on other training rows would give" in main
    assert "Error rates per group" in main and "95% interval" in main  # each group's FNR, FPR, precision
    frontier = page.locator(".st-key-fig_frontier_0")
    expect(frontier).to_have_count(1)
    _shot(page, st_ui, "compare_price_of_blindness", ".st-key-price_of_blindness_0")
    # who pays (issue 49): the paragraph, the table of people decided differently and the within-group figure
    assert "Who pays for deciding without sex at PR_t 0.30" in main and "people in group Female" in main
    assert "Without sex, the rule leans most on" in main or "The table cannot tell which feature" in main
    within = page.locator(".st-key-fig_within_group_0")
    expect(within).to_have_count(1)
    within.locator(".main-svg").first.wait_for()
    _shot(page, st_ui, "compare_who_pays", ".st-key-fig_within_group_0")
    # each group's error rates with the calibration error, its confusion matrix, and a model's calibration figure
    assert "calibration error: how far the model's scores are" in main and "confusion matrix on the population" in main
    calibration = page.locator(".st-key-fig_calibration")
    expect(calibration).to_have_count(1)
    calibration.locator(".main-svg").first.wait_for()
    _shot(page, st_ui, "compare_calibration", ".st-key-fig_calibration")

    # ---- and both in the report of the compared runs ----------------------------------------------
    page.locator(".st-key-build_compare_report").get_by_role("button", name="Build a report of these runs").click()
    st_ui.wait_idle(page, timeout=120)
    button = page.locator(".st-key-download_compare_report").get_by_role(
        "button", name="Download the report of these runs (HTML)")
    button.wait_for(timeout=120_000)
    with page.expect_download(timeout=60_000) as info:
        button.click()
    html = open(info.value.path(), encoding="utf-8").read()
    assert "Price of deciding without s" in html and "Deciding without sex costs" in html
    assert "Accuracy of the rules that land on the target, with and without sex" in html
    assert "Who pays for deciding without sex at PR_t 0.30" in html
    assert "Who pays at PR_t 0.30: within each group" in html
    assert "Error rates per group, on the population" in html and "wrongly passed over (FNR)" in html
    assert "calibration error (score vs outcome)" in html and "confusion matrix" in html
    assert "Calibration per group, on the population" in html
    st_ui.no_exception(page, server_log)
