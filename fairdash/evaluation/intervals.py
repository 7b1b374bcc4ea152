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
from scipy.special import stdtrit

from ..data.split import TEST_TO_TRAIN
from .metric_table import (
    EVAL,
    INTERVAL_BOUNDS,
    Share,
    cell_counts,
    column_of,
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


def bootstrap_intervals(y, p, s, n_groups: int, *, rate: str | None = None, targets=None, prefix: str = "",
                        worst: bool = True, draws: int = DRAWS, level: float = LEVEL, seed: int = SEED) -> dict:
    """``{<column>_lo: ..., <column>_hi: ...}`` for every metric of the table with an interval, measured on these
    rows (named as ``metrics.group_metrics`` names them); with ``rate`` and ``targets`` (each group's target of
    that rate) also the gaps ``<prefix>gap_<g>`` and, with ``worst``, ``<prefix>worst_gap`` (where the worst gap
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
    if rate is not None and targets is not None and len(targets) == n_groups:
        gaps = np.stack([values[column_of(rate, EVAL, j)] - float(targets[j]) for j in range(n_groups)], axis=-1)
        for j in range(n_groups):
            values[f"{prefix}gap_{j}"] = gaps[:, j]
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
