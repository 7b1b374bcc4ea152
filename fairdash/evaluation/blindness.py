"""The price of deciding without s in a results table (issue 26, item 2; issue 34; docs/METHOD.md, "The price of
deciding without s").

Each split's price is measured where the fits are (:mod:`fairdash.evaluation.matched_price`: the best blind rule
that lands on the target against the best rule that uses s, placed at the blind rule's own training rates, with a
paired interval); this module writes it into the results rows and summarises it over the repeats.

- :func:`add_price_columns`: per results row, its split's price (the same ``target_rate`` and seed):
  ``pop_with_s_accuracy``, ``pop_blind_accuracy``, ``price_of_blindness`` with its interval, ``with_s_rule``,
  ``blind_rule`` and ``price_note`` (why the split has none). Added only to results that hold a rule deciding with s.
- :func:`price_table`: one row per target rate over the splits: the mean of the splits' prices with Nadeau and
  Bengio's corrected resampled t interval (one split: its own paired interval), each split's own price, the rates
  both sides were matched on and each side's positive rates on the population.
- :func:`price_sentence`: the verdict in words, "Deciding without sex costs 1.00 points of accuracy at PR_t 0.30
  ... 95% interval +0.57 to +1.42 points, wholly above zero" (Adult, 10 splits), naming the rate matched (a TPR
  under equality of opportunity), the rows measured on and what the interval covers; a price below zero is a gain,
  an interval holding zero "cannot tell".
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..data.profile import MAX_CATEGORIES
from ..targeting.criteria import DEFAULT, criterion_info, criterion_of_rate
from .intervals import OVER_SPLITS_WORDS, interval_over_splits
from .matched_price import LAND_TOLERANCE, SplitPrice, land_tolerance, land_words, price_key
from .metric_table import INTERVAL_BOUNDS, POP, TRAIN, column_of, groups_in

WITH_S, BLIND, PRICE = (column_of(n, POP) for n in ("with_s_accuracy", "blind_accuracy", "price_of_blindness"))
PRICE_LO, PRICE_HI = (PRICE + b for b in INTERVAL_BOUNDS)
RULES = ("with_s_rule", "blind_rule", "price_note")  # which rules each side was, and why a split has no price
PRICE_COLUMNS = (WITH_S, BLIND, PRICE)  # measured on the population
FOLDED = "folded_levels"  # the features the one-hot cap cut (preprocess.folded_levels), said beside the price
# per group: the rate both sides were matched on (training rows), each side's positive rate (population)
PER_GROUP = (("matched_rate", TRAIN, "matched"), ("with_s_pr", POP, "with_s_pr"), ("blind_pr", POP, "blind_pr"))
ACCURACY = column_of("accuracy", POP)
__all__ = ["LAND_TOLERANCE", "land_words", "add_price_columns", "price_table", "price_sentence", "price_sentences",
           "price_group_columns", "landing_means", "has_both_sides", "group_name", "priced_splits", "row_prices"]


def _groups(results: pd.DataFrame) -> list[int]:
    return list(range(groups_in(results.columns, "target", TRAIN)))


def _rate(results: pd.DataFrame) -> str:
    crit = (results["criterion"].dropna().iloc[0] if "criterion" in results and results["criterion"].notna().any()
            else DEFAULT)
    return criterion_info(str(crit)).rate


def _worst(rows: pd.DataFrame, groups, rate) -> pd.Series:
    """The largest of the groups' |rate - target| on the population."""
    gaps = [(rows[column_of(rate, POP, g)].astype(float) - rows[column_of("target", TRAIN, g)].astype(float)).abs()
            for g in groups]
    return pd.concat(gaps, axis=1).max(axis=1, skipna=False) if gaps else pd.Series(np.nan, index=rows.index)


def _within(rows: pd.DataFrame, groups, rate) -> pd.Series:
    """Whether every group's rate is within its :func:`land_tolerance` of its target."""
    ok = pd.Series(bool(groups), index=rows.index)
    for g in groups:
        gap = (rows[column_of(rate, POP, g)].astype(float) - rows[column_of("target", TRAIN, g)].astype(float)).abs()
        tol = rows[column_of("target", TRAIN, g)].astype(float).map(land_tolerance)
        ok &= gap <= tol + 1e-12
    return ok


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


def add_price_columns(results: pd.DataFrame, prices: dict | None = None) -> pd.DataFrame:
    """Each row with its split's price (``prices``: ``{(target_rate, seed): SplitPrice}``,
    :func:`fairdash.evaluation.matched_price.split_prices`); the table unchanged where no rule decides with s or no
    prices were measured (a results file keeps the columns it was written with)."""
    got = row_prices(results, prices)
    if got is None:
        return results
    res = results.copy()
    for column, field in ((WITH_S, "with_s_accuracy"), (BLIND, "blind_accuracy"), (PRICE, "price"),
                          (PRICE_LO, "price_lo"), (PRICE_HI, "price_hi"), (RULES[0], "with_s_rule"),
                          (RULES[1], "blind_rule"), (RULES[2], "note")):
        res[column] = [getattr(p, field) for p in got]
    for g in _groups(res):
        for name, where, field in PER_GROUP:
            res[column_of(name, where, g)] = [_at(getattr(p, field), g) for p in got]
    return res


def row_prices(results: pd.DataFrame, prices: dict | None) -> list[SplitPrice] | None:
    """Each row's split's :class:`~fairdash.evaluation.matched_price.SplitPrice` (one without a price, saying why,
    where its split has none); ``None`` where no rule decides with s or no prices were measured."""
    if not has_both_sides(results) or prices is None:
        return None
    at = _one_rate(results)["target_rate"]
    seeds = results["seed"] if "seed" in results else pd.Series(0, index=results.index)
    return [prices.get(price_key(t, k), SplitPrice(note="no rule of this target and split decides without s"))
            for t, k in zip(at, seeds)]


def price_group_columns(n_groups: int) -> list[str]:
    """The price's per-group columns for ``n_groups`` groups: the matched rates, then each side's positive rates."""
    return [column_of(name, where, g) for name, where, _ in PER_GROUP for g in range(n_groups)]


def _at(values: tuple, g: int) -> float:
    return float(values[g]) if g < len(values) else np.nan


def landing_means(results: pd.DataFrame) -> pd.DataFrame:
    """One row per (target rate, label): the means over the repeats of the population accuracy (with its 95%
    interval, ``pop_accuracy_lo/_hi``) and of each group's rate, the worst gap of the means (``worst_gap``), whether
    the means land on the target (``lands``), ``model``, ``decision``, ``decides_with_s`` and ``repeats``."""
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
    # the accuracy's 95% interval: the corrected resampled t over the repeats; on one split, its own bootstrap
    lo_hi = [interval_over_splits(rows[ACCURACY].astype(float), within=(0.0, 1.0)) if len(rows) > 1 else
             tuple(float(rows[ACCURACY + b].iloc[0]) if ACCURACY + b in rows else np.nan for b in INTERVAL_BOUNDS)
             for _, rows in g]
    means[ACCURACY + INTERVAL_BOUNDS[0]] = [a for a, _ in lo_hi]
    means[ACCURACY + INTERVAL_BOUNDS[1]] = [b for _, b in lo_hi]
    means["worst_gap"] = _worst(means, groups, rate)
    means["lands"] = _within(means, groups, rate)
    return means


def majority_accuracy(results: pd.DataFrame) -> float:
    """The accuracy of deciding the majority class for everyone on the population, over the splits (from each
    group's rows and positives, ``pop_n_<g>`` and ``pop_n_pos_<g>``); NaN where the results do not count them."""
    groups = _groups(results)
    n, pos = ([column_of(c, POP, g) for g in groups] for c in ("n", "n_pos"))
    if not groups or not set(n + pos) <= set(results.columns):
        return float("nan")
    one = results.groupby("seed").first() if "seed" in results else results.iloc[:1]
    total, positives = one[n].astype(float).sum(axis=1), one[pos].astype(float).sum(axis=1)
    return float((np.maximum(positives, total - positives) / total).mean())


def price_table(results: pd.DataFrame | None) -> pd.DataFrame:
    """One row per target rate, over its splits: ``with_s_label`` and ``blind_label`` (the rule each side was on most
    splits), the means of ``with_s_accuracy``, ``blind_accuracy`` and ``price_of_blindness`` over the splits that have
    a price, its 95% interval ``price_lo``/``price_hi`` (Nadeau and Bengio's corrected resampled t over those splits,
    :func:`fairdash.evaluation.intervals.interval_over_splits`; on one split, its own paired bootstrap, which covers
    the test rows' noise only), ``price_splits`` (how many), ``split_prices`` (each split's own price, by seed),
    ``notes`` (each split without a price and why), ``repeats``, ``rate`` (the criterion's rate the sides were matched
    on: ``pr`` or ``tpr``), ``matched``, ``with_s_pr`` and ``blind_pr`` (per group, the means over the priced splits
    of the matched rates on the training rows and of each side's positive rates on the population) and ``n_test``
    (the population test rows of a split). Empty where no rule decides with s or no price was measured."""
    cols = ["target_rate", "with_s_label", "with_s_accuracy", "blind_label", "blind_accuracy", "price_of_blindness",
            "repeats", "price_lo", "price_hi", "price_splits", "split_prices", "notes", "rate", "matched",
            "with_s_pr", "blind_pr", "n_test", "folded"]
    if not has_both_sides(results) or PRICE not in results:
        return pd.DataFrame(columns=cols)
    rate, groups = _rate(results), _groups(results)
    n_pop = [c for c in (column_of("n", POP, g) for g in groups) if c in results]
    out = []
    for t, rows, splits, has in _by_target(results):
        row = {"target_rate": t, "repeats": int(len(splits)), "price_splits": int(len(has)),
               "split_prices": {int(k): float(v) for k, v in has[PRICE].items()},
               "notes": {int(k): str(v) for k, v in splits.loc[splits[PRICE].astype(float).isna(), RULES[2]].items()},
               "rate": rate}
        for side, column, label in (("with_s", WITH_S, RULES[0]), ("blind", BLIND, RULES[1])):
            row[f"{side}_accuracy"] = float(has[column].astype(float).mean()) if len(has) else np.nan
            row[f"{side}_label"] = str(has[label].mode().iloc[0]) if len(has) else ""
        for name, where, field in PER_GROUP:  # older results have none: then the words leave them out
            got = [column_of(name, where, g) for g in groups]
            means = tuple(float(has[c].astype(float).mean()) for c in got) if len(has) and set(got) <= set(has) else ()
            row[field] = means if all(np.isfinite(means)) else ()
        row["n_test"] = int(round(float(has[n_pop].astype(float).sum(axis=1).mean()))) if len(has) and n_pop else 0
        cut = rows[FOLDED].astype(object).fillna("").astype(str) if FOLDED in rows else pd.Series(dtype=str)
        row["folded"] = next((c for c in cut if c), "")
        row["price_of_blindness"] = float(has[PRICE].astype(float).mean()) if len(has) else np.nan
        if len(has) == 1:
            row["price_lo"], row["price_hi"] = float(has[PRICE_LO].iloc[0]), float(has[PRICE_HI].iloc[0])
        else:
            row["price_lo"], row["price_hi"] = interval_over_splits(has[PRICE].astype(float), within=(-1.0, 1.0))
        out.append(row)
    return pd.DataFrame(out, columns=cols)


def _by_target(results: pd.DataFrame):
    """Per target rate: ``(target_rate, its rows, one row per split, the splits that have a price)``."""
    res = _one_rate(results)
    if "seed" not in res:
        res["seed"] = 0
    if res["target_rate"].notna().any():
        res = res[res["target_rate"].notna()]
    for t, rows in res.groupby("target_rate", dropna=False, sort=False):
        splits = rows.groupby("seed", sort=True).first()
        yield t, rows, splits, splits[splits[PRICE].astype(float).notna()]


def priced_splits(results: pd.DataFrame | None) -> list[tuple]:
    """Per target rate of ``results``: ``(target_rate, one row per split that has a price, how many splits)``; none
    where no rule decides with s or no price was measured."""
    if not has_both_sides(results) or PRICE not in results:
        return []
    return [(t, has, len(splits)) for t, _, splits, has in _by_target(results)]


LANDS_WORDS = land_words("rate on the training rows")
ONE_SPLIT_WORDS = ("a bootstrap of this split's test rows, stratified by group and paired across the two rules: it "
                   "covers the test rows' sampling noise, not what a refit on other training rows would give; train "
                   "several repeats for that")


def price_sentence(row, s_name: str = "s", group_names=None) -> str:
    """The verdict for one row of :func:`price_table`, in words an analyst can quote: whether deciding without s
    costs accuracy, gains it, or the table cannot tell (the 95% interval holds 0), said by the interval's side of
    zero whatever the rounding; the rates both rules were matched on (each group's true positive rate under equality
    of opportunity, with each side's positive rates beside), the rows measured on (the population test rows), both
    rules and their accuracies in percent to two decimals (the price is their difference, so the figures add up),
    and how the interval was drawn and what it covers."""
    t = row["target_rate"]
    at = f" at PR_t {_rate_text(t)}" if t is not None and np.isfinite(t) else ""
    notes = row.get("notes") or {}
    missing = "; ".join(f"split {k}: {v}" for k, v in sorted(notes.items()))
    w, b = row["with_s_accuracy"], row["blind_accuracy"]
    if not np.isfinite(w) or not np.isfinite(b):
        return (f"No rule that decides without {s_name} landed on the target{at} ({LANDS_WORDS}), so there is no "
                f"price to measure" + (f" ({missing})." if missing else "."))
    wp, bp = round(100 * w, 2), round(100 * b, 2)
    price = round(wp - bp, 2)
    n, repeats = int(row.get("price_splits", 1)), int(row.get("repeats", 1))
    lo, hi = row.get("price_lo", np.nan), row.get("price_hi", np.nan)
    known = np.isfinite(lo) and np.isfinite(hi)
    how = OVER_SPLITS_WORDS.format(n=n) if n > 1 else ONE_SPLIT_WORDS
    side = ("" if not known else "wholly above zero" if lo > 0 else "wholly below zero" if hi < 0 else "holding zero")
    interval = f"95% interval {100 * lo:+.2f} to {100 * hi:+.2f} points, {side} ({how})" if known else "no interval"
    verdict = _verdict(price, lo, hi, known, s_name, at)
    rows = int(row.get("n_test") or 0)
    where = (f"on the population test rows (the ordinary test set, {rows:,} rows a split, not the balanced one)"
             if rows else "on the population test rows (the ordinary test set, not the balanced one)")
    splits = f"{n} splits" if n > 1 else "one split"
    gone = f" No price on {repeats - n} of the {repeats} splits: {missing}." if missing else ""
    if row.get("folded"):
        gone += (f" Both rules had the same features, but the one-hot cap (at most {MAX_CATEGORIES} columns a "
                 f"feature) cut some: {row['folded']}; the price is for the features as cut.")
    return (f"{verdict}, measured {where} over {splits}. {_matched_words(row, s_name, group_names)}. Without {s_name}: "
            f"{row['blind_label']}, {bp:.2f}% accurate{_rates_words(row.get('blind_pr'), group_names)}; with "
            f"{s_name}: {row['with_s_label']}{_own_words(row['with_s_label'])}, {wp:.2f}% accurate"
            f"{_rates_words(row.get('with_s_pr'), group_names)}. "
            f"Difference {price:+.2f} points; {interval}.{gone}")


def _own_words(with_s_label: str) -> str:
    """Where the rule with s is one the price fitted for itself (cuts on LR with s), not a model of the run, say so:
    its accuracy is no row of the results table (issue 47, item 5)."""
    return "" if str(with_s_label).endswith("'s scores") else " (fitted for this comparison, not a row of the results)"


def _verdict(price: float, lo: float, hi: float, known: bool, s_name: str, at: str) -> str:
    """The verdict's first words, by the interval's side of zero (the point's sign where there is no interval); a
    price that rounds to 0.00 is said below a hundredth of a point, never as none."""
    def points(v: float) -> str:
        return f"{abs(v):.2f} points" if round(abs(v), 2) >= 0.01 else "less than 0.01 points"

    if known and lo <= 0 <= hi:
        return (f"The table cannot tell whether deciding without {s_name} costs accuracy{at}: the difference is "
                f"{price:+.2f} points and its interval holds zero")
    if (known and lo > 0) or (not known and price > 0):
        return f"Deciding without {s_name} costs {points(price)} of accuracy{at}"
    if (known and hi < 0) or (not known and price < 0):
        return f"Deciding without {s_name} gained {points(price)} of accuracy{at} (the rule with {s_name} did worse)"
    return f"Deciding without {s_name} made no difference to accuracy{at} (no interval to tell)"


def group_name(group_names, g: int) -> str:
    """Group ``g``'s name in a sentence: its name where ``group_names`` has it, else "group g"."""
    return str(group_names[g]) if group_names is not None and g < len(group_names) else f"group {g}"


def _by_group(rates, group_names) -> str:
    """``0.283 (Female) and 0.292 (Male)``; three or more groups with commas."""
    parts = [f"{r:.3f} ({group_name(group_names, g)})" for g, r in enumerate(rates)]
    return " and ".join(parts) if len(parts) < 3 else ", ".join(parts[:-1]) + " and " + parts[-1]


def _rates_words(rates, group_names) -> str:
    """``, positive rates 0.283 (Female) and 0.292 (Male)`` on the population; empty where not measured."""
    if not rates:
        return ""
    return ", positive rates " + _by_group(rates, group_names)


def _matched_words(row, s_name: str, group_names) -> str:
    """Which rate the two rules were matched on, and where: the blind rule's own rates on the training rows."""
    info = criterion_of_rate(row.get("rate") or criterion_info(DEFAULT).rate)
    matched = row.get("matched") or ()
    return (f"Both rules were matched on each group's {info.rate_name} ({info.words}): "
            + (f"{_by_group(matched, group_names)}, " if matched else "")
            + f"the rates the rule without {s_name} reached on the training rows; the rule with {s_name} was cut per "
              "group to meet them")


def _rate_text(t: float) -> str:
    """0.30 as "0.30", 0.401 as "0.401"."""
    return f"{t:.2f}" if abs(t * 100 - round(t * 100)) < 1e-9 else f"{t:.3f}"


def price_sentences(results: pd.DataFrame | None, s_name: str = "s", group_names=None) -> list[str]:
    """:func:`price_sentence` for every target rate of ``results`` (none where no rule decides with s)."""
    return [price_sentence(r, s_name, group_names) for _, r in price_table(results).iterrows()]
