"""How the dashboard's tables show their numbers (issue 27, item 5): every number column with a fixed count
of decimals (never a raw float such as 0.8322558693433141), and the results table's columns sized so that
the model, its accuracy and its worst gap are read at 1280 px without scrolling sideways.
A UI-helper module: it imports Streamlit."""
from __future__ import annotations

import pandas as pd
import streamlit as st

DIGITS = 3  # rates, accuracies, ratios and gaps: three decimals, as in the text of the figures
RESULTS_WIDTHS = {"model": 290, "accuracy": 105, "worst gap": 165, "target_gap": 130, "target PR_t": 90}


def number_format(digits: int = DIGITS) -> str:
    return f"%.{int(digits)}f"


def number_column(label: str | None = None, *, digits: int = DIGITS, help: str | None = None):
    """One number column with ``digits`` decimals (and a one-line ``help`` on its header)."""
    return st.column_config.NumberColumn(label, format=number_format(digits), help=help)


def number_columns(frame: pd.DataFrame, digits: int = DIGITS, *, digits_of: dict | None = None) -> dict:
    """A ``column_config`` giving every float column of ``frame`` ``digits`` decimals (``digits_of``: other
    counts for named columns). Integer and text columns are left as they are."""
    digits_of = digits_of or {}
    return {c: st.column_config.NumberColumn(format=number_format(digits_of.get(c, digits)))
            for c in frame.columns if pd.api.types.is_float_dtype(frame[c])}


def results_columns(frame: pd.DataFrame) -> dict:
    """The results table's ``column_config`` (:func:`fairdash.figures.plots.results_table`): the model pinned at the
    left, then accuracy and the worst gap at widths that keep them in view at 1280 px, the rest after."""
    config = {"model": st.column_config.TextColumn("model", width=RESULTS_WIDTHS["model"], pinned=True),
              "run": st.column_config.NumberColumn("run", width=50, pinned=True, format="%d")}
    for c, width in RESULTS_WIDTHS.items():
        if c in frame.columns and c != "model":
            config[c] = st.column_config.TextColumn(c, width=width)
    config.update(number_columns(frame))
    return config


def show_results(frame: pd.DataFrame, key: str) -> None:
    """The results table, its columns in :func:`fairdash.figures.plots.results_table`'s reading order."""
    st.dataframe(frame, key=key, hide_index=True, column_config=results_columns(frame))


def show_numbers(frame: pd.DataFrame, key: str, digits: int = DIGITS, **kwargs) -> None:
    """Any table of numbers, each float column with ``digits`` decimals."""
    config = number_columns(frame, digits, digits_of=kwargs.pop("digits_of", None))
    config.update(kwargs.pop("column_config", None) or {})
    st.dataframe(frame, key=key, hide_index=True, column_config=config, **kwargs)
