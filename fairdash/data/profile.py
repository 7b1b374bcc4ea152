"""Profiling columns: kind, missing and distinct values, flags, and the values of a column as text."""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..errors import FairDashError
from . import onehot

# One-hot columns a categorical feature gets at most: its 49 most frequent levels and one shared by the rest. Kept
# at 50 after measuring every level instead (issue 45; docs/METHOD.md, "Features"): on COMPAS race every level of
# the charge description lowers the price of deciding without race from 3.9 to 2.4 points (DP) and 4.8 to 2.6 (EO),
# but makes plain LR 0.35 points less accurate, ZafarAccuracy fall below the majority class (0.507 against 0.545)
# and a sweep 2.3 times slower. A column it cuts is warned about and named beside the price.
MAX_CATEGORIES = 50
HIGH_CARDINALITY = 100  # categorical columns with more distinct values than this are flagged in the profile


def profile_columns(df: pd.DataFrame) -> pd.DataFrame:
    """One row per column: kind, missing values, distinct values, examples and flags
    (``id-like``, ``constant``, ``empty``, ``high-cardinality``)."""
    rows = []
    n = len(df)
    for c in df.columns:
        col = df[c]
        missing = int(col.isna().sum())
        n_nonnull = n - missing
        distinct = int(col.nunique(dropna=True))  # no copy of the column: this runs on million-row tables
        numeric = pd.api.types.is_numeric_dtype(col) and not pd.api.types.is_bool_dtype(col)
        kind = "numeric" if numeric else "categorical"
        if distinct == 2:
            kind = "binary"
        flags = []
        if n_nonnull == 0:
            flags.append("empty")
        elif distinct == 1:
            flags.append("constant")
        if n > 20 and distinct >= 0.95 * n_nonnull and (not numeric or pd.api.types.is_integer_dtype(col)):
            flags.append("id-like")
        if not numeric and distinct > HIGH_CARDINALITY:
            flags.append("high-cardinality")
        head = col.iloc[:5000].dropna().drop_duplicates().head(4)
        if len(head) < min(4, distinct):  # rare values further down
            head = col.dropna().drop_duplicates().head(4)
        examples = ", ".join(map(str, head.tolist()))
        rows.append({
            "column": c, "kind": kind, "dtype": str(col.dtype), "missing": missing,
            "distinct": distinct, "examples": examples, "flags": ", ".join(flags),
        })
    return pd.DataFrame(rows)


def left_out_by_default(prof: pd.DataFrame, exclude=()) -> dict[str, str]:
    """Columns the default feature set leaves out, each with why (its ``id-like``/``constant``/``empty``
    flags), from :func:`profile_columns`'s table."""
    flagged = prof.loc[prof["flags"].str.contains("id-like|constant|empty"), ["column", "flags"]]
    return {c: why for c, why in flagged.itertuples(index=False) if c not in exclude}


THRESHOLD_DISTINCT = 10  # a numeric column with more distinct values is split by a threshold, not by its values


def is_threshold_column(prof: pd.DataFrame, column: str) -> bool:
    """Is ``column`` (a row of :func:`profile_columns`'s table) numeric with more than
    ``THRESHOLD_DISTINCT`` values, so that groups or labels are formed by a threshold?"""
    row = prof.set_index("column").loc[column]
    return row["kind"] == "numeric" and int(row["distinct"]) > THRESHOLD_DISTINCT


def default_features(df: pd.DataFrame, prof: pd.DataFrame, s_col: str, y_col: str, drop=()) -> list[str]:
    """Every column except ``s``, ``y``, columns flagged id-like/constant/empty and ``drop``; of a one-hot set
    (:mod:`fairdash.data.onehot`), the indicator columns where their whole column is s or y (they would give it away),
    else the whole column (the indicators already hold it)."""
    left_out = set(left_out_by_default(prof)) | set(onehot.left_out_by_default(df, s_col, y_col))
    return [c for c in df.columns if c not in (s_col, y_col) and c not in left_out and c not in drop]


def left_out_note(columns, why: str) -> str:
    """The note for a column (or several with one reason) left out of the features."""
    if isinstance(columns, str) or len(columns) == 1:
        return f"Column {columns if isinstance(columns, str) else columns[0]!r} was left out of the features ({why})."
    return f"Columns {', '.join(map(repr, columns))} were left out of the features ({why})."


def column_values(df: pd.DataFrame, column: str, limit: int = 200) -> list[str]:
    """The distinct values of a column as text (what ``--s1``/``--y1`` and the UI match against)."""
    _check_column(df, column)
    vals = df[column].dropna()
    counts = _as_text(vals).value_counts()
    return counts.index[:limit].tolist()

def _as_text(col: pd.Series) -> pd.Series:
    """Values as text; whole floats print without ``.0`` so ``1.0`` matches ``"1"``."""
    if pd.api.types.is_float_dtype(col):
        v = col.to_numpy()
        whole = np.isfinite(v) & (v == np.round(v)) & (np.abs(v) < 2.0**53)  # larger ones would overflow int64
        out = col.astype(str)
        out[whole] = pd.Series(v[whole].astype(np.int64), index=col.index[whole]).astype(str)
        return out
    if pd.api.types.is_bool_dtype(col):
        return col.map({True: "True", False: "False"})
    return col.astype(str).str.strip()


values_as_text = _as_text  # the public name (the scoring contract reads s as training read it)


def _check_column(df: pd.DataFrame, column: str, role: str = "column") -> None:
    if column not in df.columns:
        close = [c for c in df.columns if c.lower() == str(column).lower()]
        hint = f" Did you mean {close[0]!r}?" if close else ""
        raise FairDashError(f"The {role} {column!r} is not in the table.{hint}")
