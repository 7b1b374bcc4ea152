"""The results file (CSV): every measured column says where it was measured.

In memory a results row keeps the paper's evaluation rows unprefixed (``accuracy``, ``pr_0``, ...; the
balanced test set for demographic parity, the ordinary test set for equality of opportunity) beside the
population's ``pop_`` columns. In the file (format 2) the unprefixed measured columns are written as
``bal_...``: the balanced test set, empty on rows whose paper's evaluation rows are the ordinary test set
(their numbers are the population's, in the ``pop_`` columns). The first column, ``results_format``,
carries the format. Files written before it (no ``results_format``; unprefixed columns; the ceiling at
the measured rates called ``accuracy_bound``) are read too.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..errors import FairDashError
from ..evaluation.metric_table import (
    EVAL,
    POP,
    POP_PREFIX,
    column_of,
    file_column,
    file_measured,
    metric_of,
    population_twin,
    unprefixed,
)

RESULTS_FORMAT = 2
_OLDER_NAMES = {"accuracy_bound": column_of("ceiling_at_measured", EVAL),
                POP_PREFIX + "accuracy_bound": column_of("ceiling_at_measured", POP)}


def _measured(columns) -> list[str]:
    return [c for c in columns if file_measured(str(c))]  # the table says which carry bal_ (metric_table)


def _balanced(df: pd.DataFrame) -> pd.Series:
    if "eval_set" not in df.columns:
        return pd.Series(True, index=df.index)
    return df["eval_set"].astype(str).str.startswith("balanced")


def to_file(results: pd.DataFrame) -> pd.DataFrame:
    """The results as the file holds them (format 2)."""
    out = results.copy()
    balanced = _balanced(out)
    measured = _measured(out.columns)
    for c in measured:
        out[c] = out[c].where(balanced, "" if c == "one_class" else float("nan"))
    out = out.rename(columns={c: file_column(c) for c in measured})
    out.insert(0, "results_format", RESULTS_FORMAT)
    return out


def row_to_file(row: dict) -> dict:
    """One results row (or ``train``'s metrics, for ``train --json``) named and emptied as :func:`to_file` writes
    it, so that every output gives a figure one name."""
    balanced = str(row.get("eval_set", "balanced")).startswith("balanced")
    out = {}
    for k, v in row.items():
        if file_measured(str(k)):
            out[file_column(k)] = v if balanced else ("" if k == "one_class" else float("nan"))
        else:
            out[k] = v
    return out


def from_file(df: pd.DataFrame) -> pd.DataFrame:
    """A results file (this format or an older one) as results rows in memory."""
    out = df.rename(columns=_OLDER_NAMES)
    if "results_format" not in out.columns:
        return out
    try:
        version = int(pd.to_numeric(out["results_format"]).max())
    except (TypeError, ValueError):
        raise FairDashError("The results file's format column is not a number.") from None
    if version > RESULTS_FORMAT:
        raise FairDashError(f"This results file has format {version}; this FairDash reads up to format "
                            f"{RESULTS_FORMAT}. Update FairDash to read it.")
    out = out.drop(columns="results_format")
    balanced = _balanced(out)
    read = {}  # every bal_ column back under its in-memory name, its population's value where it was empty
    for c in out.columns:
        m = unprefixed(c, EVAL)
        if m is None or not _measured([m]):
            continue
        pop = population_twin(m)
        read[m] = out[c].where(balanced, out[pop] if pop in out.columns else out[c])
    out = out.drop(columns=[file_column(c) for c in read])
    return pd.concat([out, pd.DataFrame(read, index=out.index)], axis=1)


IDENTITY = ("model", "label", "seed")  # what every results row has: which model, its label, which split


def check_results(df: pd.DataFrame, name: str) -> pd.DataFrame:
    """Refuse in one line a table that is not results rows as FairDash writes them, before any page reads it: a
    row, the identity columns (:data:`IDENTITY`: text, a whole seed), every measured share, count and gap a number (the
    metric table says which) and every value a single value (no lists or objects: a page
    cannot show them, and the server could not count their memory). Returns ``df``."""
    def bad(why: str) -> FairDashError:
        return FairDashError(f"{name} is not a FairDash results table ({why}).", reason="malformed")

    if not isinstance(df, pd.DataFrame) or df.empty:
        raise bad("it has no rows")
    if not df.columns.is_unique or not all(isinstance(c, str) for c in df.columns):
        raise bad("its column names are not unique names")
    missing = [c for c in IDENTITY if c not in df.columns]
    if missing:
        raise bad(f"no {', '.join(missing)} column")
    for c in df.columns:
        _check_column(df[c], c, bad)
    if df["model"].isna().any() or df["label"].isna().any() or not pd.api.types.is_numeric_dtype(df["seed"]) \
            or df["seed"].isna().any() or not (df["seed"] >= 0).all() or not (df["seed"] % 1 == 0).all():
        raise bad("a row has no model, label or whole seed")
    return df


def _check_column(col: pd.Series, c: str, bad) -> None:
    """One column of :func:`check_results`: single values; a number where the metric table says it measures one."""
    hit = metric_of(c)
    number = hit is not None and (hit[0].measure is not None or hit[0].bounded)  # a share, count or gap
    text = c in IDENTITY[:2]
    if not text and (pd.api.types.is_bool_dtype(col) or pd.api.types.is_numeric_dtype(col)):
        return
    kinds = {_kind(v) for v in col.dropna()}
    if not kinds <= {"text", "number"}:
        raise bad(f"{c!r} holds {sorted(kinds - {'text', 'number'})[0]} values")
    if number and "text" in kinds:
        raise bad(f"{c!r} should hold numbers")
    if text and "number" in kinds:
        raise bad(f"{c!r} should hold text")


def _kind(v) -> str:
    if isinstance(v, str):
        return "text"
    if isinstance(v, (bool, int, float, np.bool_, np.number)):
        return "number"
    return type(v).__name__
