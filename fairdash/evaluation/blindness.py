"""The price of deciding without s (issue 26, item 2; docs/METHOD.md, "The price of deciding without s").

For one target, the accuracy of the best rule that decides **with** s and lands on the target beside the
best rule that decides **without** s and lands on it; their difference is ``price_of_blindness`` (points
of population accuracy, as a fraction: 0.029 is 2.9 points). A rule *lands* on the target when every
group's population rate is within :data:`LAND_TOLERANCE` of its target (``pop_worst_gap``); over several
repeats, when every group's *mean* rate is (a single split's small group carries a sampling error of a few
points, which the mean over repeats averages out).

- :func:`add_price_columns`: per results row, the price on its own split (the same ``target_rate`` and
  seed): ``pop_with_s_accuracy``, ``pop_blind_accuracy``, ``price_of_blindness`` (empty where either side has no
  landing rule). Added only to results that hold a rule deciding with s: a table without one has nothing to
  compare, and keeps its columns.
- :func:`price_table`: the same over the means of the repeats, one row per target rate (the sweep
  summary, the report, Compare).
- :func:`price_sentence`: one sentence, "Deciding without sex costs 2.9 points of accuracy at PR_t 0.30 on
  this table."
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..target.target_spec import criterion_info
from .intervals import interval_of_mean
from .metric_table import POP, TRAIN, column_of, groups_in

LAND_TOLERANCE = 0.03  # a group's population rate within 3 points of its target counts as landing on it
WITH_S, BLIND, PRICE = (column_of(n, POP) for n in ("with_s_accuracy", "blind_accuracy", "price_of_blindness"))
PRICE_COLUMNS = (WITH_S, BLIND, PRICE)  # measured on the population
ACCURACY = column_of("accuracy", POP)


def _groups(results: pd.DataFrame) -> list[int]:
    return list(range(groups_in(results.columns, "target", TRAIN)))


def _rate(results: pd.DataFrame) -> str:
    crit = results["criterion"].dropna().iloc[0] if "criterion" in results and results["criterion"].notna().any() else "dp"
    return criterion_info(str(crit)).rate


def _worst(rows: pd.DataFrame, groups, rate) -> pd.Series:
    gaps = [(rows[column_of(rate, POP, g)].astype(float) - rows[column_of("target", TRAIN, g)].astype(float)).abs()
            for g in groups]
    return pd.concat(gaps, axis=1).max(axis=1, skipna=False) if gaps else pd.Series(np.nan, index=rows.index)


def _one_rate(results: pd.DataFrame) -> pd.DataFrame:
    """The rows with a float ``target_rate``; a plain model that ran once beside a single target (its rate
    left empty) is held at that target."""
    res = results.copy()
    rates = res["target_rate"].astype(float) if "target_rate" in res else pd.Series(np.nan, index=res.index)
    known = rates.dropna().unique()
    res["target_rate"] = rates.fillna(known[0]) if len(known) == 1 else rates
    return res


def has_both_sides(results: pd.DataFrame | None) -> bool:
    return (results is not None and len(results) > 0 and "decides_with_s" in results
            and results["decides_with_s"].astype(bool).any() and bool(_groups(results)))


def _best(rows: pd.DataFrame, lands: pd.Series, with_s: bool):
    side = rows[lands & (rows["decides_with_s"].astype(bool) == with_s)]
    if side.empty:
        return None
    return side.loc[side[ACCURACY].astype(float).idxmax()]


def add_price_columns(results: pd.DataFrame) -> pd.DataFrame:
    """``pop_with_s_accuracy``, ``pop_blind_accuracy`` and ``price_of_blindness`` on every row, compared within its
    own split and target (``target_rate``, ``seed``); the table unchanged where no rule decides with s."""
    if not has_both_sides(results):
        return results
    res = results.copy()
    at = _one_rate(res)["target_rate"]
    groups, rate = _groups(res), _rate(res)
    for c in PRICE_COLUMNS:
        res[c] = np.nan
    lands = _worst(res, groups, rate) <= LAND_TOLERANCE
    keys = [at] + ([res["seed"]] if "seed" in res else [])
    for _, rows in res.groupby(keys, dropna=False, sort=False):
        with_s, blind = _best(rows, lands[rows.index], True), _best(rows, lands[rows.index], False)
        w = np.nan if with_s is None else float(with_s[ACCURACY])
        b = np.nan if blind is None else float(blind[ACCURACY])
        res.loc[rows.index, WITH_S] = w
        res.loc[rows.index, BLIND] = b
        res.loc[rows.index, PRICE] = w - b
    return res


def landing_means(results: pd.DataFrame) -> pd.DataFrame:
    """One row per (target rate, label): the means over the repeats of the population accuracy and of each
    group's rate, the worst gap of the means (``worst_gap``), whether that lands on the target (``lands``),
    ``model``, ``decision``, ``decides_with_s`` and ``repeats``."""
    groups, rate = _groups(results), _rate(results)
    num = [ACCURACY, *(column_of(rate, POP, g) for g in groups), *(column_of("target", TRAIN, g) for g in groups)]
    res = _one_rate(results)
    for c in ("model", "decision"):
        if c not in res:
            res[c] = ""
    keys = ["target_rate", "label", "model", "decision", "decides_with_s"]
    g = res.groupby(keys, dropna=False, sort=False)
    means = g[num].mean().reset_index()
    means["repeats"] = g.size().to_numpy()
    means["worst_gap"] = _worst(means, groups, rate)
    means["lands"] = means["worst_gap"] <= LAND_TOLERANCE
    return means


def price_table(results: pd.DataFrame | None) -> pd.DataFrame:
    """One row per target rate: the best landing rule with s and without s over the means of the repeats
    (``with_s_label``, ``with_s_accuracy``, ``with_s_worst_gap``, ``blind_label``, ``blind_accuracy``,
    ``blind_worst_gap``), ``price_of_blindness``, and ``repeats``. Empty where no rule decides with s."""
    cols = ["target_rate", "with_s_label", "with_s_accuracy", "with_s_worst_gap", "blind_label", "blind_accuracy",
            "blind_worst_gap", "price_of_blindness", "repeats", "price_lo", "price_hi", "price_splits"]
    if not has_both_sides(results):
        return pd.DataFrame(columns=cols)
    splits = _split_prices(results)
    means = landing_means(results)
    lands = means["lands"]
    if means["target_rate"].notna().any():  # plain models run once beside several targets have none to land on
        means = means[means["target_rate"].notna()]
    out = []
    for t, rows in means.groupby("target_rate", dropna=False, sort=False):
        row = {"target_rate": t, "repeats": int(rows["repeats"].max())}
        for side, with_s in (("with_s", True), ("blind", False)):
            best = _best(rows, lands[rows.index], with_s)
            row[f"{side}_label"] = "" if best is None else str(best["label"])
            row[f"{side}_accuracy"] = np.nan if best is None else float(best[ACCURACY])
            row[f"{side}_worst_gap"] = np.nan if best is None else float(best["worst_gap"])
        row["price_of_blindness"] = row["with_s_accuracy"] - row["blind_accuracy"]
        own = splits.get(t, pd.Series(dtype=float)).dropna()
        row["price_lo"], row["price_hi"] = interval_of_mean(own, within=(-1.0, 1.0))
        row["price_splits"] = int(own.size)
        out.append(row)
    return pd.DataFrame(out, columns=cols)


def _split_prices(results: pd.DataFrame) -> dict:
    """Each target rate's prices on its own splits (``add_price_columns``: each split's best landing rules with and
    without s on that split's rows), one per seed: what the interval of the price is drawn from."""
    res = add_price_columns(_one_rate(results))
    if PRICE not in res:
        return {}
    keys = ["target_rate"] + (["seed"] if "seed" in res else [])
    per = res.groupby(keys, dropna=False, sort=False)[PRICE].first()
    return {t: g.droplevel(0) if isinstance(g.index, pd.MultiIndex) else g
            for t, g in per.groupby(level=0, dropna=False, sort=False)}


def price_sentence(row, s_name: str = "s") -> str:
    """One sentence for one row of :func:`price_table`."""
    t = row["target_rate"]
    at = f" at PR_t {_rate_text(t)}" if t is not None and np.isfinite(t) else ""
    land = f"within {LAND_TOLERANCE:.2f} of every group's target on the population"
    w, b = row["with_s_accuracy"], row["blind_accuracy"]
    if not np.isfinite(b) and not np.isfinite(w):
        return f"No rule landed on the target{at} ({land}), with or without {s_name}."
    if not np.isfinite(b):
        return (f"No rule that decides without {s_name} landed on the target{at} ({land}); the best one deciding "
                f"with {s_name} ({row['with_s_label']}) reached accuracy {w:.3f}.")
    if not np.isfinite(w):
        return (f"No rule that decides with {s_name} landed on the target{at} ({land}); deciding without "
                f"{s_name} ({row['blind_label']}) reached accuracy {b:.3f}.")
    price = 100 * (w - b)
    detail = (f" ({row['with_s_label']} {w:.3f} with {s_name}, {row['blind_label']} {b:.3f} without; both "
              f"{land})")
    lo, hi, n = (row.get(k, np.nan) for k in ("price_lo", "price_hi", "price_splits"))
    if np.isfinite(lo) and np.isfinite(hi):
        spread = f"; 95% interval {100 * lo:.1f} to {100 * hi:.1f} points over the {int(n)} splits' own prices"
        if lo <= 0 <= hi:
            return (f"Deciding without {s_name} costs {price:.1f} points of accuracy{at} on this table{detail}{spread}: "
                    f"the table cannot tell deciding with {s_name} from deciding without it at this rate.")
        detail += spread
    else:
        detail += "; one split, so no interval yet (run repeats for one)"
    if price <= 0:
        return f"Deciding without {s_name} costs no accuracy{at} on this table{detail}."
    return f"Deciding without {s_name} costs {price:.1f} points of accuracy{at} on this table{detail}."


def _rate_text(t: float) -> str:
    """0.30 as "0.30", 0.401 as "0.401"."""
    return f"{t:.2f}" if abs(t * 100 - round(t * 100)) < 1e-9 else f"{t:.3f}"


def price_sentences(results: pd.DataFrame | None, s_name: str = "s") -> list[str]:
    """:func:`price_sentence` for every target rate of ``results`` where a rule of either side landed (none
    where no rule decides with s)."""
    return [price_sentence(r, s_name) for _, r in price_table(results).iterrows()
            if np.isfinite(r["with_s_accuracy"]) or np.isfinite(r["blind_accuracy"])]
