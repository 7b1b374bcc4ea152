"""The results as the figures and tables read them: a summary over repeats (``as_summary``), the population's
columns under the plain names (``population_view``), which set a figure measured (``measured_on``), how many groups
(``n_groups_of``), and the readable results table (``result_columns``, ``results_table``).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..evaluation.metric_table import EVAL, POP, column_of, groups_in, metric_of, table_columns, unprefixed
from ..evaluation.metrics import format_mean_std, summarize
from ..targeting.criteria import DP, Criterion
from .plot_style import RUN
from .plots_target import worst_gaps


def as_summary(summary_or_results: pd.DataFrame, by=("model", "label", RUN, "target_rate")) -> pd.DataFrame:
    """``summarize``'s table (``<metric>_mean``/``_std``): passed through if it already is one."""
    df = summary_or_results
    if df is None or len(df) == 0:
        return pd.DataFrame()
    # summarize's table has `repeats`; results rows (one per seed) may carry a `*_mean` column of their own
    if "repeats" in df.columns or ("seed" not in df.columns and any(c.endswith("_mean") for c in df.columns)):
        out = df.copy()
    else:
        out = summarize(df, by=by)
    if "label" not in out.columns:
        out["label"] = out["model"] if "model" in out.columns else "model"
    if "target_rate" not in out.columns:
        out["target_rate"] = np.nan
    return out


POPULATION = "the population (the ordinary test set, as the model will meet it)"
BALANCED = "the paper's balanced test set"


def population_view(summary_or_results) -> pd.DataFrame:
    """The summary with the population's measurements (``pop_*``) in place of the evaluation rows', so
    that every figure and table here can show either population with the same code."""
    df = as_summary(summary_or_results)
    out = df.copy()
    for c in df.columns:
        if (plain := unprefixed(c, POP)) is not None:
            out[plain] = df[c]
    return out


def measured_on(summary_or_results, population: bool, short: bool = False) -> str:
    """What a figure's numbers were measured on, for its title (``short``: without the explanation)."""
    df = summary_or_results
    e = df["eval_set"].dropna() if df is not None and "eval_set" in getattr(df, "columns", ()) else ()
    balanced = not population and (len(e) == 0 or str(e.iloc[0]).startswith("balanced"))
    if short:
        return "the paper's balanced test set" if balanced else "the population (ordinary test set)"
    return BALANCED if balanced else POPULATION


def n_groups_of(df: pd.DataFrame) -> int:
    """How many groups a summary or results table measures (its per-group positive-rate columns)."""
    return groups_in(df.columns)


def result_columns(criterion: Criterion, n_groups: int, group_names=None) -> list[tuple[str, str]]:
    """The results columns in reading order, ``(column, header)``: accuracy, then the criterion's own
    per-group rates and ratio, then the other rates (one order for every table, the report's too). A
    per-group column is headed with its group's name where ``group_names`` are given (``PR (Female)``),
    else with its number (``PR s=0``)."""
    return table_columns(criterion, n_groups, group_names)  # names and headers from the one table


def _is_group_rate(column: str) -> bool:
    hit = metric_of(column)
    return hit is not None and hit[0].name == DP.rate and hit[2] is not None  # a group's positive rate


def results_table(summary_or_results, criterion: Criterion = DP, population: bool = False,
                  group_names=None, rate_name: str | None = None) -> pd.DataFrame:
    """A readable table: one row per model and target with ``mean ± std`` text columns (the mean alone
    for a single repeat; ``n/a`` for an empty ratio), on the evaluation rows or, with ``population``,
    on the ordinary test set. Given the results rows (not a summary) that carry it, the ``worst gap``
    column: the largest gap of a group's rate to its target, with the group (on the population, or on
    the balanced test set); otherwise, on the population, the mean ``target_gap`` of older results.

    Columns in reading order, the ones a decision rests on first: model, accuracy, the worst gap (or the
    target gap), the target, then the per-group rates headed with the groups' names (``group_names``: a
    header says ``PR (Female)``, never ``pr_0``), the ratios and the repeats."""

    df = as_summary(summary_or_results)
    if df.empty:
        return pd.DataFrame()
    # (the evaluation rows of a criterion the paper does not judge on the balanced set are the population)
    worst = worst_gaps(summary_or_results, population or not criterion.balanced_eval)
    if population:
        df = population_view(df)
    heads = result_columns(criterion, n_groups_of(df), group_names)
    if rate_name:  # the per-group positive rates in the label's words
        heads = [(c, rate_name + h[2:] if _is_group_rate(c) and h.startswith("PR ") else h) for c, h in heads]
    cond, mean_gap = column_of("cond_pr_ratio", EVAL), column_of("target_gap", POP)
    heads += [(cond, cond)] + ([(mean_gap, mean_gap)] if population and worst is None else [])
    out = pd.DataFrame({"model": df["label"]})
    if RUN in df.columns and df[RUN].notna().any():  # several runs: the run first, so a cut label stays told apart
        out.insert(0, "run", [int(r) if r == r else 0 for r in df[RUN]])
    repeats = df["repeats"].to_numpy() if "repeats" in df.columns else np.ones(len(df), int)
    text = {}
    for c, h in heads:
        if f"{c}_mean" in df.columns and df[f"{c}_mean"].notna().any():
            text[h] = [format_mean_std(m, s, repeats=n) for m, s, n in zip(df[f"{c}_mean"], df[f"{c}_std"], repeats)]
    if "accuracy" in text:
        out["accuracy"] = text.pop("accuracy")
    if worst is not None:
        keys = pd.DataFrame({"label": df["label"].to_numpy(), "target_rate": df["target_rate"].to_numpy(dtype=float)})
        worst["target_rate"] = worst["target_rate"].astype(float)
        merged = keys.merge(worst, how="left", on=["label", "target_rate"])
        out["worst gap"] = merged["worst gap"].fillna("-").to_numpy()
    elif mean_gap in text:
        out[mean_gap] = text.pop(mean_gap)
    out["target PR_t"] = [f"{t:.3f}" if np.isfinite(t) else "-" for t in df["target_rate"].astype(float)]
    for h, values in text.items():
        out[h] = values
    if "repeats" in df.columns:
        out["repeats"] = df["repeats"].to_numpy()
    return out
