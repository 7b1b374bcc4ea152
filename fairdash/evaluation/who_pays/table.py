"""Who pays for deciding without s, in a results table (issue 49; docs/METHOD.md, "Who pays for deciding without s").

Each split's measurement (:mod:`fairdash.evaluation.who_pays`, taken beside the price) is written into the results
rows of that split and target (:func:`add_who_pays_columns`), summarised over the splits that have a price
(:func:`who_pays_table`, the intervals as the price's: one split, its own; several, Nadeau and Bengio's corrected
resampled t) and said in words (:func:`who_pays_sentences`).
"""
from __future__ import annotations

import json
import warnings
from collections import Counter

import numpy as np
import pandas as pd

from ..blindness import group_name, priced_splits, row_prices
from ..intervals import interval_over_splits
from ..metric_table import INTERVAL_BOUNDS, POP, TRAIN, column_of, groups_in, metric_of

MOVES = ("refused_without_s", "accepted_without_s", "net_accepted_without_s")  # per group, with intervals
WITHIN = "within_group_gap"
LEANED, CURVE = "leaned_on", "within_group_curve"
_FIELDS = {"refused_without_s": ("refused_share", "refused_ci"),
           "accepted_without_s": ("accepted_share", "accepted_ci"), "net_accepted_without_s": ("net_share", "net_ci")}


def who_pays_group_columns(n_groups: int) -> list[str]:
    """The per-group columns of who pays (each with its interval's bounds) for ``n_groups`` groups."""
    return [column_of(name, POP, g) + b for name in (*MOVES, WITHIN) for g in range(n_groups)
            for b in ("", *INTERVAL_BOUNDS)]


def add_who_pays_columns(results: pd.DataFrame, prices: dict | None) -> pd.DataFrame:
    """``results`` with each row's split's :class:`~fairdash.evaluation.who_pays.measure.WhoPays` (measured beside
    its price, ``prices`` as :func:`fairdash.evaluation.blindness.add_price_columns` takes them) as columns: per group
    the shares decided differently and the within-group gap, each with its interval, and the features leaned on and the
    figure's bands as JSON; unchanged where the price's columns would be."""
    got = row_prices(results, prices)
    if got is None:
        return results
    res, paid = results.copy(), [p.who_pays for p in got]
    groups = list(range(groups_in(res.columns, "target", TRAIN)))
    for g in groups:
        for name, (share, ci) in _FIELDS.items():
            col = column_of(name, POP, g)
            moves = [p.moves[g] if p is not None and g < len(p.moves) else None for p in paid]
            res[col] = [getattr(m, share) if m else np.nan for m in moves]
            for i, b in enumerate(INTERVAL_BOUNDS):
                res[col + b] = [getattr(m, ci)[i] if m else np.nan for m in moves]
        col = column_of(WITHIN, POP, g)
        within = [p.within if p is not None and p.within is not None and g < len(p.within.gap) else None
                  for p in paid]
        res[col] = [w.gap[g] if w else np.nan for w in within]
        for i, b in enumerate(INTERVAL_BOUNDS):
            res[col + b] = [w.ci[g][i] if w else np.nan for w in within]
    res[LEANED] = [p.leans_json() if p is not None else "" for p in paid]
    res[CURVE] = [p.within.to_json() if p is not None and p.within is not None else "" for p in paid]
    return res


def _leans(text) -> list:
    """A split's ``leaned_on`` JSON as ``[column, feature, auc, lo, hi, pairs, s_auc]`` lists (none where empty or
    unreadable)."""
    try:
        got = json.loads(text) if isinstance(text, str) and text else []
    except ValueError:
        return []
    return [x for x in got if isinstance(x, list) and len(x) == 7] if isinstance(got, list) else []


def _mean_ci(values, lo_values, hi_values, within) -> tuple[float, float, float]:
    """The mean over the splits and its interval: one split, its own; several, the corrected resampled t."""
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    if not v.size:
        return np.nan, np.nan, np.nan
    if v.size == 1:
        return float(v[0]), float(np.asarray(lo_values, dtype=float)[0]), float(np.asarray(hi_values, dtype=float)[0])
    lo, hi = interval_over_splits(v, within=within)
    return float(v.mean()), lo, hi


def who_pays_table(splits: pd.DataFrame, groups) -> dict:
    """Who pays over ``splits`` (one results row per priced split of one target rate): per group the mean shares
    decided differently and the mean within-group gap with their intervals, the mean people per split
    (``n``, ``with_s_accepts``, ``refused``, ``accepted``), the feature named first on most splits (``feature``, how
    many splits named it first: ``first_on``), its mean AUC with its interval and whether that leaves out 0.5
    (``clear``), how well it tells the groups apart (``s_auc``), the other features its first split names clearly
    (``others``), and the bands of the figure averaged over the splits whose first feature it is (``curve``)."""
    out = {"splits": int(len(splits)), "groups": []}
    if not len(splits) or column_of(MOVES[0], POP, 0) not in splits:
        return out
    for g in groups:
        n = splits[column_of("n", POP, g)].astype(float) if column_of("n", POP, g) in splits else None
        row = {}
        for name in MOVES:
            col = column_of(name, POP, g)
            row[name] = _mean_ci(splits[col], splits[col + "_lo"], splits[col + "_hi"], metric_of(col)[0].value_range)
        with_s = splits[column_of("with_s_pr", POP, g)].astype(float) if column_of("with_s_pr", POP, g) in splits \
            else None
        row["n"] = float(n.mean()) if n is not None else np.nan
        row["with_s_accepts"] = float((with_s * n).mean()) if n is not None and with_s is not None else np.nan
        row["refused"] = float((splits[column_of(MOVES[0], POP, g)].astype(float) * n).mean()) if n is not None \
            else np.nan
        row["accepted"] = float((splits[column_of(MOVES[1], POP, g)].astype(float) * n).mean()) if n is not None \
            else np.nan
        out["groups"].append(row)
    leans = [_leans(t) for t in splits[LEANED]] if LEANED in splits else []
    firsts = Counter(x[0][0] for x in leans if x)  # by the table's column: a level may differ from split to split
    if not firsts:
        return out
    column, first_on = max(firsts.items(), key=lambda kv: (kv[1], -list(firsts).index(kv[0])))
    own = [i for i, got in enumerate(leans) if got and got[0][0] == column]
    feature = Counter(leans[i][0][1] for i in own).most_common(1)[0][0]
    aucs = [x for got in leans for x in got if x[1] == feature]
    auc = _mean_ci([x[2] for x in aucs], [x[3] for x in aucs], [x[4] for x in aucs], (0.0, 1.0))
    out.update(feature=feature, column=column, first_on=int(first_on), auc=auc,
               clear=bool(auc[1] > 0.5 or auc[2] < 0.5), s_auc=float(np.mean([x[6] for x in aucs])),
               others=[(x[1], x[2], x[3], x[4]) for x in leans[own[0]][1:] if x[3] > 0.5 or x[4] < 0.5])
    own = [i for i in own if leans[i][0][1] == feature]
    mine = splits.iloc[own]
    for g, row in zip(groups, out["groups"]):
        col = column_of(WITHIN, POP, g)
        row[WITHIN] = _mean_ci(mine[col], mine[col + "_lo"], mine[col + "_hi"], (-1.0, 1.0))
    out["curve"] = _mean_curve([mine[CURVE].iloc[i] for i in range(len(mine))]) if CURVE in mine else []
    return out


def _mean_curve(texts) -> list:
    """The figure's bands averaged band by band over the splits: per group, per band, ``(score, n_high, acceptance
    of the high, n_low, acceptance of the low, acceptance with s)`` (a band's mean over the splits that have it)."""
    curves = []
    for t in texts:
        try:
            curves.append(json.loads(t)["curve"])
        except (ValueError, KeyError, TypeError):
            continue
    if not curves:
        return []
    out = []
    for g in range(max(len(c) for c in curves)):
        bands = [c[g] for c in curves if g < len(c)]
        mean = []
        for k in range(max(len(b) for b in bands)):
            cells = np.array([[np.nan if v is None else v for v in b[k]] for b in bands if k < len(b)], dtype=float)
            with warnings.catch_warnings():  # a cell no split has (no high value in the band) stays empty
                warnings.simplefilter("ignore", RuntimeWarning)
                means = np.nanmean(cells, axis=0) if cells.size else np.array([])
            mean.append(tuple(float(v) if np.isfinite(v) else None for v in means))
        out.append(mean)
    return out


def who_pays_tables(results) -> list[tuple]:
    """``[(target_rate, who_pays_table(...)), ...]`` for every target rate of ``results`` with a price."""
    if results is None:
        return []
    groups = list(range(groups_in(results.columns, "target", TRAIN)))
    return [(t, table) for t, splits, _ in priced_splits(results)
            if (table := who_pays_table(splits, groups))["groups"]]


def who_pays_frame(tables, group_names=None) -> pd.DataFrame:
    """The short table of who pays: one row per (target rate, group) of ``tables`` (``[(target_rate,
    who_pays_table(...)), ...]``): the group's people on a split's test rows, how many the rule with s gives a
    positive decision, how many of those the rule without s refuses and how many others it accepts instead (counts,
    and shares of the group in percent with their 95% intervals), the net change and the within-group gap on the
    feature leaned on most (points, with intervals)."""
    def pct(ci) -> str:
        return f"{100 * ci[0]:.1f}% ({100 * ci[1]:.1f} to {100 * ci[2]:.1f})" if np.isfinite(ci[0]) else ""

    def pts(ci) -> str:
        return f"{100 * ci[0]:+.1f} ({100 * ci[1]:+.1f} to {100 * ci[2]:+.1f})" if np.isfinite(ci[0]) else ""

    rows = []
    for t, table in tables:
        for g, r in enumerate(table.get("groups", [])):
            rows.append({"PR_t": t, "group": group_name(group_names, g), "people": _whole(r["n"]),
                         "positive with s": _whole(r["with_s_accepts"]),
                         "refused without s": _whole(r["refused"]), "share refused (95% CI)": pct(r[MOVES[0]]),
                         "accepted instead": _whole(r["accepted"]), "share accepted (95% CI)": pct(r[MOVES[1]]),
                         "net, points (95% CI)": pts(r[MOVES[2]]),
                         f"within-group gap on {table.get('feature', '-')}, points (95% CI)":
                             pts(r[WITHIN]) if WITHIN in r else ""})
    return pd.DataFrame(rows)


def _whole(v) -> str:
    return f"{v:,.0f}" if np.isfinite(v) else ""
