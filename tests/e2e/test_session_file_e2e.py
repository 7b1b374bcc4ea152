"""Work that survives a restart (issue 35, item 5), in Chromium against two live servers: LR trained on the bundled
COMPAS sample at PR_t 0.4 in the worker's server, "Save this session" downloaded from Export and the run's results
CSV with it; then a new server started, as after a restart (nothing of the first in it: sessions live in a
server's memory, and it has a fit cache of its own); the file opened on the new server's Data page gives the same
table, target and run, and the results CSV downloaded again is byte for byte the first one; the file with one byte
altered is refused in one line and changes nothing."""
from __future__ import annotations

import re
import tempfile
from pathlib import Path

import pytest
from playwright.sync_api import expect

from live_server import free_port, live_streamlit
from session_files import open_session_file
from test_decisions import _set_pr_t
from test_trust import COMPAS_TITLE, _load_sample, _set_models, _train


def _log(path: Path):
    return lambda: path.read_text(errors="replace")[-4000:]


def _pr_t(page, st_ui) -> str:
    st_ui.goto_page(page, "Target")
    return page.locator('.st-key-pr_t_slider input[type="range"]').get_attribute("value")


@pytest.mark.timeout(900)
def test_a_session_saved_before_a_restart_opens_after_it_with_the_same_numbers(browser, page, app_url, server_log,
                                                                                st_ui, tmp_path):
    # the work, on this worker's server (the restart is the new server below: nothing of this one is in it)
    st_ui.open_app(page, app_url)
    _load_sample(page, st_ui, COMPAS_TITLE)
    _set_pr_t(page, st_ui, "0.4")
    before_pr_t = _pr_t(page, st_ui)
    st_ui.goto_page(page, "Train")
    _set_models(page, st_ui, ["LR"])
    _train(page, st_ui, server_log)
    st_ui.goto_page(page, "Export")
    results_before = st_ui.download(page, "download_results_export", tmp_path, "before.csv",
                                     timeout=120_000).read_bytes()
    saved = st_ui.download(page, "save_session", tmp_path, "work.fairdash-session", timeout=120_000)
    st_ui.no_exception(page, server_log)
    assert saved.name.endswith(".fairdash-session") and saved.stat().st_size > 10_000
    assert before_pr_t == "0.4"

    # a new server, with a fit cache and a session store of its own: the first one's sessions are not in it
    context = st_ui.new_context(browser)
    fresh = context.new_page()
    try:
        with live_streamlit(Path(tempfile.mkdtemp(prefix="fairdash-open-")), free_port()) as (url, log_path):
            log = _log(log_path)
            st_ui.open_app(fresh, url)
            altered = tmp_path / "altered.fairdash-session"
            raw = bytearray(saved.read_bytes())
            raw[len(raw) // 2] ^= 0x01
            altered.write_bytes(bytes(raw))
            text = open_session_file(fresh, st_ui, altered)
            assert re.search(r"altered\.fairdash-session (is damaged|has been altered)", text), \
                text[:2000]
            assert "This session is unchanged." in text
            fresh.reload()  # (a fresh uploader for the next file)
            st_ui.wait_idle(fresh, timeout=90)

            text = open_session_file(fresh, st_ui, saved)
            st_ui.no_exception(fresh, log)
            assert "Opened work.fairdash-session" in text and "and 1 run (Run 1)" in text, text[:2000]
            fresh.locator(".st-key-sidebar_task").get_by_text("COMPAS").first.wait_for()
            assert _pr_t(fresh, st_ui) == before_pr_t
            st_ui.goto_page(fresh, "Export")
            expect(fresh.locator(".st-key-export_run input[role=combobox]")).to_have_value(re.compile(r"^Run 1 \(.*LR"))
            results_after = st_ui.download(fresh, "download_results_export", tmp_path, "after.csv",
                                            timeout=120_000).read_bytes()
            st_ui.no_exception(fresh, log)
    finally:
        context.close()
    assert results_after == results_before  # the same numbers, to the last digit
