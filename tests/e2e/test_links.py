"""Links that cannot harm their owner (issue 20, item 3), in two browser contexts on one live server.

The owner sets PR_t = 0.300; someone else opens the owner's link, gets their own copy (a new token in
their URL, and a line saying so) and moves the target to 0.700. The owner's session is unchanged, both
in its own tab and in what its link opens. An unknown link says so in one line, and the URL then
carries the new session's token instead of the stale one.
"""
from __future__ import annotations

import re
from urllib.parse import parse_qs, urlparse

import pytest

pytestmark = pytest.mark.e2e

UNKNOWN = "This link is unknown or has expired"
COPY = "Opened from a link: this is your own copy"


def _token(page) -> str:
    return parse_qs(urlparse(page.url).query)["session"][0]


def _open(page, url: str, st_ui) -> None:
    page.goto(url)
    page.locator(".st-key-sidebar_task").get_by_text(re.compile(r"PR_t:")).wait_for(timeout=90_000)
    st_ui.wait_idle(page)


def _set_pr_t(page, st_ui, value: str) -> None:
    box = page.locator(".st-key-pr_t_input input")
    box.fill(value)
    box.press("Enter")
    st_ui.wait_idle(page)
    page.locator(".st-key-sidebar_task").get_by_text(f"PR_t: {value}").wait_for()
    page.wait_for_function("v => new URLSearchParams(location.search).get('pr_t') === v", arg=value)


def _sidebar(page) -> str:
    return page.locator(".st-key-sidebar_task").inner_text()


@pytest.mark.timeout(400)
def test_a_shared_link_gives_a_copy_and_the_owner_keeps_theirs(browser, app_url, st_ui, server_log):
    owner_ctx, other_ctx = browser.new_context(viewport={"width": 1280, "height": 800}), \
        browser.new_context(viewport={"width": 1280, "height": 800})
    try:
        owner, other = owner_ctx.new_page(), other_ctx.new_page()
        for pg in (owner, other):
            pg.set_default_timeout(60_000)
        _open(owner, app_url, st_ui)
        st_ui.goto_page(owner, "Target")
        _set_pr_t(owner, st_ui, "0.300")
        token = _token(owner)
        link = owner.url

        # ---- someone else opens the link: their own copy, under a new token ---------------------------
        _open(other, link, st_ui)
        assert COPY in st_ui.main_text(other)
        assert "PR_t: 0.300" in _sidebar(other)
        other.wait_for_function("t => new URLSearchParams(location.search).get('session') !== t", arg=token)
        assert _token(other) != token
        st_ui.goto_page(other, "Target")
        _set_pr_t(other, st_ui, "0.700")

        # ---- the owner's tab is unchanged, after a rerun of its own ------------------------------------
        st_ui.goto_page(owner, "Data")
        st_ui.goto_page(owner, "Target")
        assert owner.locator(".st-key-pr_t_input input").input_value() == "0.300"
        assert "PR_t: 0.300" in _sidebar(owner) and _token(owner) == token

        # ---- and so is what the owner's link opens (its token alone: no PR_t in the URL) -------------
        _open(other, f"{app_url}/?session={token}", st_ui)
        assert "PR_t: 0.300" in _sidebar(other), _sidebar(other)
        for pg in (owner, other):
            assert pg.locator('[data-testid="stException"]').count() == 0, server_log()
    finally:
        owner_ctx.close()
        other_ctx.close()


@pytest.mark.timeout(200)
def test_an_unknown_link_says_so_and_gets_a_new_token(page, app_url, st_ui, server_log):
    stale = "A" * 22
    _open(page, f"{app_url}/?session={stale}&pr_t=0.5", st_ui)
    notes = page.locator('[data-testid="stAlert"]', has_text=UNKNOWN)
    notes.first.wait_for()
    text = notes.first.locator('[data-testid="stMarkdownContainer"]').inner_text().strip()
    assert notes.count() == 1 and text.startswith(UNKNOWN) and "\n" not in text, text
    page.wait_for_function("t => new URLSearchParams(location.search).get('session') !== t", arg=stale)
    assert re.fullmatch(r"[A-Za-z0-9_-]{22}", _token(page)) and _token(page) != stale
    assert page.locator('[data-testid="stException"]').count() == 0, server_log()
