"""One-hot groups made whole (issue 36, item 2): a set of indicator columns that together hold one category
(``Race_White``, ``Race_Black``, ... with exactly one 1 per row, or none: a documented "none" rest) is offered as one
column named by their shared prefix (``Race``), so that it can be a multi-group s, a label, or a feature.

- :func:`indicator_sets`: the sets in a table, by prefix (the name before the first ``_``, ``.`` or ``=``): at least
  two columns, every value 0 or 1 (numbers, booleans or their text), at most one 1 per row.
- :func:`add_whole_columns`: the table with one column per set whose prefix is not a column already (each row's
  category: the suffix of its 1, ``"none"`` where it has none), and a note for each.
- :func:`parts_of`: which indicator columns make up a whole column (the default features leave out the parts of s
  and y, which give them away, and the whole column of parts that are features, which would count them twice).
- :func:`binary_pairs`: the sets of two complementary columns whose levels read as no and yes (``PF_0``/``PF_1``):
  a yes-or-no value held twice, which the upload's guess takes for the label.
"""
from __future__ import annotations

import re
import weakref

import numpy as np
import pandas as pd

_SPLIT = re.compile(r"^(?P<prefix>[^_.=]+)[_.=](?P<level>.+)$")
NONE = "none"
MAX_COLUMNS = 2000  # wider tables are not searched (the search reads every candidate column once)


def _is_indicator(col: pd.Series) -> bool:
    if pd.api.types.is_bool_dtype(col):
        return not col.isna().any()
    if pd.api.types.is_numeric_dtype(col):
        v = col.to_numpy()
        return bool(len(v)) and bool(((v == 0) | (v == 1)).all())
    if col.dtype == object or pd.api.types.is_string_dtype(col):
        return bool(len(col)) and bool(col.astype(str).str.strip().isin(("0", "1")).all())
    return False


def _ones(col: pd.Series) -> np.ndarray:
    if pd.api.types.is_bool_dtype(col) or pd.api.types.is_numeric_dtype(col):
        return col.to_numpy().astype(int)
    return (col.astype(str).str.strip() == "1").to_numpy().astype(int)


_FOUND: dict = {}  # id(table) -> its sets, while the table lives (the pages ask on every rerun)


def indicator_sets(df: pd.DataFrame) -> dict[str, list[str]]:
    """``{prefix: [its indicator columns]}`` for every set of two or more 0/1 columns sharing a prefix whose rows
    hold at most one 1 (the columns in the table's order); remembered for the table object while it lives."""
    key = (id(df), tuple(map(str, df.columns)), len(df))
    if key not in _FOUND:
        _FOUND[key] = _find_sets(df)
        weakref.finalize(df, _FOUND.pop, key, None)
    return {k: list(v) for k, v in _FOUND[key].items()}


def _find_sets(df: pd.DataFrame) -> dict[str, list[str]]:
    if df.shape[1] > MAX_COLUMNS:
        return {}
    by_prefix: dict[str, list[str]] = {}
    for c in map(str, df.columns):
        m = _SPLIT.match(c)
        if m:
            by_prefix.setdefault(m.group("prefix"), []).append(c)
    out = {}
    for prefix, cols in by_prefix.items():
        if len(cols) < 2:
            continue
        cols = [c for c in cols if _is_indicator(df[c])]
        if len(cols) < 2:
            continue
        total, every_used = np.zeros(len(df), dtype=np.int64), True
        for c in cols:
            ones = _ones(df[c])
            total += ones
            every_used &= bool(ones.any())
        if every_used and total.max() <= 1:
            out[prefix] = cols
    return out


def whole_column(df: pd.DataFrame, prefix: str, cols) -> pd.Series:
    """Each row's category in the set: the level of the column holding its 1 (``Race_White`` -> ``White``), or
    :data:`NONE` where the row has none."""
    levels = np.array([_SPLIT.match(c).group("level") for c in cols] + [NONE], dtype=object)
    ones = np.column_stack([_ones(df[c]) for c in cols])
    which = np.where(ones.any(axis=1), ones.argmax(axis=1), len(cols))
    return pd.Series(levels[which], index=df.index, name=prefix)


def add_whole_columns(df: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    """``df`` with a whole column for every indicator set whose prefix is not a column already, and the notes."""
    notes, new = [], {}
    for prefix, cols in indicator_sets(df).items():
        if prefix in df.columns:
            continue
        col = whole_column(df, prefix, cols)
        new[prefix] = col
        rest = f"; rows with none of them are {NONE!r}" if (col == NONE).any() else ""
        shown = ", ".join(cols[:4]) + (", ..." if len(cols) > 4 else "")
        notes.append(f"Columns {shown} ({len(cols)}) hold one category each row: offered together as column "
                     f"{prefix!r} (for s with several groups, the label, or a feature){rest}.")
    return (df.assign(**new) if new else df), notes


def parts_of(df: pd.DataFrame) -> dict[str, list[str]]:
    """``{whole column: its indicator columns}`` for the whole columns the table holds (:func:`add_whole_columns`)."""
    return {p: cols for p, cols in indicator_sets(df).items() if p in df.columns}


def left_out_by_default(df: pd.DataFrame, s_col: str, y_col: str) -> dict[str, str]:
    """The columns of one-hot sets the default features leave out, with why: the indicator columns of a whole
    column that is s or y (they give it away), and a whole column whose indicators are features (they hold it)."""
    out = {}
    for whole, parts in parts_of(df).items():
        if whole in (s_col, y_col):
            role = "s" if whole == s_col else "the label"
            out.update({c: f"the indicator columns of {whole!r}, which is {role}: they give it away" for c in parts})
        else:
            out[whole] = f"its indicator columns ({parts[0]}, ...) are features and hold it already"
    return out


_NO = ("0", "false", "no", "n", "f", "negative", "neg")
_YES = ("1", "true", "yes", "y", "t", "positive", "pos")


def level(column: str) -> str:
    """The level an indicator column stands for: the name after its prefix (``Race_White`` -> ``White``)."""
    m = _SPLIT.match(str(column))
    return m.group("level") if m else str(column)


def binary_pairs(df: pd.DataFrame) -> dict[str, tuple[str, str]]:
    """``{prefix: (no column, yes column)}`` for every set of exactly two indicator columns that are complements
    (exactly one 1 on every row) whose levels read as no and yes (``PF_0``/``PF_1``, ``passed_no``/``passed_yes``,
    ``x=False``/``x=True``): one yes-or-no value held twice, as an encoded label often is."""
    out = {}
    for prefix, cols in indicator_sets(df).items():
        if len(cols) != 2:
            continue
        words = [level(c).strip().lower() for c in cols]
        if words[0] in _YES and words[1] in _NO:
            cols, words = cols[::-1], words[::-1]
        if words[0] in _NO and words[1] in _YES and bool((_ones(df[cols[0]]) + _ones(df[cols[1]]) == 1).all()):
            out[prefix] = (cols[0], cols[1])
    return out
