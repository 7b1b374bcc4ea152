"""The scoring contract (issue 27): a table is scored only after it has been compared, column by column,
with the table the model was trained on.

At training, :func:`training_schema` records what the comparison needs (each feature column's kind,
number or text, its missing values and its range on the training rows; the values of the sensitive
attribute); the model file keeps it in its metadata (``meta["scoring"]``). Files written before it have
none: the comparison then uses what their preprocessing knows (each column's kind and categories).

:func:`check_table` compares. Every difference that could change a decision is either a refusal
(:class:`~fairdash.errors.FairDashError`, one line naming the column, the value and how many rows) or a
warning (one line each, saying the same and how the rows were scored); a difference that cannot change a
decision (an extra column, the same number written ``3.0`` for a category seen as ``3``) is repaired
without a word. The rules, by kind of difference:

============================================  ==========================================================
a feature column missing, empty or repeated   refused (a column with the same name in another case or
                                               spacing is named as the likely one)
a number column holding text                   refused, naming the first such value and the count
a number column holding inf                    refused
a value far outside the training range         warned (beyond it by half its width: other units?)
a category never seen in training              warned, with the count and the first rows (scored as the
                                               model scores rare categories)
missing values where training had none         warned, with the count and the first rows (scored with the
                                               training median, or as the missing category)
a model that decides with s: s missing,        refused
  s blank, or s a value of no group
a model that decides with s: a value of s      warned (decided as group 0, "every other value"); refused
  never seen, with two groups                  where no value of the table's s was seen (another coding)
an empty table                                 refused
============================================  ==========================================================

:class:`ScoresRawTables` is what the trained model (:mod:`fairdash.work.experiments`) and the model file
(:mod:`fairdash.files.export`) share to score a raw table: ``predict``/``predict_proba`` check first and issue
each warning as a :class:`ScoringWarning`; ``score`` returns the warnings instead (the command line).
"""
from __future__ import annotations

import copy
import hashlib
import warnings
import weakref
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..data.preprocess import PlainPreprocessor, known_categories
from ..data.profile import values_as_text
from ..data.reading.repairs import clean_table
from ..data.task import group_codes, group_index
from ..errors import FairDashError, shorten
from ..targeting.decision import FittedDecision, positive_scores, predicts_with_s
from .drift import drift_notes, drift_record, drift_table

SCHEMA_VERSION = 1
SHOWN_ROWS = 3  # row labels quoted in a message
FAR = 0.5  # a number further than this share of the training range beyond it is said (other units?)


class ScoringWarning(UserWarning):
    """A difference between a scoring table and the training table that the model scored through."""


# --------------------------------------------------------------------------------------------------
# What is recorded at training
# --------------------------------------------------------------------------------------------------
def training_schema(task, train_rows=None) -> dict:
    """The training table as the comparison needs it: for each feature column its kind (``number`` or
    ``text``), its missing values (and rows) on the training rows ``train_rows`` (positions in ``task.X``;
    all rows when ``None``), a number column's range; and the values of the sensitive attribute."""
    key = hashlib.sha256(b"" if train_rows is None else np.ascontiguousarray(train_rows).tobytes()).hexdigest()
    memo = _memo_of(task)
    if key not in memo:
        if len(memo) >= 32:  # a run's seeds' splits, shared by its models
            memo.clear()
        memo[key] = _schema(task, train_rows)
    return copy.deepcopy(memo[key])


_SCHEMAS: dict = {}  # id(task) -> (weak reference to the task, {rows digest: record}), for live tasks


def _memo_of(task) -> dict:
    entry = _SCHEMAS.get(id(task))
    if entry is None or entry[0]() is not task:
        try:
            entry = (weakref.ref(task), {})
        except TypeError:  # cannot be weakly referenced: nothing remembered
            return {}
        for k in [k for k, (ref, _) in _SCHEMAS.items() if ref() is None]:
            del _SCHEMAS[k]
        _SCHEMAS[id(task)] = entry
    return entry[1]


def _schema(task, train_rows) -> dict:
    X = task.X if train_rows is None else task.X.iloc[np.asarray(train_rows)]
    cats = set(task.categorical_features)
    columns = {}
    for c in X.columns:
        col = X[c]
        entry = {"kind": "text" if c in cats else "number", "missing": int(col.isna().sum()),
                 **drift_record(col, c in cats)}
        if c not in cats:
            v = pd.to_numeric(col, errors="coerce").to_numpy(dtype=float)
            v = v[np.isfinite(v)]
            if v.size:
                entry.update(min=float(v.min()), max=float(v.max()))
        columns[str(c)] = entry
    return {"version": SCHEMA_VERSION, "n_rows": int(len(X)), "columns": columns,
            "s_values": [str(v) for v in getattr(task, "s_values", ())]}


def schema_of_old_file(preprocessor, feature_columns, categorical_features) -> dict:
    """The comparison's record for a model file written before the contract: each column's kind from its
    preprocessing, its missing values and range unknown."""
    cats = set(categorical_features)
    return {"version": 0, "columns": {str(c): {"kind": "text" if c in cats else "number"} for c in feature_columns},
            "s_values": None}


# --------------------------------------------------------------------------------------------------
# The comparison
# --------------------------------------------------------------------------------------------------
@dataclass
class Checked:
    """A table that passed the comparison: the feature columns as the preprocessing takes them, and one
    warning line per difference the model scores through."""

    X: pd.DataFrame
    notes: list = field(default_factory=list)
    drift: pd.DataFrame = field(default_factory=pd.DataFrame)  # per feature against training (files.drift)


def _rows(index, n: int = SHOWN_ROWS) -> str:
    shown = ", ".join(map(str, list(index[:n])))
    return f"row{'s' if len(index) > 1 else ''} {shown}{', ...' if len(index) > n else ''}"


def _q(name) -> str:
    return repr(shorten(name, 60))


def _text(col: pd.Series) -> pd.Series:
    """Values as text, as training turned categories into text (``str``), missing values kept missing."""
    return col.where(col.isna(), col.astype(str))


def _whole_alternative(text: str):
    """``"3"`` for ``"3.0"`` and ``"3.0"`` for ``"3"``: the same number, written the other way."""
    try:
        v = float(text)
    except (TypeError, ValueError):
        return None
    if not np.isfinite(v) or v != round(v) or abs(v) >= 2.0 ** 53:
        return None
    whole = str(int(v))
    return whole + ".0" if text.strip() == whole else whole


def _missing_columns(df: pd.DataFrame, needed) -> str | None:
    missing = [c for c in needed if c not in df.columns]
    if not missing:
        return None
    have = {str(c).strip().casefold(): c for c in df.columns}
    first = missing[0]
    alike = have.get(str(first).strip().casefold())
    hint = f" (it has {_q(alike)}: renamed? rename it back)" if alike is not None else ""
    more = f"; {len(missing) - 1} more are missing too: {', '.join(map(_q, missing[1:4]))}" + (
        " ..." if len(missing) > 4 else "") if len(missing) > 1 else ""
    return (f"The table lacks column {_q(first)}, which the model was trained on{hint}; none of its {len(df):,} "
            f"rows can be scored without it{more}.")


def check_table(df, feature_columns, categorical_features, known: dict, schema: dict | None,
                numeric_columns=None) -> Checked:
    """Compare ``df`` with the training table and return it ready for the preprocessing, or refuse.

    ``known``: each text column's categories seen in training; ``schema``: :func:`training_schema`'s record
    (``None``: a file written before it); ``numeric_columns``: the number columns the preprocessing uses."""
    feature_columns = _checked_shape(df, feature_columns)
    cats = set(categorical_features)
    cols = (schema or {}).get("columns") or {}
    X = df[feature_columns].copy()
    notes, refusals, far, far_notes = [], [], {}, {}
    for c in feature_columns:
        entry = cols.get(str(c), {})
        if c in cats:
            col, note = _text_column(X[c], c, known.get(c))
            X[c] = col
            if note:
                notes.append(note)
            how = "as the missing-value category"
        else:
            col, refusal = _number_column(X[c], c)
            if refusal:
                refusals.append(refusal)
                continue
            X[c] = col
            how = "with the median of training"
            lo, hi = entry.get("min"), entry.get("max")
            if (found := _far_outside(col, lo, hi)) is not None:
                far[c], far_notes[c] = found[1], _far_note(c, found[0], lo, hi, found[1])
                notes.append(far_notes[c])
        blank = X.index[X[c].isna().to_numpy()]
        if len(blank) == len(X) > 1:  # an empty column is a missing column
            refusals.append(f"Column {_q(c)} is empty in all {len(X):,} rows; the model was trained with its values "
                            "and would score every row with the same stand-in. Fill it in.")
            continue
        if len(blank) and (numeric_columns is None or c in cats or c in numeric_columns):
            notes.append(_blank_note(c, blank, how, entry.get("missing")))
    if refusals:
        more = f" ({len(refusals) - 1} more column(s) like it)" if len(refusals) > 1 else ""
        raise FairDashError(refusals[0] + more)
    drift = drift_table(X, schema, cats)
    drifted = drift_notes(drift, schema, far)
    # a column that drifted says so in one line (its far rows with it); the far note stands where none is recorded
    said = {far_notes[c] for c in drifted if c in far_notes}
    notes = [n for n in notes if n not in said] + list(drifted.values())
    return Checked(X, notes, drift)


def _checked_shape(df, feature_columns) -> list:
    """The feature columns as a list, once ``df`` is a table with rows that holds each of them once; else the
    one line that refuses it."""
    if not isinstance(df, pd.DataFrame):
        raise FairDashError("A model needs a table (DataFrame) with the training columns.")
    if not len(df):
        raise FairDashError("The table has no rows to score.")
    feature_columns = list(feature_columns)
    problem = _missing_columns(df, feature_columns)
    if problem:
        raise FairDashError(problem)
    repeated = [c for c in feature_columns if isinstance(df.loc[:, c], pd.DataFrame)]
    if repeated:
        raise FairDashError(f"The table has {df.loc[:, repeated[0]].shape[1]} columns named {_q(repeated[0])}; the "
                            "model cannot tell which one it was trained on. Keep one.")
    return feature_columns


def _far_outside(col: pd.Series, lo, hi) -> tuple[int, str] | None:
    """A number column's rows far outside the training range ``lo`` to ``hi``: how many, and the words that show
    them (``first: 900, rows 3, 7, ...; other units?``, said in the far note and in the column's drift line);
    ``None`` where none are, or the record has no range."""
    if lo is None or hi is None:
        return None
    margin = FAR * (hi - lo)
    far = ((col < lo - margin) | (col > hi + margin)).to_numpy()
    out = col.index[far]
    if not len(out):
        return None
    return len(out), f"first: {col.to_numpy()[far][0]:g}, {_rows(out)}; other units?"


def _far_note(c, n: int, lo, hi, detail: str) -> str:
    """The note on a column's ``n`` rows far outside the training range (``detail``: :func:`_far_outside`'s)."""
    return (f"Column {_q(c)}: {n:,} row(s) lie far outside the training range {lo:g} to {hi:g} ({detail}); the "
            "model extrapolates for them.")


def _blank_note(c, blank, how: str, train_missing) -> str:
    """The note on a column's rows without a value: how they were scored and how many training had."""
    had = "" if train_missing is None else ("training had none; " if train_missing == 0
                                            else f"training had {train_missing:,}; ")
    return f"Column {_q(c)}: {len(blank):,} row(s) have no value; they were scored {how} ({had}{_rows(blank)})."


def _number_column(col: pd.Series, c):
    """A number column as floats, or the one line that refuses it (text that is no number, or inf)."""
    if pd.api.types.is_bool_dtype(col):
        col = col.astype(float)
    if not pd.api.types.is_numeric_dtype(col):
        raw = col.astype(object)
        stripped = raw.map(lambda v: v.strip() if isinstance(v, str) else v)
        blank = stripped.isna() | (stripped == "")
        num = pd.to_numeric(stripped.where(~blank, np.nan), errors="coerce")
        wrong = (~blank & num.isna()).to_numpy()
        bad = col.index[wrong]
        if len(bad):
            return col, (f"Column {_q(c)} held numbers in training, but {len(bad):,} of {len(col):,} row(s) hold text "
                         f"(first: {_q(raw.to_numpy()[wrong][0])}, {_rows(bad)}); the model cannot score them. Correct "
                         "or remove them.")
        col = num
    col = col.astype(float)
    inf = col.index[np.isinf(col.to_numpy())]
    if len(inf):
        return col, (f"Column {_q(c)}: {len(inf):,} row(s) hold an infinite value ({_rows(inf)}); the model cannot "
                     "score them. Correct or remove them.")
    return col, None


def _text_column(col: pd.Series, c, known):
    """A text column as the text training saw (``3.0`` read as the ``3`` seen in training), and the one
    warning line for categories never seen in training."""
    text = _text(col)
    if not known:
        return text, None
    seen = text.dropna()
    unseen = seen[~seen.isin(known)]
    if len(unseen):  # the same number written another way is the same category
        alt = {v: _whole_alternative(v) for v in unseen.unique()}
        alt = {v: a for v, a in alt.items() if a is not None and a in known}
        if alt:
            text = text.replace(alt)
            seen = text.dropna()
            unseen = seen[~seen.isin(known)]
    if not len(unseen):
        return text, None
    counts = unseen.value_counts()
    shown = ", ".join(_q(v) for v in counts.index[:3]) + (" ..." if len(counts) > 3 else "")
    return text, (f"Column {_q(c)}: {len(unseen):,} row(s) hold {len(counts):,} value(s) never seen in training "
                  f"({shown}), at {_rows(unseen.index)}; the model scores them as it scores rare categories.")


def check_groups(df: pd.DataFrame, spec, group_names, s_values) -> list:
    """For a model that decides with s: refuse a table whose s it cannot read (no column, blank values, a
    value of no group), and a warning line for a value of s never seen in training that falls in group 0
    ("every other value"). ``s_values``: the training values of s (``None``: unknown, a file written
    before the contract)."""
    cols = [c for c in (spec.s_column, spec.s_with) if c is not None]
    missing = [c for c in cols if c not in df.columns]
    if missing:
        raise FairDashError(f"This model decides with s: the table needs the sensitive attribute column "
                            f"{_q(missing[0])} to decide for its {len(df):,} rows, and has none.")
    blank = df.index[df[cols].isna().any(axis=1).to_numpy()]
    if len(blank):
        raise FairDashError(f"This model decides with s: {len(blank):,} row(s) have no value in "
                            f"{' or '.join(map(_q, cols))} ({_rows(blank)}), so it cannot decide for them.")
    if spec.s_threshold is not None:
        wrong = pd.to_numeric(df[spec.s_column], errors="coerce").isna().to_numpy()
        bad = df.index[wrong]
        if len(bad):
            raise FairDashError(f"This model decides with s by a threshold on {_q(spec.s_column)}, but {len(bad):,} "
                                f"row(s) hold no number there (first: {_q(df[spec.s_column].to_numpy()[wrong][0])}, "
                                f"{_rows(bad)}).")
        return []

    text = values_as_text(df[spec.s_column])
    if spec.s_multi or spec.s_with is not None:
        if spec.s_with is not None:
            text = text + " × " + values_as_text(df[spec.s_with])

        unseen = text[~text.isin(set(group_index(spec, group_names)))]
        if len(unseen) and not spec.group_labels:
            counts = unseen.value_counts()
            raise FairDashError(f"This model decides with s, and {len(unseen):,} row(s) hold {len(counts):,} value(s) "
                                f"of {_q(spec.s_column)} never seen in training (first: {_q(counts.index[0])}, "
                                f"{_rows(unseen.index)}); it has no rule for them.")
        return []
    if not s_values:
        return []
    unseen = text[~text.isin(set(s_values))]
    if not len(unseen):
        return []
    counts = unseen.value_counts()
    shown = ", ".join(_q(v) for v in counts.index[:3]) + (" ..." if len(counts) > 3 else "")
    if len(unseen) == len(text):  # nothing matches: another coding of s (upper case, codes for words...)
        raise FairDashError(f"This model decides with s, and none of the table's values of {_q(spec.s_column)} was "
                            f"seen in training ({shown} in {len(text):,} rows; training had "
                            f"{', '.join(map(_q, list(s_values)[:4]))}); recode the column as in training.")
    return [f"Column {_q(spec.s_column)} (s): {len(unseen):,} row(s) hold {len(counts):,} value(s) never seen in "
            f"training ({shown}), at {_rows(unseen.index)}; the model decides for them as for group "
            f"{_q(group_names[0])} (every value not chosen as group 1)."]


# --------------------------------------------------------------------------------------------------
# What a trained model and a model file share
# --------------------------------------------------------------------------------------------------
@dataclass
class Scores:
    """A scored table: the probability of the positive label, the decisions, and the warning lines."""

    probability: np.ndarray
    decision: np.ndarray
    notes: list
    drift: pd.DataFrame = field(default_factory=pd.DataFrame)  # per feature against training (files.drift)


class ScoresRawTables:
    """What a fitted model with its preprocessing offers for a raw table (a mixin of the trained model of
    :mod:`fairdash.work.experiments` and the loaded model file of :mod:`fairdash.files.export`): it needs the
    attributes ``estimator``, ``preprocessor``, ``feature_columns``, ``categorical_features``, ``spec``
    and ``group_names``, and uses ``schema`` and ``decision`` where it has them."""

    @property
    def transition_table(self):
        return getattr(self.estimator, "transition_table_", None)

    @property
    def decides_with_s(self) -> bool:
        return bool(getattr(getattr(self, "decision", None), "needs_s", False) or predicts_with_s(self.estimator))

    def scoring_schema(self) -> dict:
        schema = getattr(self, "schema", None)
        return schema or schema_of_old_file(self.preprocessor, self.feature_columns, self.categorical_features)

    def check_table(self, df: pd.DataFrame) -> Checked:
        """The comparison with the training table (:func:`check_table`, and :func:`check_groups` for a
        model that decides with s): refuses in one line, or returns the table ready with its warnings."""

        plain = self.preprocessor if isinstance(self.preprocessor, PlainPreprocessor) else None
        schema = self.scoring_schema()
        # the repairs the training table had (percentages, thousands separators): the same person, the same decision
        cols = [c for c in self.feature_columns if c in df.columns]
        fixed, repairs = clean_table(df[cols], infinite=False)
        if repairs:
            df = df.assign(**{c: fixed[c] for c in cols})
        checked = check_table(df, self.feature_columns, self.categorical_features, known_categories(self.preprocessor),
                              schema, None if plain is None else {n["column"] for n in plain.numeric})
        checked.notes[:0] = repairs
        if self.decides_with_s:
            s_values = schema.get("s_values")
            if s_values is None:
                s_values = _values_in_names(self.spec, self.group_names)
            checked.notes.extend(check_groups(df, self.spec, self.group_names, s_values))
        decision = getattr(self, "decision", None) or FittedDecision()
        if getattr(self.estimator, "row_draws_", True) is False or (any(decision.ties) and not decision.row_draws):
            checked.notes.append(DRAWN_BY_POSITION)
        return checked

    def scoring_notes(self, df: pd.DataFrame) -> list[str]:
        """The warning lines of the comparison (refusals raise)."""
        return self.check_table(df).notes

    def _matrix(self, checked: Checked) -> np.ndarray:
        return np.asarray(self.preprocessor.transform(checked.X), dtype=np.float64)

    def transform(self, df: pd.DataFrame) -> np.ndarray:
        """The table's feature columns, compared with training and preprocessed as in training (``s`` is
        not needed unless the model was given it as a feature)."""
        checked = self.check_table(df)
        _warn(checked.notes)
        return self._matrix(checked)

    def group_codes(self, df: pd.DataFrame) -> np.ndarray:
        """Each row's group code, read from the table's sensitive attribute as the task built them (for a
        model that decides with s)."""

        return group_codes(df, self.spec, self.group_names)

    def score(self, df: pd.DataFrame) -> Scores:
        """Probabilities and decisions (by the model's decision rule) after one comparison, with its warning
        lines returned rather than issued."""

        checked = self.check_table(df)
        X = self._matrix(checked)
        s = self.group_codes(df) if self.decides_with_s else None
        est = self.estimator
        decision = getattr(self, "decision", None) or FittedDecision()
        return Scores(positive_scores(est, X, s), np.asarray(decision.decide(est, X, s)), checked.notes, checked.drift)

    def predict_proba(self, df: pd.DataFrame) -> np.ndarray:
        checked = self.check_table(df)
        _warn(checked.notes)
        X = self._matrix(checked)

        if predicts_with_s(self.estimator):
            return np.asarray(self.estimator.predict_proba(X, s=self.group_codes(df)))
        return np.asarray(self.estimator.predict_proba(X))

    def predict(self, df: pd.DataFrame) -> np.ndarray:
        """Decisions for a raw table by the model's decision rule (``decision``; the paper's rule when it
        has none). A rule that decides with s reads the groups from the table's sensitive attribute."""

        checked = self.check_table(df)
        _warn(checked.notes)
        decision = getattr(self, "decision", None) or FittedDecision()
        s = self.group_codes(df) if self.decides_with_s else None
        return decision.decide(self.estimator, self._matrix(checked), s)


def _values_in_names(spec, group_names):
    """The values of s a two-group model file written before the contract was trained on, read from its
    group names (``Female`` / ``Male``; ``None`` where a name lists only the first few: ``a, b, c ...``)."""
    if spec.s_multi or spec.s_with is not None or spec.s_threshold is not None or spec.group_labels:
        return None
    names = [str(n) for n in group_names]
    if any(n.endswith(" ...") or n == "(none)" for n in names):
        return None
    prefix = f"{spec.s_column} = "
    return [v for n in names for v in (n[len(prefix):] if n.startswith(prefix) else n).split(", ")]


DRAWN_BY_POSITION = ("This model file was written before randomised decisions were drawn per person: a row's "
                     "decision still depends on its position in the table, as it did. Train the model again for "
                     "decisions that are the same for the same person in any file.")


def _warn(notes) -> None:
    for note in notes:
        warnings.warn(note, ScoringWarning, stacklevel=3)
