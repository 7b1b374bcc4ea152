"""What the features say about ``s`` and ``y``: proxies, leaks, and a guess at which column is which.

* :func:`proxy_scores`: per feature, how well it alone predicts the sensitive attribute (a single-feature
  AUC, reported as ``max(a, 1 - a)``). A model that does not see ``s`` moves a group's rate only
  through such features.
* :func:`find_leaks`: features that determine ``s`` or ``y`` almost exactly (a score of at least
  :data:`LEAK_SCORE`, or a one-hot sibling of the ``s``/``y`` column; see :func:`one_hot_groups`).
* :func:`task_leaks_and_proxies`: both for a built task, with one scoring pass, and the leaks that only
  the features together give away (:mod:`fairdash.separability`, the one place a model is fitted).
* :func:`guess_roles`: a suggestion for ``s`` and ``y`` on an uploaded table (the user confirms it).

Nothing imports streamlit.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .errors import FairDashError

LEAK_SCORE = 0.95  # a single feature scoring at least this against s or y is a leak
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


def _is_numeric(col: pd.Series) -> bool:
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
        width = (hi[counted] - lo[counted]).astype(np.int64) + 2  # values, then missing
        off = np.r_[0, np.cumsum(width)[:-1]]
        val = np.where(M[counted], (width - 1)[:, None], V[counted] - lo[counted][:, None]).astype(np.int64)
        flat = val + off[:, None]
        cnt = np.bincount(flat.ravel(), minlength=int(width.sum())).astype(np.float64)
        col = np.repeat(np.arange(len(counted)), width)
        before = np.cumsum(cnt) - cnt - np.repeat(np.r_[0, np.cumsum(cnt)[:-1]][off], width)
        R[counted] = (before + (cnt + 1) / 2)[flat]
        present = cnt > 0
        present[off + width - 1] = False  # the missing level is not a value
        dense = np.cumsum(present) - np.repeat(np.r_[0, np.cumsum(present)[:-1]][off], width) - 1
        kv = np.bincount(col, weights=present, minlength=len(counted)).astype(np.int64)
        nv = n_val[counted]
        binned = np.minimum((before * BINS // np.maximum(np.repeat(nv, width), 1)).astype(np.int64), BINS - 1)
        few = kv <= FEW_VALUES
        kk = np.where(few, kv, BINS)
        code = np.where(np.repeat(few, width), dense, binned)
        code[off + width - 1] = kk  # missing: one more category
        C[counted] = code[flat]
        k[counted] = kk + (n_miss[counted] > 0)
    if len(sorted_):  # one sort of all the other columns (NaN sorts last: the missing values' tie)
        W = V[sorted_]
        order = np.argsort(W, axis=1)
        sv = np.take_along_axis(W, order, axis=1)
        nan = np.isnan(sv)
        new = np.ones_like(sv, dtype=bool)
        new[:, 1:] = (sv[:, 1:] != sv[:, :-1]) & ~(nan[:, 1:] & nan[:, :-1])
        pos = np.broadcast_to(np.arange(n), sv.shape)
        start = np.maximum.accumulate(np.where(new, pos, 0), axis=1)
        last = np.r_[new[:, 1:].T, np.ones((1, len(sorted_)), dtype=bool)].T  # a tie's last position
        end = np.minimum.accumulate(np.where(last, pos, n - 1)[:, ::-1], axis=1)[:, ::-1]
        rank = (start + end) / 2 + 1
        gid = np.cumsum(new, axis=1) - 1
        kv = (np.where(nan, -1, gid).max(axis=1) + 1).astype(np.int64)
        nv = n_val[sorted_][:, None]
        few = kv <= FEW_VALUES
        kk = np.where(few, kv, BINS)
        code = np.where(few[:, None], gid, np.minimum(start * BINS // np.maximum(nv, 1), BINS - 1))
        code = np.where(nan, kk[:, None], code)
        Rs, Cs = np.empty_like(rank), np.empty_like(code)
        np.put_along_axis(Rs, order, rank, axis=1)
        np.put_along_axis(Cs, order, code, axis=1)
        R[sorted_], C[sorted_] = Rs, Cs
        k[sorted_] = kk + (n_miss[sorted_] > 0)
    return R, M.astype(np.float64), C, k


def _sample(n: int, max_rows: int | None) -> np.ndarray | None:
    if max_rows is None or n <= max_rows:
        return None
    return np.sort(np.random.default_rng(_SEED).choice(n, size=max_rows, replace=False))


def feature_scores(X: pd.DataFrame, codes, max_rows: int | None = MAX_ROWS) -> dict[str, float]:
    """Every column of ``X`` scored against ``codes`` (group or label codes, one per row): the rule of
    :func:`proxy_scores`, for all columns, in ``X``'s column order."""
    return _scores_against(X, [codes], max_rows)[0]


def _scores_against(X: pd.DataFrame, codes_list: list, max_rows: int | None) -> list[dict[str, float]]:
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
    numeric = [i for i, c in enumerate(X.columns) if _is_numeric(X.iloc[:, i])]
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


def proxy_scores(X: pd.DataFrame, s, top: int | None = 10, max_rows: int | None = MAX_ROWS) -> list[dict]:
    """How well each feature column alone predicts the sensitive attribute: ``[{"column", "score"}]``,
    strongest first, the ``top`` strongest (all with ``top=None``).

    ``s`` holds one group code per row of ``X`` (integers; other values are coded in sorted order). The
    score is a single-feature AUC reported as ``max(a, 1 - a)``, so 0.5 means no information and 1 means
    the feature separates the groups exactly:

    * numeric columns are ranked by their values; missing values form one more level placed below or
      above all values, whichever scores higher. A numeric column is also scored as categories (below)
      and keeps the higher score: its values themselves when it has at most ``FEW_VALUES`` of them (so
      that coded categories are not missed), else ``BINS`` equal-count bins of its values (so that a
      relation that is not monotone, such as ``s = |x| > 1``, is seen; a monotone one keeps its ranked
      score, which binning does not exceed);
    * other columns (text, booleans) are scored through their categories' group rates: each category
      is replaced by its share of group 1, computed out of fold (``FOLDS`` folds, fixed seed) so that an
      id-like column does not score 1 by memorising rows; a missing value is a category of its own;
    * with more than two groups the score is the mean over groups of the one-vs-rest score (each group
      against all others, its share as the category rate).

    Tables of more than ``max_rows`` rows are scored on a fixed random subset of ``max_rows`` rows (the
    same subset every time; the AUC's standard error there is about 0.002). Ties in score keep ``X``'s
    column order. Every column is scored at once: the ranks of all numeric columns come from one sort (or
    one count), their AUCs from one matrix product, and the categories' out-of-fold shares from one
    count over all columns.
    """
    scores = feature_scores(X, s, max_rows)
    ranked = sorted(scores.items(), key=lambda kv: -kv[1])
    if top is not None:
        ranked = ranked[:top]
    return [{"column": c, "score": v} for c, v in ranked]


# --------------------------------------------------------------------------------------------------
# One-hot groups and leaks
# --------------------------------------------------------------------------------------------------
_SEPARATORS = "_-.:=/| "


def _zero_one(col: pd.Series) -> np.ndarray | None:
    """The column as 0/1 integers if it is a complete 0/1 (or boolean) column, else None."""
    if pd.api.types.is_bool_dtype(col):
        return None if col.isna().any() else col.to_numpy(dtype=np.int8)
    if not _is_numeric(col) or col.isna().any():
        return None
    v = col.to_numpy()
    if not ((v == 0) | (v == 1)).all():
        return None
    return v.astype(np.int8)


def one_hot_groups(df: pd.DataFrame) -> dict[str, list[str]]:
    """Groups of one-hot sibling columns: ``{prefix: [columns]}``, in the table's column order.

    Siblings are complete 0/1 (or boolean) columns whose names share a prefix ending in a separator
    (``_ - . : = / |`` or a space; ``MARRIAGE_1``, ``MARRIAGE_2``, ``MARRIAGE_3`` share ``MARRIAGE_``)
    or followed by a number only (``MARRIAGE1``, ``MARRIAGE2`` share ``MARRIAGE``),
    at least two of them, whose values add up to exactly 1 on every row. Where several prefixes qualify
    the shortest (largest group) wins, and a column belongs to at most one group."""
    zero_one = {}
    for c in df.columns:
        v = _zero_one(df[c])
        if v is not None:
            zero_one[str(c)] = v
    by_prefix: dict[str, list[str]] = {}
    for c in zero_one:
        prefixes = {c[:i + 1] for i, ch in enumerate(c[:-1]) if ch in _SEPARATORS and i > 0}
        m = re.fullmatch(r"(.*[^0-9])[0-9]+", c)  # MARRIAGE1, MARRIAGE2: a number after the name
        if m:
            prefixes.add(m.group(1))
        for prefix in prefixes:
            by_prefix.setdefault(prefix, []).append(c)
    groups: dict[str, list[str]] = {}
    taken: set[str] = set()
    for prefix in sorted(by_prefix, key=len):
        members = [c for c in by_prefix[prefix] if c not in taken]
        if len(members) < 2 or len(members) < len(by_prefix[prefix]):
            continue
        total = np.zeros(len(df), dtype=np.int64)
        for c in members:
            total += zero_one[c]
        if (total == 1).all():
            groups[prefix] = members
            taken.update(members)
    return groups


def column_groups(df: pd.DataFrame) -> dict[str, list[str]]:
    """Columns grouped for choosing many at once: one-hot sibling groups first (:func:`one_hot_groups`),
    then other columns sharing the name part before their first separator (two or more), then the rest
    under ``"(other columns)"``. Every column is in exactly one group, in the table's order."""
    groups = dict(one_hot_groups(df))
    taken = {c for cols in groups.values() for c in cols}
    by_stem: dict[str, list[str]] = {}
    for c in map(str, df.columns):
        if c in taken:
            continue
        m = re.match(r"^(.+?[" + re.escape("".join(_SEPARATORS)) + r"])", c)
        by_stem.setdefault(m.group(1) if m else "", []).append(c)
    rest = []
    for stem, cols in by_stem.items():
        if stem and len(cols) >= 2:
            groups[stem] = cols
        else:
            rest += cols
    if rest:
        groups["(other columns)"] = rest
    return groups


def _one_hot_leaks(df: pd.DataFrame, s_column: str, y_column: str, features) -> list[dict]:
    out = []
    for members in one_hot_groups(df).values():
        for role, col in (("s", s_column), ("y", y_column)):
            if col in members:
                out.extend({"column": c, "of": role, "score": 1.0}
                           for c in members if c not in (s_column, y_column) and c in features)
    return out


def _merge_leaks(found: list[dict]) -> list[dict]:
    best: dict[tuple, dict] = {}
    for f in found:
        key = (f["column"], f["of"])
        if key not in best or f["score"] > best[key]["score"]:
            best[key] = f
    return sorted(best.values(), key=lambda f: (-f["score"], f["of"] != "y", f["column"]))


def _score_leaks(X: pd.DataFrame, s_codes, y_codes, max_rows) -> list[dict]:
    roles = [(role, codes) for role, codes in (("s", s_codes), ("y", y_codes)) if codes is not None]
    if not roles:
        return []
    out = []
    for (role, _), scores in zip(roles, _scores_against(X, [codes for _, codes in roles], max_rows)):
        out.extend({"column": c, "of": role, "score": v} for c, v in scores.items() if v >= LEAK_SCORE)
    return out


def find_leaks(df: pd.DataFrame, s_column: str, y_column: str, s_codes, y_codes, features=None,
               max_rows: int | None = MAX_ROWS) -> list[dict]:
    """Features that determine ``s`` or ``y`` almost exactly: ``[{"column", "of": "s"|"y", "score"}]``,
    strongest first (leaks of ``y`` before leaks of ``s`` at equal score).

    ``df`` is the table with the ``s`` and ``y`` columns; ``s_codes`` and ``y_codes`` hold the group and
    label codes of each of its rows (either may be None to skip it); ``features`` are the columns to
    check (default: every column but ``s_column`` and ``y_column``). A feature is a leak when

    * it alone scores at least ``LEAK_SCORE`` (0.95) against ``s`` or ``y`` by :func:`proxy_scores`'s
      rule, or
    * it is a one-hot sibling of the ``s`` or ``y`` column (:func:`one_hot_groups`): the siblings
      together give the column away, so every sibling is listed, with score 1.0.
    """
    if features is None:
        features = [c for c in df.columns if c not in (s_column, y_column)]
    features = [c for c in features if c not in (s_column, y_column)]
    for c in features:
        if c not in df.columns:
            raise FairDashError(f"The feature {c!r} is not in the table.")
    found = _one_hot_leaks(df, s_column, y_column, set(features))
    if features:
        found += _score_leaks(df[features], s_codes, y_codes, max_rows)
    return _merge_leaks(found)


def task_proxies(task, top: int | None = 10) -> list[dict]:
    """:func:`proxy_scores` for a built :class:`fairdash.data.Task` (its features against its groups)."""
    return proxy_scores(task.X, task.s, top)


def task_leaks(table: pd.DataFrame, task, max_rows: int | None = MAX_ROWS, joint: bool = True) -> list[dict]:
    """The leaks of :func:`task_leaks_and_proxies`."""
    return task_leaks_and_proxies(table, task, max_rows=max_rows, joint=joint)[0]


def task_leaks_and_proxies(table: pd.DataFrame, task, top: int | None = 10, max_rows: int | None = MAX_ROWS,
                           joint: bool = True) -> tuple[list[dict], list[dict]]:
    """``(leaks, proxies)`` of a built task, its features scored once against its ``s`` and ``y`` codes
    (the rows it kept):

    * leaks: :func:`find_leaks`'s (single features scoring at least ``LEAK_SCORE``, and the one-hot
      siblings of its ``s``/``y`` columns found in ``table``, the table it was built from), then, with
      ``joint``, the leaks that only the other features together give away
      (:func:`fairdash.separability.joint_leaks`: a logistic regression's cross-validated AUC of at
      least 0.99 on the training split; those entries carry ``"with"``, the columns that do it);
    * proxies: :func:`task_proxies`'s table, the ``top`` strongest.
    """
    spec = task.spec
    found = _one_hot_leaks(table, spec.s_column, spec.y_column, set(task.features))
    s_scores, y_scores = _scores_against(task.X, [task.s, task.y], max_rows)
    for role, scores in (("s", s_scores), ("y", y_scores)):
        found += [{"column": c, "of": role, "score": v} for c, v in scores.items() if v >= LEAK_SCORE]
    if joint:
        from .separability import joint_leaks

        found += joint_leaks(task, exclude={(f["column"], f["of"]) for f in found})
    ranked = sorted(s_scores.items(), key=lambda kv: -kv[1])[:top]
    return _merge_leaks(found), [{"column": c, "score": v} for c, v in ranked]


def leak_text(leak: dict) -> str:
    """A leak in words: ``'x' gives y away`` or, for a joint leak, which columns give it away together."""
    if leak.get("with"):
        return (f"{', '.join(map(repr, leak['with']))} give {leak['of']} away together (a logistic regression on "
                f"the features reaches a cross-validated AUC of {leak['score']:.3f}; no column does alone)")
    return f"{leak['column']!r} gives {leak['of']} away almost exactly (score {leak['score']:.3f})"


# --------------------------------------------------------------------------------------------------
# Guessing s and y
# --------------------------------------------------------------------------------------------------
Y_WORDS = ("label", "target", "outcome", "y", "class", "default", "income", "salary", "recid", "recidivism",
           "recidivist", "churn", "churned", "fraud", "response", "result", "decision", "approved",
           "approval", "admitted", "admit", "hired", "survived", "readmitted", "diagnosis", "arrested",
           "frisked", "searched", "passed", "risk")
S_WORDS = ("sex", "gender", "race", "ethnicity", "ethnic", "nationality", "religion", "citizenship",
           "disability", ("age", "group"), ("age", "cat"), ("age", "band"), ("age", "bracket"))
_POSITIVE = ("1", "true", "yes", "y", "t", "positive", "pos", ">50k", ">50k.")


@dataclass(frozen=True)
class RoleGuess:
    """A suggestion for the task's columns, each with why it was picked (to show the user)."""

    s_column: str
    y_column: str
    s1_values: tuple
    y1_values: tuple
    s_reason: str
    y_reason: str
    s_threshold: float | None = None  # set instead of s1_values for a numeric column of many values
    y_threshold: float | None = None


def name_words(name: str) -> list[str]:
    """A column name's word parts, lower case: ``"default payment next month"`` -> default, payment,
    next, month; ``"two-year-recid"`` -> two, year, recid; ``"isFraud"`` -> is, fraud."""
    name = re.sub(r"([a-z])([A-Z])", r"\1 \2", str(name))
    return [w for w in re.split(r"[^0-9a-zA-Z]+|(?<=[a-zA-Z])(?=[0-9])|(?<=[0-9])(?=[a-zA-Z])", name.lower()) if w]


def _word_rank(name: str, words) -> int | None:
    """The position in ``words`` of the first entry the name contains (a word, or a pair in order)."""
    parts = name_words(name)
    for i, w in enumerate(words):
        if isinstance(w, tuple):
            if any(parts[j:j + len(w)] == list(w) for j in range(len(parts))):
                return i
        elif w in parts:
            return i
    return None


def _text_values(col: pd.Series) -> list[str]:
    from .data import column_values

    return column_values(col.to_frame("c"), "c")


def guess_values(df: pd.DataFrame, column: str, role: str, profile: pd.DataFrame | None = None):
    """``(values, threshold, words)`` for a column chosen as ``s`` (``role="s"``) or ``y``: a many-valued
    numeric column is split at its median; else group 1 is the most frequent value (s), positive the
    positive-looking or rarer value (y). ``words`` says which, for the user."""
    from .data import profile_columns

    prof = profile if profile is not None else profile_columns(df[[column]])
    return _values_or_threshold(df, column, prof.set_index("column").loc[column], role)


def _values_or_threshold(df, c, prof_row, role):
    from .data.profile import THRESHOLD_DISTINCT

    col = df[c]
    if prof_row["kind"] == "numeric" and int(prof_row["distinct"]) > THRESHOLD_DISTINCT:
        thr = float(pd.to_numeric(col).median())
        return (), thr, f"split at its median, {thr:g}"
    vals = _text_values(col)
    if not vals:
        return (), None, "it has no values"
    if role == "s":
        return (vals[0],), None, f"group 1 = {vals[0]!r}, its most frequent value"
    for v in vals:
        if v.strip().lower() in _POSITIVE:
            return (v,), None, f"positive = {v!r}"
    return (vals[-1],), None, f"positive = {vals[-1]!r}, its rarer value"


def guess_roles(df: pd.DataFrame, profile: pd.DataFrame | None = None) -> RoleGuess:
    """A guess at ``y`` and ``s`` for a table, to be confirmed by the user.

    ``y``: a column whose name has an outcome word as a word part (``Y_WORDS``: label, target, outcome,
    y, class, default, income, salary, recid, ...; case-insensitive), two-valued ones first, then by
    the word's order in ``Y_WORDS``, then the last such column; without one, the last two-valued column.
    ``s``: a column named like ``S_WORDS`` (sex, gender, race, ethnicity, ..., age group), few-valued ones
    first, in ``S_WORDS`` order; without one, the first two-valued column. Never a member of a one-hot
    group (:func:`one_hot_groups`), never an id-like, constant or empty column, never the same column
    for both."""
    from .data import left_out_by_default, profile_columns

    if df is None or df.shape[1] < 2:
        raise FairDashError("A table needs at least two columns to choose a sensitive attribute and a label.")
    prof = profile if profile is not None else profile_columns(df)
    prof = prof.set_index("column")
    columns = [str(c) for c in df.columns]
    one_hot = {c for m in one_hot_groups(df).values() for c in m}
    bad = set(left_out_by_default(prof.reset_index()))
    usable = [c for c in columns if c not in one_hot and c not in bad] or [c for c in columns if c not in bad] \
        or columns

    def binary(c):
        return prof.loc[c, "kind"] == "binary"

    def few(c):
        return int(prof.loc[c, "distinct"]) <= FEW_VALUES

    # y
    named = [(c, r) for c in usable if (r := _word_rank(c, Y_WORDS)) is not None]
    if named:
        pos = {c: i for i, c in enumerate(columns)}
        y_col, r = min(named, key=lambda cr: (not binary(cr[0]), cr[1], -pos[cr[0]]))
        why = f"its name says outcome ({Y_WORDS[r]!r})" + ("" if binary(y_col) else ", though it has more than two values")
    else:
        pool = [c for c in usable if binary(c)]
        y_col = (pool or usable)[-1]
        why = "the last two-valued column" if pool else "the last column (no column is named like an outcome)"
    y_vals, y_thr, y_how = _values_or_threshold(df, y_col, prof.loc[y_col], "y")
    y_reason = f"{y_col!r}: {why}; {y_how}."

    # s
    rest = [c for c in usable if c != y_col] or [c for c in columns if c != y_col]
    named = [(c, r) for c in rest if (r := _word_rank(c, S_WORDS)) is not None]
    if named:
        s_col, r = min(named, key=lambda cr: (not few(cr[0]), cr[1]))
        w = S_WORDS[r]
        why = f"its name says who is compared ({' '.join(w) if isinstance(w, tuple) else w!r})"
    else:
        pool = [c for c in rest if binary(c)] or [c for c in rest if few(c)]
        s_col = (pool or rest)[0]
        why = ("the first two-valued column" if pool and binary(s_col) else "the first column with few values"
               if pool else "the first column left") + " (no column is named like a sensitive attribute)"
    s_vals, s_thr, s_how = _values_or_threshold(df, s_col, prof.loc[s_col], "s")
    s_reason = f"{s_col!r}: {why}; {s_how}."
    return RoleGuess(s_col, y_col, s_vals, y_vals, s_reason, y_reason, s_thr, y_thr)
