"""Forget reaches every tab (issue 35, item 2), in Chromium against a live ``streamlit run app.py``.

One browser, three tabs of the same session (the same address, the same cookie). The owner uploads a table
nobody has seen and presses Forget in the first tab. The other two are stale: they still show the upload.

- the second tab's next PR_t move (a fragment rerun of the Target page) says in one line that the owner
  deleted the session, shows nothing of the upload, and never says the server has "no room"; clicking Data
  then draws the Data page of a fresh session, without a traceback;
- the third tab's next run is a click on Data (a full rerun): the same note, nothing of the upload;
- no tab shows an exception box, the server's log has no traceback and no ``StreamlitDuplicateElementKey``,
  and its event log has one ``refusal`` (``address_deleted``, ``stale_tab``) per stale tab.
"""
from __future__ import annotations

import io
import re

import pandas as pd
import pytest

from test_links import DELETED, FORGOTTEN, _hashed, _table, _token

pytestmark = pytest.mark.e2e

NO_ROOM = "no room"


def _marked_table(mark: str) -> tuple[str, bytes]:
    """A table nobody has seen, every name and text value marked with ``mark`` (``test_links._table``), whose
    label's own words say whether a positive label is favourable (a rearrest), so the Data page asks nothing."""
    name, raw = _table(mark, copies=1)
    df = pd.read_csv(io.BytesIO(raw)).rename(columns={"label": "rearrested"})
    return name, df.to_csv(index=False).encode()


def _gone(page, mark: str) -> None:
    """Nothing of the upload marked ``mark`` on the page (its name and its column names are all marked)."""
    assert mark not in page.content(), page.locator('[data-testid="stSidebar"]').inner_text()


def _one_note(page, start: str) -> None:
    notes = page.locator('[data-testid="stAlert"]', has_text=start)
    notes.first.wait_for(timeout=60_000)
    text = notes.first.locator('[data-testid="stMarkdownContainer"]').inner_text().strip()
    assert notes.count() == 1 and "\n" not in text, text


@pytest.mark.timeout(600)
def test_a_stale_tab_after_forget_says_so_and_holds_nothing(browser, app_url, st_ui, server_log, streamlit_server,
                                                           events):
    log_path = streamlit_server[1]
    start = log_path.stat().st_size  # (the server may have served other tests before: this test's part only)
    ctx = st_ui.new_context(browser)
    try:
        owner = ctx.new_page()
        st_ui.open_app(owner, app_url, session=True)
        token = _token(owner)
        name, raw = _marked_table("quokka7")
        st_ui.upload(owner, name, raw)
        st_ui.goto_page(owner, "Target")
        address = owner.url  # the Target page of this session

        stale = []
        for _ in range(2):  # two more tabs of the same session, opened from its address
            tab = ctx.new_page()
            st_ui.open_app(tab, address, session=True)
            assert _token(tab) == token
            tab.locator(".st-key-sidebar_task").get_by_text(name).wait_for()  # the upload is there
            stale.append(tab)

        owner.locator(".st-key-forget_popover button").first.click()
        owner.locator(".st-key-forget_session button").click()
        _one_note(owner, FORGOTTEN)
        st_ui.wait_idle(owner)
        _gone(owner, "quokka7")

        # ---- the second tab: its next PR_t move (a fragment rerun) -------------------------------------
        tab = stale[0]
        assert "quokka7" in tab.content()  # (stale: nothing has run there since Forget)
        thumb = tab.locator('.st-key-pr_t_slider input[type="range"]')
        thumb.focus()
        tab.keyboard.press("ArrowRight")
        _one_note(tab, DELETED)
        st_ui.wait_idle(tab)
        tab.wait_for_function("t => new URLSearchParams(location.search).get('session') !== t", arg=token)
        tab.locator(".st-key-sidebar_task").get_by_text(re.compile(r"PR_t:")).wait_for()
        _gone(tab, "quokka7")
        assert NO_ROOM not in tab.content()
        st_ui.no_exception(tab, server_log)
        st_ui.goto_page(tab, "Data")  # and then a page change: a fresh session's Data page
        _gone(tab, "quokka7")
        assert NO_ROOM not in tab.content()
        st_ui.no_exception(tab, server_log)

        # ---- the third tab: its next run is a click on Data (a full rerun) -----------------------------
        tab = stale[1]
        assert "quokka7" in tab.content()
        tab.locator('[data-testid="stSidebarNav"] a', has_text="Data").first.click()
        _one_note(tab, DELETED)
        st_ui.wait_idle(tab)
        tab.locator("h1", has_text="Data").first.wait_for()
        tab.wait_for_function("t => new URLSearchParams(location.search).get('session') !== t", arg=token)
        _gone(tab, "quokka7")
        assert NO_ROOM not in tab.content()
        st_ui.no_exception(tab, server_log)

        stale_runs = [e for e in events() if e["event"] == "refusal" and e.get("session") == _hashed(token)
                      and e.get("kind") == "stale_tab"]
        assert [e.get("reason") for e in stale_runs] == ["address_deleted"] * 2, stale_runs  # one per stale tab
        with open(log_path, "rb") as f:
            f.seek(start)
            log = f.read().decode(errors="replace")
        assert "StreamlitDuplicateElementKey" not in log and "Traceback" not in log, log
    finally:
        ctx.close()
