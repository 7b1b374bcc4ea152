"""The light repairs of a table just read, each said as a note: numbers a reader left as objects or text (exact
decimals, numbers with a few placeholders for missing values), categorical columns as their plain values
(``numbers_from_objects``, ``plain_values``), and for any table, numbers written with thousands separators or as
percentages and infinite values (``clean_table``).
"""
from __future__ import annotations

import decimal
import numbers

import numpy as np
import pandas as pd

from ...errors import shorten

MAX_PLACEHOLDERS = 5  # distinct non-numbers a column of numbers may hold as its "missing" marks
PLACEHOLDER_SHARE = 0.1  # ... on at most this share of its values


def numbers_from_objects(df: pd.DataFrame, notes: list) -> None:
    """Columns of numbers that a reader left as objects or text, made numeric in place:

    - exact decimals (Parquet's decimal type arrives as Python ``Decimal`` objects) and numbers stored
      cell by cell are numbers, not categories;
    - a column of numbers with a few placeholders for missing values (``-``, ``n/a``, ``?``, `` - ``,
      ``missing``: at most :data:`MAX_PLACEHOLDERS` distinct values without a digit, on at most
      :data:`PLACEHOLDER_SHARE` of its values) is read as numbers with those values missing, with a note
      naming the column and the placeholders."""
    numeric = (decimal.Decimal, numbers.Real)  # Parquet's exact decimals, numbers stored cell by cell
    for c in df.columns:
        col = df[c]
        if not (col.dtype == object or pd.api.types.is_string_dtype(col)):
            continue
        v = col.dropna()
        if v.empty:
            continue
        head = v.iloc[:1000]
        if head.map(lambda x: isinstance(x, numeric) and not isinstance(x, (bool, np.bool_))).all():
            objects = v.map(lambda x: isinstance(x, numeric) and not isinstance(x, (bool, np.bool_)))
            if objects.all():
                df[c] = pd.to_numeric(col.map(lambda x: x if pd.isna(x) else float(x)), errors="coerce")
                continue
        if not head.astype(str).str.contains(r"\d").mean() >= 1 - PLACEHOLDER_SHARE:
            continue  # mostly words: a categorical column (a quick look before the full scan)
        head_text = head.astype(str).str.strip()
        head_bad = head_text[pd.to_numeric(head_text, errors="coerce").isna()]
        if len(head_bad) > 2 * PLACEHOLDER_SHARE * len(head_text) or head_bad.nunique() > MAX_PLACEHOLDERS:
            continue  # codes with digits ("x12"), not numbers: the full scan of every row is not needed
        text = v.astype(str).str.strip()
        num = pd.to_numeric(text, errors="coerce")
        bad = text[num.isna()]
        if bad.empty or len(bad) > PLACEHOLDER_SHARE * len(text):
            continue
        tokens = bad.value_counts()
        if len(tokens) > MAX_PLACEHOLDERS or any(len(t) > 12 or any(ch.isdigit() for ch in t) for t in tokens.index):
            continue
        out = pd.Series(np.nan, index=col.index, dtype=float)
        out[num.index] = num.to_numpy(dtype=float)
        df[c] = out
        shown = ", ".join(f"{t!r} ({k:,} row(s))" for t, k in tokens.items())
        notes.append(f"Column {shorten(c)!r} holds numbers with placeholder values for missing ones ({shown}); "
                     "read as numbers, with those values missing.")


def plain_values(df: pd.DataFrame) -> None:
    """Categorical columns (Parquet's dictionary type) as their plain values, in place: every later step reads a
    column's values, not its codes (as text where the categories are text)."""
    for c in df.columns:
        col = df[c]
        if isinstance(col.dtype, pd.CategoricalDtype):
            try:
                df[c] = col.astype(col.cat.categories.dtype)
            except (TypeError, ValueError):
                df[c] = col.astype(object)


def _numeric_text(col: pd.Series) -> pd.Series | None:
    """A text column of numbers with thousands separators (``1,234``), converted, else None."""
    if not (col.dtype == object or pd.api.types.is_string_dtype(col)):  # pandas 3 reads text as "str"
        return None
    v = col.dropna()
    pattern = r"[-+]?\d{1,3}(,\d{3})+(\.\d+)?|[-+]?\d+(\.\d+)?"
    # a quick look at the first values first, so a big text column is rejected without a full scan
    for part in (v.iloc[:1000], v):
        part = part.astype(str).str.strip()
        if part.empty or not part.str.fullmatch(pattern).all():
            return None
        if len(part) == len(v):
            break
    if not v.astype(str).str.contains(",", regex=False).any():
        return None  # plain numbers stored as text: not this repair
    return pd.to_numeric(col.astype(str).str.strip().str.replace(",", "", regex=False).where(col.notna()),
                         errors="coerce")


def _percent_text(col: pd.Series) -> pd.Series | None:
    """A text column whose every value is a percentage (``45%``, ``-2.5 %``), as numbers (45% as 0.45), else None."""
    if not (col.dtype == object or pd.api.types.is_string_dtype(col)):
        return None
    v = col.dropna()
    pattern = r"[-+]?\d+(\.\d+)?\s*%"
    for part in (v.iloc[:1000], v):  # a quick look first, so a big text column is rejected without a full scan
        part = part.astype(str).str.strip()
        if part.empty or not part.str.fullmatch(pattern).all():
            return None
        if len(part) == len(v):
            break
    number = col.astype(str).str.strip().str.rstrip("%").str.strip().where(col.notna())
    return pd.to_numeric(number, errors="coerce") / 100.0


_PANDAS_MAJOR = int(pd.__version__.split(".")[0])


def clean_table(df: pd.DataFrame, infinite: bool = True) -> tuple[pd.DataFrame, list[str]]:
    """Light repairs with a note for each: numbers stored as text with thousands separators, and percentages
    (``45%``), become numbers; infinite values become missing (``infinite``; scoring refuses them instead)."""
    # pandas >= 3 copies on write, so a shallow copy never changes the caller's table (and saves a copy
    # of every column of a big table); older pandas needs the deep copy
    notes, df = [], df.copy(deep=_PANDAS_MAJOR < 3)
    for c in df.columns:
        conv = _numeric_text(df[c])
        if conv is not None:
            df[c] = conv
            notes.append(f"Column {c!r} held numbers written as text with thousands separators; read as numbers.")
        conv = _percent_text(df[c])
        if conv is not None:
            df[c] = conv
            notes.append(f"Column {c!r} held percentages ('45%'); read as numbers (45% as 0.45).")
        if infinite and pd.api.types.is_numeric_dtype(df[c]) and not pd.api.types.is_bool_dtype(df[c]):
            inf = np.isinf(df[c].to_numpy(dtype=float, na_value=np.nan))
            if inf.any():
                df.loc[inf, c] = np.nan
                notes.append(f"Column {c!r} had {int(inf.sum())} infinite value(s); treated as missing.")
    return df, notes
