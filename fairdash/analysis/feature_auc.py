"""Single-feature AUC of every column of a table at once, against one or more code arrays (groups or
labels): the scores behind :mod:`fairdash.analysis.proxies` (proxy table, single-feature leaks).

Each column is scored as ``max(a, 1 - a)`` of an AUC: numeric columns by their ranks (and as categories:
their values when few, else equal-count bins), other columns through their categories' out-of-fold shares
(see :func:`fairdash.analysis.proxies.proxy_scores` for the rule). All columns go together: the ranks of the
numeric ones come from one count or one sort of the column block, their AUCs against every target from
one matrix product, and the category shares from one count over all columns. Nothing imports streamlit.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..errors import FairDashError

MAX_ROWS = 50_000  # larger tables are scored on a fixed random subset of this many rows
FOLDS = 5  # categories' group rates are computed out of fold (see _category_strengths)
FEW_VALUES = 20  # numeric columns with at most this many values are also scored as categories
_SEED = 12345


# --------------------------------------------------------------------------------------------------
# Single-feature AUC, every column at once
# --------------------------------------------------------------------------------------------------
def _strength(a):
    return np.maximum(a, 1.0 - a)


def _targets(codes) -> list[np.ndarray]:
    """0/1 arrays to score against: one for two groups (group 1), one per group (one-vs-rest) for more."""
    c = np.asarray(codes)
    if c.dtype.kind not in "iub":
        c = pd.factorize(pd.Series(c), sort=True)[0]
    c = c.astype(np.int64)
    groups = np.unique(c[c >= 0])
    if len(groups) < 2:
        raise FairDashError("Proxy and leak scores need at least two groups (or labels); this column has one.")
    if len(groups) == 2:
        return [(c == groups[1]).astype(np.float64)]
    return [(c == g).astype(np.float64) for g in groups]


def is_numeric(col: pd.Series) -> bool:
    return pd.api.types.is_numeric_dtype(col) and not pd.api.types.is_bool_dtype(col)


def _rank_strengths(R: np.ndarray, M: np.ndarray, T: np.ndarray) -> np.ndarray:
    """max(a, 1 - a) of each column's values ranked as they are, against each target: ``(columns, targets)``.

    ``R`` holds the rows' average ranks (1-based, ties sharing their mean rank), column by column
    ``(columns, rows)``, with missing values ranked above every value as one tie; ``M`` marks the missing
    values; ``T`` holds the 0/1 targets ``(targets, rows)``. The AUC is Mann-Whitney's, from the rank sums
    of all columns and targets at once (one matrix product); missing values are put below or above all
    values, whichever scores higher (each target separately)."""
    n1 = T.sum(axis=1)
    n0 = T.shape[1] - n1
    u_high = R @ T.T - n1 * (n1 + 1) / 2  # (columns, targets)
    mp = M @ T.T  # missing rows of each target
    mn = M.sum(axis=1, keepdims=True) - mp
    u_low = u_high - mp * (n0 - mn) + (n1 - mp) * mn  # the missing level moved from the top to the bottom
    d = n1 * n0
    return np.maximum(_strength(u_high / d), _strength(u_low / d))


def _category_strengths(C: np.ndarray, k: np.ndarray, T: np.ndarray, fold: np.ndarray) -> np.ndarray:
    """max(a, 1 - a) of each column with each of its categories replaced by its share of the target:
    ``(columns, targets)``.

    ``C`` holds the category codes ``(columns, rows)``, 0..k-1 for column ``j`` (``k[j]`` levels). The
    shares are computed out of fold (each row's share comes from the other folds' rows of its category; a
    category unseen there gets the other folds' overall share), so that a column with a value per row (an
    id, a name) does not score 1 by memorising its rows. A column of one category scores 0.5."""
    p, n = C.shape
    offset = np.r_[0, np.cumsum(k)[:-1]].astype(np.int64)
    n_levels = int(k.sum())
    cell = ((C + offset[:, None]) * FOLDS + fold[None, :]).ravel()  # (column's level, fold) of each row
    size = n_levels * FOLDS
    n_cell = np.bincount(cell, minlength=size).reshape(n_levels, FOLDS).astype(np.float64)
    n_rest = n_cell.sum(axis=1, keepdims=True) - n_cell
    col_of = np.repeat(np.arange(p), k * FOLDS)  # each cell's column
    n_fold = np.bincount(fold, minlength=FOLDS).astype(np.float64)
    out = np.full((p, len(T)), 0.5)
    for i, t in enumerate(T):
        p_cell = np.bincount(cell, weights=np.tile(t, p), minlength=size).reshape(n_levels, FOLDS)
        p_rest = p_cell.sum(axis=1, keepdims=True) - p_cell
        p_fold = np.bincount(fold, weights=t, minlength=FOLDS)
        prior = (t.sum() - p_fold) / np.maximum(n - n_fold, 1)
        share = np.where(n_rest > 0, p_rest / np.maximum(n_rest, 1), prior[None, :]).ravel()
        pos, neg = p_cell.ravel(), (n_cell - p_cell).ravel()
        # the cells of each column in order of share; equal shares of a column are one level
        order = np.lexsort((share, col_of))
        sc, cc = share[order], col_of[order]
        new = np.r_[True, (sc[1:] != sc[:-1]) | (cc[1:] != cc[:-1])]
        level = np.cumsum(new) - 1
        lp = np.bincount(level, weights=pos[order])
        ln = np.bincount(level, weights=neg[order])
        lc = cc[new]  # each level's column
        below = np.cumsum(ln) - ln  # negatives below each level ...
        first = np.r_[0, np.flatnonzero(lc[1:] != lc[:-1]) + 1]
        start = np.repeat(below[first], np.diff(np.r_[first, len(lc)]))
        u = np.bincount(lc, weights=lp * (below - start + 0.5 * ln), minlength=p)  # ... within its column
        n1 = t.sum()
        a = u / max(n1 * (n - n1), 1)
        out[:, i] = np.where(k > 1, _strength(a), 0.5)
    return out


def _text_codes(col: pd.Series) -> tuple[np.ndarray, int]:
    """Category codes of a column that is not numeric (text, booleans): a missing value is a category of
    its own, and text is matched stripped (' a' and 'a' are one category)."""
    codes, uniq = pd.factorize(col, use_na_sentinel=False)
    u = pd.Series(uniq, dtype=object)
    text = u.astype(str)
    stripped = text.str.strip()
    if (stripped != text).any():
        merged, uniq = pd.factorize(stripped.where(u.notna()), use_na_sentinel=False)
        codes = merged[codes]
    return codes.astype(np.int64), len(uniq)


BINS = 20  # many-valued numeric columns are also scored through this many equal-count bins
INT_RANGE = 4096  # whole-number columns spanning at most this many values are ranked by counting, not sorting


def _numeric_codes(V: np.ndarray):
    """For numeric columns ``V`` ``(columns, rows)`` (missing as NaN): the average ranks (missing above
    every value), the missing mask, and category codes with their number of levels: the values themselves
    for a column of at most ``FEW_VALUES`` values, else ``BINS`` equal-count bins of its ranks (a value's
    ties stay in one bin), with missing values one more category.

    Whole-number columns of a small range are ranked by counting (``np.bincount``); the others by one sort
    of all of them at once."""
    p, n = V.shape
    M = np.isnan(V)
    R = np.empty((p, n))
    C = np.empty((p, n), dtype=np.int64)
    k = np.zeros(p, dtype=np.int64)
    n_miss = M.sum(axis=1)
    n_val = n - n_miss
    with np.errstate(invalid="ignore"):
        lo = np.where(n_val > 0, np.fmin.reduce(V, axis=1), 0.0)  # fmin/fmax skip NaN
        hi = np.where(n_val > 0, np.fmax.reduce(V, axis=1), 0.0)
        whole = ((V == np.floor(V)) | M).all(axis=1) & (hi - lo < INT_RANGE)
    counted, sorted_ = np.flatnonzero(whole), np.flatnonzero(~whole)
    if len(counted):  # one bincount over every counted column (levels offset per column)
        R[counted], C[counted], k[counted] = _counted_codes(V[counted], M[counted], lo[counted], hi[counted],
                                                            n_val[counted], n_miss[counted])
    if len(sorted_):  # one sort of all the other columns (NaN sorts last: the missing values' tie)
        R[sorted_], C[sorted_], k[sorted_] = _sorted_codes(V[sorted_], n_val[sorted_], n_miss[sorted_])
    return R, M.astype(np.float64), C, k


def _counted_codes(V: np.ndarray, M: np.ndarray, lo: np.ndarray, hi: np.ndarray, n_val: np.ndarray,
                   n_miss: np.ndarray):
    """:func:`_numeric_codes` of whole-number columns of a small range: ``(ranks, codes, levels)`` by one
    bincount over every column (each column's levels offset: its values from ``lo`` to ``hi``, then missing)."""
    width = (hi - lo).astype(np.int64) + 2  # values, then missing
    off = np.r_[0, np.cumsum(width)[:-1]]
    val = np.where(M, (width - 1)[:, None], V - lo[:, None]).astype(np.int64)
    flat = val + off[:, None]
    cnt = np.bincount(flat.ravel(), minlength=int(width.sum())).astype(np.float64)
    col = np.repeat(np.arange(len(V)), width)
    before = np.cumsum(cnt) - cnt - np.repeat(np.r_[0, np.cumsum(cnt)[:-1]][off], width)
    ranks = (before + (cnt + 1) / 2)[flat]
    present = cnt > 0
    present[off + width - 1] = False  # the missing level is not a value
    dense = np.cumsum(present) - np.repeat(np.r_[0, np.cumsum(present)[:-1]][off], width) - 1
    kv = np.bincount(col, weights=present, minlength=len(V)).astype(np.int64)
    binned = np.minimum((before * BINS // np.maximum(np.repeat(n_val, width), 1)).astype(np.int64), BINS - 1)
    few = kv <= FEW_VALUES
    kk = np.where(few, kv, BINS)
    code = np.where(np.repeat(few, width), dense, binned)
    code[off + width - 1] = kk  # missing: one more category
    return ranks, code[flat], kk + (n_miss > 0)


def _sorted_codes(W: np.ndarray, n_val: np.ndarray, n_miss: np.ndarray):
    """:func:`_numeric_codes` of the other columns: ``(ranks, codes, levels)`` by one sort of all of them (NaN
    sorts last: the missing values' tie)."""
    n = W.shape[1]
    order = np.argsort(W, axis=1)
    sv = np.take_along_axis(W, order, axis=1)
    nan = np.isnan(sv)
    new = np.ones_like(sv, dtype=bool)
    new[:, 1:] = (sv[:, 1:] != sv[:, :-1]) & ~(nan[:, 1:] & nan[:, :-1])
    pos = np.broadcast_to(np.arange(n), sv.shape)
    start = np.maximum.accumulate(np.where(new, pos, 0), axis=1)
    last = np.ones_like(new)  # a tie's last position: the next one starts a new tie
    last[:, :-1] = new[:, 1:]
    end = np.minimum.accumulate(np.where(last, pos, n - 1)[:, ::-1], axis=1)[:, ::-1]
    rank = (start + end) / 2 + 1
    gid = np.cumsum(new, axis=1) - 1
    kv = (np.where(nan, -1, gid).max(axis=1) + 1).astype(np.int64)
    nv = n_val[:, None]
    few = kv <= FEW_VALUES
    kk = np.where(few, kv, BINS)
    code = np.where(few[:, None], gid, np.minimum(start * BINS // np.maximum(nv, 1), BINS - 1))
    code = np.where(nan, kk[:, None], code)
    Rs, Cs = np.empty_like(rank), np.empty_like(code)
    np.put_along_axis(Rs, order, rank, axis=1)
    np.put_along_axis(Cs, order, code, axis=1)
    return Rs, Cs, kk + (n_miss > 0)


def _sample(n: int, max_rows: int | None) -> np.ndarray | None:
    if max_rows is None or n <= max_rows:
        return None
    return np.sort(np.random.default_rng(_SEED).choice(n, size=max_rows, replace=False))


def feature_scores(X: pd.DataFrame, codes, max_rows: int | None = MAX_ROWS) -> dict[str, float]:
    """Every column of ``X`` scored against ``codes`` (group or label codes, one per row): the rule of
    :func:`fairdash.analysis.proxies.proxy_scores`, for all columns, in ``X``'s column order."""
    return scores_against(X, [codes], max_rows)[0]


def scores_against(X: pd.DataFrame, codes_list: list, max_rows: int | None = MAX_ROWS) -> list[dict[str, float]]:
    """:func:`feature_scores` for several code arrays at once (each column is encoded once, and every
    column is scored against every target at once)."""
    codes_list = [np.asarray(c) for c in codes_list]
    for codes in codes_list:
        if len(codes) != len(X):
            raise FairDashError(f"The codes have {len(codes)} rows but the table has {len(X)}; they must be aligned.")
    rows = _sample(len(X), max_rows)
    if rows is not None:
        X, codes_list = X.iloc[rows], [c[rows] for c in codes_list]
    target_sets = [_targets(c) for c in codes_list]
    if X.shape[1] == 0:
        return [{} for _ in codes_list]
    T = np.array([t for ts in target_sets for t in ts])
    fold = np.random.default_rng(_SEED).integers(0, FOLDS, size=len(X))
    names = [str(c) for c in X.columns]
    numeric = [i for i, c in enumerate(X.columns) if is_numeric(X.iloc[:, i])]
    other = [i for i in range(X.shape[1]) if i not in set(numeric)]
    strength = np.full((X.shape[1], len(T)), 0.5)
    C = np.empty((X.shape[1], len(X)), dtype=np.int64)
    k = np.zeros(X.shape[1], dtype=np.int64)
    if numeric:
        V = np.vstack([X.iloc[:, i].to_numpy(dtype=np.float64, na_value=np.nan) for i in numeric]) \
            if len(X) else np.empty((len(numeric), 0))
        R, M, C[numeric], k[numeric] = _numeric_codes(V)
        strength[numeric] = _rank_strengths(R, M, T)
    for i in other:
        C[i], k[i] = _text_codes(X.iloc[:, i])
    strength = np.maximum(strength, _category_strengths(C, k, T, fold))
    out, j = [], 0
    for ts in target_sets:  # each set's score: the mean over its targets
        v = strength[:, j:j + len(ts)].mean(axis=1)
        j += len(ts)
        out.append({c: round(float(x), 4) for c, x in zip(names, v)})
    return out
