"""How far decisions land from the target, group by group, and which way a fair model moved each group.

A target asks each group for a rate (the positive rate under demographic parity, the true positive rate
under equality of opportunity). The *gap* of a group is its measured rate minus its target, signed, so
a group short of its target has a negative gap; one averaged number would hide the group that misses
most, so every results row carries each group's gap and the worst one with its group's name:

- ``pop_gap_<g>`` (signed), ``pop_worst_gap`` (the largest absolute gap), ``pop_worst_gap_group``: on the population
  (the test set as it comes);
- ``bal_gap_<g>``, ``bal_worst_gap``, ``bal_worst_gap_group``: on the paper's balanced test set (empty for
  criteria the paper does not evaluate there);
- with a legitimate factor, the worst gap is taken over the (stratum, group) cells.

A fair model trained beside plain LR on the same split is marked, per group, as having moved
``toward`` or ``away`` from the group's target (``pop_moved_<g>``), and ``moved_away`` says so in one
plain sentence when any group moved away.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..models.registry import MODELS, model_info
from ..targeting.criteria import CRITERIA_INFO, DEFAULT, DP, Criterion
from ..targeting.decision import PAPER_RULE
from .intervals import interval_over_splits
from .matched_price import land_tolerance
from .metric_table import INTERVAL_BOUNDS, POP, POP_PREFIX, TRAIN, column_of, group_column, groups_in

MOVE_TOLERANCE = 0.01  # closer or further by less than one percentage point is "no move" (noise, not a move)
REFERENCE_MODEL = "lr"


def _name(group_names, g) -> str:
    return str(group_names[g]) if group_names is not None and g < len(group_names) else f"group {g}"


def group_gaps(rates, targets, group_names=None, prefix: str = POP_PREFIX) -> dict:
    """Each group's signed gap ``rate - target`` and the largest absolute one with its group's name."""
    rates = np.asarray(rates, dtype=float)
    targets = np.asarray(targets, dtype=float)
    gaps = rates - targets if targets.size == rates.size else np.full(rates.shape, np.nan)
    out = {group_column("gap", g, prefix): float(v) for g, v in enumerate(gaps)}
    out.update(worst_gap(gaps, [_name(group_names, g) for g in range(len(gaps))], prefix))
    return out


def tnr_gaps(tpr_gaps, tnr_rates, tnr_targets, group_names=None, prefix: str = POP_PREFIX) -> dict:
    """Explicit TPR and TNR targets: a per-group cut meets the TPR only, so each group's TNR gap
    (``<prefix>tnr_gap_<g>``) is reported beside it, and the worst gap is taken over both (its group named
    with the rate, e.g. ``Male (TNR)``)."""
    tnr = np.asarray(tnr_rates, dtype=float) - np.asarray(tnr_targets, dtype=float)
    out = {group_column("tnr_gap", g, prefix): float(v) for g, v in enumerate(tnr)}
    names = [_name(group_names, g) for g in range(len(tnr))]
    out.update(worst_gap(list(tpr_gaps) + list(tnr), names + [f"{n} (TNR)" for n in names], prefix))
    return out


def worst_gap(gaps, names, prefix: str = POP_PREFIX) -> dict:
    """The largest absolute gap among ``gaps`` (the sign is in each group's own gap) and the name of its
    group/cell."""
    gaps = np.asarray(gaps, dtype=float)
    ok = np.isfinite(gaps)
    if not ok.any():
        return {f"{prefix}worst_gap": float("nan"), f"{prefix}worst_gap_group": ""}
    i = int(np.flatnonzero(ok)[np.argmax(np.abs(gaps[ok]))])
    return {f"{prefix}worst_gap": float(abs(gaps[i])), f"{prefix}worst_gap_group": str(names[i])}


def cell_gaps(pred, y, s, strata, cell_targets, group_names=None, strata_names=None, criterion: Criterion = DP,
              prefix: str = POP_PREFIX) -> dict:
    """Conditional parity: the worst gap over the (stratum, group) cells, each cell's rate of ``criterion`` against
    its stratum's target (cells without rows are left out)."""
    pred, y, s, strata = (np.asarray(a).astype(int) for a in (pred, y, s, strata))
    cell_targets = np.asarray(cell_targets, dtype=float)
    gaps, names = [], []
    for k in range(cell_targets.shape[0]):
        for g in range(cell_targets.shape[1]):
            rows = (strata == k) & (s == g) & criterion.rows(y)
            if rows.any():
                gaps.append(pred[rows].mean() - cell_targets[k, g])
                stratum = strata_names[k] if strata_names is not None and k < len(strata_names) else f"stratum {k}"
                names.append(f"{_name(group_names, g)} in {stratum}")
    return worst_gap(gaps, names, prefix)


# --------------------------------------------------------------------------------------------------
# Which way a fair model moved each group, against plain LR on the same split
# --------------------------------------------------------------------------------------------------
def _groups(results: pd.DataFrame) -> list[int]:
    return list(range(groups_in(results.columns, "target", TRAIN)))


def _criterion(row) -> Criterion:
    """The criterion a results row was judged by (its ``criterion`` column holds the name; the default where none)."""
    return CRITERIA_INFO.get(row.get("criterion"), CRITERIA_INFO[DEFAULT])


def mark_moves(results: pd.DataFrame, group_names=None) -> pd.DataFrame:
    """Add ``pop_moved_<g>`` ("toward", "away" or "") and ``moved_away`` (a sentence or "") to the rows
    of models that serve a fairness criterion, each compared with plain LR's row of the same seed (and
    the same targets, where LR ran once per target). Rows without such a reference are left empty."""

    res = results.copy()
    groups = _groups(res)
    for g in groups:
        res[column_of("moved", POP, g)] = ""
    res["moved_away"] = ""
    if not groups or "model" not in res:
        return res
    refs = res[res["model"] == REFERENCE_MODEL]
    for i, row in res.iterrows():
        info = model_info(row["model"])
        if row["model"] == REFERENCE_MODEL or not info.criteria:
            continue
        ref = _reference(refs, row, groups)
        if ref is None:
            continue
        crit = _criterion(row)
        rate, away = crit.rate, []
        for g in groups:
            target, fair = row[column_of("target", TRAIN, g)], row[column_of(rate, POP, g)]
            plain = ref[column_of(rate, POP, g)]
            if not np.isfinite([target, fair, plain]).all():
                continue
            d_fair, d_plain = abs(fair - target), abs(plain - target)
            move = ("toward" if d_fair < d_plain - MOVE_TOLERANCE
                    else "away" if d_fair > d_plain + MOVE_TOLERANCE else "")
            res.at[i, column_of("moved", POP, g)] = move
            if move == "away":
                away.append(moved_away_sentence(row["label"], _name(group_names, g), fair, plain, target, crit))
        res.at[i, "moved_away"] = " ".join(away)
    return res


def _reference(refs: pd.DataFrame, row, groups):
    """Plain LR of the row's split under the paper's rule (where the run has it; else under the row's own
    rule, else under the run's rule: a post-processing model decides by its own), trained for the same
    targets where LR ran once per target."""
    same = refs[refs["seed"] == row["seed"]] if "seed" in refs else refs
    if "decision" in refs and len(same):
        paper = same[same["decision"] == PAPER_RULE]
        own = same[same["decision"] == row.get("decision", PAPER_RULE)]
        same = paper if len(paper) else own if len(own) else same  # a post-processing model: the run's LR
    if len(same) > 1:  # LR ran once per target (a decision rule that depends on it): the same targets
        cols = [column_of("target", TRAIN, g) for g in groups]
        match = same[np.isclose(same[cols].to_numpy(float), np.asarray([row[c] for c in cols], float)).all(axis=1)]
        same = match if len(match) else same
    return None if same.empty else same.iloc[0]


def moved_away_sentence(label, group, fair, plain, target, criterion: Criterion = DP) -> str:
    what = criterion.rate_name
    return (f"{label} moved {group} away from its target: {what} {fair:.3f} on the population against "
            f"plain LR's {plain:.3f}, target {target:.3f}.")


def moved_away_summary(results: pd.DataFrame, group_names=None) -> list[str]:
    """One sentence per (model, target, group) that moved away from its target on average over **all** its
    repeats: the mean of the fair model's rates over every repeat against the mean of plain LR's on the same
    splits (not only the repeats that moved away). What the CLI, Compare and the report say. Rows without
    the plain model's rows beside them (results kept without them) give their own sentences."""

    if (results is None or "moved_away" not in results
            or not results["moved_away"].astype(object).fillna("").astype(str).str.len().any()):
        return []  # rows never marked by mark_moves, or no repeat moved any group away
    groups = _groups(results)
    refs = results[results["model"] == REFERENCE_MODEL]
    if refs.empty or not all(column_of("moved", POP, g) in results for g in groups):
        said = results["moved_away"].astype(object).fillna("").astype(str)
        return list(dict.fromkeys(s.strip() for s in said if s.strip()))
    fair = results[results["model"].map(lambda m: m != REFERENCE_MODEL and m in _registry_names()
                                        and bool(model_info(m).criteria))]
    out = []
    keys = [k for k in ("label", "target_rate") if k in results]
    for _, rows in fair.groupby(keys, dropna=False, sort=False):
        pairs = [(r, _reference(refs, r, groups)) for _, r in rows.iterrows()]
        pairs = [(r, ref) for r, ref in pairs if ref is not None]
        if not pairs:
            continue
        mine, plain_rows = pd.DataFrame([r for r, _ in pairs]), pd.DataFrame([ref for _, ref in pairs])
        first = mine.iloc[0]
        crit = _criterion(first)
        rate = crit.rate
        for g in groups:
            if not (mine[column_of("moved", POP, g)] == "away").any():  # no repeat moved it away (or rows never marked)
                continue
            target = float(mine[column_of("target", TRAIN, g)].astype(float).mean())
            fair_rate = float(mine[column_of(rate, POP, g)].astype(float).mean())
            plain = float(plain_rows[column_of(rate, POP, g)].astype(float).mean())
            if not np.isfinite([target, fair_rate, plain]).all():
                continue
            if abs(fair_rate - target) > abs(plain - target) + MOVE_TOLERANCE:
                n = int(mine["seed"].nunique()) if "seed" in mine else len(mine)  # repeats as set, not rows
                sentence = moved_away_sentence(first["label"], _name(group_names, g), fair_rate, plain, target, crit)
                out.append(sentence if n == 1 else sentence[:-1] + f" (mean of {n} repeats).")
    return out


def _registry_names():
    return MODELS


# --------------------------------------------------------------------------------------------------
# The ceiling beside a run: only for a run that reached the target
# --------------------------------------------------------------------------------------------------
LANDS, MISSES, CANNOT_TELL, NO_TARGET = "lands", "misses", "cannot tell", "no target"


def landing_verdict(rows: pd.DataFrame, group_names=None) -> tuple[str, str]:
    """Whether one rule's decisions land on the target on the population, read from the intervals (docs/METHOD.md,
    "Lands on the target"): ``rows`` are its results rows (one per split). Each group's gap to its target carries a
    95% interval (one split: the bootstrap of its test rows; several: the corrected resampled t over the splits'
    gaps). The rule *lands* when every group's interval lies within the group's :func:`land_tolerance` of its
    target, *misses* when some group's interval lies wholly outside it, and otherwise the table *cannot tell*.
    Returns ``(verdict, words)``: the words name the group that decides it, its test rows and its interval."""
    groups = [g for g in range(64) if column_of("gap", POP, g) in rows.columns]
    gaps = {g: rows[column_of("gap", POP, g)].astype(float) for g in groups}
    if not groups or any(not np.isfinite(v).any() for v in gaps.values()):
        return NO_TARGET, "no per-group target to reach"
    criterion = rows["criterion"].dropna().astype(str) if "criterion" in rows else pd.Series(dtype=str)
    positives = bool(len(criterion)) and criterion.iloc[0] in CRITERIA_INFO and \
        CRITERIA_INFO[criterion.iloc[0]].positives_only
    missed, unclear = [], []
    for g in groups:
        lo, hi, tol, where = _gap_interval(rows, gaps[g], g, positives, group_names)
        if hi < -tol or lo > tol:
            missed.append(where)
        elif lo < -tol or hi > tol:
            unclear.append(where)
    if missed:
        return MISSES, "misses the target: " + "; ".join(missed)
    if unclear:
        return CANNOT_TELL, "too few rows to tell whether it lands: " + "; ".join(unclear)
    return LANDS, "lands on the target (every group's 95% interval within its tolerance)"


def _gap_interval(rows: pd.DataFrame, gaps: pd.Series, g: int, positives: bool,
                  group_names) -> tuple[float, float, float, str]:
    """:func:`landing_verdict`'s reading of group ``g``: ``(lo, hi, tolerance, words)``, the 95% interval of its gap
    (one split: its bootstrap columns; several: the corrected resampled t over the splits), its
    :func:`land_tolerance` and the words naming the group, its test rows and its interval."""
    target = column_of("target", TRAIN, g)
    t = float(rows[target].astype(float).mean()) if target in rows else np.nan
    count = column_of("n_pos" if positives else "n", POP, g)  # the rows the rate is counted among
    n = int(round(float(rows[count].astype(float).mean()))) if count in rows else 0
    tol = land_tolerance(t) if np.isfinite(t) else np.nan
    if len(rows) == 1:
        lo, hi = (float(rows[column_of("gap", POP, g) + b].iloc[0]) if column_of("gap", POP, g) + b in rows
                  else np.nan for b in INTERVAL_BOUNDS)
    else:
        lo, hi = interval_over_splits(gaps, within=(-1.0, 1.0))
    gap = float(gaps.mean())
    if not (np.isfinite(lo) and np.isfinite(hi)):
        lo = hi = gap
    what = "positive test rows" if positives else "test rows"
    counted = f"{n} {what}" if len(rows) == 1 else f"{n} {what} a split, {len(rows)} splits"
    return lo, hi, tol, (f"{_name(group_names, g)} ({counted}): gap {gap:+.3f}, "
                         f"95% interval {lo:+.3f} to {hi:+.3f}, against ±{tol:.3f}")


def ceiling_verdict(accuracy, ceiling_at_measured, landing: tuple[str, str]) -> str:
    """Whether a measured accuracy is within Theorem 2's ceiling, said only of a run that reached its target
    (:func:`landing_verdict`): the ceiling at ``PR_t`` is what a classifier *reaching* the target could achieve, so
    a run that missed it, or of which the table cannot tell, is not compared with it."""
    verdict, words = landing
    if verdict == NO_TARGET:
        return words
    if verdict != LANDS:
        return f"{words}; the ceiling at PR_t does not apply"
    if ceiling_at_measured is None or not np.isfinite(ceiling_at_measured):
        return "lands; no ceiling at its rates to compare with"
    return "yes" if accuracy <= ceiling_at_measured + 1e-9 else "no (check the data)"


def ceiling_table(results: pd.DataFrame, by=("label", "target"), group_names=None, prefix: str = "") -> pd.DataFrame:
    """Each model's mean accuracy beside its two ceilings (at its measured rates, at the target) and the
    verdict of :func:`ceiling_verdict`: what the Train page shows. ``prefix``: the set the three are read on
    (``POP_PREFIX``, the population's: where the verdict's landing is judged too); the columns keep their plain
    names."""
    by = [b for b in by if b in results.columns]
    # each read on ``prefix``'s set where the results measure it there, else on the evaluation rows
    names = {(prefix + c if prefix + c in results else c): c for c in ("accuracy", "ceiling_at_measured",
                                                                       "ceiling_at_target")}
    cols = [c for c in names if c in results]
    grouped = results.groupby(by, sort=False, dropna=False)
    g = grouped[cols].mean().reset_index().rename(columns=names)
    g["reached the target, within the ceiling"] = [
        ceiling_verdict(a, c, landing_verdict(rows, group_names))
        for a, c, (_, rows) in zip(g["accuracy"], g["ceiling_at_measured"], grouped)]
    return g


def sampling_errors(targets, s_rows, rate_rows=None) -> np.ndarray:
    """Each group's sampling error of a rate measured on its rows: ``sqrt(t (1 - t) / n_g)`` at its target
    ``t``, with ``n_g`` its rows among ``s_rows`` (its positives, ``rate_rows``, for a TPR)."""
    s = np.asarray(s_rows).astype(int)
    keep = np.ones(len(s), dtype=bool) if rate_rows is None else np.asarray(rate_rows).astype(bool)
    t = np.asarray(targets, dtype=float)
    n = np.bincount(s[keep], minlength=len(t))[:len(t)].astype(float)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(n > 0, np.sqrt(t * (1 - t) / np.maximum(n, 1)), np.nan)


def sampling_noise_sentence(targets, s_rows, group_names=None, rate_rows=None) -> str:
    """How much of a miss on one split's population is sampling noise, in one sentence."""
    se = sampling_errors(targets, s_rows, rate_rows)
    s = np.asarray(s_rows).astype(int)
    keep = np.ones(len(s), dtype=bool) if rate_rows is None else np.asarray(rate_rows).astype(bool)
    n = np.bincount(s[keep], minlength=len(se))[:len(se)]
    parts = [f"{_name(group_names, g)} ±{e:.3f} ({int(n[g])} rows)" for g, e in enumerate(se) if np.isfinite(e)]
    return ("Sampling error of each group's rate on one split's population, sqrt(t(1 - t)/n): " + ", ".join(parts)
            + "; a gap within about twice it is what another split could give (the mean over repeats narrows it).")
