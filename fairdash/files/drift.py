"""Drift of a table to score against the training rows, feature by feature (issue 47, item 8).

At training, :func:`drift_record` keeps, beside the scoring contract's range of each number column, its training
quantiles (every 5%) with the share of training rows at or below and below each, and for each text column the
share of its most frequent categories. On a new table,
:func:`drift_table` gives per feature:

- the share of rows **out of the training range** (a number below the training minimum or above its maximum), with
  Wilson's 95% interval, and whether it is more than chance gives: a new row of the training population lies
  outside the range of ``n`` training rows with probability ``2 / (n + 1)`` (exchangeability), so ``k`` of ``m``
  rows are tested against that binomial;
- a **distribution-shift score**: for a number column the Kolmogorov-Smirnov distance between the new rows and the
  training rows, read at the training quantiles (exact for a column of few values, a lower bound otherwise); for a
  text column the total variation distance between the two tables' category shares (half the sum of the shares'
  differences, the unseen categories and the rest of the rare ones pooled);
- whether it is **beyond chance**, at a 5% level for the table as a whole (Bonferroni: ``0.05 / K`` for each of its
  ``K`` features, so a clean table of many columns is not flagged somewhere by chance): for a number column, a KS
  distance above ``c sqrt((n + m) / (n m))`` with ``c = sqrt(-ln(level / 2) / 2)`` (1.358 at 5%), the distance
  two samples of these sizes from one distribution exceed at that level (``bound``); for a text column, Pearson's
  chi-square test of the new rows' category counts against the training shares (``p-value``; categories expected
  fewer than 5 times pooled), as the total variation distance of many categories is never near 0 even without a
  shift.

:func:`drift_notes` says each feature that drifted in one line, naming its column, the share out of range and the
score against its bound. A crafted record (a model file is outside input) that is not the shape written here is
ignored, never trusted.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.special import bdtrc, chdtrc

from ..errors import shorten
from ..evaluation.intervals import wilson_interval

QUANTILES = np.linspace(0.0, 1.0, 21)  # the training quantiles kept for a number column
TOP_CATEGORIES = 50  # the categories whose training shares are kept for a text column
LEVEL = 0.05  # the table's false-alarm rate, shared among its features


def drift_record(col: pd.Series, text: bool) -> dict:
    """What :func:`drift_table` needs of one training column: its quantiles (numbers) or its categories' shares."""
    if text:
        seen = col.dropna().astype(str)
        if not len(seen):
            return {}
        shares = seen.value_counts(normalize=True)
        return {"shares": {str(k): float(v) for k, v in shares.iloc[:TOP_CATEGORIES].items()}}
    v = pd.to_numeric(col, errors="coerce").to_numpy(dtype=float)
    v = np.sort(v[np.isfinite(v)])
    if not v.size:
        return {}
    q = np.unique(np.quantile(v, QUANTILES))  # a discrete column has fewer distinct points: its CDF at each
    return {"quantiles": [float(x) for x in q],
            "at_or_below": [float(x) for x in np.searchsorted(v, q, side="right") / v.size],
            "below": [float(x) for x in np.searchsorted(v, q, side="left") / v.size]}


def _cdf(entry: dict) -> tuple | None:
    """A number column's training CDF as recorded: ``(points, share at or below each, share below each)``; ``None``
    where the record is not that shape (an older or a crafted file)."""
    got = [entry.get(k) if isinstance(entry, dict) else None for k in ("quantiles", "at_or_below", "below")]
    if not all(isinstance(x, list) and 0 < len(x) <= len(QUANTILES) and len(x) == len(got[0]) for x in got):
        return None
    q, upto, below = (np.asarray([v if isinstance(v, (int, float)) else np.nan for v in x], dtype=float) for x in got)
    ok = (np.isfinite(q).all() and np.all(np.diff(q) > 0) and np.all((upto >= 0) & (upto <= 1))
          and np.all((below >= 0) & (below <= upto)))
    return (q, upto, below) if ok else None


def _shares(entry: dict) -> dict | None:
    s = entry.get("shares") if isinstance(entry, dict) else None
    if not isinstance(s, dict) or len(s) > TOP_CATEGORIES:
        return None
    ok = {str(k): float(v) for k, v in s.items() if isinstance(v, (int, float)) and 0 <= v <= 1}
    return ok if len(ok) == len(s) else None


def _ks(values: np.ndarray, cdf: tuple) -> float:
    """The Kolmogorov-Smirnov distance between ``values`` and the training rows, read at the training quantiles
    (both CDFs at and just below each point): exact for a column of few values, a lower bound otherwise, so its
    5% bound stays conservative."""
    q, upto, below = cdf
    ordered = np.sort(values)
    new_upto = np.searchsorted(ordered, q, side="right") / values.size
    new_below = np.searchsorted(ordered, q, side="left") / values.size
    return float(max(np.max(np.abs(new_upto - upto)), np.max(np.abs(new_below - below))))


def _tv(values: pd.Series, shares: dict) -> float:
    """The total variation distance between the new rows' category shares and training's (the categories training
    did not keep pooled as one "other")."""
    new = values.value_counts(normalize=True)
    kept = set(shares)
    other_new = float(new[[k for k in new.index if k not in kept]].sum())
    other_train = max(0.0, 1.0 - sum(shares.values()))
    return 0.5 * (sum(abs(float(new.get(k, 0.0)) - p) for k, p in shares.items()) + abs(other_new - other_train))


def _chi_square_p(values: pd.Series, shares: dict, n_train: int) -> float:
    """Pearson's chi-square test of the new rows' category counts against the training shares (the rest pooled as
    one "other"; cells expected fewer than 5 times pooled together): its p-value. The training shares are measured
    on ``n_train`` rows, not known: the statistic is scaled by ``n_train / (n_train + m)``, the two-sample form, so
    a new table as large as the training one is not flagged for the training rows' own noise."""
    m = len(values)
    counts = values.value_counts()
    observed = [float(counts.get(k, 0)) for k in shares] + [float(m - sum(counts.get(k, 0) for k in shares))]
    expected = [m * p for p in shares.values()] + [m * max(0.0, 1.0 - sum(shares.values()))]
    cells, small = [], [0.0, 0.0]
    for o, e in zip(observed, expected):
        if e >= 5:
            cells.append((o, e))
        else:
            small[0], small[1] = small[0] + o, small[1] + e
    if small[1] > 0:
        cells.append(tuple(small))
    if len(cells) < 2:
        return 1.0
    stat = sum((o - e) ** 2 / e for o, e in cells if e > 0) * n_train / (n_train + m)
    return float(chdtrc(len(cells) - 1, stat))


def drift_table(X: pd.DataFrame, schema: dict | None, categorical) -> pd.DataFrame:
    """Per feature column of ``X`` (the table as the scoring contract passed it) that the training record describes:
    ``feature``, ``kind``, ``rows`` (with a value), ``out of range`` (the share below the training minimum or above
    its maximum, numbers only), its 95% interval, ``shift`` (KS or total variation distance), ``bound`` (a number
    column's 5% bound of KS for these row counts), ``p-value`` (a text column's chi-square test), ``beyond chance``
    and ``drifted`` (out-of-range rows, or a shift beyond chance)."""
    cols = (schema or {}).get("columns") if isinstance(schema, dict) else None
    n_train = (schema or {}).get("n_rows") if isinstance(schema, dict) else None
    if not isinstance(cols, dict) or not isinstance(n_train, int) or n_train <= 0:
        return pd.DataFrame()
    cats, rows = set(categorical), []
    for c in X.columns:
        entry = cols.get(str(c))
        if not isinstance(entry, dict):
            continue
        col = X[c].dropna()
        m = len(col)
        if not m:
            continue
        bound = np.sqrt((n_train + m) / (n_train * m))  # times the level's coefficient, once the features are counted
        if c in cats:
            shares = _shares(entry)
            if shares is None:
                continue
            shift, out, lo, hi, out_p = _tv(col.astype(str), shares), np.nan, np.nan, np.nan, 1.0
            p_value, bound = _chi_square_p(col.astype(str), shares, n_train), np.nan
        else:
            cdf = _cdf(entry)
            if cdf is None:
                continue
            v = col.to_numpy(dtype=float)
            k = int(np.sum((v < cdf[0][0]) | (v > cdf[0][-1])))
            out, (lo, hi) = k / m, (float(x) for x in wilson_interval(k, m))
            out_p = float(bdtrc(k - 1, m, 2.0 / (n_train + 1))) if k else 1.0  # P(at least k out by chance)
            shift, p_value = _ks(v, cdf), np.nan
        rows.append({"feature": str(c), "kind": "text" if c in cats else "number", "rows": m, "out of range": out,
                     "out of range lo": lo, "out of range hi": hi, "shift": shift, "bound": float(bound),
                     "p-value": p_value, "out of range p": out_p})
    table = pd.DataFrame(rows)
    if len(table):
        level = LEVEL / len(table)
        table["bound"] *= np.sqrt(-np.log(level / 2) / 2)
        table["beyond chance"] = np.where(table["kind"] == "number", table["shift"] > table["bound"],
                                          table["p-value"] < level)
        table["drifted"] = (table["out of range p"] < level) | table["beyond chance"]
    return table


def drift_notes(table: pd.DataFrame, schema: dict | None, far: dict | None = None) -> dict[str, str]:
    """``{column: line}`` for each feature of :func:`drift_table` that drifted: the rows out of the training range with
    their share and its interval, and the shift against its bound; ``far``: a column's words on its rows far outside
    the range (``first: 900, rows 3, 7; other units?``), said with them."""
    cols = (schema or {}).get("columns") or {}
    out = {}
    for _, r in table.iterrows() if len(table) else ():
        if not r["drifted"]:
            continue
        parts = []
        if np.isfinite(r["out of range"]) and r["out of range"] > 0 and r["out of range p"] < 1:
            e = cols.get(r["feature"], {})
            parts.append(f"{round(r['out of range'] * r['rows']):,} of {r['rows']:,} rows "
                         f"({100 * r['out of range']:.1f}%, 95% interval {100 * r['out of range lo']:.1f}% to "
                         f"{100 * r['out of range hi']:.1f}%) lie outside the training range {e.get('min', 0):g} to "
                         f"{e.get('max', 0):g}" + (f" ({far[r['feature']]})" if far and r["feature"] in far else ""))
        if r["kind"] == "number":
            how = (f"Kolmogorov-Smirnov distance {r['shift']:.3f}, " + ("above" if r["beyond chance"] else "within")
                   + f" {r['bound']:.3f}, its bound for these row counts")
        else:
            p = "p < 0.001" if r["p-value"] < 0.001 else f"p = {r['p-value']:.3f}"
            how = f"total variation distance between its categories' shares {r['shift']:.3f}; chi-square test {p}"
        said = (f"its distribution differs from training's beyond chance ({how})" if r["beyond chance"] else
                f"its distribution is within chance of training's ({how})")
        parts.append(said)
        out[r["feature"]] = (f"Drift in column {shorten(r['feature'], 60)!r}: " + "; ".join(parts)
                             + "; the model was not trained on such rows, so its decisions for them are less certain.")
    return out


def shown_drift(table: pd.DataFrame) -> pd.DataFrame:
    """:func:`drift_table` as text for a screen: per feature its rows, the share out of range with its interval, the
    shift and what it is tested against, and whether it drifted (never NaN)."""
    def out(r) -> str:
        if not np.isfinite(r["out of range"]):
            return "-"
        lo, hi = 100 * r["out of range lo"], 100 * r["out of range hi"]
        return f"{100 * r['out of range']:.1f}% ({lo:.1f}% to {hi:.1f}%)"

    def against(r) -> str:
        if r["kind"] == "number":
            return f"KS, bound {r['bound']:.3f}"
        return "categories, chi-square " + ("p < 0.001" if r["p-value"] < 0.001 else f"p = {r['p-value']:.3f}")

    return pd.DataFrame({"feature": table["feature"], "rows": [f"{v:,}" for v in table["rows"]],
                         "out of range (95% interval)": [out(r) for _, r in table.iterrows()],
                         "shift from training": [f"{v:.3f}" for v in table["shift"]],
                         "tested as": [against(r) for _, r in table.iterrows()],
                         "drifted": ["yes" if v else "no" for v in table["drifted"]]}) if len(table) else table
