"""The address is the owner's, a share is a snapshot, Forget means forgotten (issue 25, items 1-2), in
browser contexts on one live server (each context is its own browser: its own cookies).

- A reload in the middle of a training returns to the same session (the same token), with the
  training's Cancel button; the owner's address opened in another browser gets nothing of the session
  (a line saying to ask for a snapshot link), before and after the owner uploads and trains.
- Upload, start a training, reload twice, Forget: the training stops within 20 s (the server's event
  log), and every address the tab had, in this browser or another, says in one line that the owner
  deleted the session and shows nothing of the upload.
- A snapshot link gives its opener their own session as it was, never the owner's later work.
- An unknown address, and one from before a restart, say so in one line.
"""
from __future__ import annotations

import contextlib
import hashlib
import re
from datetime import datetime
from urllib.parse import parse_qs, urlparse

import numpy as np
import pandas as pd
import pytest

pytestmark = pytest.mark.e2e

UNKNOWN = "This link is unknown or has expired"
RESTARTED = "The server restarted since this address was made"
FOREIGN = "This address belongs to a session in another browser"
DELETED = "Its owner deleted this session"
SNAPSHOT = "Opened a snapshot: this is your own session"
FORGOTTEN = "This session is forgotten"
STOP_S = 20.0  # Forget stops the training within this


def _token(page) -> str:
    return parse_qs(urlparse(page.url).query)["session"][0]


def _note(page, start: str) -> str:
    """The one alert that starts with ``start`` (its text, checked to be one line)."""
    notes = page.locator('[data-testid="stAlert"]', has_text=start)
    notes.first.wait_for(timeout=30_000)
    text = notes.first.locator('[data-testid="stMarkdownContainer"]').inner_text().strip()
    assert notes.count() == 1 and text.startswith(start) and "\n" not in text, text
    return text


def _set_pr_t(page, st_ui, value: str) -> None:
    box = page.locator(".st-key-pr_t_input input")
    box.fill(value)
    box.press("Enter")
    st_ui.wait_idle(page)
    page.locator(".st-key-sidebar_task").get_by_text(f"PR_t: {value}").wait_for()
    page.wait_for_function("v => new URLSearchParams(location.search).get('pr_t') === v", arg=value)


def _sidebar(page) -> str:
    return page.locator(".st-key-sidebar_task").inner_text()


def _table(mark: str, copies: int) -> tuple[str, bytes]:
    """A table nobody has seen: COMPAS rows with renamed columns and every text value marked with ``mark``,
    ``copies`` times over (so that training on it takes a while)."""
    from fairdash import data

    c = data.load_sample("compas").drop(columns=["c-charge-desc"])
    c = pd.concat([c] * copies, ignore_index=True)
    c["age"] = c["age"] + np.random.default_rng(5).integers(0, 3, len(c))
    df = pd.DataFrame({"gender": mark + "_" + c["sex"], f"{mark}_age": c["age"], f"{mark}_priors": c["priors-count"],
                       f"{mark}_degree": mark + "_" + c["c-charge-degree"], "label": c["two-year-recid"]})
    return f"{mark}_people.csv", df.to_csv(index=False).encode()


def _start_training(page, st_ui) -> None:
    """A training that takes minutes on any machine, in the background; returns once it runs: FairLR and LR
    over a sweep of 25 targets x 20 repeats (520 fits; about 0.15 s each on a quiet machine, so the
    reloads and Forget below always come while it runs)."""
    st_ui.goto_page(page, "Train")
    page.locator(".st-key-repeats input").fill("20")
    page.locator(".st-key-repeats input").press("Enter")
    st_ui.wait_idle(page)
    page.locator(".st-key-train_mode").get_by_text("A sweep over targets (what-if)", exact=True).click()
    st_ui.wait_idle(page)
    page.locator(".st-key-sweep_points input").fill("25")
    page.locator(".st-key-sweep_points input").press("Enter")
    st_ui.wait_idle(page)
    page.get_by_text(re.compile(r"^520 fit\(s\)")).wait_for()
    page.locator(".st-key-train_button button").click()
    page.locator(".st-key-training_job").get_by_role("button", name="Cancel training").wait_for(timeout=60_000)


@contextlib.contextmanager
def _two_browsers(browser, st_ui):
    """Two browser contexts (two browsers: each its own cookies), 1280x800, closed afterwards."""
    ctxs = [st_ui.new_context(browser) for _ in range(2)]
    try:
        yield [c.new_page() for c in ctxs]
    finally:
        for c in ctxs:
            c.close()


def _hashed(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()[:12]


def _ts(event: dict) -> float:
    return datetime.fromisoformat(event["ts"].replace("Z", "+00:00")).timestamp()


@pytest.mark.timeout(600)
def test_a_reload_mid_training_is_the_same_session_and_another_browser_gets_nothing(browser, app_url, st_ui,
                                                                                     server_log):
    with _two_browsers(browser, st_ui) as (owner, other):
        st_ui.open_app(owner, app_url, session=True)
        token, address = _token(owner), owner.url

        # ---- the owner's address in another browser: nothing of the session, a line saying why -------
        st_ui.open_app(other, address, session=True)
        _note(other, FOREIGN)
        assert _token(other) != token

        # ---- the owner uploads a private table and trains; a reload mid-training ----------------------
        name, raw = _table("kilo4", copies=10)
        st_ui.upload(owner, name, raw)
        _start_training(owner, st_ui)
        st_ui.reload_app(owner)
        assert _token(owner) == token  # the same session, not a copy
        owner.locator(".st-key-training_job").get_by_role("button", name="Cancel training").wait_for(timeout=30_000)
        assert name in _sidebar(owner) and "kilo4" in owner.content()
        assert "Opened" not in st_ui.main_text(owner) and FOREIGN not in st_ui.main_text(owner)

        # ---- the other browser never sees the owner's later work -----------------------------------------
        st_ui.reload_app(other)
        for title in ("Data", "Compare", "Export"):
            st_ui.goto_page(other, title)
            assert "kilo4" not in other.content(), title
        st_ui.open_app(other, address, session=True)  # the owner's address, again, after the upload
        _note(other, FOREIGN)
        assert "kilo4" not in other.content() and _token(other) != token
        st_ui.no_exception(other, server_log)

        cancel = owner.locator(".st-key-training_job").get_by_role("button", name="Cancel training")
        if cancel.count():  # (on a quiet machine the training may have ended meanwhile)
            cancel.click()
            owner.get_by_text(re.compile(r"Training cancelled after|Trained \d+ fit")).first.wait_for(timeout=60_000)
        st_ui.no_exception(owner, server_log)


@pytest.mark.timeout(600)
def test_upload_reload_twice_forget_leaves_nothing_and_stops_the_training(browser, app_url, st_ui, server_log,
                                                                          events):
    with _two_browsers(browser, st_ui) as (page, stranger):
        st_ui.open_app(page, app_url, session=True)
        token = _token(page)
        name, raw = _table("lima5", copies=10)
        st_ui.upload(page, name, raw)
        _start_training(page, st_ui)
        addresses = [page.url]
        for _ in range(2):
            st_ui.reload_app(page)
            assert _token(page) == token
            addresses.append(page.url)

        page.locator(".st-key-forget_popover button").first.click()
        forget = page.locator(".st-key-forget_session button")
        forget.wait_for()
        assert "Copies that others already opened from a snapshot link are theirs" in page.get_by_text(
            "Copies that others already opened").first.inner_text()
        forget.click()
        _note(page, FORGOTTEN)
        st_ui.wait_idle(page)
        page.wait_for_function("t => new URLSearchParams(location.search).get('session') !== t", arg=token)
        assert "lima5" not in page.content()

        # ---- the training stopped within STOP_S of Forget (the server's event log) -------------------
        mine = _hashed(token)
        st_ui.wait_until(lambda: any(e["event"] == "training_cancel" and e.get("session") == mine for e in events()),
                         60, lambda _: f"no training_cancel event: {[e for e in events() if e.get('session') == mine]}")
        log = [e for e in events() if e.get("session") == mine]
        assert not any(e["event"] == "training_end" for e in log), "the training ended before Forget: make it longer"
        forgot = next(e for e in log if e["event"] == "forget")
        stopped = next(e for e in log if e["event"] == "training_cancel")
        assert forgot.get("training_cancelled") is True
        lag = _ts(stopped) - _ts(forgot)
        print(f"\nForget -> training stopped: {lag:.2f} s")
        assert lag <= STOP_S
        assert not any(e["event"] == "training_end" and e.get("session") == mine for e in events())

        # ---- every address the tab had, here and in another browser, says so and shows nothing -------
        for pg in (page, stranger):
            for url in addresses:
                st_ui.open_app(pg, url, session=True)
                _note(pg, DELETED)
                pg.wait_for_function("t => new URLSearchParams(location.search).get('session') !== t", arg=token)
                assert "lima5" not in pg.content()
                for title in ("Compare", "Export"):
                    st_ui.goto_page(pg, title)
                    assert "lima5" not in pg.content(), title
            st_ui.no_exception(pg, server_log)


@pytest.mark.timeout(400)
def test_a_snapshot_link_is_a_frozen_copy_of_its_own(browser, app_url, st_ui, server_log):
    with _two_browsers(browser, st_ui) as (owner, other):
        st_ui.open_app(owner, app_url, session=True)
        st_ui.goto_page(owner, "Target")
        _set_pr_t(owner, st_ui, "0.300")
        token = _token(owner)
        owner.locator(".st-key-share_popover button").first.click()
        owner.locator(".st-key-make_snapshot button").click()
        st_ui.wait_idle(owner)
        owner.locator(".st-key-snapshot_link").get_by_text(re.compile("snapshot=")).wait_for()
        link = owner.locator(".st-key-snapshot_link").inner_text().strip()
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+/(target)?\?snapshot=[A-Za-z0-9_-]{26}", link), link
        owner.keyboard.press("Escape")

        st_ui.open_app(other, link, session=True)
        _note(other, SNAPSHOT)
        assert "PR_t: 0.300" in _sidebar(other) and _token(other) != token
        assert "snapshot" not in parse_qs(urlparse(other.url).query)

        st_ui.goto_page(owner, "Target")  # the owner moves on; the opener's copy does not follow
        _set_pr_t(owner, st_ui, "0.650")
        st_ui.reload_app(other)
        assert "PR_t: 0.300" in _sidebar(other), _sidebar(other)
        st_ui.goto_page(other, "Target")
        _set_pr_t(other, st_ui, "0.200")  # and the opener's changes never reach the owner
        st_ui.reload_app(owner)
        assert "PR_t: 0.650" in _sidebar(owner) and _token(owner) == token
        for pg in (owner, other):
            st_ui.no_exception(pg, server_log)


@pytest.mark.timeout(200)
def test_an_unknown_or_pre_restart_address_says_so_and_gets_a_new_token(page, app_url, st_ui, server_log):
    st_ui.open_app(page, app_url, session=True)
    boot = _token(page)[:4]  # this server process's prefix
    for stale, start in ((boot + "A" * 22, UNKNOWN), ("A" * 22, RESTARTED)):
        st_ui.open_app(page, f"{app_url}/?session={stale}&pr_t=0.5", session=True)
        _note(page, start)
        page.wait_for_function("t => new URLSearchParams(location.search).get('session') !== t", arg=stale)
        assert re.fullmatch(r"[A-Za-z0-9_-]{26}", _token(page)) and _token(page) != stale
        st_ui.no_exception(page, server_log)
