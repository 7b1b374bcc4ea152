"""User text is text (issue 20, item 4): ``ui.literal`` turns any string into Markdown that Streamlit shows
character for character. The browser test (tests/e2e/test_user_text_browser.py) checks what reaches the DOM;
here, the Markdown itself, parsed by the same rules (CommonMark escapes, GFM autolink literals)."""
import re

from hypothesis import given, settings, strategies as st

from fairdash.app.ui import literal

WJ = "\u2060"
# GFM's autolink literals, as the renderer applies them to text *after* resolving escapes
URL = re.compile(r"(https?://|www(?=\.))([-.\w]+)", re.I)
EMAIL = re.compile(r"([-.\w+]+)@([-\w]+(?:\.[-\w]+)+)")


def _unescaped(md: str) -> str:
    return re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", md)


@given(st.text(max_size=60))
@settings(max_examples=300, deadline=None)
def test_literal_shows_the_text_and_nothing_else(text):
    md = literal(text)
    shown = " ".join(text.splitlines()).strip()
    assert _unescaped(md).replace(WJ, "") == shown
    # no markup character is left unescaped
    assert not re.search(r"(?<!\\)(?:\\\\)*[`*\[\]<>~$]", md.replace("\\\\", "")), md
    # and the text the renderer sees after resolving the escapes holds no URL or e-mail it would link
    assert not URL.search(_unescaped(md)) and not EMAIL.search(_unescaped(md)), md


def test_links_images_and_bare_urls():
    assert literal("[x](http://evil.example/a)") == "\\[x\\](http:" + WJ + "//evil.example/a)"
    assert literal("![i](y.png)") == "!\\[i\\](y.png)"
    assert literal("www.evil.example") == "www" + WJ + ".evil.example"
    assert literal("a@b.example") == "a@" + WJ + "b.example"
    assert literal(":red[x] :smile:") == ":" + WJ + "red\\[x\\] :" + WJ + "smile:"
    assert literal("**b** _i_ t_s $x$ &amp;") == "\\*\\*b\\*\\* \\_i\\_ t_s \\$x\\$ \\&amp;"
    assert literal("# h") == "\\# h" and literal("1. x") == "1\\. x" and literal("- x") == "\\- x"
    assert literal("error: x, y's (z).") == "error: x, y's (z)."  # ordinary prose is unchanged


def test_code_spans_hold_any_backticks():
    assert literal("a", code=True) == "`a`"
    assert literal("a`b", code=True) == "``a`b``"
    assert literal("`a`", code=True) == "`` `a` ``"
    assert literal("[x](http://e.example)\nnext", code=True) == "`[x](http://e.example) next`"
