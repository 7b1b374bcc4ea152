"""The price of deciding without s on one split, at matched rates, against the best rule that uses s
(issue 34, items 1, 3 and 4; docs/METHOD.md, "The price of deciding without s").

On one split and one target, the blind side is the most accurate rule of the run that decides without s and
*lands* (:func:`lands`): the rates it reaches on the training rows, group by group, are within
:func:`land_tolerance` of each group's target. The with-s side is then placed at **that rule's own training
rates** (its realised positive rates, or TPRs under equality of opportunity), so that the two sides are compared at
one and the same set of rates, and it may use s as well as it can: per-group cuts (Corbett-Davies et al. 2017) on
each candidate score, chosen by accuracy on the training rows:

- ``LR with s``: logistic regression on the features and s (one-hot);
- ``LR with s and its interactions``: the same with s times every feature (one slope per group and feature), so
  a feature that acts differently in different groups is learnt as such;
- the scores of every model the run cuts per group itself (``group-rates``), which never saw s.

The price is the with-s rule's population accuracy minus the blind rule's, on the same test rows; its 95%
interval is a bootstrap of those rows stratified by group and *paired* (both rules' decisions on a resampled row
travel together), so it is the interval of the difference, not two overlapping ones (:func:`paired_interval`).
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import NamedTuple

import numpy as np

from ..data.preprocess import feature_words
from ..models.registry import make_model
from ..targeting.criteria import DP, Criterion
from ..targeting.decision import WITH_S_RULE, fit_decision
from .intervals import DRAWS, LEVEL, SEED
from .metrics import measure_of
from .who_pays.measure import WhoPays, who_pays

LAND_TOLERANCE = 0.03  # a group's rate within 3 points of its target lands on it ...
LAND_RELATIVE = 1 / 3  # ... and within a third of the target where that is smaller
MAX_INTERACTION_CELLS = 30_000_000  # training rows x columns above which the interactions' scorer is left out

SCORERS = (("LR with s", False), ("LR with s and its interactions", True))


def land_words(rate_where: str) -> str:
    """The landing rule in words, for ``rate_where`` ("rate on the training rows", "mean population rate")."""
    return (f"every group's {rate_where} within {LAND_TOLERANCE:.2f} of its target, or within a third of the target "
            "where that is smaller")


def land_tolerance(target: float, n_rows: int = 0) -> float:
    """How far a group's rate may sit from its target and still land on it: :data:`LAND_TOLERANCE`, or a third of
    the target where that is smaller (a rule at 0.037 does not land on 0.02), and never less than one row's step
    among ``n_rows`` rows."""
    tol = min(LAND_TOLERANCE, LAND_RELATIVE * float(target))
    return max(tol, 1.0 / n_rows if n_rows else 0.0)


def group_rates(pred, y, s, n_groups: int, criterion: Criterion) -> tuple[np.ndarray, np.ndarray]:
    """Each group's rate of ``criterion`` of the decisions ``pred`` as the results measure it (``metrics.measure_of``:
    demographic parity's positive rate among the group's rows, opportunity's true positive rate among its positives)
    and how many rows it is counted among (NaN rate where none)."""
    measure = measure_of(criterion.rate)
    y, s, pred = (np.asarray(a).astype(int).ravel() for a in (y, s, pred))
    groups = [s == g for g in range(n_groups)]
    n = np.array([int(np.count_nonzero(measure.among(y[r], pred[r]))) for r in groups])
    return np.array([measure.value(y[r], pred[r]) for r in groups]), n


def lands(train_rates, counts, targets, rate_words: str = "") -> tuple[bool, str]:
    """Whether rates reached on the training rows land on the targets (every group within its
    :func:`land_tolerance`), and where not, which group misses by how much (its rate named by ``rate_words``
    where given: "TNR"). With explicit TPR and TNR targets a rule lands when both do (``split_prices`` asks twice)."""
    named = f" ({rate_words})" if rate_words else ""
    for g, (r, n, t) in enumerate(zip(train_rates, counts, targets)):
        if not np.isfinite(r) or abs(r - t) > land_tolerance(t, int(n)) + 1e-12:
            return False, f"group {g} at {r:.3f}{named} on the training rows against its target {t:.3f}"
    return True, ""


def with_s_features(X, s, n_groups: int, interactions: bool) -> np.ndarray:
    """The features with s one-hot beside them, and with ``interactions`` s times every feature."""
    X = np.asarray(X, dtype=float)
    onehot = np.eye(n_groups)[np.asarray(s).astype(int).ravel()]
    parts = [X, onehot]
    if interactions:
        parts.append((onehot[:, :, None] * X[:, None, :]).reshape(len(X), -1))
    return np.hstack(parts)


@dataclass
class Candidate:
    """A score the with-s side may cut per group: ``features(X, s)`` is what its ``estimator`` scores."""

    words: str
    estimator: object
    features: object  # (X, s) -> the estimator's input

    def decide(self, decision, X, s):
        return decision.decide(self.estimator, self.features(X, s), s)


def fitted_scorers(arrays, n_groups: int, *, seed: int, device, cache=None) -> list[Candidate]:
    """The scores that use s (:data:`SCORERS`), fitted on the split's training rows (through ``cache`` where given).
    The interactions' scorer is left out where its matrix would exceed :data:`MAX_INTERACTION_CELLS`."""
    out = []
    for words, interactions in SCORERS:
        cols = arrays.X_train.shape[1] * ((n_groups + 1) if interactions else 1) + n_groups
        if interactions and arrays.X_train.shape[0] * cols > MAX_INTERACTION_CELLS:
            continue

        def features(X, s, interactions=interactions):
            return with_s_features(X, s, n_groups, interactions)

        X = features(arrays.X_train, arrays.s_train)
        est = make_model("lr", seed=seed, device=device)
        if cache is not None:
            est, _ = cache.fit(est, X, arrays.y_train, arrays.s_train, None)
        else:
            est.fit(X, arrays.y_train, arrays.s_train)
        out.append(Candidate(words, est, features))
    return out


def own_scores(words: str, estimator) -> Candidate:
    """A model of the run that decides with s by cutting its own scores per group."""
    return Candidate(f"{words}'s scores", estimator, lambda X, s: X)


@dataclass
class SplitPrice:
    """The price on one split and target: both sides' population accuracy, the difference and its paired interval,
    which rules they were, and ``note`` (why there is no price, in one line) where there is none. ``matched``: each
    group's rate both sides were placed at on the training rows (the blind rule's own: positive rates, or TPRs under
    equality of opportunity); ``with_s_pr``, ``blind_pr``: each side's positive rate per group on the population
    test rows (``n_test`` of them); ``who_pays``: the people the two rules decide differently, the features the
    blind rule leans on and the within-group disparity (:mod:`fairdash.evaluation.who_pays`)."""

    with_s_accuracy: float = np.nan
    blind_accuracy: float = np.nan
    price: float = np.nan
    price_lo: float = np.nan
    price_hi: float = np.nan
    with_s_rule: str = ""
    blind_rule: str = ""
    note: str = ""
    matched: tuple = ()
    with_s_pr: tuple = ()
    blind_pr: tuple = ()
    n_test: int = 0
    who_pays: WhoPays | None = None


def best_with_s(candidates, arrays, rates, criterion: Criterion, seed: int):
    """The candidate whose per-group cuts at ``rates`` (each group's rate to reach on the training rows) are the
    most accurate on the training rows: ``(candidate, its decisions on the test rows, its scores on them)``."""
    best, best_acc = None, -np.inf
    for c in candidates:
        Xtr = c.features(arrays.X_train, arrays.s_train)
        decision = fit_decision(WITH_S_RULE, c.estimator, Xtr, arrays.y_train, arrays.s_train, rates, np.nan,
                                criterion, seed=seed)
        acc = measure_of("accuracy").value(arrays.y_train, decision.decide(c.estimator, Xtr, arrays.s_train))
        if acc > best_acc:
            best, best_acc = (c, decision), acc
    c, decision = best
    scores = np.asarray(c.estimator.predict_proba(c.features(arrays.X_test, arrays.s_test)))[:, 1]
    return c, np.asarray(c.decide(decision, arrays.X_test, arrays.s_test)).astype(int), scores


def split_price(blind: Side, candidates, arrays, criterion: Criterion, seed: int) -> SplitPrice:
    """The price on one split against ``blind``, the :class:`Side` that decides without s and lands (its label, its
    rates on the training rows, where the with-s side is placed, and its decisions on the test rows)."""
    words, rates, pred_blind = blind.label, np.asarray(blind.train_rates, dtype=float), np.asarray(blind.pred_test)
    c, pred_with, score_with = best_with_s(candidates, arrays, rates, criterion, seed)
    y, s = np.asarray(arrays.y_test).astype(int), np.asarray(arrays.s_test).astype(int)
    w, b = (measure_of("accuracy").value(y, p) for p in (pred_with, pred_blind))  # the results' accuracy
    G = int(max(s.max(initial=0), len(rates) - 1)) + 1
    lo, hi = paired_interval(pred_with == y, pred_blind == y, s, G)
    pr = [tuple(float(v) for v in group_rates(p, y, s, G, DP)[0]) for p in (pred_with, pred_blind)]
    paid = who_pays(arrays.X_test, _feature_words(arrays), s, score_with, pred_with, pred_blind, G)
    return SplitPrice(w, b, w - b, lo, hi, f"per-group cuts on {c.words}", words,
                      matched=tuple(float(r) for r in rates), with_s_pr=pr[0], blind_pr=pr[1], n_test=int(y.size),
                      who_pays=paid)


def _feature_words(arrays) -> list[tuple[str, str]]:
    """The test rows' columns as ``(the table's column, words)`` (``("race", "race = African-American")``), or as
    the preprocessor names them where it cannot say."""
    try:
        words = feature_words(arrays.preprocessor)
    except Exception:  # noqa: BLE001 - an unusual preprocessor: its own names still say which column
        words = []
    return words if len(words) == np.shape(arrays.X_test)[1] else [(str(n), str(n)) for n in arrays.feature_names]


def paired_interval(a_right, b_right, s, n_groups: int, draws: int = DRAWS, level: float = LEVEL,
                    seed: int = SEED) -> tuple[float, float]:
    """The 95% interval of ``mean(a_right) - mean(b_right)`` over the same rows: each group's rows resampled with
    replacement (group sizes kept), both rules' outcomes on a row drawn together. A group's rows fall in four
    cells (which of the two is right), so a resample is a multinomial draw of those counts."""
    a, b, s = (np.asarray(v).astype(int).ravel() for v in (a_right, b_right, s))
    n = a.size
    if n == 0:
        return np.nan, np.nan
    rng = np.random.default_rng(seed)
    diff = np.zeros(draws)
    for g in range(n_groups):
        rows = s == g
        m = int(rows.sum())
        if not m:
            continue
        cells = np.bincount(2 * a[rows] + b[rows], minlength=4)  # (a wrong, b wrong), (-, right), (right, -), both
        counts = rng.multinomial(m, cells / m, size=draws)
        diff += (counts[:, 2] - counts[:, 1]) / n
    lo, hi = np.percentile(diff, [50 * (1 - level), 50 * (1 + level)])
    return float(lo), float(hi)


@dataclass
class Side:
    """One fit of a run as the price sees it: its ``label``, the split (``seed``) and ``target_rate`` it belongs to,
    whether it decides with s; for a blind rule its rates reached on the training rows (``train_rates``, counted among
    ``counts`` rows), the targets it aimed at and its decisions on the test rows; for a rule with s its estimator."""

    label: str
    seed: int
    target_rate: float
    with_s: bool
    train_rates: tuple = ()
    counts: tuple = ()
    targets: tuple = ()
    pred_test: object = None
    estimator: object = None
    tnr: tuple = ()  # with explicit TPR and TNR targets: (TNRs on the training rows, their counts, the TNR targets)
    train_accuracy: float = np.nan  # a blind rule's accuracy on its training rows: which of several counts


def split_prices(sides, arrays: dict, criterion: Criterion, n_groups: int, *, device=None, cache=None,
                 group_names=None) -> dict:
    """``{(target_rate, seed): SplitPrice}`` for every split and target of ``sides`` (:class:`Side`): the most
    accurate blind rule that lands on the training rows against the best with-s rule at its rates; a split where no
    blind rule lands gets a ``note`` saying which came nearest and by how much."""
    out, scorers = {}, {}
    known = {float(x.target_rate) for x in sides if np.isfinite(x.target_rate)}
    # a plain model that ran once beside a single target is held at it; beside several, at none; without any PR_t
    # (explicit TPR and TNR targets) every fit is held at the one target there is
    sides = [x if np.isfinite(x.target_rate) or not known else replace(x, target_rate=next(iter(known)))
             for x in sides if np.isfinite(x.target_rate) or len(known) <= 1]
    keys = dict.fromkeys(price_key(x.target_rate, x.seed) for x in sides)
    for key in keys:
        here = [x for x in sides if price_key(x.target_rate, x.seed) == key]
        blind, misses = _best_blind(here, group_names)
        if blind is None:
            out[key] = SplitPrice(note=("no rule that decides without s lands on the target on the training rows ("
                                        + "; ".join(misses) + ")") if misses else "no rule that decides without s")
            continue
        seed = key[1]
        if seed not in scorers:
            scorers[seed] = fitted_scorers(arrays[seed], n_groups, seed=seed, device=device, cache=cache)
        candidates = list(scorers[seed]) + [own_scores(x.label, x.estimator) for x in here
                                            if x.with_s and x.estimator is not None]
        out[key] = split_price(blind.side, candidates, arrays[seed], criterion, seed)
    return out


class Kept(NamedTuple):
    """The blind rule a split's price is measured for, and its accuracy on the training rows (how it was chosen)."""
    accuracy: float
    side: Side


def _best_blind(here: list, group_names) -> tuple[Kept | None, list]:
    """``(Kept or None, misses)``: :func:`split_prices`' rule of one split that decides without
    s, lands on the training rows (TNR too where it has TNR targets) and is the most accurate **on the training
    rows** (never on the test rows the price is measured on: choosing there biases the price; a side without its
    training accuracy, from an older session file, counts as the least accurate, the first listed kept among
    equals), and why each other one does not land."""
    blind, misses = None, []
    for x in here:
        if x.with_s or x.pred_test is None:
            continue
        ok, why = lands(x.train_rates, x.counts, x.targets)
        if ok and x.tnr:
            ok, why = lands(*x.tnr, rate_words="TNR")
        if not ok:
            misses.append(f"{x.label}: {_named(why, group_names)}")
            continue
        acc = float(x.train_accuracy) if np.isfinite(x.train_accuracy) else -np.inf
        if blind is None or acc > blind.accuracy:
            blind = Kept(acc, x)
    return blind, misses


def price_key(target_rate, seed) -> tuple:
    """A split's key in :func:`split_prices`' answer: the target rate (``None`` where there is none: explicit TPR
    and TNR targets) and the seed."""
    t = float(target_rate) if target_rate is not None else float("nan")
    return (round(t, 12) if np.isfinite(t) else None, int(seed))


def _named(why: str, group_names) -> str:
    """``why`` with "group g" replaced by the group's name."""
    if not group_names:
        return why
    for g, name in enumerate(group_names):
        why = why.replace(f"group {g} ", f"{name} ", 1)
    return why
