"""User text is text (issue 20, item 4): an upload whose file name, column names, group values and label
values are written like Markdown links, images, emphasis, bare URLs and HTML links (and a typed meaning
of the positive label likewise) is shown literally on every page: no ``<a>`` or ``<img>`` points at the
address in it, no emphasis is made from it, and the text itself is on screen as typed.

One table, one session, through Data (before and after confirming), Target, Train (a quick LR fit),
Compare and Export.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from waits import wait_until

pytestmark = pytest.mark.e2e

EVIL = "evil.example"  # the address every piece of markup in the table points at
S_COL, Y_COL = f"sex [s](http://{EVIL}/s)", f"label http://{EVIL}/y"
G1 = f"[male](http://{EVIL}/g1)"
G0 = f'![female](http://{EVIL}/g0.png) www.{EVIL} <a href="http://{EVIL}/h">h</a>'  # HTML: Plotly reads some
POS, NEG = f"yes **bold** mail@{EVIL}", "no"
LEAK = f"[leak](http://{EVIL}/leak)"
FILE = f"www.{EVIL} [f](http:{EVIL}) **x**.csv"
MEANING = f"[m](https://{EVIL}/m) www.{EVIL} *x* `c`"
WORD_JOINER = "\u2060"  # invisible; the page puts it into URLs so that no parser links them


def _table() -> bytes:
    rng = np.random.default_rng(5)
    n = 400
    s = rng.random(n) < 0.5
    score = rng.normal(size=n) + 0.5 * s
    y = rng.random(n) < 0.25 + 0.3 * s + 0.1 * (score > 0)
    df = pd.DataFrame({S_COL: np.where(s, G1, G0), f"age ![a](http://{EVIL}/a.png)": rng.integers(18, 70, n),
                       f"www.{EVIL}/score": score.round(3), "note": rng.choice([f"see https://{EVIL}/n", "_x_"], n),
                       LEAK: y.astype(int), Y_COL: np.where(y, POS, NEG)})
    return df.to_csv(index=False).encode()


MARKUP_FROM_DATA = f"""() => {{
    const bad = [];
    for (const el of document.querySelectorAll('a, img, image, source, iframe')) {{
        const url = el.getAttribute('href') || el.getAttribute('src') || el.getAttribute('xlink:href') || '';
        if (url.includes('{EVIL}')) bad.push(el.outerHTML.slice(0, 200));
    }}
    // emphasis or code made by markup inside the data holds just that markup's text (**bold** -> bold);
    // the page's own emphasis around a whole name keeps the name's characters ([f](...) and all)
    const pieces = ['bold', 'x', 'c', 'f', 'm', 's', 'a', 'h', 'male', 'female', 'leak'];
    for (const el of document.querySelectorAll('strong, em, del, code')) {{
        if (pieces.includes(el.textContent.trim())) bad.push(el.outerHTML.slice(0, 200));
    }}
    for (const el of document.querySelectorAll('h1, h2, h3, h4, h5, h6, blockquote')) {{
        if (el.textContent.includes('{EVIL}')) bad.push(el.outerHTML.slice(0, 200));
    }}
    return bad;
}}"""


def _visible(page) -> str:
    return page.locator("body").inner_text().replace(WORD_JOINER, "")


def _wait_shown(page, text: str, timeout_s: float = 60.0) -> None:
    """Wait until ``text`` is on the page (word joiners aside): the rerun a typed value starts can begin
    after ``wait_idle``'s settle time on a busy machine."""
    wait_until(lambda: text in _visible(page), timeout_s, f"{text!r} not shown")


def _check(page, where: str, server_log, *shown: str) -> None:
    bad = page.evaluate(MARKUP_FROM_DATA)
    assert not bad, f"{where}: markup made from the data: {bad}"
    text = _visible(page)
    for s in shown:
        assert s in text, f"{where}: {s!r} not shown literally; page text ends ...{text[-1500:]}"
    assert page.locator('[data-testid="stException"]').count() == 0, server_log()


@pytest.mark.timeout(600)
def test_names_that_look_like_markup_are_shown_as_text(page, app_url, st_ui, server_log):
    page.goto(app_url)
    page.get_by_role("heading", name="Groups and base rates").wait_for(timeout=90_000)
    st_ui.wait_idle(page)

    # ---- Data: the upload, before confirming (guesses quote the names) -----------------------------
    page.locator(".st-key-data_source").get_by_text("Upload a file").click()
    st_ui.wait_idle(page)
    page.locator('.st-key-upload_file input[type="file"]').set_input_files(
        files=[{"name": FILE, "mimeType": "text/csv", "buffer": _table()}])
    confirm = page.locator(".st-key-confirm_task button")
    confirm.wait_for(timeout=90_000)
    st_ui.wait_idle(page)
    assert page.locator(".st-key-s_column input").input_value() == S_COL
    meaning = page.locator(".st-key-positive_meaning input")
    meaning.fill(MEANING)
    meaning.press("Enter")
    # the rerun the Enter starts can begin after wait_idle's settle time on a busy machine: wait for it
    _wait_shown(page, f"Positive (y = 1) means: {MEANING}.")
    st_ui.wait_idle(page)
    _check(page, "Data (not confirmed)", server_log, f"New table {FILE}", f"Use {FILE} with these choices",
           f"Positive (y = 1) means: {MEANING}.", f"'{S_COL}': its name says", LEAK)

    # ---- Data: confirmed (sidebar, group caption) ---------------------------------------------------
    st_ui.answer_if_asked(page)  # the label's words do not say whether a positive label is favourable: asked
    confirm.click()
    page.get_by_text("is now the current data set").wait_for(timeout=90_000)
    st_ui.wait_idle(page)
    _check(page, "Data (confirmed)", server_log, f"{FILE} is now the current data set",
           f"(group 1: {G1}; group 0: {G0}, disadvantaged)", f"(positive: {POS})", f"{G0} is the disadvantaged group")

    # ---- Target, Train (a quick LR fit), Compare, Export ---------------------------------------------
    st_ui.goto_page(page, "Target")
    _check(page, "Target", server_log, f"s=0 ({G0})", f"s=1 ({G1})")

    st_ui.goto_page(page, "Train")
    _check(page, "Train", server_log, LEAK)
    models = page.locator(".st-key-train_models")
    models.locator("[data-tag]").first.wait_for()
    for remove in models.locator('button[aria-label^="Remove "]:visible').all()[::-1]:
        if not remove.get_attribute("aria-label").startswith("Remove LR:"):
            remove.click()  # LR alone: a quick fit
            st_ui.wait_idle(page)
    assert [c.split(":")[0] for c in models.locator("[data-tag]:visible").all_inner_texts()] == ["LR"]
    page.locator(".st-key-train_button button").click()
    page.get_by_role("heading", name="Results (mean ± std over repeats)").wait_for(timeout=300_000)
    st_ui.wait_idle(page, timeout=300)
    _check(page, "Train (trained)", server_log)

    st_ui.goto_page(page, "Compare")
    page.wait_for_function(
        "() => document.querySelectorAll('[data-testid=\"stPlotlyChart\"] .js-plotly-plot').length >= 3")
    _check(page, "Compare", server_log)

    st_ui.goto_page(page, "Export")
    _check(page, "Export", server_log, f"Trained on {FILE} at")
