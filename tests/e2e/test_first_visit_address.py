"""A first visit straight to a page that ends early (nothing trained yet) gets its session's address and keeps
its session, as every page does: the frame's work after the page (the sidebar, the kept widgets, the saved session
and its ``?session=`` address) runs however the page ends. With ``st.stop()`` it did not: once a stop is requested,
Streamlit ends the script at the next element sent, the frame's included (``text.end_page``)."""
from __future__ import annotations

import pytest

pytestmark = pytest.mark.e2e


@pytest.mark.parametrize("path", ["compare", "export", "score"])
def test_a_page_that_ends_early_still_gives_the_session_its_address(page, app_url, st_ui, server_log, path):
    st_ui.open_app(page, f"{app_url}/{path}", session=True)  # waits for ?session= and the browser's cookie
    assert "session=" in page.url and f"/{path}" in page.url, page.url
    st_ui.no_exception(page, server_log)
    token = page.url.split("session=")[1].split("&")[0]
    st_ui.reload_app(page, session=True)  # the same session after a reload: it was kept
    assert f"session={token}" in page.url, (token, page.url)
    st_ui.no_exception(page, server_log)
