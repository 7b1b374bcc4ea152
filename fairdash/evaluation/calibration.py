"""Calibration per group (issue 36, item 1): is a score of 0.7 a 70% chance of a positive label in every group?

A model's scores (its probability of a positive label, ``predict_proba``) are cut into :data:`BINS` equal bins of
``[0, 1]``; in each bin and group, the mean score beside the share of rows whose label is positive, with the rows
counted (:func:`reliability`, the reliability curve). A group's **calibration error** is the gap between the two,
weighted by the bin's rows: ``sum_b (n_gb / n_g) |mean score_gb - positive share_gb|`` (the expected calibration
error), and ``cal_error_diff`` is the largest group's minus the smallest's: a model whose score means more risk in one
group than in another is unequally calibrated whatever its decisions' rates.

Scores come from the model before any decision rule; a model that decides by its own per-group thresholds
(post-processing) is scored with the groups, as it decides.

**Its 95% interval** (issue 47, item 8: :func:`calibration_intervals`, ``cal_error_<g>_lo``, ``cal_error_<g>_hi``)
covers the binned calibration error of the model's scores on the population the test rows come from:
``sum_b P(bin b) |E[score | bin b] - P(y = 1 | bin b)|`` over the same bins, in the group. The point estimate (the
plug-in above, kept as it was) is biased upward: the labels' noise alone makes every bin's gap positive, so a
perfectly calibrated model scores about 0.03 on 1,000 rows, and a plain bootstrap of it never holds 0. The interval
is built on the *debiased* error (Kumar, Liang and Ma, "Verified uncertainty calibration", NeurIPS 2019): each bin's
``|d_b|`` (``d_b`` the mean of ``score - y`` over its rows, with standard error ``se_b``) less its bias under a
normal error, ``2 |d_b| - E|N(d_b, se_b^2)|``, weighted by the bin's rows (``T``). Then, with ``T*`` the debiased
error on ``DRAWS`` bootstraps of the group's rows and ``T0`` its value on labels drawn from the scores themselves
(Broecker and Smith's consistency resampling, 2007, in its normal approximation: what ``T`` looks like were the
scores calibrated):

- the upper bound is ``T*``'s 97.5th percentile (the bootstrap's own bias is upward, which keeps it on the safe side);
- the lower bound is 0 where ``T`` lies within ``T0``'s 97.5th percentile (the scores are consistent with
  calibration), else the basic bootstrap bound ``2 T - (T*'s 97.5th percentile)``; both are clipped to [0, 1].

Each bound is taken from the side where its bootstrap holds: the percentile interval alone misses a small error
from below (its draws centre on the plug-in), the basic one alone misses a moderate error from above. On tables
with a known answer (``tests/evaluation/test_calibration_interval.py``: 200 to 3,000 rows a group, true errors
0 to 0.1) the interval held the truth in 93% to 99.5% of them.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.special import ndtr

from .intervals import LEVEL, SEED
from .metric_table import EVAL, INTERVAL_BOUNDS, column_of

BINS = 10
DRAWS = 400  # bootstrap (and consistency) draws a group: ~0.1 s for 5,000 rows
_CELLS = 2_000_000  # rows x draws resampled at once (memory: ~50 MB)


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
        error = float((c["rows"] * (c["mean_score"] - c["positive_share"]).abs()).sum() / n) if n else float("nan")
        out[column_of("cal_error", EVAL, g)] = error
    values = [v for v in out.values() if np.isfinite(v)]
    out["cal_error_diff"] = float(max(values) - min(values)) if len(values) > 1 else float("nan")
    return out


def _folded_mean(mu, se):
    """``E|N(mu, se^2)|``: the mean of ``|d_b|`` were the bin's gap ``mu`` and its standard error ``se``."""
    se = np.maximum(se, 1e-12)
    z = mu / se
    return se * np.sqrt(2 / np.pi) * np.exp(-z * z / 2) + mu * (1 - 2 * ndtr(-z))


def _debiased(count, total, squares, se=None):
    """The debiased calibration error (see the module) from each bin's rows, sum and sum of squares of
    ``score - y`` (or its standard error ``se`` where given), over the last axis (bins)."""
    rows = np.maximum(count, 1)
    gap = total / rows
    if se is None:
        var = np.where(count > 1, (squares / rows - gap * gap) * count / np.maximum(count - 1, 1), 0.0) / rows
        se = np.sqrt(np.maximum(var, 0.0))
    return (count / count.sum(-1, keepdims=True) * (2 * np.abs(gap) - _folded_mean(gap, se))).sum(-1)


def _binned(bins, v, rows, nbins: int):
    """Each draw's (a row of ``rows``: indices into ``v``) rows, sum and sum of squares of ``v`` per bin."""
    key = (np.arange(len(rows))[:, None] * nbins + bins[rows]).ravel()
    w = v[rows].ravel()
    return tuple(np.bincount(key, x, len(rows) * nbins).reshape(len(rows), nbins) for x in (None, w, w * w))


def _group_interval(scores, y, nbins: int, draws: int, rng, level: float) -> tuple[float, float]:
    """One group's interval (see the module): the bootstrap's draws a block at a time; the consistency draws as
    each bin's mean of ``score - y`` would fall were its labels drawn from its scores (normal, with their
    variance ``sum score (1 - score) / rows^2``): smooth in the scores, so two machines' draws agree."""
    bins, v, n = _bins(scores, nbins), scores - y, len(scores)
    t = float(_debiased(*_binned(bins, v, np.arange(n)[None, :], nbins))[0])
    boot = np.concatenate([_debiased(*_binned(bins, v, rng.integers(0, n, (min(draws - i, _CELLS // n + 1), n)),
                                              nbins)) for i in range(0, draws, _CELLS // n + 1)])
    count = np.bincount(bins, minlength=nbins).astype(float)
    p = np.clip(scores, 0.0, 1.0)  # a score a rounding outside [0, 1] has no variance, not a negative one
    se = np.sqrt(np.bincount(bins, p * (1 - p), nbins)) / np.maximum(count, 1)
    null = _debiased(count, count * se * rng.standard_normal((draws, nbins)), None, se)
    q = 100 * (1 + level) / 2
    top = float(np.percentile(boot, q))
    lo = 0.0 if t <= np.percentile(null, q) else 2 * t - top
    return float(np.clip(lo, 0, 1)), float(np.clip(top, 0, 1))


def calibration_intervals(scores, y, s, n_groups: int, bins: int = BINS, draws: int = DRAWS, seed: int = SEED,
                          level: float = LEVEL) -> dict:
    """``cal_error_<g>_lo`` and ``cal_error_<g>_hi`` for every group: the 95% interval of its binned calibration
    error on the population (see the module; NaN for a group without rows). Seeded: the same scores and labels
    always get the same interval."""
    scores = np.asarray(scores, dtype=float)
    y, s = np.asarray(y, dtype=float), np.asarray(s).astype(int)
    rng = np.random.default_rng(seed)
    out = {}
    for g in range(n_groups):
        m = s == g
        lo, hi = _group_interval(scores[m], y[m], bins, draws, rng, level) if m.any() else (np.nan, np.nan)
        for bound, v in zip(INTERVAL_BOUNDS, (lo, hi)):
            out[column_of("cal_error", EVAL, g) + bound] = v
    return out
