"""New data audited with a run's model (issue 36, item 3): the dashboard's "Score new data" page scores an
uploaded table exactly as ``fairdash predict`` scores a file, and reads the decisions per group against the
run's target.

- :func:`score_table`: the scoring contract (:mod:`fairdash.files.scoring`) on the table, as the command line's
  ``predict`` runs it: the table's read notes and repairs, then the model's ``score`` (a refusal raises
  :class:`~fairdash.errors.FairDashError`), and the table with its two new columns, ``probability`` and
  ``prediction`` (or the first free ``probability_k``/``prediction_k`` pair, :func:`output_columns`);
  :func:`decisions_csv` writes it as ``predict`` writes its ``--out``.
- :func:`row_groups` and :func:`row_labels`: each row's group and label read from the new table as the task
  read the training table (:func:`fairdash.data.task.group_codes`); a row whose group or label cannot be read
  is left out of the rates (``-1``), and one sentence says how many and why.
- :func:`rates_per_group`: the decisions' positive rate per group against each group's target, and, where
  the table has labels, the error rates of the metric table (:func:`fairdash.evaluation.metrics.group_metrics`);
  :func:`shown_rates` writes them as text ("n/a" where a group has no row to measure on);
  :func:`as_results` gives them as one results row, which the Compare page's figures draw.

Plain Python: no Streamlit here, and nothing is written to disk.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

from ..data.profile import values_as_text
from ..data.reading.repairs import clean_table
from ..data.task import group_codes, group_index
from ..errors import FairDashError, shorten
from ..evaluation.calibration import calibration_errors, calibration_intervals
from ..evaluation.intervals import wilson_interval
from ..evaluation.metric_table import EVAL, INTERVAL_BOUNDS, POP, TRAIN, column_of, share
from ..evaluation.metrics import group_metrics
from ..targeting.criteria import Criterion
from .safe_csv import results_csv

NOT_PLACED = -1  # a row whose group (or label) the new table does not say
ERROR_RATES = (("tpr", "TPR"), ("fpr", "FPR"), ("fnr", "FNR"), ("acc", "accuracy"))


def _q(name) -> str:
    return repr(shorten(str(name), 60))


def output_columns(columns) -> tuple[str, str]:
    """The names of the two new columns, as ``fairdash predict`` names them: ``probability`` and ``prediction``,
    or, where the table already has either (in any case, with any spaces), the first ``probability_k`` /
    ``prediction_k`` pair it has neither of."""
    taken = {str(c).strip().casefold() for c in columns}
    k = 1
    while True:
        pair = ("probability", "prediction") if k == 1 else (f"probability_{k}", f"prediction_{k}")
        if not taken & set(pair):
            return pair
        k += 1


@dataclass
class Scored:
    """A table scored by a model: the table with its probability and prediction columns (``decisions``), the
    names of those columns, and the warning lines in the order ``fairdash predict`` prints them."""

    decisions: pd.DataFrame
    probability: str
    prediction: str
    notes: list = field(default_factory=list)
    cleaned: pd.DataFrame | None = None  # the table as it was scored (its repairs made)
    drift: pd.DataFrame = field(default_factory=pd.DataFrame)  # per feature against training (files.drift)

    @property
    def decided(self) -> np.ndarray:
        return self.decisions[self.prediction].to_numpy().astype(int)


def score_table(model, df: pd.DataFrame) -> Scored:
    """``df`` scored by ``model`` (a trained model or a loaded model file) as ``fairdash predict`` scores it: the
    table's repairs first (:func:`fairdash.data.reading.repairs.clean_table`), then the scoring contract, which
    refuses in one line or scores with warnings."""
    if not isinstance(df, pd.DataFrame) or not len(df.columns):
        raise FairDashError("The file holds no table: no column names were found.")
    cleaned, repairs = clean_table(df)
    scores = model.score(cleaned)
    notes = [*df.attrs.get("read_notes", ()), *repairs, *scores.notes]
    prob_col, pred_col = output_columns(df.columns)
    if prob_col != "probability":
        notes.append(f"The table already has a 'probability' or 'prediction' column; the scores are written to "
                     f"{prob_col!r} and {pred_col!r} instead, and the table's own columns are kept as they are.")
    res = df.copy()
    res[prob_col] = scores.probability
    res[pred_col] = scores.decision  # by the model's decision rule
    return Scored(res, prob_col, pred_col, notes, cleaned, scores.drift)


def decisions_csv(scored: Scored) -> str:
    """The scored table as CSV text, byte for byte what ``fairdash predict --out`` writes for the same table."""
    return results_csv(scored.decisions)


# --------------------------------------------------------------------------------------------------
# Who is who in the new table
# --------------------------------------------------------------------------------------------------
def _codes_where(df: pd.DataFrame, ok: np.ndarray, spec, group_names) -> np.ndarray:
    codes = np.full(len(df), NOT_PLACED, dtype=int)
    if ok.any():
        codes[ok] = group_codes(df.loc[ok], spec, group_names)
    return codes


def row_groups(df: pd.DataFrame, spec, group_names, s_values=None) -> tuple[np.ndarray | None, list[str]]:
    """Each row's group code (``-1`` where the table does not say it) as the task coded the training rows, and one
    sentence per kind of row left out or placed by default. ``None`` where the table lacks the sensitive
    attribute's column. ``s_values``: the values of s seen in training (``None``: unknown)."""
    cols = [c for c in (spec.s_column, spec.s_with) if c is not None]
    missing = [c for c in cols if c not in df.columns]
    if missing:
        return None, [f"The table has no column {_q(missing[0])} (the sensitive attribute), so its decisions cannot "
                      "be split by group; they can still be downloaded."]
    notes = []
    ok = ~df[cols].isna().any(axis=1).to_numpy()
    if not ok.all():
        notes.append(f"{int((~ok).sum()):,} row(s) have no value in {' or '.join(map(_q, cols))}; they are scored "
                     "but left out of the rates per group.")
    if spec.s_threshold is not None:
        number = pd.to_numeric(df[spec.s_column], errors="coerce").notna().to_numpy()
        if (ok & ~number).any():
            notes.append(f"{int((ok & ~number).sum()):,} row(s) hold no number in {_q(spec.s_column)}, whose groups "
                         "are split by a threshold; they are left out of the rates per group.")
        return _codes_where(df, ok & number, spec, group_names), notes
    text = values_as_text(df[spec.s_column])
    if spec.s_multi or spec.s_with is not None:
        if spec.s_with is not None:
            text = text + " × " + values_as_text(df[spec.s_with])
        known = text.isin(set(group_index(spec, group_names))).to_numpy()
        unseen = ok & ~known
        if unseen.any():
            counts = text[unseen].value_counts()
            notes.append(f"{int(unseen.sum()):,} row(s) hold {len(counts):,} value(s) of {_q(spec.s_column)} never "
                         f"seen in training (first: {_q(counts.index[0])}): a group the model never saw, left out of "
                         "the rates per group.")
        if spec.group_labels:
            index = group_index(spec, group_names)
            codes = np.where(ok & known, text.map(index).fillna(NOT_PLACED).to_numpy(), NOT_PLACED)
            return codes.astype(int), notes
        return _codes_where(df, ok & known, spec, group_names), notes
    if s_values:
        unseen = ok & ~text.isin(set(map(str, s_values))).to_numpy()
        if unseen.any():
            counts = text[unseen].value_counts()
            notes.append(f"{int(unseen.sum()):,} row(s) hold {len(counts):,} value(s) of {_q(spec.s_column)} never "
                         f"seen in training (first: {_q(counts.index[0])}): counted in group {_q(group_names[0])}, "
                         "every value not chosen as group 1.")
    return _codes_where(df, ok, spec, group_names), notes


def row_labels(df: pd.DataFrame, spec) -> tuple[np.ndarray | None, str]:
    """Each row's label (1 positive, 0 not, ``-1`` missing) read as the task read the training labels, and a
    sentence where some rows have none; ``None`` (and why) where the table has no label column."""
    y = spec.y_column
    if y not in df.columns:
        return None, f"The table has no column {_q(y)} (the label), so only the positive rates can be shown."
    as_s = replace(spec, s_column=y, s_with=None, s_multi=False, s1_values=tuple(spec.y1_values),
                   s_threshold=spec.y_threshold, group_labels=())
    ok = df[y].notna().to_numpy()
    if spec.y_threshold is not None:
        ok &= pd.to_numeric(df[y], errors="coerce").notna().to_numpy()
    labels = _codes_where(df, ok, as_s, ())
    note = (f"{int((~ok).sum()):,} row(s) have no usable label in {_q(y)}; they are left out of the error rates."
            if not ok.all() else "")
    return labels, note


# --------------------------------------------------------------------------------------------------
# The rates
# --------------------------------------------------------------------------------------------------
def _gap(rate: float, target: float) -> float:
    return rate - target if np.isfinite(rate) and np.isfinite(target) else float("nan")


def rates_per_group(decided, groups, labels, group_names, targets, criterion: Criterion, scores=None) -> pd.DataFrame:
    """One row per group: its rows, positive decisions, positive rate, its target and the gap (the criterion's
    rate minus the target), and where ``labels`` is given its labelled rows, TPR, FPR, FNR and accuracy
    (NaN where a group has no row to measure a rate on), and with ``scores`` (the model's probabilities) its
    calibration error (:mod:`fairdash.evaluation.calibration`), each with its 95% interval. ``targets``: each
    group's target (NaN: none)."""
    p = np.asarray(decided).astype(int)
    s = np.asarray(groups).astype(int)
    on_positives = criterion.positives_only  # its rate is a TPR: measured on labelled rows
    labelled = None if labels is None else (np.asarray(labels).astype(int) != NOT_PLACED) & (s != NOT_PLACED)
    measured = {}
    if labelled is not None and labelled.any():
        measured = group_metrics(np.asarray(labels)[labelled], p[labelled], s[labelled], len(group_names))
        if scores is not None:
            scores = np.asarray(scores, dtype=float)
            scored = labelled & np.isfinite(scores)
            measured.update(_calibration(scores[scored], np.asarray(labels)[scored], s[scored], len(group_names)))
    rows = []
    for j, name in enumerate(group_names):
        in_j = s == j
        target = float(targets[j]) if j < len(targets) and targets[j] is not None else float("nan")
        row = {"group": str(name), "rows": int(in_j.sum()), "positive decisions": int((p[in_j] == 1).sum()),
               "positive rate": share(p == 1, in_j), "target": target}
        row.update(_bounds("positive rate", row["positive decisions"], row["rows"]))
        if labelled is not None:
            row["labelled rows"] = int((labelled & in_j).sum())
            row.update({words: float(measured.get(column_of(key, EVAL, j), np.nan)) for key, words in ERROR_RATES})
            y = np.asarray(labels).astype(int)
            for words, event, among in _COUNTED:
                rows_of = labelled & in_j & among(y, p)
                row.update(_bounds(words, int((rows_of & event(y, p)).sum()), int(rows_of.sum())))
            if scores is not None:
                row.update({CALIBRATION + b: float(measured.get(column_of("cal_error", EVAL, j) + k, np.nan))
                            for b, k in zip(("", *BOUNDS), ("", *INTERVAL_BOUNDS))})
        own = "TPR" if on_positives else "positive rate"
        row["gap to target"] = _gap(row.get(own, float("nan")), target)
        for b in BOUNDS:  # the target is held fixed: the gap's interval is the rate's, less the target
            row["gap to target" + b] = _gap(row.get(own + b, float("nan")), target)
        rows.append(row)
    frame = pd.DataFrame(rows)
    lead = ["group", "rows", "positive decisions", "positive rate", "target", "gap to target"]
    return frame[lead + [c for c in frame.columns if c not in lead]]


BOUNDS = (" lo", " hi")  # a rate's 95% interval: "<rate> lo", "<rate> hi" (Wilson's, from its counts)
CALIBRATION = "calibration error"  # the binned gap of score and outcome, with its interval (evaluation.calibration)
# the error rates as counts of the labelled rows: (words, the event, the rows it is counted among)
_COUNTED = (("TPR", lambda y, p: p == 1, lambda y, p: y == 1), ("FPR", lambda y, p: p == 1, lambda y, p: y == 0),
            ("FNR", lambda y, p: p == 0, lambda y, p: y == 1), ("accuracy", lambda y, p: p == y, lambda y, p: y >= 0))


def _calibration(scores, y, s, n_groups: int) -> dict:
    return {**calibration_errors(scores, y, s, n_groups), **calibration_intervals(scores, y, s, n_groups)}


def _bounds(words: str, k: int, n: int) -> dict:
    """A rate's 95% interval from its counts (Wilson's: a group of 33 rows still gets an honest width)."""
    lo, hi = wilson_interval(k, n)
    return {words + BOUNDS[0]: float(lo), words + BOUNDS[1]: float(hi)}


def shown_rates(rates: pd.DataFrame) -> pd.DataFrame:
    """The rates as text for a screen: three decimals with the 95% interval beside (``0.412 (0.350 to 0.476)``), a
    gap with its sign, and "n/a" where a rate has no row to be measured on (never NaN)."""
    out = rates[[c for c in rates.columns if not c.endswith(BOUNDS)]].copy()
    for c in out.columns:
        if not pd.api.types.is_float_dtype(out[c]):
            continue
        form = "{:+.3f}" if c == "gap to target" else "{:.3f}"
        bounded = all(c + b in rates.columns for b in BOUNDS)
        cells = []
        for i, v in enumerate(out[c]):
            lo, hi = (float(rates[c + b].iloc[i]) for b in BOUNDS) if bounded else (np.nan, np.nan)
            cells.append("n/a" if not np.isfinite(v) else form.format(v) + (
                f" ({form.format(lo)} to {form.format(hi)})" if np.isfinite(lo) and np.isfinite(hi) else ""))
        out[c] = cells
    return out


def rates_sentence(rates: pd.DataFrame, criterion: Criterion) -> str:
    """Each group's rate against its target in one line: ``Female: positive rate 0.412 against target 0.400
    (+0.012), 1,210 rows``; a criterion on the true positive rate says that one against the target beside the
    positive rate (where the table has labels); "n/a" where a group has no row to measure on."""
    def number(v) -> str:
        return f"{v:.3f}" if np.isfinite(v) else "n/a"

    parts = []
    for _, r in rates.iterrows():
        t, g = r["target"], r["gap to target"]
        against = (f" against target {t:.3f}" + (f" ({g:+.3f})" if np.isfinite(g) else "")) if np.isfinite(t) else ""
        ci = (f" (95% interval {r['positive rate lo']:.3f} to {r['positive rate hi']:.3f})"
              if "positive rate lo" in r and np.isfinite(r["positive rate lo"]) else "")
        said = f"{r['group']}: positive rate {number(r['positive rate'])}{ci}"
        if not criterion.positives_only:
            said += against
        elif "TPR" in rates.columns:
            said += f", {criterion.rate_name} {number(r['TPR'])}{against}"
        parts.append(said + f", {r['rows']:,} rows")
    return "; ".join(parts)


def as_results(rates: pd.DataFrame, label: str, target_rate) -> pd.DataFrame:
    """The rates as one results row (the population's columns of the positive rate, the TPR and the gap, and the
    targets, named by the metric table), so that the Compare page's figures draw the new rows as they draw a run's
    population."""
    row = {"model": label, "label": label, "target_rate": np.nan if target_rate is None else float(target_rate),
           "seed": 0}
    for j, r in rates.reset_index(drop=True).iterrows():
        row[column_of("pr", POP, j)] = row[column_of("pr", EVAL, j)] = r["positive rate"]
        if "TPR" in rates.columns:
            row[column_of("tpr", POP, j)] = row[column_of("tpr", EVAL, j)] = r["TPR"]
        row[column_of("target", TRAIN, j)], row[column_of("gap", POP, j)] = r["target"], r["gap to target"]
    return pd.DataFrame([row])


@dataclass
class Audit:
    """A new table audited with a model: its decisions (:class:`Scored`), the rates per group (``None`` where the
    table does not say who is in which group) and the sentences about rows left out of them."""

    scored: Scored
    rates: pd.DataFrame | None
    notes: list = field(default_factory=list)
    labelled: bool = False


def audit_table(model, df: pd.DataFrame, targets, criterion: Criterion) -> Audit:
    """``df`` scored by ``model`` (:func:`score_table`; a refusal raises) and its decisions per group against
    ``targets`` (each group's target, the run's), with the error rates where the table has the label column."""
    scored = score_table(model, df)
    table = scored.cleaned
    # (a model that decides with s says of a value of s never seen already, in the contract's warnings)
    s_values = None if model.decides_with_s else model.scoring_schema().get("s_values")
    groups, notes = row_groups(table, model.spec, model.group_names, s_values)
    if groups is None:
        return Audit(scored, None, notes)
    labels, label_note = row_labels(table, model.spec)
    notes += [label_note] if label_note else []
    rates = rates_per_group(scored.decided, groups, labels, model.group_names, targets, criterion,
                            scores=scored.decisions[scored.probability].to_numpy(dtype=float))
    return Audit(scored, rates, notes, labels is not None)
