"""User text and errors on a page: a user's words shown as text, never as markup (``literal``), names in figures, an
error's one-line message (``error_text``, at home in :mod:`fairdash.errors`, where the training queue, without
Streamlit, reads it too), the guard that turns a refusal into that message, and ending a page early (``end_page``)."""
from __future__ import annotations

import contextlib
import html
import logging
import re

import streamlit as st

from ...errors import error_text

_LOG = logging.getLogger("fairdash.app")
_WORD_JOINER = "\u2060"  # invisible and unbreakable: splits a would-be URL, e-mail or shortcode for the parser


_LINK_BREAKS = re.compile(r"(?<=:)(?=\S)|(?<=@)|(?i:(?<=www)(?=\.))")


_MARKUP = re.compile(r"([\\`*\[\]<>~$])|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])|&(?=#?\w+;)")


_BLOCK_START = re.compile(r"^(?:([#>+=|*-])|(\d+)([.)]))")


def literal(text, code: bool = False) -> str:
    """User text (column, group and label names, file names, meanings, messages that quote them) as
    Markdown that shows it literally: no link, image, emphasis, heading, LaTeX or emoji comes from it.

    Every Streamlit element that takes Markdown (``st.markdown``, ``st.caption``, ``st.info`` and its
    siblings, widget labels and ``help`` texts) gets user text through this. Markup characters are
    backslash-escaped; since the Markdown renderer turns a bare ``http://...``, ``www.`` or e-mail
    address into a link *after* resolving escapes, an invisible word joiner (U+2060) is put after
    ``:`` and ``@`` and between ``www`` and ``.``, which no autolink or shortcode pattern matches
    across; a word joiner of the text itself is written ``&#8288;``. ``code=True`` gives an inline code span
    instead (for column names): always literal."""
    s = " ".join(str(text).splitlines()).strip()
    if code:
        if not s:
            return ""
        fence = "`" * (max((len(r) for r in re.findall(r"`+", s)), default=0) + 1)
        pad = " " if s[0] == "`" or s[-1] == "`" else ""
        return f"{fence}{pad}{s}{pad}{fence}"
    # the text's own word joiners become a character reference (shown as the character), so that they stay
    # apart from the ones put in here (which only break links): neither is lost nor taken for the other
    s = "&#8288;".join(_MARKUP.sub(lambda m: "\\" + m.group(0), _LINK_BREAKS.sub(_WORD_JOINER, part))
                       for part in s.split(_WORD_JOINER))
    return _BLOCK_START.sub(lambda m: "\\" + m.group(1) if m.group(1) else m.group(2) + "\\" + m.group(3), s)


def figure_text(names) -> list[str]:
    """User text for Plotly figures (group names in legends, axes and labels): Plotly reads a subset of HTML
    (``<a href>``, ``<b>``, ``<br>``) in its text, so ``<``, ``>`` and ``&`` are given as entities, which it
    shows as the characters themselves."""
    return [html.escape(str(n), quote=False) for n in names]


def show_error(exc: BaseException, prefix: str = "") -> None:
    """An error box with :func:`error_text`'s message; never a traceback."""
    st.error(literal(error_text(exc, prefix)), icon=":material/warning:")  # messages quote user text


@contextlib.contextmanager
def guard(prefix: str = ""):
    """``with guard(): ...``: any error inside is shown with :func:`show_error`; the page goes on."""
    try:
        yield
    except PageEnded:
        raise
    except Exception as exc:  # noqa: BLE001 - the user sees a message, never a trace
        if type(exc).__module__.startswith("streamlit."):
            raise  # Streamlit's own control flow (st.rerun, st.stop) and its API errors pass through
        show_error(exc, prefix)


def script_error(exc: BaseException) -> bool:
    """Streamlit's ``on_script_error`` (app.py's ``st.App``): an error no guard caught, in a page or in a widget's
    callback (``on_change``, ``on_click``), is shown as one line (:func:`show_error`) and its trace goes to the
    server's log; returns True (Streamlit shows nothing more), or False where nothing can be drawn."""
    _LOG.error("An unexpected error in a script run or a widget's callback", exc_info=exc)
    try:
        show_error(exc)
    except Exception:  # noqa: BLE001 - nowhere to draw it: Streamlit's own display is the last resort
        return False
    return True


class PageEnded(Exception):
    """A page has nothing more to draw (:func:`end_page`); ``app.py`` catches it around ``page.run()``."""


def end_page():
    """End the page here, as ``st.stop()`` would, but let the frame's work after the page run: the sidebar, the
    kept widgets and the saved session with its address (``app.py``'s ``finally``). ``st.stop()`` would skip those:
    once a stop is requested, Streamlit ends the script at the next element it sends, the frame's included, so a
    first visit to a page that stops early never got its ``?session=`` address. Not inside a fragment (a fragment's
    rerun does not run ``app.py``): there, return instead."""
    raise PageEnded
