"""What the features say about ``s`` and ``y``: proxies, leaks, and a guess at which column is which.

* :func:`proxy_scores`: per feature, how well it alone predicts the sensitive attribute (a single-feature
  AUC, reported as ``max(a, 1 - a)``; every column at once, :mod:`fairdash.analysis.feature_auc`). A model that
  does not see ``s`` moves a group's rate only through such features.
* :func:`find_leaks`: features that determine ``s`` or ``y`` almost exactly (a score of at least
  :data:`LEAK_SCORE`, or a one-hot sibling of the ``s``/``y`` column; see :func:`one_hot_groups`).
* :func:`task_leaks_and_proxies`: both for a built task, with one scoring pass, and the leaks that only
  the features together give away (:mod:`fairdash.analysis.separability`, the one place a model is fitted).
* :func:`guess_roles`: a suggestion for ``s`` and ``y`` on an uploaded table (the user confirms it).

Nothing imports streamlit.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..data import column_values, left_out_by_default, onehot, profile_columns
from ..data.profile import THRESHOLD_DISTINCT
from ..errors import FairDashError
from .feature_auc import BINS, FEW_VALUES, FOLDS, MAX_ROWS, feature_scores, is_numeric, scores_against  # noqa: F401
from .separability import joint_leaks

LEAK_SCORE = 0.95  # a single feature scoring at least this against s or y is a leak


# --------------------------------------------------------------------------------------------------
# Proxies (the scores themselves: fairdash.analysis.feature_auc)
# --------------------------------------------------------------------------------------------------
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
    if not is_numeric(col) or col.isna().any():
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
    for (role, _), scores in zip(roles, scores_against(X, [codes for _, codes in roles], max_rows)):
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
      (:func:`fairdash.analysis.separability.joint_leaks`: a logistic regression's cross-validated AUC of at
      least 0.99 on the training split; those entries carry ``"with"``, the columns that do it);
    * proxies: :func:`task_proxies`'s table, the ``top`` strongest.
    """
    spec = task.spec
    found = _one_hot_leaks(table, spec.s_column, spec.y_column, set(task.features))
    s_scores, y_scores = scores_against(task.X, [task.s, task.y], max_rows)
    for role, scores in (("s", s_scores), ("y", y_scores)):
        found += [{"column": c, "of": role, "score": v} for c, v in scores.items() if v >= LEAK_SCORE]
    if joint:
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
           "frisked", "searched", "passed", "risk",
           # decisions about a person, in the words such tables use (issue 47: a mortgage table's "deny" was taken
           # for s, an arrests table's "released" passed over), and a few in other languages
           "deny", "denied", "denial", "approve", "accepted", "accept", "rejected", "reject", "granted", "grant",
           "released", "release", "detained", "held", "repaid", "repay", "hire", "admission", "awarded",
           "resultado", "ergebnis", "etiqueta", "objetivo", "cible", "aprobado", "denegado", "rechazado", "status")
S_WORDS = ("sex", "gender", "race", "ethnicity", "ethnic", "nationality", "religion", "citizenship",
           "disability", ("age", "group"), ("age", "cat"), ("age", "band"), ("age", "bracket"),
           # skin colour and group indicators as economists' tables name them, and a few in other languages
           "colour", "color", "skin", "afam", "nwhite", "black", "white", "hispanic", "latino", "minority", "caste",
           "geschlecht", "sexe", "sexo", "genero", "raza", "rasse", "etnia", "ethnie", "herkunft", "nacionalidad",
           "age")
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
    return column_values(col.to_frame("c"), "c")


def guess_values(df: pd.DataFrame, column: str, role: str, profile: pd.DataFrame | None = None):
    """``(values, threshold, words)`` for a column chosen as ``s`` (``role="s"``) or ``y``: a many-valued
    numeric column is split at its median; else group 1 is the most frequent value (s), positive the
    positive-looking or rarer value (y). ``words`` says which, for the user."""

    prof = profile if profile is not None else profile_columns(df[[column]])
    return _values_or_threshold(df, column, prof.set_index("column").loc[column], role)


def _values_or_threshold(df, c, prof_row, role):
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
    the word's order in ``Y_WORDS``, then the last such column; without one, a yes-or-no value held as two
    complementary indicator columns (``PF_0``/``PF_1``, :func:`fairdash.data.onehot.binary_pairs`; not one named
    like a sensitive attribute, the last such pair): its whole column (``PF``) where the table has it, positive =
    the yes level, else its yes column; without one either, the last two-valued column.
    ``s``: a column named like ``S_WORDS`` (sex, gender, race, ethnicity, ..., age group, colour, afam, ...), and
    never one named like an outcome where another is left, few-valued ones
    first, in ``S_WORDS`` order, a whole column of indicator columns (``Race`` of ``Race_White``, ``Race_Black``,
    ...) before an ordinary one; without one, an indicator column of a set whose prefix is named so (a table
    without its whole columns: the set's most frequent one); without one either, the first two-valued column.
    Never a member of a one-hot group (:func:`one_hot_groups`) otherwise, never an id-like, constant or empty
    column, never the same column for both."""

    if df is None or df.shape[1] < 2:
        raise FairDashError("A table needs at least two columns to choose a sensitive attribute and a label.")
    prof = profile if profile is not None else profile_columns(df)
    prof = prof.set_index("column")
    columns = [str(c) for c in df.columns]
    one_hot = {c for m in one_hot_groups(df).values() for c in m}
    bad = set(left_out_by_default(prof.reset_index()))
    usable = [c for c in columns if c not in one_hot and c not in bad] or [c for c in columns if c not in bad] \
        or columns
    y_col, y_vals, y_thr, y_reason = _guess_y(df, prof, columns, usable)
    rest = [c for c in usable if c != y_col] or [c for c in columns if c != y_col]
    # never an outcome-like column as s (a second decision, "denied" beside "approved", is not who is compared)
    rest = [c for c in rest if _word_rank(c, Y_WORDS) is None] or rest
    s_col, why = _guess_s(df, prof, rest, y_col)
    s_vals, s_thr, s_how = _values_or_threshold(df, s_col, prof.loc[s_col], "s")
    s_reason = f"{s_col!r}: {why}; {s_how}."
    return RoleGuess(s_col, y_col, s_vals, y_vals, s_reason, y_reason, s_thr, y_thr)


def _binary(prof, c) -> bool:
    return prof.loc[c, "kind"] == "binary"


def _guess_y(df, prof, columns, usable):
    """``(column, positive values, threshold, reason)`` of :func:`guess_roles`'s ``y``."""
    named = [(c, r) for c in usable if (r := _word_rank(c, Y_WORDS)) is not None]
    pairs = {p: cols for p, cols in onehot.binary_pairs(df).items() if _word_rank(p, S_WORDS) is None}
    if named:
        pos = {c: i for i, c in enumerate(columns)}
        y_col, r = min(named, key=lambda cr: (not _binary(prof, cr[0]), cr[1], -pos[cr[0]]))
        why = f"its name says outcome ({Y_WORDS[r]!r})" + ("" if _binary(prof, y_col)
                                                            else ", though it has more than two values")
    elif pairs:
        prefix, (no, yes) = list(pairs.items())[-1]
        why = f"{no!r} and {yes!r} are complementary indicator columns: one yes-or-no outcome held twice"
        if prefix in columns:
            return (prefix, (onehot.level(yes),), None,
                    f"{prefix!r}: {why}; positive = {onehot.level(yes)!r} ({yes!r} = 1).")
        y_col = yes
    else:
        pool = [c for c in usable if _binary(prof, c)]
        y_col = (pool or usable)[-1]
        why = "the last two-valued column" if pool else "the last column (no column is named like an outcome)"
    y_vals, y_thr, y_how = _values_or_threshold(df, y_col, prof.loc[y_col], "y")
    return y_col, y_vals, y_thr, f"{y_col!r}: {why}; {y_how}."


def _guess_s(df, prof, rest, y_col) -> tuple[str, str]:
    """``(column, reason)`` of :func:`guess_roles`'s ``s``."""
    whole = onehot.parts_of(df)
    named = [(c, r) for c in rest if (r := _word_rank(c, S_WORDS)) is not None]
    if named:
        s_col, r = min(named, key=lambda cr: (int(prof.loc[cr[0], "distinct"]) > FEW_VALUES, cr[1], cr[0] not in whole))
        w = S_WORDS[r]
        why = f"its name says who is compared ({' '.join(w) if isinstance(w, tuple) else w!r})"
        if s_col in whole:
            why += f", the whole column of its indicator columns ({_listed(whole[s_col])})"
        return s_col, why
    sets = [(r, cols) for p, cols in onehot.indicator_sets(df).items()
            if (r := _word_rank(p, S_WORDS)) is not None and y_col not in cols]
    if sets:
        cols = min(sets, key=lambda rc: rc[0])[1]
        s_col = max(cols, key=lambda c: int(pd.to_numeric(df[c], errors="coerce").fillna(0).sum()))
        return s_col, (f"one of the indicator columns {_listed(cols)} (their prefix is named like a "
                       "sensitive attribute), the most frequent")
    pool = [c for c in rest if _binary(prof, c)] or [c for c in rest if int(prof.loc[c, "distinct"]) <= FEW_VALUES]
    s_col = (pool or rest)[0]
    return s_col, (("the first two-valued column" if pool and _binary(prof, s_col)
                    else "the first column with few values" if pool else "the first column left")
                   + " (no column is named like a sensitive attribute)")


def _listed(cols) -> str:
    return ", ".join(cols[:3]) + (f", ... ({len(cols)})" if len(cols) > 3 else "")
