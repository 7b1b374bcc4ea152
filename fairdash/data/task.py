"""The task: which column is ``s``, which is ``y``, what counts as 1, which columns are features."""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import pandas as pd

from ..errors import FairDashError
from ..targeting.targets import group_counts
from . import onehot
from .profile import (
    MAX_CATEGORIES,
    _as_text,
    _check_column,
    left_out_by_default,
    left_out_note,
    profile_columns,
)
from .reading.repairs import clean_table


@dataclass(frozen=True)
class TaskSpec:
    """The user's choices. Values match the column's values as text (``"1"`` selects an integer 1).

    ``s1_values``: values of ``s_column`` that form group 1 (all others form group 0, the protected
    group). With ``s_multi=True`` every value is its own group instead (sorted; group 0 first).
    ``y1_values`` or ``y_threshold`` (y = 1 where the value is > threshold) say what a positive label is.
    ``missing`` is ``"drop"`` (rows with a missing feature are dropped) or ``"impute"``.
    ``s_with``: a second column crossed with ``s_column`` (intersectional groups, e.g. race × sex): every
    combination is its own group, and neither column is a feature. ``group_labels``: names for the
    groups in group order (e.g. ``("female", "male")`` for a column coded 0/1), shown everywhere.
    ``s_as_feature``: the model sees ``s`` (its column, and ``s_with``'s) as a feature, so it uses the
    protected attribute at prediction time: direct use, lawful only in some settings; off by default.
    ``positive_favourable``: whether a positive label is favourable for the person (True: a loan granted;
    False: rearrest, default); ``None`` where not said: read from ``positive_meaning``, else taken as
    favourable (:func:`fairdash.data.meaning.label_favourable`). It names the disadvantaged group.
    """

    s_column: str
    y_column: str
    s1_values: tuple = ()
    y1_values: tuple = ()
    y_threshold: float | None = None
    s_threshold: float | None = None
    s_multi: bool = False
    features: tuple | None = None  # None = every other column except flagged ones
    drop: tuple = ()
    missing: str = "drop"
    strata_column: str | None = None  # the "legitimate" column for conditional parity
    positive_meaning: str = ""
    s_with: str | None = None
    group_labels: tuple = ()
    s_as_feature: bool = False
    positive_favourable: bool | None = None

    def to_dict(self) -> dict:
        d = self.__dict__.copy()
        return {k: (list(v) if isinstance(v, tuple) else v) for k, v in d.items()}

    @classmethod
    def from_dict(cls, d: dict) -> "TaskSpec":
        known = {k: (tuple(v) if isinstance(v, list) else v) for k, v in d.items() if k in cls.__dataclass_fields__}
        return cls(**known)


@dataclass
class Task:
    """A table turned into ``X`` (raw feature columns), ``y`` and ``s`` (integer codes)."""

    spec: TaskSpec
    X: pd.DataFrame
    y: np.ndarray
    s: np.ndarray
    group_names: tuple
    label_names: tuple  # (name of y=0, name of y=1)
    numeric_features: tuple
    categorical_features: tuple
    strata: np.ndarray | None = None  # integer stratum codes for conditional parity
    strata_names: tuple = ()
    n_rows_read: int = 0
    n_dropped_missing_sy: int = 0
    n_dropped_missing_features: int = 0
    warnings: list = field(default_factory=list)
    paper_setup: str | None = None  # the paper's set-up this task is (samples.paper_task), else None
    s_values: tuple = ()  # the sensitive attribute's values in the table, as text (the scoring contract's)

    @property
    def n_groups(self) -> int:
        return len(self.group_names)

    @cached_property
    def fingerprint(self) -> str:
        """A short content hash of the rows (features, y, s): the same table gives the same print.
        Computed once per task (a task is never changed after ``build_task``)."""
        h = hashlib.sha256()
        h.update(pd.util.hash_pandas_object(self.X, index=False).to_numpy().tobytes())
        h.update(np.ascontiguousarray(self.y).tobytes())
        h.update(np.ascontiguousarray(self.s).tobytes())
        h.update(repr(self.features).encode())
        return h.hexdigest()[:16]

    @property
    def features(self) -> tuple:
        return tuple(self.X.columns)

    def group_table(self) -> pd.DataFrame:
        """Group sizes and base rates on the whole table (the readouts use the training split)."""

        n, n_pos = group_counts(self.y, self.s, self.n_groups)
        return pd.DataFrame({
            "group": [f"s={j}: {g}" for j, g in enumerate(self.group_names)],
            "rows": n, "positives": n_pos,
            "base rate": np.where(n > 0, n_pos / np.maximum(n, 1), 0.0),
            "share": n / max(len(self.y), 1),
        })


def _short(values, k: int = 3) -> str:
    values = sorted(map(str, values))
    return ", ".join(map(repr, values[:k])) + (f" and {len(values) - k} more" if len(values) > k else "")


def _label_words(spec: TaskSpec) -> list[str]:
    """What a positive label is, in words: the chosen values or the threshold."""
    if spec.y1_values:
        return [f"{spec.y_column} = {v}" for v in spec.y1_values]
    return [f"{spec.y_column} > {spec.y_threshold:g}"]


_TRUE_WORDS = ("true", "1", "1.0")
_FALSE_WORDS = ("false", "0", "0.0")


def _canonical_value(value, present: set, col: pd.Series) -> str | None:
    """The column's own text (as :func:`_as_text` writes it) for a value the user typed, or None where
    no value of the column matches: the same text (spaces around it ignored); for a column of booleans
    (pandas reads ``TRUE``/``false`` in a file as booleans) also true/false in any case and 1/0; for a
    numeric column also another spelling of the same number (``1.0`` for 1, ``.5`` for 0.5)."""
    v = str(value).strip()
    if v in present:
        return v
    if present and present <= {"True", "False"}:
        low = v.lower()
        word = "True" if low in _TRUE_WORDS else "False" if low in _FALSE_WORDS else None
        return word if word in present else None
    if pd.api.types.is_numeric_dtype(col):
        try:
            f = float(v)
        except ValueError:
            return None
        whole = np.isfinite(f) and f == round(f) and abs(f) < 2.0**53
        text = str(int(f)) if whole else str(f)
        return text if text in present else None
    return None


def _match_values(values, present: set, col: pd.Series) -> tuple[list, list]:
    """``(matched, missing)``: the column's own text for each value found (in order, once each) and
    the values typed that match none of ``present``."""
    matched, missing = [], []
    for v in values:
        c = _canonical_value(v, present, col)
        if c is None:
            missing.append(str(v).strip())
        else:
            matched.append(c)
    return list(dict.fromkeys(matched)), missing


def _binarise(col: pd.Series, values: tuple, threshold, role: str, column: str, dropped: int = 0) -> np.ndarray:
    if threshold is not None:
        if not pd.api.types.is_numeric_dtype(col):
            raise FairDashError(f"The {role} column {column!r} is not numeric, so it cannot be split by a threshold.")
        return (col.to_numpy(dtype=float) > float(threshold)).astype(int)
    if not values:
        raise FairDashError(f"Choose which values of {column!r} count as "
                            f"{'group 1' if role == 'sensitive' else 'positive'}.")
    text = _as_text(col)
    present = set(text.unique())
    wanted, missing = _match_values(values, present, col)
    if missing:
        shown = ", ".join(sorted(present, key=str)[:12])
        if dropped:
            raise FairDashError(f"Value {missing[0]!r} of column {column!r} occurs only in the {dropped} row(s) "
                                "dropped because they had a missing value. Fill in the missing values, or choose to "
                                f"impute them instead of dropping rows. The rows left have: {shown}.")
        raise FairDashError(f"Value {missing[0]!r} does not occur in column {column!r}. Its values include: {shown}.")
    return text.isin(wanted).to_numpy().astype(int)


def build_task(df: pd.DataFrame, spec: TaskSpec) -> Task:
    """Check the user's choices against the table and build the :class:`Task`: the choices first
    (:func:`_check_choices`), then each part built in turn and checked as it is built (the rows, the features,
    ``y``, ``s`` and its groups, the strata), the notes kept in the order they arise."""
    _check_choices(df, spec)
    df, warnings = clean_table(df)
    n_read = len(df)
    df, n_drop_sy = _rows_with_s_and_y(df, spec, warnings)
    feats = _feature_columns(df, spec, warnings)
    df, X, n_drop_x = _rows_with_features(df, spec, feats, warnings)
    hint = _dropped_hint(n_drop_sy + n_drop_x)
    y, y_chosen, hint = _label(df, spec, n_drop_x, hint, warnings)
    s, names, s_text = _groups(df, spec, n_drop_x)
    _check_groups(spec, s, names, s_text, hint)
    _check_base_rates(spec, y, s, names, hint)
    names = _named_groups(spec, names)
    strata, strata_names = _strata(df, spec)
    num, cat = _feature_kinds(X, feats, warnings)
    _add_read_notes(df, warnings)
    if spec.y1_values:
        label_names = ("not " + "/".join(y_chosen), "/".join(y_chosen))
    else:
        label_names = (f"{spec.y_column} <= {spec.y_threshold:g}", f"{spec.y_column} > {spec.y_threshold:g}")
    return Task(
        spec=spec, X=X.reset_index(drop=True), y=y, s=s, group_names=tuple(map(str, names)),
        label_names=label_names, numeric_features=num, categorical_features=cat, strata=strata,
        strata_names=strata_names, n_rows_read=n_read, n_dropped_missing_sy=n_drop_sy,
        n_dropped_missing_features=n_drop_x, warnings=warnings, s_values=tuple(sorted(map(str, s_text.unique()))),
    )


def _check_choices(df: pd.DataFrame, spec: TaskSpec) -> None:
    """The choices that can be refused before anything is built: rows, the columns named, the missing-value rule."""
    if df is None or len(df) == 0:
        raise FairDashError("The table has no rows.")
    _check_column(df, spec.s_column, "sensitive attribute")
    _check_column(df, spec.y_column, "label")
    if spec.s_column == spec.y_column:
        raise FairDashError("The sensitive attribute and the label must be different columns.")
    if spec.s_with is not None:
        _check_column(df, spec.s_with, "second sensitive attribute")
        if spec.s_with in (spec.s_column, spec.y_column):
            raise FairDashError("The column crossed with the sensitive attribute must be another column than s and y.")
    if spec.missing not in ("drop", "impute"):
        raise FairDashError("Missing-value handling must be 'drop' or 'impute'.")


def _rows_with_s_and_y(df: pd.DataFrame, spec: TaskSpec, warnings: list) -> tuple[pd.DataFrame, int]:
    """``(rows, how many were dropped)``: the rows that have ``s`` (and ``s_with``) and ``y``; an empty ``s`` or
    ``y`` column is refused."""
    for role, c in (("sensitive attribute", spec.s_column), ("label", spec.y_column)):
        if df[c].isna().all():
            raise FairDashError(f"The {role} column {c!r} is empty (every value is missing).")
    keep = df[spec.s_column].notna() & df[spec.y_column].notna()
    if spec.s_with is not None:
        keep &= df[spec.s_with].notna()
    n_drop_sy = int((~keep).sum())
    if n_drop_sy:
        warnings.append(f"{n_drop_sy} row(s) with a missing sensitive attribute or label were dropped.")
        df = df.loc[keep]  # a copy of a big table only when rows go
    return df, n_drop_sy


def _feature_columns(df: pd.DataFrame, spec: TaskSpec, warnings: list) -> list:
    """The feature columns: the ones chosen, or every other column but those left out by default (one note per
    reason); less ``drop``; plus ``s`` where the model may see it. None left is refused."""
    if spec.features is not None:
        for c in spec.features:
            _check_column(df, c, "feature")
        feats = [c for c in dict.fromkeys(spec.features) if c not in (spec.s_column, spec.y_column, spec.s_with)]
    else:
        skip = left_out_by_default(profile_columns(df), exclude=(spec.s_column, spec.y_column))
        skip.update(onehot.left_out_by_default(df, spec.s_column, spec.y_column))
        by_why: dict = {}
        for c, why in sorted(skip.items()):
            by_why.setdefault(why, []).append(c)
        warnings.extend(left_out_note(cols, why) for why, cols in by_why.items())  # one line per reason
        # the legitimate factor stays a feature (conditioning on it is the point) unless the user drops it
        feats = [c for c in df.columns if c not in (spec.s_column, spec.y_column, spec.s_with) and c not in skip]
    feats = [c for c in feats if c not in spec.drop]
    if spec.s_as_feature:  # direct use of the protected attribute, asked for explicitly
        feats += [c for c in (spec.s_column, spec.s_with) if c is not None and c not in feats]
    if not feats:
        raise FairDashError("No feature columns are left to learn from.")
    return feats


def _rows_with_features(df: pd.DataFrame, spec: TaskSpec, feats: list,
                        warnings: list) -> tuple[pd.DataFrame, pd.DataFrame, int]:
    """``(rows, X, how many were dropped)``: with ``missing="drop"`` the rows that have every feature. An empty
    feature column, or no row left, is refused."""
    X = df[feats]
    empty = [c for c in feats if X[c].isna().all()]
    if empty:
        raise FairDashError(f"Feature column {empty[0]!r} is empty (every value is missing); leave it out.")
    n_drop_x = 0
    if spec.missing == "drop":
        ok = X.notna().all(axis=1)
        n_drop_x = int((~ok).sum())
        if n_drop_x:
            warnings.append(f"{n_drop_x} row(s) with a missing feature value were dropped.")
            df, X = df.loc[ok], X.loc[ok]
    if len(df) == 0:
        raise FairDashError("No rows are left after dropping rows with missing values; try imputing instead.")
    return df, X, n_drop_x


def _dropped_hint(n_dropped: int) -> str:
    """The sentence added to a refusal of ``y`` or ``s`` where rows with missing values were dropped."""
    return (f" ({n_dropped} row(s) with missing values were dropped first; imputing them may keep more rows.)"
            if n_dropped else "")


def _label(df: pd.DataFrame, spec: TaskSpec, n_drop_x: int, hint: str,
           warnings: list) -> tuple[np.ndarray, tuple, str]:
    """``(y, the positive values chosen in the column's own text, hint)``; a label with more than two values is
    noted (and the hint says so), a label with one value after binarising is refused."""
    y = _binarise(df[spec.y_column], spec.y1_values, spec.y_threshold, "label", spec.y_column, n_drop_x)
    y_chosen = ()
    if spec.y1_values:
        y_values = set(_as_text(df[spec.y_column]).unique())
        y_chosen = tuple(_match_values(spec.y1_values, y_values, df[spec.y_column])[0])
        if len(y_values) > 2:
            others = y_values - set(y_chosen)
            hint += (f" Column {spec.y_column!r} holds {len(y_values)} different values ({_short(y_values, 6)}); "
                     "check which of them mean positive.")
            warnings.append(f"The label {spec.y_column!r} has {len(y_values)} different values: "
                            f"{_short(spec.y1_values, 6)} count as positive, {_short(others, 6)} as negative.")
    if y.min() == y.max():
        raise FairDashError(
            f"After binarising, the label {spec.y_column!r} has only one value ({'positive' if y[0] else 'negative'} "
            "for every row); there is nothing to learn. Choose other positive values." + hint
        )
    return y, y_chosen, hint


def _groups(df: pd.DataFrame, spec: TaskSpec, n_drop_x: int) -> tuple[np.ndarray, tuple, pd.Series]:
    """``(s, the groups' names, s as text)``: every value (or combination with ``s_with``) its own group, or two
    groups by the values chosen as group 1 or by a threshold."""
    s_text = _as_text(df[spec.s_column])
    if spec.s_with is not None:
        s_text = s_text + " × " + _as_text(df[spec.s_with])
    if spec.s_multi or spec.s_with is not None:
        names = tuple(sorted(s_text.unique(), key=str))
        s = pd.Categorical(s_text, categories=names).codes.astype(int)
        return s, tuple(_with_column(spec, n, df) for n in names), s_text
    s = _binarise(df[spec.s_column], spec.s1_values, spec.s_threshold, "sensitive", spec.s_column, n_drop_x)
    if spec.s_threshold is not None:
        return s, (f"{spec.s_column} <= {spec.s_threshold:g}", f"{spec.s_column} > {spec.s_threshold:g}"), s_text
    # each group named by exactly the values it holds, in the column's own text (a value typed
    # with a space after it, or TRUE for True, names the value it matched)
    present = set(s_text.unique())
    chosen = _match_values(spec.s1_values, present, df[spec.s_column])[0]
    g1 = ", ".join(chosen)
    rest = sorted(present - set(chosen), key=str)
    g0 = ", ".join(rest[:3]) + (" ..." if len(rest) > 3 else "") if rest else "(none)"
    return s, (g0 if not rest else _with_column(spec, g0, df), _with_column(spec, g1, df)), s_text


def _check_groups(spec: TaskSpec, s: np.ndarray, names: tuple, s_text: pd.Series, hint: str) -> None:
    """Refuses ``s`` with fewer than two groups that have rows."""
    if len(names) < 2 or np.bincount(s, minlength=len(names)).min() == 0:
        if spec.s_multi or spec.s_with is not None:
            what = "two groups are needed to compare"
        else:
            empty = "group 1 (the values chosen as group 1)" if s.max() == 0 else "group 0 (every other value)"
            what = f"{empty} has no rows. Choose group-1 values so that both groups have rows"
        raise FairDashError(
            f"The sensitive attribute {spec.s_column!r} has only one group after binarising: every row has "
            f"{spec.s_column} = {_short(s_text.unique())}, and {what}." + hint
        )


def _check_base_rates(spec: TaskSpec, y: np.ndarray, s: np.ndarray, names: tuple, hint: str) -> None:
    """Refuses a group whose labels are all positive or all negative: no target rate can be reached from it."""
    for j, g in enumerate(names):
        yj = y[s == j]
        if yj.min() == yj.max():
            what = "no positive" if yj.max() == 0 else "only positive"
            raise FairDashError(f"Group {g!r} of column {spec.s_column!r} has {what} labels ({yj.size} row(s), "
                                f"{'none' if yj.max() == 0 else 'all'} with {' or '.join(_label_words(spec))}), "
                                f"so its base rate is {int(yj.max())} and no target rate can be reached from it. "
                                "Choose other positive values or other groups." + hint)


def _named_groups(spec: TaskSpec, names: tuple) -> tuple:
    """The groups' names: the user's (``group_labels``, one per group, different, not empty) or as read."""
    if not spec.group_labels:
        return names
    if len(spec.group_labels) != len(names):
        raise FairDashError(f"{len(spec.group_labels)} group name(s) were given for {len(names)} groups "
                            f"({_short(names, 6)}); give one name per group, in group order.")
    if len(set(map(str, spec.group_labels))) != len(spec.group_labels) or not all(str(g).strip()
                                                                                for g in spec.group_labels):
        raise FairDashError("Group names must be different from each other and not empty.")
    return tuple(str(g).strip() for g in spec.group_labels)


def _strata(df: pd.DataFrame, spec: TaskSpec) -> tuple[np.ndarray | None, tuple]:
    """``(stratum codes, strata names)`` of the legitimate factor (a missing value is its own stratum), or
    ``(None, ())``."""
    if not spec.strata_column:
        return None, ()
    _check_column(df, spec.strata_column, "legitimate-factor column")
    st = _as_text(df[spec.strata_column].fillna("(missing)"))
    strata_names = tuple(sorted(st.unique(), key=str))
    return pd.Categorical(st, categories=strata_names).codes.astype(int), strata_names


def _feature_kinds(X: pd.DataFrame, feats: list, warnings: list) -> tuple[tuple, tuple]:
    """``(numeric features, categorical features)``; a categorical one with many values is noted."""
    num = tuple(c for c in feats if pd.api.types.is_numeric_dtype(X[c]) and not pd.api.types.is_bool_dtype(X[c]))
    cat = tuple(c for c in feats if c not in num)
    for c in cat:
        k = X[c].nunique()
        if k >= MAX_CATEGORIES:  # every column the one-hot cap cuts is said (the price names it too): scikit-learn
            # keeps a column for the rest whenever it reaches the cap, so 50 levels already lose their rarest
            warnings.append(f"Column {c!r} has {k} distinct values; only its {MAX_CATEGORIES - 1} most frequent are "
                            "encoded, the rest share one column.")
    return num, cat


def _add_read_notes(df: pd.DataFrame, warnings: list) -> None:
    """The reader's notes first, and the other sheets of a workbook last."""
    warnings[:0] = list(df.attrs.get("read_notes", ()))
    if "other_sheets" in df.attrs and df.attrs.get("other_sheets"):
        warnings.append(f"Only the sheet {df.attrs['sheet']!r} was read (the one holding the largest table); "
                        "other sheets: " + ", ".join(map(repr, df.attrs["other_sheets"])))


MAX_STRATA = 30  # a legitimate factor with more values than this would leave its cells too small


def strata_candidates(df: pd.DataFrame, task: Task) -> list[str]:
    """Columns that can be a legitimate factor for conditional parity: the task's features first, then the
    table's other columns, except ``s`` and ``y``, each with 2 to ``MAX_STRATA`` distinct values."""
    spec = task.spec
    order = list(task.X.columns) + [c for c in df.columns if c not in task.X.columns]
    return [c for c in dict.fromkeys(order) if c in df.columns and c not in (spec.s_column, spec.y_column, spec.s_with)
            and 1 < df[c].nunique() <= MAX_STRATA]



def _is_number_column(col: pd.Series) -> bool:
    return pd.api.types.is_numeric_dtype(col) and not pd.api.types.is_bool_dtype(col)


def _with_column(spec: TaskSpec, text: str, df: pd.DataFrame) -> str:
    """A group's name with its column's name where the column holds numbers (``race = 1``, ``race = 1 ×
    sex = 2``): a bare number reads like a footnote. Text values keep their own words."""
    parts = str(text).split(" × ", 1) if spec.s_with is not None else [str(text)]
    cols = [spec.s_column, spec.s_with][:len(parts)]
    return " × ".join(f"{c} = {p}" if c in df.columns and _is_number_column(df[c]) else p for c, p in zip(cols, parts))


def group_index(spec: TaskSpec, group_names) -> dict:
    """Each group's code by the text of its values (as :func:`build_task` reads them: ``1``, ``1 × 2``) and
    by its name (``race = 1``): how a new table's rows find their groups."""
    index = {}
    for i, name in enumerate(map(str, group_names)):
        index[name] = i
        parts = name.split(" × ", 1) if spec.s_with is not None else [name]
        cols = [spec.s_column, spec.s_with][:len(parts)]
        raw = [p[len(f"{c} = "):] if p.startswith(f"{c} = ") else p for c, p in zip(cols, parts)]
        index.setdefault(" × ".join(raw), i)
    return index


def group_codes(df: pd.DataFrame, spec: TaskSpec, group_names=()) -> np.ndarray:
    """Each row's group code in a new table, as :func:`build_task` coded the training rows: what a model
    that decides with s needs to decide. A missing column or value, or a group never seen in training,
    is refused with a message."""
    def short_name(name, limit: int = 60) -> str:
        text = str(name)
        return repr(text if len(text) <= limit else text[:limit - 1] + "…")

    cols = [c for c in (spec.s_column, spec.s_with) if c is not None]
    missing = [c for c in cols if c not in df.columns]
    if missing:
        raise FairDashError(f"This model decides with s: the table needs the sensitive attribute column "
                            f"{short_name(missing[0])} to decide, and has none.")
    blank = int(df[cols].isna().any(axis=1).sum())
    if blank:
        raise FairDashError(f"This model decides with s: {blank} row(s) have no value in "
                            f"{' or '.join(map(short_name, cols))}, so it cannot decide for them.")
    if spec.s_threshold is not None:
        col = pd.to_numeric(df[spec.s_column], errors="coerce")
        if col.isna().any():
            raise FairDashError(f"The sensitive attribute {short_name(spec.s_column)} must be numeric here (the "
                                "model's groups are split by a threshold).")
        return (col.to_numpy(dtype=float) > float(spec.s_threshold)).astype(int)
    text = _as_text(df[spec.s_column])
    if spec.s_multi or spec.s_with is not None:
        if spec.s_with is not None:
            text = text + " × " + _as_text(df[spec.s_with])
        if spec.group_labels:
            raise FairDashError("This model decides with s by groups that were renamed at training; score the table "
                                "in the dashboard's session that trained it.")
        index = group_index(spec, group_names)
        unknown = sorted(set(text.unique()) - set(index), key=str)
        if unknown:
            raise FairDashError(f"This model decides with s, and {len(unknown)} value(s) of the sensitive attribute "
                                f"were not seen in training (e.g. {short_name(unknown[0])}); it has no rule for them.")
        return text.map(index).to_numpy().astype(int)
    wanted = _match_values(spec.s1_values, set(text.unique()), df[spec.s_column])[0]
    return text.isin(wanted).to_numpy().astype(int)
