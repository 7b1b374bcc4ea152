"""The pages and the runs of one: the navigation and its router, the frame, saving the session after a run, and
widget values brought back after a page switch."""
from __future__ import annotations

import streamlit as st

from .. import target_state
from ..server import session, state

PAGES = (("pages/data.py", "Data", ":material/table_view:", "data"),
         ("pages/target.py", "Target", ":material/tune:", "target"),
         ("pages/train.py", "Train", ":material/model_training:", "train"),
         ("pages/compare.py", "Compare", ":material/bar_chart:", "compare"),
         ("pages/export.py", "Export", ":material/download:", "export"),
         ("pages/audit.py", "Score new data", ":material/fact_check:", "score"),
         ("pages/how_it_works.py", "How it works", ":material/menu_book:", "how_it_works"))


def navigation(position: str = "sidebar"):
    """The dashboard's pages as ``st.navigation`` (app.py's frame; the first is the default page)."""
    return st.navigation([st.Page(path, title=title, icon=icon, url_path=url, default=i == 0)
                          for i, (path, title, icon, url) in enumerate(PAGES)], position=position)


def in_frame() -> None:
    """Called by app.py on every run: the page that follows runs inside the frame."""
    state.current().in_frame = True


def ensure_router() -> None:
    """Make sure the page runs inside app.py's ``st.navigation`` frame.

    A fresh server that is first asked for a page URL (``/target``) before any session has run app.py
    runs the page file alone (Streamlit treats a ``pages/`` folder as its old multipage layout until
    ``st.navigation`` has run once). Then the page declares the navigation itself and reruns: from then
    on every run goes through app.py, so the same URL opens inside the frame."""
    if state.current().in_frame:
        return
    navigation(position="hidden")
    st.rerun()


def save_session() -> None:
    """Keep the session under its token, with its token and its target in the URL."""
    session.save_session(target_state.link_params())


def restore(key: str, value) -> None:
    """Give widget ``key`` the value ``value`` if the widget has no state yet (first render, or after
    Streamlit dropped it on a page switch). Call before the widget is drawn."""
    ss = state.current()
    if not ss.has_widget(key):
        ss.set_widget(key, value)


def set_if_changed(key: str, value) -> None:
    """Write widget ``key``'s state only where it differs from ``value``. Any write marks the value as the
    script's, and the browser then draws it over whatever the user picked while this run was going: written
    on every run, a pick made during a slow rerun (a busy server) would vanish."""
    ss = state.current()
    if not ss.has_widget(key) or ss.widget(key) != value:
        ss.set_widget(key, value)
