"""Per-group metrics (positive rate, TPR, TNR, accuracy), fairness ratios and differences, and mean +-
std over repeats from a tidy table (docs/METHOD.md, "Evaluation protocol")."""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..data.meaning import error_words
from ..models.registry import MODELS, model_info
from ..targeting.criteria import criterion_info
from ..targeting.decision import rule_info
from .intervals import interval_over_splits
from .metric_table import (
    EVAL,
    INTERVAL_BOUNDS,
    MEAN,
    POP,
    POP_PREFIX,
    Count,
    Share,
    column_of,
    group_column,
    groups_in,
    measured_across_groups,
    measured_on_rows,
    metric_of,
    min_over_max,
    per_group_metric,
    share,
    summarized_columns,
)

# min_over_max: the fairness ratio, whose home is the metric table, is read from here by its older callers


def one_class_note(y_pred, s, n_groups: int, group_names=None) -> str:
    """In words, where a model predicts one class for everyone or for a whole group (empty otherwise), with the rows
    it was seen on (a whole group of 6 balanced test rows says less than one of 6,000): then its rates and ratios
    describe no decision, and a ratio of 1 would be a false parity."""
    p = np.asarray(y_pred).astype(int)
    s = np.asarray(s).astype(int)
    if p.size == 0:
        return ""
    if np.all(p == p[0]):
        return f"predicts {int(p[0])} for everyone ({p.size} rows)"
    parts = []
    for j in range(n_groups):
        g = p[s == j]
        if g.size and np.all(g == g[0]):
            name = group_names[j] if group_names is not None and j < len(group_names) else f"group {j}"
            parts.append(f"predicts {int(g[0])} for everyone in {name} ({g.size} rows)")
    return "; ".join(parts)


def conditional_ratio(y_pred, s, strata, n_groups: int) -> tuple[float, float]:
    """Conditional demographic parity as measured: in every stratum the positive-rate ratio (min over max
    over groups); returns ``(worst, mean)``: the worst stratum's ratio (what one number must show: a
    mean would hide the stratum furthest from parity) and the mean over strata weighted by each
    stratum's share of the rows (labelled as such wherever shown). Strata where the ratio is undefined
    (a group absent, or no positive prediction) are left out of both."""
    p = np.asarray(y_pred).astype(int)
    s = np.asarray(s).astype(int)
    strata = np.asarray(strata).astype(int)
    ratios, weights = [], []
    for k in np.unique(strata):
        in_k = strata == k
        rates = [share(p == 1, in_k & (s == j)) for j in range(n_groups)]
        r = min_over_max(rates) if all(np.isfinite(rates)) else float("nan")
        if np.isfinite(r):
            ratios.append(r)
            weights.append(in_k.sum())
    if not ratios:
        return float("nan"), float("nan")
    return float(np.min(ratios)), float(np.average(ratios, weights=weights))


def group_metrics(y_true, y_pred, s, n_groups: int | None = None) -> dict:
    """Every metric of the table measured from labels and decisions (``metric_table.measured_on_rows``:
    accuracy, rows, and per group ``j`` ``pr_j = P(yhat=1|s=j)``, ``tpr_j``, ``tnr_j``, ``acc_j``, ``fpr_j``,
    ``fnr_j``, ``precision_j``...), then the summaries across the groups (``measured_across_groups``: ratios,
    min over max, and differences, max minus min), named by the table (``Metric.column``). A rate with no rows
    to measure it on is NaN; where the model gives one class to everyone, every summary is NaN."""
    y = np.asarray(y_true).astype(int)
    p = np.asarray(y_pred).astype(int)
    s = np.asarray(s).astype(int)
    G = n_groups or (int(s.max()) + 1)
    groups = [s == j for j in range(G)]
    out = {}
    for m in measured_on_rows():
        if m.per_group:
            out.update({m.column(EVAL, j): m.measure.value(y[g], p[g]) for j, g in enumerate(groups)})
        else:
            out[m.column(EVAL)] = m.measure.value(y, p)
    one_class = p.size and np.all(p == p[0])  # no decision, so no ratio (never a parity of 1)
    for m in measured_across_groups():
        of = per_group_metric(m.measure.of)
        out[m.column(EVAL)] = float("nan") if one_class else m.measure.how([out[of.column(EVAL, j)] for j in range(G)])
    return out


def measure_of(name: str) -> Share | Count:
    """How the table measures the metric ``name`` from labels ``y`` and decisions ``p``, as :func:`group_metrics` does:
    ``.value(y, p)`` (a per-group metric's on one group's rows), and for a rate the rows it is counted among,
    ``.among(y, p)``. The price (:mod:`fairdash.evaluation.matched_price`) takes its accuracy and rates from here, so
    one definition of each serves the results and the price."""
    return next(m.measure for m in measured_on_rows() if m.name == name)


def summarize(results: pd.DataFrame, by=("model", "target_rate"), metrics=None) -> pd.DataFrame:
    """Mean and standard deviation over repeats: one row per ``by`` group, columns ``<metric>_mean`` and
    ``<metric>_std`` (sample std, ddof=1; 0 for a single repeat), and ``repeats``; and for a metric with an
    interval, the mean's 95% interval ``<metric>_lo``, ``<metric>_hi`` (``intervals``: over several repeats
    the corrected resampled t from their spread; for one, that run's own bootstrap interval)."""
    by = [b for b in by if b in results.columns]
    if metrics is None:  # every metric the table summarises, per-group columns of any number of groups included
        metrics = summarized_columns(results.columns)
    metrics = [m for m in dict.fromkeys(metrics) if m in results.columns]
    g = results.groupby(by, dropna=False, sort=False)[metrics]
    mean = g.mean().add_suffix("_mean")
    std = g.std(ddof=1).fillna(0.0).add_suffix("_std")
    out = pd.concat([mean, std], axis=1)
    out["repeats"] = g.size()
    cols = [c for m in metrics for c in (f"{m}_mean", f"{m}_std")] + ["repeats"]
    bounded = [m for m in metrics if all(m + b in results.columns for b in INTERVAL_BOUNDS)]
    if bounded:
        def of_mean(rows: pd.DataFrame) -> pd.Series:
            got = {}
            for m in bounded:
                lo, hi = (interval_over_splits(rows[m], within=metric_of(m)[0].value_range) if len(rows) > 1
                          else (float(rows[m + INTERVAL_BOUNDS[0]].iloc[0]),
                                float(rows[m + INTERVAL_BOUNDS[1]].iloc[0])))
                got[m + INTERVAL_BOUNDS[0]], got[m + INTERVAL_BOUNDS[1]] = lo, hi
            return pd.Series(got)

        bounds = pd.DataFrame([of_mean(rows) for _, rows in results.groupby(by, dropna=False, sort=False)],
                              index=out.index)
        out = pd.concat([out, bounds], axis=1)
        cols += [m + b for m in bounded for b in INTERVAL_BOUNDS]
    return out[cols].reset_index()


def with_interval(r, column: str) -> str:
    """A summary row's mean with its 95% interval: ``0.149 (0.121 to 0.180)``; the mean alone where it has none,
    ``n/a`` where it is undefined."""
    m, lo, hi = (r.get(f"{column}{k}", np.nan) for k in ("_mean", "_lo", "_hi"))
    if m is None or not np.isfinite(m):
        return "n/a"
    return f"{m:.3f} ({lo:.3f} to {hi:.3f})" if np.isfinite(lo) and np.isfinite(hi) else f"{m:.3f}"


ERROR_WORDS = {"precision": "precision", "cal_error": "calibration error (score vs outcome)"}


def error_rates_frame(summary: pd.DataFrame, group_names, prefix: str = POP_PREFIX, favourable: bool = True,
                      words: dict | None = None):
    """Each model's error rates per group from a summary over repeats (:func:`summarize`), with their 95%
    intervals: who is wrongly given the positive decision (FPR), wrongly given the negative one (FNR), and how often
    a positive decision is right (precision); one row per (model, group). The rates are named in the task's words
    (``words``: :func:`fairdash.data.meaning.error_words`, "wrongly denied (FPR)"; without them the generic words
    for a favourable or unfavourable positive label). The harmful error leads: the false negatives where a positive
    label is favourable (a loan refused), the false positives where it is not (a rearrest predicted). ``None``
    where the summary has no error rates."""
    named = {**ERROR_WORDS, **(words or error_words(favourable=favourable))}
    order = ("fnr", "fpr", "precision") if favourable else ("fpr", "fnr", "precision")
    if group_column(order[0], 0, prefix) + MEAN not in summary.columns:
        return None
    shown = order + (("cal_error",) if group_column("cal_error", 0, prefix) + MEAN in summary.columns else ())
    rows = []
    for _, r in summary.iterrows():
        for j, g in enumerate(map(str, group_names)):
            if group_column(order[0], j, prefix) + MEAN in summary.columns:
                rows.append([str(r.get("label", r["model"])), g]
                            + [with_interval(r, group_column(m, j, prefix)) for m in shown])
    return pd.DataFrame(rows, columns=["model", "group"] + [named[m] for m in shown])


def confusion_frame(results: pd.DataFrame, group_names, prefix: str = POP_PREFIX) -> pd.DataFrame | None:
    """Each model's confusion matrix per group (true and false positives and negatives, counted on the set's rows;
    the mean over repeats where there are several), one row per (model, group); ``None`` where the results do not
    count them."""
    cells = ("tp", "fp", "tn", "fn")
    if group_column("tp", 0, prefix) not in results.columns:
        return None
    label = "label" if "label" in results.columns else "model"
    rows = []
    for name, g in results.groupby(label, sort=False):
        for j, group in enumerate(map(str, group_names)):
            counts = [float(g[group_column(c, j, prefix)].astype(float).mean()) for c in cells]
            rows.append([str(name), group, *(f"{v:.0f}" if len(g) == 1 else f"{v:.1f}" for v in counts)])
    return pd.DataFrame(rows, columns=["model", "group", "true positives", "false positives", "true negatives",
                                       "false negatives"])


def format_mean_std(mean: float, std: float, digits: int = 3, repeats: int | None = None) -> str:
    """``0.874 ± 0.009``; the mean alone where there is no spread to show (one repeat, or no std); an
    undefined value shows as ``n/a``."""
    if mean is None or not np.isfinite(mean):
        return "n/a"
    one = repeats is not None and int(repeats) <= 1
    return f"{mean:.{digits}f} ± {std:.{digits}f}" if np.isfinite(std) and not one else f"{mean:.{digits}f}"


def splits_words(rows: pd.DataFrame) -> str:
    """How many splits ``rows`` (one model's results rows) come from, as the analyst set the repeats: "on 1 split",
    "on 3 splits" (a model fitted once beside several targets or rules has several rows a split: they count once)."""
    n = int(rows["seed"].nunique()) if "seed" in rows.columns else len(rows)
    return f"on {n} split" + ("" if n == 1 else "s")


def one_class_notes(results: pd.DataFrame) -> list[str]:
    """Sentences for every model that predicted one class for everyone or a whole group, from a results
    table's ``one_class``/``pop_one_class`` columns: its ratios there are empty, never "perfectly fair"."""
    notes = []
    evaluated = (str(results["eval_set"].dropna().iloc[0]) + " set" if "eval_set" in results.columns
                 and results["eval_set"].notna().any() else "evaluation rows")
    for col, where in ((column_of("one_class", EVAL), evaluated), (column_of("one_class", POP), "population")):
        if col not in results.columns:
            continue
        hit = results[results[col].astype(object).fillna("").astype(str) != ""]
        labels = hit["label"] if "label" in hit.columns else hit["model"]
        for (label, note), g in hit.groupby([labels, hit[col]], sort=False):
            notes.append(f"{label} {note} on the {where} {splits_words(g)}: {one_class_reason(note)}.")
    return list(dict.fromkeys(notes))


def result_notes(results: pd.DataFrame) -> list[str]:
    """Every warning a results table carries, in words: models that give one class to everyone or to a
    whole group (:func:`one_class_notes`), decision rules that did not reach their targets on the training
    rows (:func:`rule_notes`), models less accurate on the population than the majority class
    (:func:`below_majority_notes`), and models too accurate to be true (a leak)."""
    notes = one_class_notes(results) + rule_notes(results) + own_level_notes(results) + below_majority_notes(results)
    if "too_good" in results.columns:
        hit = results[results["too_good"].fillna(False).astype(bool)]
        labels = hit["label"] if "label" in hit.columns else hit["model"]
        for label, g in hit.groupby(labels, sort=False):
            best = float(np.nanmax(g[[c for c in (column_of("accuracy", w) for w in (EVAL, POP))
                                      if c in g.columns]].to_numpy(float)))
            notes.append(f"{label} is too good: accuracy {best:.3f} on held-out rows {splits_words(g)}. Look for a "
                         "leak: a feature, or a few together, that give the label away (the Data page lists them).")
    return notes


OWN_LEVEL_TOLERANCE = 0.03  # a fairness model whose mean rate sits further than this from PR_t is said to ignore it


def own_level_notes(results: pd.DataFrame) -> list[str]:
    """One line per fairness model that PR_t does not steer (Kamiran & Calders, Agarwal et al., the threshold
    optimizer, Zafar's methods: ``ModelInfo.uses_target_rate`` false) under a rule that does not aim at the target,
    whose groups' mean rates on the population sit away from the run's PR_t: what it reached instead, so that an
    equal rate at a level of its own (fairlearn's threshold optimizer at 0.996 against PR_t 0.80) is never read as
    the analyst's target (issue 47, item 7)."""
    need = {"model", "target_rate"}
    if not need <= set(results.columns) or results["target_rate"].astype(float).isna().all():
        return []
    targets = sorted(results["target_rate"].astype(float).dropna().unique())
    crit = (criterion_info(str(results["criterion"].dropna().iloc[0])) if "criterion" in results.columns
            and results["criterion"].notna().any() else None)
    rate = crit.rate if crit is not None else "pr"
    rates = [column_of(rate, POP, g) for g in range(groups_in(results.columns, rate, POP))]
    notes = []
    label = results["label"] if "label" in results.columns else results["model"]
    for name, g in results.groupby(label, sort=False):
        m = str(g["model"].iloc[0])
        rule = str(g["decision"].iloc[0]) if "decision" in g.columns and pd.notna(g["decision"].iloc[0]) else ""
        if (m not in MODELS or not model_info(m).criteria or model_info(m).uses_target_rate
                or (rule and rule_info(rule).aims_at_target) or not rates):
            continue
        reached = g.groupby("seed")[rates].first().astype(float).mean() if "seed" in g.columns else \
            g[rates].astype(float).mean()
        if not np.isfinite(reached).all() or all(abs(r - t) <= OWN_LEVEL_TOLERANCE for r in reached for t in targets):
            continue
        said = " and ".join(f"{r:.3f} (group {j})" for j, r in enumerate(reached))
        at = " and ".join(f"{t:.2f}" for t in targets)
        notes.append(f"{name} does not aim at PR_t {at}: the target does not change it. Its groups' {rate.upper()}s on "
                     f"the population are where its own method puts them, {said} (mean over "
                     f"{splits_words(g)[3:]}). To decide at PR_t, use FairLR or FairGP, the target reduction (without "
                     "s) or any model under the group-rates rule (with s).")
    return notes


def rule_notes(results: pd.DataFrame) -> list[str]:
    """One line per model (label) whose decision rule did not reach its target on the training rows
    (``rule_reached`` false), said once however many splits it happened on: the seeds, and the first one's note
    (the group, the rate reached and why)."""
    if "rule_reached" not in results.columns or "rule_note" not in results.columns:
        return []
    missed = results[results["rule_reached"].astype(str).str.lower().isin(("false", "0", "0.0"))]
    notes = []
    labels = missed["label"] if "label" in missed.columns else missed["model"]
    for label, g in missed.groupby(labels, sort=False):
        note = g["rule_note"].astype(object).fillna("").astype(str).iloc[0]
        if "seed" not in g.columns:
            notes.append(f"{label}: {note}")
            continue
        seeds = [str(int(s)) for s in g["seed"]]
        if len(seeds) == 1:
            notes.append(f"{label} (seed {seeds[0]}): {note}")
        else:
            notes.append(f"{label}, on {len(seeds)} splits (seeds {', '.join(seeds)}); on seed {seeds[0]}: {note}")
    return notes


MAJORITY_FLAG = "below_majority"  # a results column, present where some row is below the majority class


def flag_below_majority(results: pd.DataFrame, majority_by_seed: dict) -> pd.DataFrame:
    """Add ``pop_majority_accuracy`` (the accuracy of predicting the majority class for everyone on the
    seed's population rows) and ``below_majority`` where some row's population accuracy is below it; a
    table where none is keeps its columns."""
    accuracy = column_of("accuracy", POP)
    if accuracy not in results.columns or "seed" not in results.columns or results.empty:
        return results
    majority = results["seed"].map(lambda s: majority_by_seed.get(int(s), np.nan)).astype(float)
    below = results[accuracy].astype(float) < majority - 1e-12
    if not below.any():
        return results
    out = results.copy()
    out[column_of("majority_accuracy", POP)] = majority
    out[MAJORITY_FLAG] = below
    return out


def below_majority_notes(results: pd.DataFrame) -> list[str]:
    """One line per model (label) whose population accuracy is below the majority class's."""
    if MAJORITY_FLAG not in results.columns:
        return []
    hit = results[results[MAJORITY_FLAG].astype(str).str.lower().isin(("true", "1", "1.0"))]
    labels = hit["label"] if "label" in hit.columns else hit["model"]
    notes = []
    for label, g in hit.groupby(labels, sort=False):
        accuracy, majority = (g[column_of(c, POP)].astype(float).mean() for c in ("accuracy", "majority_accuracy"))
        notes.append(f"{label} is less accurate on the population ({accuracy:.3f}) than "
                     f"predicting the majority class for everyone ({majority:.3f}) {splits_words(g)}.")
    return notes


def one_class_reason(note: str) -> str:
    """What a one-class note means for the numbers beside it (one rule for every output)."""
    if " for everyone in " not in note:
        return ("it makes no decision at all, so its ratios are left empty (n/a) and never counted as parity in a "
                "mean")
    return ("it makes no decision within those groups: their rates are measured (0 or 1), but say nothing about "
            "who should get a positive")

