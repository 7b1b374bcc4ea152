"""Calibration per group (issue 36, item 1): is a score of 0.7 a 70% chance of a positive label in every group?

A model's scores (its probability of a positive label, ``predict_proba``) are cut into :data:`BINS` equal bins of
``[0, 1]``; in each bin and group, the mean score beside the share of rows whose label is positive, with the rows
counted (:func:`reliability`, the reliability curve). A group's **calibration error** is the gap between the two,
weighted by the bin's rows: ``sum_b (n_gb / n_g) |mean score_gb - positive share_gb|`` (the expected calibration
error), and ``cal_error_diff`` is the largest group's minus the smallest's: a model whose score means more risk in one
group than in another is unequally calibrated whatever its decisions' rates.

Scores come from the model before any decision rule; a model that decides by its own per-group thresholds
(post-processing) is scored with the groups, as it decides.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

BINS = 10


def _bins(scores, bins: int) -> np.ndarray:
    return np.clip((np.asarray(scores, dtype=float) * bins).astype(int), 0, bins - 1)


def reliability(scores, y, s, n_groups: int, bins: int = BINS) -> pd.DataFrame:
    """The reliability curve per group: one row per (group, bin) holding rows, with ``lo``/``hi`` (the bin's
    edges), ``rows``, ``mean_score`` and ``positive_share`` (the observed rate of positive labels)."""
    scores = np.asarray(scores, dtype=float)
    y, s = np.asarray(y).astype(int), np.asarray(s).astype(int)
    b = _bins(scores, bins)
    rows = []
    for g in range(n_groups):
        for k in range(bins):
            m = (s == g) & (b == k)
            if m.any():
                rows.append({"group": g, "bin": k, "lo": k / bins, "hi": (k + 1) / bins, "rows": int(m.sum()),
                             "mean_score": float(scores[m].mean()), "positive_share": float(y[m].mean())})
    return pd.DataFrame(rows, columns=["group", "bin", "lo", "hi", "rows", "mean_score", "positive_share"])


def calibration_errors(scores, y, s, n_groups: int, bins: int = BINS) -> dict:
    """``cal_error_<g>`` for every group (NaN for a group without rows) and ``cal_error_diff`` (largest minus
    smallest over the groups that have one)."""
    curve = reliability(scores, y, s, n_groups, bins)
    out = {}
    for g in range(n_groups):
        c = curve[curve["group"] == g]
        n = c["rows"].sum()
        out[f"cal_error_{g}"] = (float((c["rows"] * (c["mean_score"] - c["positive_share"]).abs()).sum() / n)
                                 if n else float("nan"))
    values = [v for v in out.values() if np.isfinite(v)]
    out["cal_error_diff"] = float(max(values) - min(values)) if len(values) > 1 else float("nan")
    return out
