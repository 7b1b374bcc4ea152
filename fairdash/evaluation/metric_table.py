"""The one table of a results row: every column FairDash measures or records, where it was measured, whether
it is per group or a summary, how it is computed, how it is shown and which criterion it serves.

The evaluation (:mod:`fairdash.evaluation.metrics`, :func:`fairdash.work.measure.evaluate`, the results' column
order), the results file (:mod:`fairdash.files.results_file`: which columns carry ``bal_``), the figures and tables
(:func:`fairdash.figures.plots.result_columns`), the report (which reads those) and ``train --json`` (which names its
figures as the results file does) read it; ``tests/evaluation/test_metric_table.py`` checks that every listed column is
produced and every produced column is listed. A row carries how its number is computed (``measure``: a function of
the labels and the decisions of the rows, or an :class:`Across` the groups), so
:func:`fairdash.evaluation.metrics.group_metrics` is one loop over the table, and a metric measured that way is one
row here and nothing else (FPR, FNR and precision per group, and their differences, were added so).

Names. A measured column is named by its set: on the paper's evaluation rows (``eval``: the balanced test set for
demographic parity, the ordinary test set for equality of opportunity) in memory without a prefix (``pr_0``),
in the results file and every other output with ``bal_`` (``bal_pr_0``: empty where the evaluation rows are
the ordinary test set, whose numbers are the population's); on the population (``pop``: the ordinary test set
as it comes) ``pop_`` everywhere. The gaps to the target carry their prefix in memory too (``prefixed``). A few
columns were written unprefixed by results format 2 (``n``, ``n_<g>``, ``tnr_diff``; ``in_file``) and keep that
name so older and newer files read alike. Per-group columns are ``<name>_<g>``, ``g`` the group's number.
"""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Callable

import numpy as np

from ..targeting.criteria import DP, EO, Criterion

EVAL, POP, TRAIN, RUN = "eval", "pop", "train", "run"  # where a column is measured (RUN: what was asked, how it ran)
SETS = {EVAL: "the paper's evaluation rows (balanced test set for dp, test set for eo)",
        POP: "the population (the ordinary test set)", TRAIN: "the training split",
        RUN: "not measured: what the run asked for and how it ran"}
# the prefix of a set's columns: the population's everywhere, the evaluation rows' in the results file (and the
# gaps' in memory too); every other module names a prefixed column through the table (``column_of``,
# ``Metric.column``, ``prefix_of``), never by writing the prefix
POP_PREFIX, EVAL_PREFIX = "pop_", "bal_"
PREFIXES = {POP: POP_PREFIX, EVAL: EVAL_PREFIX}


def prefix_of(where: str) -> str:
    """The prefix a set's columns carry: ``"pop_"`` on the population, ``"bal_"`` on the evaluation rows (as the
    results file and the gaps name them), ``""`` on the others."""
    return PREFIXES.get(where, "")


def unprefixed(column: str, where: str) -> str | None:
    """A column's name without its set's prefix (``pop_pr_0`` -> ``pr_0`` for ``POP``), or ``None`` where it does
    not carry that set's prefix."""
    pre = prefix_of(where)
    return column[len(pre):] if pre and str(column).startswith(pre) else None


def share(event, among) -> float:
    """The share of the rows where ``among`` holds on which ``event`` holds too (boolean arrays); NaN where
    ``among`` holds on no row: a rate with nothing to measure it on is undefined, not 0."""
    den = int(np.count_nonzero(among))
    return float(np.count_nonzero(event & among) / den) if den else float("nan")


# The four cells of (label, decision) a group's rows fall in, in this order: every metric measured from labels
# and decisions is a function of a group's counts in them, so a bootstrap resamples those counts
# (``intervals``), not the rows.
CELL_Y = np.array([0, 0, 1, 1])
CELL_P = np.array([0, 1, 0, 1])


def cell_counts(y, p) -> np.ndarray:
    """How many of the rows fall in each (label, decision) cell (``CELL_Y``, ``CELL_P``)."""
    return np.bincount(2 * np.asarray(y, dtype=np.int64) + np.asarray(p, dtype=np.int64), minlength=4)[:4]


@dataclass(frozen=True)
class Share:
    """A rate, as MetricFrame computes it from labels ``y`` and decisions ``p``: the share of the rows where
    ``event(y, p)`` holds among those where ``among(y, p)`` holds (NaN where none does)."""
    event: Callable
    among: Callable = lambda y, p: np.ones(np.shape(y), dtype=bool)

    def value(self, y, p) -> float:
        return share(self.event(y, p), self.among(y, p))

    def cells(self) -> tuple[np.ndarray, np.ndarray]:
        """Which of the four (label, decision) cells (``CELL_Y``, ``CELL_P``) it counts above and below the line:
        the rate of a group is ``counts[event] / counts[among]`` (``intervals`` draws those counts)."""
        among = self.among(CELL_Y, CELL_P)
        return self.event(CELL_Y, CELL_P) & among, among


@dataclass(frozen=True)
class Count:
    """How many rows (``among``: of those in some cells, ``Share``'s form, e.g. the positives)."""

    among: object = None

    def value(self, y, p) -> int:
        return int(len(y)) if self.among is None else int(np.sum(self.among(np.asarray(y), np.asarray(p))))


def _values(values) -> np.ndarray:
    """Groups' values as an array ``(..., G)`` with the undefined ones NaN."""
    return np.asarray(values, dtype=float)


def min_over_max(values):
    """Fairness ratio: smallest over largest group value (<= 1; 1 is fair), over the last axis (a list of the
    groups' values gives a number). Where every group's value is 0 the ratio is 0/0, which is not parity: it
    is empty (NaN), and ``metrics.one_class_note`` says why; so is it with fewer than two defined values."""
    v = _values(values)
    ok = np.isfinite(v)
    lo = np.where(ok, v, np.inf).min(-1)
    hi = np.where(ok, v, -np.inf).max(-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = np.where((ok.sum(-1) >= 2) & (hi > 0), lo / np.where(hi > 0, hi, 1.0), np.nan)
    return float(out) if out.ndim == 0 else out


def max_minus_min(values):
    """The difference between groups: largest minus smallest group value (NaN with fewer than two defined
    values), over the last axis."""
    v = _values(values)
    ok = np.isfinite(v)
    out = np.where(ok.sum(-1) >= 2, np.where(ok, v, -np.inf).max(-1) - np.where(ok, v, np.inf).min(-1), np.nan)
    return float(out) if out.ndim == 0 else out


def first_over_second(values):
    """Group 0's value over group 1's (the paper's ``PR s=0 / PR s=1``); NaN where group 1's is 0 or undefined."""
    v = _values(values)
    a, b = v[..., 0], v[..., 1] if v.shape[-1] > 1 else np.full(v.shape[:-1], np.nan)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = np.where(np.isfinite(b) & (b > 0), a / np.where(b > 0, b, 1.0), np.nan)
    return float(out) if out.ndim == 0 else out


@dataclass(frozen=True)
class Across:
    """How a summary over the groups is computed: ``how`` of the groups' values of the per-group metric ``of``,
    in group order. Empty (NaN) where a model gives one class to everyone: then no ratio or difference describes
    a decision (never a parity of 1)."""
    of: str
    how: Callable


SIGNED = ("gap", "tnr_gap", "net_accepted_without_s", "within_group_gap")  # metrics that may fall below 0


@dataclass(frozen=True)
class Metric:
    name: str  # the base name (a per-group column is name_<g>)
    where: tuple  # the sets it is measured on (EVAL, POP, TRAIN, RUN), in the order its columns come
    computed: str  # how: the function that computes it
    label: str = ""  # how shown: a header (a per-group column's header is "<label> s=<g>")
    fmt: str = ".3f"  # how shown: the number's format
    serves: str = ""  # the name of the criterion it serves (``criteria.DP.name``...; "" for every one)
    per_group: bool = False
    prefixed: bool = False  # named with its set's prefix in memory too (bal_/pop_; the gaps)
    summarized: bool = False  # averaged over repeats (mean ± std) in every summary
    lead: bool = False  # in the results' leading column order (the rest follow in the order they are produced)
    in_file: bool = True  # written with bal_ in the results file (False: format 2's unprefixed names, kept)
    names: tuple = ()  # explicit (set, column) names where they are not the rule's (n_eval / n_pop)
    # how ``metrics.group_metrics`` computes it, MetricFrame's way: a :class:`Share` or :class:`Count` of a set's
    # rows (of each group's rows, for a per-group metric) from their labels and decisions, or an :class:`Across`
    # the groups' values; ``None``: measured elsewhere (``computed`` says where)
    measure: Share | Count | Across | None = None
    bounded: bool = False  # has a 95% interval though measured elsewhere (the gaps; see ``interval``)

    @property
    def value_range(self) -> tuple[float, float]:
        """Where its values can lie (an interval is clipped to it): a gap -1 to 1, group 0's rate over group 1's
        0 upwards, every other rate, ratio, difference and worst gap 0 to 1."""
        if self.name in SIGNED:
            return -1.0, 1.0
        if isinstance(self.measure, Across) and self.measure.how is first_over_second:
            return 0.0, float("inf")
        return 0.0, 1.0

    @property
    def interval(self) -> bool:
        """Whether the results carry its 95% interval (``<column>_lo``, ``<column>_hi``: ``intervals``)."""
        return isinstance(self.measure, (Share, Across)) or self.bounded

    def base(self, group: int | None = None) -> str:
        """Its name before a set's prefix: ``<name>_<g>`` for a per-group metric (``gap_1``), else its name."""
        return f"{self.name}_{group}" if self.per_group else self.name

    def column(self, where: str, group: int | None = None, *, file: bool = False) -> str:
        """The column's name on a set (``file``: as the results file and ``train --json`` name it)."""
        own = dict(self.names).get(where)
        base = own or self.base(group)
        if own and self.per_group:
            base = f"{own}_{group}"
        if where == POP and not own:
            return POP_PREFIX + base
        if where == EVAL and (self.prefixed or (file and self.in_file)):
            return EVAL_PREFIX + base
        return base

    def header(self, group: int | None = None, group_names=None) -> str:
        """The column's header: a per-group column named by its group where ``group_names`` are given
        (``PR (Female)``), else by its number (``PR s=0``)."""
        if not self.per_group:
            return self.label
        if group_names is not None and group is not None and group < len(group_names):
            return f"{self.label} ({group_names[group]})"
        return f"{self.label} s={group}"


_G = "metrics.group_metrics"
_E = "measure.evaluate"
_GAPS = "gaps.group_gaps, gaps.tnr_gaps, gaps.cell_gaps"
E, EP = (EVAL,), (EVAL, POP)

# In the results' leading order: what was asked, the worst gaps, then each set's measurements, then how it ran.
METRICS = (
    Metric("model", (RUN,), "the registry's name", "model", lead=True),
    Metric("label", (RUN,), "registry label + units, s and rule suffixes", "model", lead=True),
    Metric("criterion", (RUN,), "TargetSpec.criterion", "criterion", lead=True),
    Metric("sees_s", (RUN,), "TaskSpec.s_as_feature", "sees s", lead=True),
    Metric("decision", (RUN,), "decision.rule_info", "decision rule", lead=True),
    Metric("decides_with_s", (RUN,), "decision.rule_info(...).needs_s", "decides with s", lead=True),
    Metric("rule_reached", (TRAIN,), "decision.check_reached", "rule reached its targets"),
    Metric("rule_note", (TRAIN,), "decision.check_reached", "why not"),
    Metric("converged", (TRAIN,),
           "the estimator's converged_ (its solver reached its tolerance, not its iteration cap)", "fit converged"),
    Metric("target_rate", (RUN,), "the resolved PR_t (model.target_rate_ or TargetSpec.rate_for)", "target PR_t",
           lead=True),
    Metric("target", (RUN,), "TargetSpec.describe", "target", lead=True),
    Metric("seed", (RUN,), "the split's seed", "seed", fmt="d", lead=True),
    Metric("worst_gap", (POP, EVAL), _GAPS, "worst gap", prefixed=True, summarized=True, lead=True, bounded=True),
    Metric("worst_gap_group", (POP, EVAL), "gaps.worst_gap", "worst gap's group", fmt="", prefixed=True, lead=True),
    Metric("moved_away", (POP,), "gaps.mark_moves", "moved away", fmt="", names=((POP, "moved_away"),), lead=True),
    Metric("accuracy", EP, _G, "accuracy", summarized=True, lead=True, measure=Share(lambda y, p: p == y)),
    Metric("n", E, _G, "rows", fmt="d", in_file=False, measure=Count()),
    Metric("pr", EP, _G, "PR", serves=DP.name, per_group=True, summarized=True, lead=True,
           measure=Share(lambda y, p: p == 1)),
    Metric("tpr", EP, _G, "TPR", serves=EO.name, per_group=True, summarized=True, lead=True,
           measure=Share(lambda y, p: p == 1, lambda y, p: y == 1)),
    Metric("tnr", EP, _G, "TNR", per_group=True, summarized=True, lead=True,
           measure=Share(lambda y, p: p == 0, lambda y, p: y == 0)),
    Metric("acc", E, _G, "accuracy", per_group=True, summarized=True, lead=True,
           measure=Share(lambda y, p: p == y)),
    Metric("n", EP, _G, "rows", fmt="d", per_group=True, in_file=False, measure=Count()),
    Metric("n_pos", EP, _G, "positive rows (a TPR's rows)", fmt="d", per_group=True, in_file=False,
           measure=Count(lambda y, p: y == 1)),
    # the error rates an analyst asks for first: who is wrongly flagged (FPR), wrongly passed over (FNR), and how
    # often a positive decision is right (precision)
    Metric("fpr", EP, _G, "FPR", per_group=True, summarized=True,
           measure=Share(lambda y, p: p == 1, lambda y, p: y == 0)),
    Metric("fnr", EP, _G, "FNR", per_group=True, summarized=True,
           measure=Share(lambda y, p: p == 0, lambda y, p: y == 1)),
    Metric("precision", EP, _G, "precision", per_group=True, summarized=True,
           measure=Share(lambda y, p: y == 1, lambda y, p: p == 1)),
    # each group's confusion matrix, counted on the set's rows
    Metric("tp", EP, _G, "true positives", fmt="d", per_group=True, measure=Count(lambda y, p: (y == 1) & (p == 1))),
    Metric("fp", EP, _G, "false positives", fmt="d", per_group=True, measure=Count(lambda y, p: (y == 0) & (p == 1))),
    Metric("tn", EP, _G, "true negatives", fmt="d", per_group=True, measure=Count(lambda y, p: (y == 0) & (p == 0))),
    Metric("fn", EP, _G, "false negatives", fmt="d", per_group=True, measure=Count(lambda y, p: (y == 1) & (p == 0))),
    # is a score of 0.7 a 70% chance of a positive label in every group (from the scores, before any decision)
    Metric("cal_error", EP, "calibration.calibration_errors (interval: calibration.calibration_intervals)",
           "calibration error", per_group=True, summarized=True, bounded=True),
    Metric("cal_error_diff", EP, "calibration.calibration_errors", "calibration error difference", summarized=True),
    Metric("pr_ratio", EP, _G + " (min_over_max)", "PR ratio", serves=DP.name, summarized=True, lead=True,
           measure=Across("pr", min_over_max)),
    Metric("pr_ratio_01", E, _G, "PR s=0 / PR s=1", summarized=True, lead=True,
           measure=Across("pr", first_over_second)),
    Metric("pr_diff", E, _G, "PR difference", summarized=True, lead=True, measure=Across("pr", max_minus_min)),
    Metric("tpr_ratio", EP, _G + " (min_over_max)", "TPR ratio", serves=EO.name, summarized=True, lead=True,
           measure=Across("tpr", min_over_max)),
    Metric("tpr_diff", E, _G, "TPR difference", summarized=True, lead=True, measure=Across("tpr", max_minus_min)),
    Metric("tnr_ratio", E, _G + " (min_over_max)", "TNR ratio", summarized=True, lead=True,
           measure=Across("tnr", min_over_max)),
    Metric("tnr_diff", E, _G, "TNR difference", in_file=False, measure=Across("tnr", max_minus_min)),
    Metric("fpr_diff", EP, _G, "FPR difference", summarized=True, measure=Across("fpr", max_minus_min)),
    Metric("fnr_diff", EP, _G, "FNR difference", summarized=True, measure=Across("fnr", max_minus_min)),
    Metric("precision_diff", EP, _G, "precision difference", summarized=True,
           measure=Across("precision", max_minus_min)),
    Metric("cond_pr_ratio", EP, "metrics.conditional_ratio (worst stratum)", "conditional PR ratio", serves=DP.name,
           summarized=True, lead=True),
    Metric("cond_pr_ratio_mean", EP, "metrics.conditional_ratio (share-weighted mean)", "conditional PR ratio (mean)",
           serves=DP.name),
    Metric("one_class", EP, "metrics.one_class_note", "one class", fmt="", lead=True),
    Metric("ceiling_at_measured", EP, "targets.accuracy_ceiling at the measured rates", "ceiling at its own rates",
           lead=True),
    Metric("ceiling_at_target", EP, "ceiling.ceiling_at_target", "ceiling at PR_t", lead=True),
    Metric("eval_set", (RUN,), "Criterion.eval_set", "evaluated on", fmt="", lead=True),
    Metric("n_eval", EP, "len(rows)", "rows", fmt="d", names=((EVAL, "n_eval"), (POP, "n_pop")), lead=True),
    Metric("target", (TRAIN,), "TargetSpec.rate_targets on the training split", "target", per_group=True),
    Metric("gap", EP, "gaps.group_gaps (rate - target)", "gap", fmt="+.3f", per_group=True, prefixed=True,
           bounded=True),
    Metric("tnr_gap", EP, "gaps.tnr_gaps (explicit TNR targets)", "TNR gap", fmt="+.3f", per_group=True,
           prefixed=True, serves=EO.name),
    Metric("target_gap", (POP,), "mean over groups of |pop_gap_g|", "mean gap", names=((POP, "target_gap"),),
           summarized=True, lead=True),
    Metric("too_good", (RUN,), "measure.TOO_GOOD on accuracy and pop_accuracy", "too good", fmt=""),
    Metric("moved", (POP,), "gaps.mark_moves", "moved", fmt="", per_group=True),
    Metric("with_s_accuracy", (POP,), "matched_price.split_price", "accuracy deciding with s"),
    Metric("blind_accuracy", (POP,), "matched_price.split_price", "accuracy deciding without s"),
    Metric("price_of_blindness", (POP,), "matched_price.split_price", "price of deciding without s",
           names=((POP, "price_of_blindness"),), bounded=True),
    Metric("matched_rate", (TRAIN,), "matched_price.split_price (the blind rule's own rate on the training rows)",
           "rate both rules were matched on", per_group=True),
    Metric("with_s_pr", (POP,), "matched_price.split_price", "PR deciding with s", per_group=True),
    Metric("blind_pr", (POP,), "matched_price.split_price", "PR deciding without s", per_group=True),
    Metric("with_s_rule", (RUN,), "matched_price.split_price", "the rule with s it was measured against", fmt=""),
    Metric("blind_rule", (RUN,), "matched_price.split_prices", "the rule without s it was measured for", fmt=""),
    Metric("price_note", (RUN,), "matched_price.split_prices", "why this split has no price", fmt=""),
    Metric("refused_without_s", (POP,), "who_pays.decided_differently (Wilson's interval)",
           "accepted with s, refused without (share of group)", per_group=True, bounded=True),
    Metric("accepted_without_s", (POP,), "who_pays.decided_differently (Wilson's interval)",
           "refused with s, accepted without (share of group)", per_group=True, bounded=True),
    Metric("net_accepted_without_s", (POP,), "who_pays.decided_differently (Newcombe's paired interval)",
           "net change in acceptances without s (share of group)", fmt="+.3f", per_group=True, bounded=True),
    Metric("leaned_on", (RUN,), "who_pays.leaned_on (JSON: feature, AUC, its interval, pairs; strongest first)",
           "features the rule without s leans on", fmt=""),
    Metric("within_group_gap", (POP,), "who_pays.within_group on the feature leaned on most",
           "within-group gap in acceptance without s (high minus low value)", fmt="+.3f", per_group=True,
           bounded=True),
    Metric("within_group_curve", (RUN,), "who_pays.within_group (JSON: the figure's bands)",
           "within-group acceptance by score band", fmt=""),
    Metric("folded_levels", (RUN,), "preprocess.folded_levels on the split's training rows",
           "features cut by the one-hot cap", fmt=""),
    Metric("majority_accuracy", (POP,), "metrics.flag_below_majority", "majority class's accuracy"),
    Metric("below_majority", (RUN,), "metrics.flag_below_majority", "below the majority class", fmt=""),
    Metric("fit_seconds", (RUN,), "the fit's clock", "fit s", fmt=".2f", lead=True),
    Metric("fitted_at", (RUN,), "progress.utc_now", "fitted at", fmt="", lead=True),
    Metric("device", (RUN,), "device.device_description", "device", fmt="", lead=True),
    Metric("cached", (RUN,), "fit_cache.FitCache", "from the cache", fmt="", lead=True),
)

_BY_COLUMN: dict = {}


@functools.lru_cache(maxsize=None)  # read in loops over rows and groups; the table never changes
def column_of(name: str, where: str = EVAL, group: int | None = None) -> str:
    """The in-memory column of the metric ``name`` on a set (``EVAL``, ``POP``, ``TRAIN``), for ``group`` where the
    metric is per group: ``column_of("pr", POP, 0) == "pop_pr_0"``, ``column_of("gap", EVAL, 1) == "bal_gap_1"``,
    ``column_of("target", TRAIN, 0) == "target_0"``. The figures name the columns they read with it."""
    for m in METRICS:
        if m.name == name and where in m.where and m.per_group == (group is not None):
            return m.column(where, group)
    raise KeyError(f"no metric {name!r} on {where!r}" + (" per group" if group is not None else ""))


def groups_in(columns, name: str = "pr", where: str = EVAL) -> int:
    """How many groups a table measures: the groups ``0, 1, ...`` whose column of the per-group metric
    ``name`` on ``where`` is among ``columns`` (as itself or as a summary's ``_mean``)."""
    have = set(map(str, columns))
    g = 0
    while (c := column_of(name, where, g)) in have or c + MEAN in have:
        g += 1
    return g


def columns(metric: Metric, groups=(0, 1), *, file: bool = False) -> list[str]:
    """Every column of ``metric`` (per-group ones for ``groups``), in its sets' order."""
    gs = list(groups) if metric.per_group else [None]
    return [metric.column(w, g, file=file) for w in metric.where for g in gs]


def lead_columns(groups=(0, 1)) -> tuple:
    """The results' leading column order (``experiments.RESULT_COLUMNS``): what was asked, the worst gaps (on
    the population, then the evaluation rows), every measurement on the evaluation rows, then on the
    population, then how the fit ran. The other columns follow in the order they are produced."""
    lead = [m for m in METRICS if m.lead]
    ran = [m for m in lead if m.name in _RAN]
    asked = [m.name for m in lead if m.where == (RUN,) and m not in ran and m.name != "eval_set"]
    gaps = [m.column(w) for w in (POP, EVAL) for m in lead if m.prefixed]
    moved = [m.column(POP) for m in lead if m.name == "moved_away"]
    measured = [m for m in lead if EVAL in m.where and not m.prefixed]

    def on(where, ms):
        return [m.column(where, g) for m in ms for g in (groups if m.per_group else [None])]

    on_eval = on(EVAL, [m for m in measured if m.name != "n_eval"]) + ["eval_set", "n_eval"]
    on_pop = on(POP, [m for m in measured if POP in m.where and not m.names])
    tail = [m.column(POP) for m in lead if m.where == (POP,) and m.name != "moved_away"] + ["n_pop"]
    return tuple(asked + gaps + moved + on_eval + on_pop + tail + [m.name for m in ran])


_RAN = ("fit_seconds", "fitted_at", "device", "cached")


INTERVAL_BOUNDS = ("_lo", "_hi")  # a metric's 95% interval: <column>_lo, <column>_hi (``Metric.interval``)
MEAN = "_mean"  # a summary's mean over repeats: <column>_mean (``metrics.summarize``; its spread <column>_std)


def interval_bound(column: str) -> tuple[str, str]:
    """``(the metric's column, "_lo" or "_hi")`` for an interval's bound, else ``(column, "")``."""
    for b in INTERVAL_BOUNDS:
        if column.endswith(b):
            return column[: -len(b)], b
    return column, ""


def metric_of(column: str) -> tuple[Metric, str, int | None] | None:
    """The table's row of a column (in memory or as the file names it; an interval's bound is its metric's), its
    set and its group; ``None`` for a column the table does not list."""
    stem, bound = interval_bound(column)
    if bound:
        hit = metric_of(stem)
        return hit if hit is not None and hit[0].interval else None
    if not _BY_COLUMN:
        for m in METRICS:
            for w in m.where:
                for file in (False, True):
                    name = m.column(w, "__G__" if m.per_group else None, file=file)
                    _BY_COLUMN.setdefault(name, (m, w))
    hit = _BY_COLUMN.get(column)
    if hit is not None:
        return hit[0], hit[1], None
    g = re.match(r"^(.*)_(\d+)$", column)
    if g and (hit := _BY_COLUMN.get(f"{g.group(1)}___G__")) is not None:
        return hit[0], hit[1], int(g.group(2))
    return None


def is_listed(column: str) -> bool:
    return metric_of(column) is not None


def summarized_columns(columns_present) -> list[str]:
    """The columns a summary averages over repeats by default (:func:`fairdash.evaluation.metrics.summarize`): on the
    evaluation rows, then on the population, per-group ones for every group the results hold."""
    present = list(columns_present)
    groups = sorted({int(g.group(1)) for c in present if (g := re.match(r"^(?:pop_)?pr_(\d+)$", str(c)))}) or [0, 1]
    out = [m.column(w, g) for w in (EVAL, POP) for m in METRICS if m.summarized and w in m.where
           for g in (groups if m.per_group else [None])]
    return [c for c in dict.fromkeys(out) if c in present]


def file_measured(column: str) -> bool:
    """Whether the results file writes this in-memory column of the evaluation rows with ``bal_``."""
    hit = metric_of(column)
    return (hit is not None and hit[1] == EVAL and hit[0].in_file and not hit[0].prefixed
            and hit[0].column(EVAL, hit[2]) == interval_bound(column)[0])


def file_column(column: str) -> str:
    """The results file's name of an in-memory column of the evaluation rows it writes with ``bal_``
    (:func:`file_measured`): ``pr_0`` -> ``bal_pr_0``."""
    return EVAL_PREFIX + column


def population_twin(column: str) -> str | None:
    """The population's column of an evaluation-rows column (``pr_0`` -> ``pop_pr_0``), or ``None``."""
    hit = metric_of(column)
    if hit is None or POP not in hit[0].where or hit[1] != EVAL:
        return None
    return hit[0].column(POP, hit[2]) + interval_bound(column)[1]


def population_copied() -> list[Metric]:
    """The measurements :func:`fairdash.work.measure.evaluate` takes from the population's rows (per set, unprefixed
    in its own measurement): each metric measured on both sets by ``group_metrics`` or beside it."""
    return [m for m in METRICS if m.where == EP and not m.prefixed and not m.names]


def measured_on_rows() -> list[Metric]:
    """The metrics ``metrics.group_metrics`` computes from a set's labels and decisions (per group, or over all
    rows), in the table's order."""
    return [m for m in METRICS if isinstance(m.measure, (Share, Count))]


def measured_across_groups() -> list[Metric]:
    """The summaries over the groups ``metrics.group_metrics`` computes from the per-group values."""
    return [m for m in METRICS if isinstance(m.measure, Across)]


def per_group_metric(name: str) -> Metric:
    """The per-group metric of that name (an :class:`Across`'s ``of``)."""
    return next(m for m in METRICS if m.name == name and m.per_group)


def group_column(name: str, group: int, prefix: str = "") -> str:
    """The per-group metric ``name``'s column for ``group`` under a prefix its caller holds (a summary's set, or
    ``measure.evaluate``'s own ``eval_``): ``group_column("gap", 1, "pop_") == "pop_gap_1"``."""
    return prefix + per_group_metric(name).base(group)


def gap_metrics() -> list[Metric]:
    """The gaps to the target (named with their set's prefix in memory too), in the order they are produced."""
    return [m for m in METRICS if m.prefixed and m.name != "worst_gap" and m.name != "worst_gap_group"] + \
        [m for m in METRICS if m.name in ("worst_gap", "worst_gap_group")]


def table_columns(criterion: Criterion, n_groups: int, group_names=None) -> list[tuple[str, str]]:
    """A results table's columns in reading order, ``(column, header)``: accuracy, then ``criterion``'s own
    per-group rates and ratio, then the other's (:func:`fairdash.figures.plots.result_columns`, the report's tables);
    per-group headers name their groups where ``group_names`` are given."""
    by = {m.name: m for m in METRICS}
    groups = range(max(2, n_groups))
    out = [("accuracy", by["accuracy"].header())]
    for r in (criterion.rate, criterion.other_rate):
        out += [(by[r].column(EVAL, j), by[r].header(j, group_names)) for j in groups]
        out.append((f"{r}_ratio", by[f"{r}_ratio"].header()))
    return out
