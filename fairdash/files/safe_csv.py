"""Tables as CSV text that a spreadsheet opens without running anything: a text cell that could be read as a
formula gets a leading apostrophe (``neutralise_cell``), numbers stay bare numbers (``results_csv``). The results
file, a scored table's decisions and the dashboard's downloads are written with it.
"""
from __future__ import annotations

import re

import pandas as pd

from ..errors import FairDashError

_FORMULA_START = ("=", "+", "-", "@", "\t", "\r", "\n", "|", "%")
_PLAIN_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")


def neutralise_cell(value):
    """A text cell that a spreadsheet could read as a formula gets a leading apostrophe; numbers and
    text that is just a number (``-0.5``) are left alone."""
    if not isinstance(value, str):
        return value
    stripped = value.lstrip(" ")
    if not stripped or _PLAIN_NUMBER.fullmatch(value.strip()):
        return value
    if value[0] in _FORMULA_START or stripped[0] in _FORMULA_START:
        return "'" + value
    return value


def results_csv(df: pd.DataFrame, index: bool = False) -> str:
    """The table as CSV text with spreadsheet formulas neutralised (cells starting with ``= + - @``,
    a tab or a line break get a leading ``'``), header included. Text cells are quoted; numeric columns
    stay bare numbers, so negative numbers are still numbers."""
    if not isinstance(df, pd.DataFrame):
        raise FairDashError("results_csv takes a table (DataFrame).")
    cols = []
    for j in range(df.shape[1]):
        col = df.iloc[:, j]
        if not (pd.api.types.is_numeric_dtype(col) or pd.api.types.is_bool_dtype(col)):
            col = col.astype(object).map(neutralise_cell)
        cols.append(col.reset_index(drop=True))
    out = pd.concat(cols, axis=1) if cols else pd.DataFrame(index=range(len(df)))
    out.columns = [neutralise_cell(str(c)) for c in df.columns]
    if index:
        out.index = [neutralise_cell(v) if isinstance(v, str) else v for v in df.index]
    import csv

    # text cells quoted (a line break inside one cannot split the row); numbers stay bare numbers
    return out.to_csv(index=index, lineterminator="\n", quoting=csv.QUOTE_NONNUMERIC)
