"""95% intervals on the numbers a decision rests on (docs/METHOD.md, "Intervals").

One split: a bootstrap over the test rows, stratified by group. Every metric the table measures from labels
and decisions (``metric_table.Share``) is a function of each group's counts in the four (label, decision)
cells, so resampling a group's rows with replacement is a multinomial draw of those counts with the group's
size kept, and the bootstrap costs ``DRAWS x groups x 4`` numbers whatever the number of rows (1,000 draws: about
2 ms a set). The summaries across groups (ratios, differences: ``metric_table.Across``), the gaps to the target
(``rate_g - target_g``; the targets come from the training rows and are held fixed) and the worst gap (the largest
``|gap|``) are computed on the same draws, so their intervals keep the groups' draws together. The interval is the
draws' 2.5th and 97.5th percentiles, named ``<column>_lo`` and ``<column>_hi``; the draws are seeded, so the same
decisions always get the same interval.

Several splits (repeats): the mean over splits with Nadeau and Bengio's corrected resampled t interval
(``interval_over_splits``), ``mean -+ t(0.975, R - 1) * sd * sqrt(1/R + n_test/n_train)``. The repeats are random
80/20 cuts of one table, so their training rows overlap and their values are correlated: the plain Student's t
(``sd / sqrt(R)``) leaves out most of the table's own sampling error and, on tables with a known answer, held the
truth in about 80% of them, not 95% (Nadeau and Bengio, "Inference for the generalization error", Machine Learning
52, 2003; coverage measured in ``benchmarks/bench_coverage.py``).
"""
from __future__ import annotations

import warnings

import numpy as np
from scipy.special import ndtri, stdtrit

from ..data.split import TEST_TO_TRAIN
from ..targeting.criteria import Criterion
from .metric_table import (
    EVAL,
    INTERVAL_BOUNDS,
    Share,
    cell_counts,
    column_of,
    group_column,
    measured_across_groups,
    measured_on_rows,
    per_group_metric,
)

LEVEL = 0.95
DRAWS = 1000
SEED = 0
BOUNDS = INTERVAL_BOUNDS


def cell_draws(y, p, s, n_groups: int, draws: int = DRAWS, seed: int = SEED) -> np.ndarray:
    """``(draws, n_groups, 4)``: each group's rows resampled with replacement ``draws`` times, as counts in the
    (label, decision) cells (``metric_table.cell_counts``)."""
    y, p, s = (np.asarray(a).astype(np.int64) for a in (y, p, s))
    rng = np.random.default_rng(seed)
    out = np.zeros((draws, n_groups, 4))
    for j in range(n_groups):
        counts = cell_counts(y[s == j], p[s == j])
        n = int(counts.sum())
        if n:
            out[:, j] = rng.multinomial(n, counts / n, size=draws)
    return out


def _percentiles(values: np.ndarray, level: float) -> np.ndarray:
    """``(2, columns)``: the lower and upper percentiles of each row of draws ``(columns, draws)``, over its
    defined draws (a draw with no row to measure on is NaN), as ``np.nanpercentile`` interpolates them, in one
    sort; NaN where no draw is defined."""
    v = np.sort(values, axis=1)  # NaN last
    k = np.isfinite(v).sum(axis=1)
    rows = np.arange(v.shape[0])
    out = []
    for q in ((1.0 - level) / 2.0, (1.0 + level) / 2.0):
        pos = q * np.maximum(k - 1, 0)
        below = np.floor(pos).astype(np.int64)
        above = np.minimum(below + 1, np.maximum(k - 1, 0))
        a, b = v[rows, below], v[rows, above]
        out.append(np.where(k > 0, a + (pos - below) * (b - a), np.nan))
    return np.array(out)


def bootstrap_intervals(y, p, s, n_groups: int, *, criterion: Criterion | None = None, targets=None,
                        prefix: str = "", worst: bool = True, draws: int = DRAWS, level: float = LEVEL,
                        seed: int = SEED) -> dict:
    """``{<column>_lo: ..., <column>_hi: ...}`` for every metric of the table with an interval, measured on these
    rows (named as ``metrics.group_metrics`` names them); with ``criterion`` and ``targets`` (each group's target of
    its rate) also the gaps ``<prefix>gap_<g>`` and, with ``worst``, ``<prefix>worst_gap`` (where the worst gap
    is over these gaps alone). Where the decisions give one class to everyone the summaries across groups have
    no value, and so no interval."""
    p = np.asarray(p)
    one_class = bool(p.size) and bool(np.all(p == p[0]))
    cells = cell_draws(y, p, s, n_groups, draws, seed)
    shares = [m for m in measured_on_rows() if isinstance(m.measure, Share)]
    # every rate at once: counts (draws, groups + everyone, 4) times each rate's cells (4, rates)
    counts = np.concatenate([cells, cells.sum(1, keepdims=True)], axis=1)
    num, den = (counts @ np.stack(masks, axis=1).astype(float)
                for masks in zip(*(m.measure.cells() for m in shares)))
    with np.errstate(invalid="ignore", divide="ignore"):
        rates = np.where(den > 0, num / np.maximum(den, 1), np.nan)
    values = {}
    for i, m in enumerate(shares):
        if m.per_group:
            for j in range(n_groups):
                values[m.column(EVAL, j)] = rates[:, j, i]
        else:
            values[m.column(EVAL)] = rates[:, n_groups, i]
    for m in measured_across_groups():
        of = per_group_metric(m.measure.of)
        groups = np.stack([values[of.column(EVAL, j)] for j in range(n_groups)], axis=-1)
        values[m.column(EVAL)] = np.full(draws, np.nan) if one_class else m.measure.how(groups)
    if criterion is not None and targets is not None and len(targets) == n_groups:
        rate = criterion.rate
        gaps = np.stack([values[column_of(rate, EVAL, j)] - float(targets[j]) for j in range(n_groups)], axis=-1)
        for j in range(n_groups):
            values[group_column("gap", j, prefix)] = gaps[:, j]
        if worst:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                values[f"{prefix}worst_gap"] = np.nanmax(np.abs(gaps), axis=-1)
    lo, hi = _percentiles(np.stack(list(values.values())), level)
    out = {}
    for column, a, b in zip(values, lo.tolist(), hi.tolist()):
        out[column + BOUNDS[0]], out[column + BOUNDS[1]] = a, b
    return out


def interval_over_splits(values, level: float = LEVEL, within=(-np.inf, np.inf),
                         test_to_train: float = TEST_TO_TRAIN) -> tuple[float, float]:
    """The 95% interval of the mean of the splits' values, by Nadeau and Bengio's corrected resampled t: the splits'
    variance times ``1/R + n_test/n_train`` (``test_to_train``; every split of FairDash holds out
    :data:`fairdash.data.split.TEST_SIZE` of each cell), with ``R - 1`` degrees of freedom, clipped to where the
    values can lie (``within``: ``Metric.value_range``). NaN with fewer than two finite values. ``test_to_train=0``
    is the plain Student's t, which assumes independent splits. (The quantile comes from ``scipy.special``: importing
    ``scipy.stats`` on a page's first figure took seconds on a busy server.)"""

    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    if v.size < 2:
        return float("nan"), float("nan")
    spread = float(v.std(ddof=1)) * np.sqrt(1.0 / v.size + float(test_to_train))
    half = float(stdtrit(v.size - 1, 0.5 + level / 2.0)) * spread
    return float(max(v.mean() - half, within[0])), float(min(v.mean() + half, within[1]))


OVER_SPLITS_WORDS = "Nadeau and Bengio's corrected resampled t over the {n} splits, whose training rows overlap"


def wilson_interval(k, n, level: float = LEVEL) -> tuple[np.ndarray, np.ndarray]:
    """Wilson's score interval for the share ``k / n`` of ``n`` rows (arrays or numbers; NaN where ``n`` is 0). It
    keeps its 95% where the share is near 0 or 1 and the rows are few (a count of 0 still has an upper end), where a
    bootstrap of the rows collapses to a point."""
    k, n = np.asarray(k, dtype=float), np.asarray(n, dtype=float)
    z = float(ndtri(0.5 + level / 2.0))
    with np.errstate(invalid="ignore", divide="ignore"):
        p = k / n
        centre = (p + z * z / (2 * n)) / (1 + z * z / n)
        half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
        lo, hi = np.clip(centre - half, 0.0, 1.0), np.clip(centre + half, 0.0, 1.0)
    bad = ~(n > 0)
    lo, hi = np.where(k <= 0, 0.0, lo), np.where(k >= n, 1.0, hi)  # exact at the ends, not 1e-18 off
    return np.where(bad, np.nan, lo), np.where(bad, np.nan, hi)


def paired_difference_interval(both, first_only, second_only, neither, level: float = LEVEL) -> tuple[float, float]:
    """The 95% interval of ``p1 - p2`` where ``p1`` and ``p2`` are two shares of the **same** rows (two rules'
    acceptances of one group): ``both`` rows counted by each, ``first_only`` by the first alone, ``second_only`` by
    the second alone and ``neither``. Newcombe's method 10 (Statistics in Medicine 17, 1998): each share's Wilson
    interval, joined through the rows' correlation, so it holds its level where the shares are near 0 and the two
    rules rarely disagree, and is never a point where they never do."""
    a, b, c, d = (float(v) for v in (both, first_only, second_only, neither))
    n = a + b + c + d
    if n <= 0:
        return float("nan"), float("nan")
    p1, p2 = (a + b) / n, (a + c) / n
    (l1, u1), (l2, u2) = (tuple(float(v) for v in wilson_interval(k, n, level)) for k in (a + b, a + c))
    den = (a + b) * (c + d) * (a + c) * (b + d)
    phi = (a * d - b * c) / np.sqrt(den) if den > 0 else 0.0
    below = np.sqrt(max((p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2, 0.0))
    above = np.sqrt(max((u1 - p1) ** 2 - 2 * phi * (u1 - p1) * (p2 - l2) + (p2 - l2) ** 2, 0.0))
    return float(max(p1 - p2 - below, -1.0)), float(min(p1 - p2 + above, 1.0))
