"""The report's blocks as plain data, one kind each (a paragraph, a heading, a definition list, a table, a list,
preformatted text): what ``content`` builds and the template renders (escaping every value)."""
from __future__ import annotations


def para(*parts, cls: str | None = None) -> dict:
    """A paragraph; each part is a text, or ``(text, True)`` for bold."""
    return {"kind": "p", "cls": cls, "parts": [p if isinstance(p, tuple) else (p, False) for p in parts]}


def heading(text: str) -> dict:
    return {"kind": "h3", "text": text}


def defs(items) -> dict:
    return {"kind": "dl", "items": [(k, v) for k, v in items if v not in (None, "")]}


def table(headers, rows, num_cols=(), row_classes=None) -> dict:
    return {"kind": "table", "headers": list(headers), "rows": [list(r) for r in rows], "num_cols": set(num_cols),
            "row_classes": list(row_classes or [])}


def bullets(items) -> dict:
    return {"kind": "ul", "items": list(items)}


def code(text: str) -> dict:
    return {"kind": "pre", "text": text}
