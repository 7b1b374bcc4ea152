"""Issue 20, item 1 in the browser: a training survives navigation. FairLR + LR + FairGP on the default
Adult task, another page clicked while its first fit runs: that page shows the training's progress in the sidebar,
and when it ends the run is in the history (Compare). A Cancel button stops a training from another page
and says so. A pending upload's changed choices survive a page switch and are the ones confirmed."""
from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from test_trust import TRAIN_TIMEOUT, _adult_3k, _chips, _csv, _set_models, _sidebar, _train

pytestmark = pytest.mark.e2e

JOB = ".st-key-training_job"
NOTE = ".st-key-training_note"


def _progress_text(page) -> str:
    return page.locator(f'{JOB} [data-testid="stProgress"]').first.inner_text()


def _start_training(page, st_ui, models: list[str], repeats: int = 1) -> None:
    st_ui.goto_page(page, "Train")
    _set_models(page, st_ui, models)
    if repeats != 1:
        box = page.locator(".st-key-repeats input")
        box.fill(str(repeats))
        box.press("Enter")
        st_ui.wait_idle(page)
    button = page.locator(".st-key-train_button button")
    assert button.is_enabled(), st_ui.main_text(page)[-1200:]
    button.click()
    page.locator(JOB).wait_for(timeout=60_000)


@pytest.mark.timeout(900)
def test_a_training_finishes_and_joins_the_history_while_the_analyst_is_elsewhere(page, app_url, st_ui, server_log):
    st_ui.open_app(page, app_url + "/train")
    # long enough to walk around in: a FairGP fit on the whole of Adult takes seconds even on a fast machine, and
    # two page switches a fraction of one
    _start_training(page, st_ui, ["FairLR", "LR", "FairGP"])
    expect(page.locator(".st-key-train_button button")).to_be_disabled()
    page.locator(f'{JOB} [data-testid="stProgress"]').wait_for(timeout=120_000)  # the first fit is under way
    st_ui.goto_page(page, "Target")  # during the training
    st_ui.no_exception(page, server_log)
    job = page.locator(JOB)
    expect(job).to_be_visible()
    assert "Training 3 fit(s)" in job.inner_text(), job.inner_text()
    expect(job.locator(".st-key-cancel_training button:visible").first).to_be_visible()
    first = _progress_text(page)
    st_ui.goto_page(page, "Compare")  # the progress is on every page, and it moves
    if page.locator(JOB).count():  # (on an idle machine the fits may all be done by now: then the run is here)
        assert "Nothing trained yet" in st_ui.main_text(page)
    page.wait_for_function(
        "([sel, before]) => { const p = document.querySelector(sel); return !p || p.innerText !== before; }",
        arg=[f'{JOB} [data-testid="stProgress"]', first], timeout=120_000)
    # the end: the box goes, a note says so, and the run is in the history on the page we are on
    page.locator(JOB).wait_for(state="detached", timeout=TRAIN_TIMEOUT * 1000)
    expect(page.locator(NOTE).filter(has_text="run 1 is in the run history")).to_be_visible(timeout=30_000)
    st_ui.wait_idle(page, timeout=120)
    st_ui.no_exception(page, server_log)
    page.locator(".st-key-compare_runs [data-tag]").first.wait_for(timeout=60_000)
    chosen = _chips(page, "compare_runs")
    assert len(chosen) == 1 and re.match(r"Run 1\b", chosen[0]) and "FairLR, LR, FairGP" in chosen[0], chosen
    assert "Nothing trained yet" not in st_ui.main_text(page)
    assert "Training failed" not in page.locator(NOTE).inner_text()
    # the Train page: free again, with the run's results
    st_ui.goto_page(page, "Train")
    expect(page.locator(".st-key-train_button button")).to_be_enabled()
    assert page.get_by_role("heading", name=re.compile("Results")).count() >= 1
    assert "FairGP" in st_ui.main_text(page)
    st_ui.no_exception(page, server_log)


@pytest.mark.timeout(600)
def test_cancel_from_another_page_says_so_and_adds_nothing(page, app_url, st_ui, server_log):
    st_ui.open_app(page, app_url + "/train")
    # seed 0 may be in the server's fit cache already (the module's first test): nine more FairGP fits on Adult
    # take far longer than reaching the Cancel button, however busy the machine
    _start_training(page, st_ui, ["FairGP"], repeats=10)
    st_ui.goto_page(page, "Data")
    page.locator(f"{JOB} .st-key-cancel_training button:visible").first.click()
    note = page.locator(NOTE)
    note.wait_for(timeout=TRAIN_TIMEOUT * 1000)
    expect(note).to_contain_text("Training cancelled")
    expect(note).to_contain_text("nothing was added to the run history")
    assert page.locator(JOB).count() == 0
    st_ui.no_exception(page, server_log)
    st_ui.goto_page(page, "Compare")
    assert "Nothing trained yet" in st_ui.main_text(page)
    expect(page.locator(NOTE)).to_be_visible()  # the note stays on every page until dismissed
    page.locator(f"{NOTE} .st-key-dismiss_training_note button:visible").first.click()
    page.locator(NOTE).wait_for(state="detached")
    st_ui.goto_page(page, "Train")
    expect(page.locator(".st-key-train_button button")).to_be_enabled()
    # and a training after a cancel is an ordinary one
    box = page.locator(".st-key-repeats input")
    box.fill("1")
    box.press("Enter")
    st_ui.wait_idle(page)
    _set_models(page, st_ui, ["FairLR", "LR"])
    _train(page, st_ui, server_log)


@pytest.mark.timeout(300)
def test_a_pending_uploads_changed_choices_survive_a_page_switch(page, app_url, st_ui, server_log, adult_table,
                                                                 tmp_path):
    path = _csv(_adult_3k(adult_table), tmp_path, "adult3k_pending.csv")
    st_ui.open_app(page, app_url)
    st_ui.upload(page, path.name, path.read_bytes(), confirm=False)
    box = page.locator(".st-key-y_column input[role=combobox]")
    box.click()
    page.keyboard.type("relationship")  # the option list is virtual: filter it first
    page.get_by_role("option", name="relationship", exact=True).first.click()
    st_ui.wait_idle(page)
    assert page.locator(".st-key-y_column input").input_value() == "relationship"
    meaning = page.locator(".st-key-positive_meaning input")
    meaning.fill("is a husband")
    meaning.press("Enter")
    # the server has the meaning once the page repeats it (the rerun can start after wait_idle's settle)
    expect(page.locator('[data-testid="stMain"]')).to_contain_text("Positive (y = 1) means: is a husband.",
                                                                   timeout=60_000)
    st_ui.wait_idle(page)
    y_values = _chips(page, "y1_values")
    st_ui.goto_page(page, "Target")
    st_ui.goto_page(page, "Data")
    st_ui.no_exception(page, server_log)
    assert page.locator(".st-key-y_column input").input_value() == "relationship"
    assert page.locator(".st-key-positive_meaning input").input_value() == "is a husband"
    assert _chips(page, "y1_values") == y_values
    assert "Adult" in _sidebar(page)  # still pending: the current task is unchanged
    st_ui.confirm_upload(page, path.name)
    side = _sidebar(page)
    assert path.name in side and "relationship" in side, side
