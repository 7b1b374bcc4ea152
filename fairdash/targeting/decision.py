"""Decision rules: how a model's scores become decisions, and whether the rule needs ``s`` to decide.

``PR_t`` is the rate of the *target labels* (docs/METHOD.md, "Decision rules"). A model that does not
see ``s``, thresholded at 1/2 as the paper does, lands where its scores put it, which can be far from
``PR_t`` and, for some groups, further from it than a plain model. A decision rule chooses where to cut
the scores so that the decisions reach the target, and says what it needs:

- ``threshold``: the paper's rule, the model's own decision (score above 1/2; Zafar's sign, Agarwal's
  randomised draw). Needs no ``s``. The default, so Table 1 and the paper presets are unchanged.
- ``overall-rate``: one cut for everyone, chosen on the training rows so that the overall positive rate
  equals the overall target rate (the group shares times each group's target rate). Needs no ``s``.
- ``group-rates``: one cut per group, chosen on the training rows so that each group's positive rate
  equals its target (under equality of opportunity: each group's true positive rate equals its target
  TPR). Needs ``s`` when deciding: it treats people differently by group, which the paper's method
  avoids and which the law forbids in some settings.

A rule is part of the target request (:class:`fairdash.targeting.target_spec.TargetSpec`, ``decision``); the cuts
it chose on the training rows are a :class:`FittedDecision`, stored with the model.
"""
from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import NamedTuple

import numpy as np

from ..errors import FairDashError
from .criteria import DP, Criterion

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


def _mix(z: np.ndarray) -> np.ndarray:
    """SplitMix64's finaliser on every element (unsigned 64-bit arithmetic, wrapping)."""
    with np.errstate(over="ignore"):
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))


def row_draws(X, seed) -> np.ndarray:
    """One number in ``[0, 1)`` per row of ``X``, drawn from the row itself: a 64-bit hash of its feature values
    (their float64 bits, ``-0.0`` as ``0.0``) and of ``seed``, so a row's draw depends on nothing else (not its
    position, the batch, the file or the machine: integer arithmetic only). Rows with the same features get the
    same draw, and so the same decision."""
    X = np.ascontiguousarray(np.asarray(X, dtype=np.float64) + 0.0)  # + 0.0: -0.0 becomes 0.0
    if X.ndim != 2:
        raise FairDashError("The feature matrix must be two-dimensional (rows x features).")
    bits = X.view(np.uint64)
    with np.errstate(over="ignore"):
        h = _mix(np.full(X.shape[0], np.uint64(int(seed or 0) % 2**64) * _GOLDEN + _GOLDEN, dtype=np.uint64))
        for j in range(X.shape[1]):
            h = _mix((h ^ bits[:, j]) + _GOLDEN)
    return (h >> np.uint64(11)).astype(np.float64) * (1.0 / 2**53)


PAPER_RULE = "threshold"  # the paper's rule (the model's own decision), the default of every target and run
POST_PROCESSING = "post-processing"  # the rule of a model that decides by its own per-group thresholds


class Cuts(StrEnum):
    """Where a rule cuts the scores. Its value is the word a rule was always described by (a ``StrEnum``: it
    equals that string, so a rule made with the word ``overall`` is the same rule)."""

    NONE = "none"  # the model decides
    OVERALL = "overall"  # one cut for everyone, at the overall target rate
    PER_GROUP = "per-group"  # one cut per group, at each group's target


@dataclass(frozen=True)
class DecisionRule:
    """A decision rule and everything the rest of FairDash asks of it (a new rule is one entry in
    :data:`RULES`, plus its cutting in :func:`fit_decision` / :meth:`FittedDecision.decide` when it cuts the
    scores in a new way)."""

    name: str
    words: str  # one line for labels and tables
    explanation: str  # one line of what it does and what it needs
    needs_s: bool
    with_strata: bool = True  # combines with a legitimate factor (one cut per group cannot: it would need one per cell)
    cuts: Cuts = Cuts.NONE  # where it cuts the scores (a rule's word for it, ``"overall"``, is read as its Cuts)
    choosable: bool = True  # a run may ask for it (post-processing belongs to models that post-process by themselves)

    def __post_init__(self):
        object.__setattr__(self, "cuts", Cuts(self.cuts))  # an unknown word fails here, not at the first decision

    @property
    def aims_at_target(self) -> bool:
        """Whether the rule cuts the scores to reach the target (so a plain model is decided per target)."""
        return self.cuts is not Cuts.NONE

    @property
    def cuts_per_group(self) -> bool:
        return self.cuts is Cuts.PER_GROUP

    @property
    def named(self) -> str:
        """Its name, saying where it decides with s."""
        return self.name + (" (decides with s)" if self.needs_s else "")

    @property
    def label_suffix(self) -> str:
        """What a model's label says about its rule: nothing for a rule that aims at no target (the paper's
        rule; a post-processing model's own label says it)."""
        if not self.aims_at_target:
            return ""
        return f" [{self.name}, decides with s]" if self.needs_s else f" [{self.name}]"


RULES = {
    r.name: r
    for r in (
        DecisionRule(PAPER_RULE, "score above 1/2 (the paper's rule)",
                     "Positive when the model's score is above 1/2, as in the paper. Needs no s to decide; "
                     "the decisions land where the scores put them, which can be far from the target.", False),
        DecisionRule("overall-rate", "one cut for everyone, set to the overall target rate",
                     "One threshold for everyone, chosen on the training rows so that the overall positive rate "
                     "equals the overall target rate. Needs no s to decide; each group's rate follows its scores.",
                     False, cuts=Cuts.OVERALL),
        DecisionRule("group-rates", "one cut per group, set to each group's target (decides with s)",
                     "One threshold per group, chosen on the training rows so that each group's rate equals its "
                     "target. Decides with s: it needs every person's group when deciding, which the paper's method "
                     "avoids and the law forbids in some settings.", True, with_strata=False,
                     cuts=Cuts.PER_GROUP),
        DecisionRule(POST_PROCESSING, "the model's own per-group rule (decides with s)",
                     "The model post-processes its scores with per-group thresholds of its own, so it needs s when "
                     "deciding.", True, choosable=False),
    )
}
WITH_S_RULE = "group-rates"  # the rule that reaches each group's target by deciding with s: the price of deciding
#                              without s is measured against it (fairdash.evaluation.blindness)


def rule_info(name) -> DecisionRule:
    if isinstance(name, DecisionRule):
        return name
    key = str(name).strip().lower() if name is not None else PAPER_RULE
    if key not in RULES:
        raise FairDashError(f"Unknown decision rule {name!r}: use {', '.join(map(repr, choosable()))}.")
    return RULES[key]


_PER_CELL = "it would need one threshold per stratum and group"  # why a per-group cut cannot take a legitimate factor
STRATA_REFUSAL = ("The {rule} decision rule cannot be combined with a legitimate factor (" + _PER_CELL
                  + "): use {offered}.")


def choosable(strata: bool = False) -> tuple:
    """The names of the rules a run may ask for (the paper's first); with a legitimate factor (``strata``),
    those that combine with it."""
    return tuple(r.name for r in RULES.values() if r.choosable and (r.with_strata or not strata))


def _one_of(names) -> str:
    names = [f"the {n} rule" for n in names]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]


def check_with_strata(name, strata_column) -> None:
    """Refuse a rule that cannot be combined with a legitimate factor, when there is one (the one sentence)."""
    if strata_column not in (None, "") and not rule_info(name).with_strata:
        raise FairDashError(STRATA_REFUSAL.format(rule=rule_info(name).name, offered=_one_of(choosable(strata=True))))


def left_out_note(offered) -> str:
    """Why the rules a run may ask for are not all ``offered`` (a legitimate factor leaves out those that
    cannot be combined with it), as a sentence in parentheses; ``""`` when none is left out."""
    missing = [RULES[r] for r in choosable() if r not in offered]
    if not missing:
        return ""
    words = " and ".join(f"'{r.words}'" for r in missing)
    return f"({words} {'is' if len(missing) == 1 else 'are'} not offered with a legitimate factor: {_PER_CELL}.)"


def predicts_with_s(estimator) -> bool:
    """Whether a model needs each row's group to predict at all (a post-processing model declares
    ``needs_s_to_predict``): the one probe of it."""
    return bool(getattr(estimator, "needs_s_to_predict", False))


def positive_scores(estimator, X, s=None) -> np.ndarray:
    """The model's probability of a positive label for each row of ``X`` (with the rows' groups ``s`` for a model
    that needs them to predict: :func:`predicts_with_s`)."""
    proba = estimator.predict_proba(X, s=s) if predicts_with_s(estimator) else estimator.predict_proba(X)
    return np.asarray(proba)[:, 1]


def check_rule(name) -> str:
    """A rule a run may ask for (``post-processing`` belongs to models that post-process by themselves)."""
    rule = rule_info(name)
    if not rule.choosable:
        raise FairDashError(f"Unknown decision rule {name!r}: use {', '.join(map(repr, choosable()))}.")
    return rule.name


def cut_for_rate(scores, rate: float) -> float:
    """The cut ``c`` such that the share of ``scores`` strictly above ``c`` is as close to ``rate`` as the
    scores' ties allow: with the scores sorted from high to low and ``k = round(rate * n)``, the midpoint
    between the k-th and the (k+1)-th score (``inf`` for k = 0, below the smallest score for k = n)."""
    s = np.sort(np.asarray(scores, dtype=float))[::-1]
    n = s.size
    if n == 0:
        raise FairDashError("No training rows to choose a decision threshold on.")
    k = int(np.clip(np.rint(float(rate) * n), 0, n))
    if k == 0:
        return float("inf")
    if k == n:
        return float(np.nextafter(s[-1], -np.inf))
    hi, lo = s[k - 1], s[k]
    mid = lo + (hi - lo) / 2.0
    return float(mid) if lo <= mid < hi else float(lo)  # two neighbouring floats have no midpoint between them


SALTS = 64  # tie orders tried (see cut_with_ties) before settling for the nearest count


class Tie(NamedTuple):
    """A block of tied scores at a cut: a row scoring exactly ``value`` is positive when its draw is below ``share``,
    the draws ordered by the ``salt``-th salt of the decision's seed (:func:`salted`; 0: the seed itself)."""

    value: float
    share: float
    salt: int = 0

    def to_list(self) -> list:
        """As a model file holds it: ``[v, q]``, or ``[v, q, j]`` where another salt than the seed's own ordered it."""
        return [float(self.value), float(self.share)] + ([float(self.salt)] if self.salt else [])

    @classmethod
    def read(cls, t) -> Tie | None:
        """A cut's tie as a model file (or older code) holds it: ``[]``/``()``/``None`` (no tie), ``[v, q]`` or
        ``[v, q, j]``; a :class:`Tie` passes through."""
        if isinstance(t, Tie) or not t:
            return t or None
        v = tuple(float(x) for x in t)
        if len(v) not in (2, 3):
            raise FairDashError("The model file's decision ties are malformed.")
        return cls(v[0], v[1], int(v[2]) if len(v) == 3 else 0)


def cut_with_ties(scores, rate: float, draws=None) -> tuple[float, Tie | None]:
    """:func:`cut_for_rate`, with a tie at the cut broken so that the rate is met: where the k-th and the
    (k+1)-th score are equal (a block of tied scores straddles the cut), the cut is that score ``v`` and the
    tie is ``Tie(v, q)``: a row scoring exactly ``v`` is positive when its draw is below ``q``. ``q`` is the share
    of the tied block that the rate still needs. ``draws``: each row's :func:`row_draws` (in the order of
    ``scores``), or a function of a salt that gives them (``draws(j)``: the draws with the seed's ``j``-th salt,
    :func:`salted`); ``q`` is then placed between the tied rows' draws so that the rows below it are as many as the
    rate needs (``rate * n`` less the rows above ``v``, to the nearest row), and the tie is ``Tie(v, q, j)``.

    Rows with the same features share a draw, and so a decision (the same person, the same decision): a block of
    them can straddle every ``q``. Then other salts are tried, each a different order of the tied people, up to
    :data:`SALTS`, and the first whose count is within one row of the rate is kept (else the nearest): the rate is
    met within one row wherever some order of the blocks allows it, and each person's decision still depends on
    nothing but their features and the seed. ``None`` where no tie straddles the cut."""
    scores = np.asarray(scores, dtype=float)
    s = np.sort(scores)[::-1]
    n = s.size
    k = int(np.clip(np.rint(float(rate) * n), 0, n)) if n else 0
    if n == 0 or k in (0, n) or s[k - 1] != s[k]:
        return cut_for_rate(scores, rate), None
    v = float(s[k - 1])
    above, tied = int((s > v).sum()), int((s == v).sum())
    if draws is None:
        return v, Tie(v, (k - above) / tied)
    need = float(rate) * n - above  # 0 < need < tied, give or take half a row: the block straddles the cut
    on = scores == v
    best = None
    for j in range(SALTS if callable(draws) else 1):
        q, off = _share_below((draws(j) if callable(draws) else np.asarray(draws, dtype=float))[on], need)
        if best is None or off < best[1]:
            best = (j, off, q)
        if off <= 1.0:
            break
    j, _, q = best
    return v, Tie(v, q, j)


def _share_below(draws, need: float) -> tuple[float, float]:
    """The draw ``q`` below which the count of ``draws`` is nearest ``need``, and how far that count is from it
    (rows that share a draw fall on the same side)."""
    values, counts = np.unique(draws, return_counts=True)
    below = np.concatenate([[0], np.cumsum(counts)])  # below[i]: draws under values[i]
    i = int(np.argmin(np.abs(below - need)))
    off = float(abs(below[i] - need))
    if i == values.size:
        return 1.0, off
    return float(values[i] if i == 0 else values[i - 1] + (values[i] - values[i - 1]) / 2.0), off


def salted(seed: int, salt) -> int:
    """The seed of a tie's ``salt``-th order (:func:`cut_with_ties`): the seed itself for salt 0."""
    return (int(seed) + int(salt) * 0x632BE59BD9B4E019) % 2**64


@dataclass(frozen=True)
class FittedDecision:
    """The cuts a rule chose on the training rows: ``()`` for the paper's rule (the model decides),
    one for ``overall-rate``, one per group for ``group-rates``. Positive when the score is above the
    cut (the row's group's cut for ``group-rates``). ``ties``: per cut, ``None`` or the :class:`Tie` where a block
    of tied scores straddled it, its people ordered by the tie's salt of
    ``seed`` (:func:`cut_with_ties`, :func:`salted`): a row scoring exactly ``v`` is then positive with
    probability ``q``, drawn from the row itself and ``seed`` (:func:`row_draws`: the same person
    gets the same decision in any order, batch or file), so that the rule meets its rate despite the ties.
    ``row_draws`` false: a model file written before, whose row ``i`` of a batch gets draw ``i`` of
    ``RandomState(seed)``, as it did."""

    rule: str = PAPER_RULE
    cuts: tuple = ()
    ties: tuple = ()
    seed: int = 0
    row_draws: bool = True

    def __post_init__(self):
        object.__setattr__(self, "ties", tuple(Tie.read(t) for t in self.ties))  # (v, q) as older code gave it

    @property
    def needs_s(self) -> bool:
        return RULES[self.rule].needs_s

    def decide(self, estimator, X, s=None) -> np.ndarray:
        """The decisions for the rows ``X`` (with their groups ``s`` where the rule needs them)."""
        if predicts_with_s(estimator):
            return np.asarray(estimator.predict(X, s=_groups(s, len(X), RULES[POST_PROCESSING]))).astype(int)
        rule = RULES[self.rule]
        if not rule.aims_at_target:
            return np.asarray(estimator.predict(X)).astype(int)
        scores = np.asarray(estimator.predict_proba(X))[:, 1]
        if rule.cuts is Cuts.OVERALL:
            return self._with_ties(scores, scores > self.cuts[0], np.zeros(len(scores), dtype=int), X)
        s = _groups(s, len(scores), rule)
        if s.size and s.max() >= len(self.cuts):
            raise FairDashError(f"A row belongs to group {int(s.max())}, but the rule has cuts for "
                                f"{len(self.cuts)} groups.")
        return self._with_ties(scores, scores > np.asarray(self.cuts, dtype=float)[s], s, X)

    def _with_ties(self, scores, above, which, X) -> np.ndarray:
        """``above``, with the rows on a tied cut drawn positive with the tie's probability (per row, seeded)."""
        pred = np.asarray(above, dtype=bool).copy()
        if not any(self.ties):
            return pred.astype(int)
        on = [(which == j) & (scores == tie.value) if tie else None for j, tie in enumerate(self.ties)]
        if not self.row_draws:  # a model file written before: draw i of the batch for row i
            u = np.random.RandomState(self.seed).rand(len(scores))
        for m, tie in zip(on, self.ties):
            if m is not None and m.any():
                # a row's draw depends on the row alone (and the tie's salt): hash only the rows on the tie
                draw = row_draws(np.asarray(X)[m], salted(self.seed, tie.salt)) if self.row_draws else u[m]
                pred[m] = draw < tie.share
        return pred.astype(int)

    def to_dict(self) -> dict:
        d = {"rule": self.rule, "cuts": [float(c) for c in self.cuts]}
        if any(self.ties):
            d.update(ties=[t.to_list() if t else [] for t in self.ties], seed=int(self.seed),
                     draws="row" if self.row_draws else "position")
        return d

    @classmethod
    def from_dict(cls, d) -> "FittedDecision":
        if d is None:
            return cls()
        if not isinstance(d, dict):
            raise FairDashError("The model file's decision rule is malformed.")
        rule = rule_info(d.get("rule", PAPER_RULE)).name
        try:
            cuts = tuple(float(c) for c in d.get("cuts") or ())
            numbers = [tuple(float(x) for x in t) if t else () for t in d.get("ties") or ()]
            seed = int(d.get("seed", 0))
        except (TypeError, ValueError):
            raise FairDashError("The model file's decision thresholds are not numbers.") from None
        ties = tuple(map(Tie.read, numbers))
        if ties and len(ties) != len(cuts):
            raise FairDashError("The model file's decision ties are malformed.")
        # ties written before draws were per row were drawn by position (without ties nothing is drawn)
        return cls(rule, cuts, ties, seed, d.get("draws", "position" if any(ties) else "row") == "row")


def carried_decision(estimator, decision: FittedDecision | None = None) -> FittedDecision:
    """The decision a fitted model carries: a model that post-processes its scores by itself keeps its own
    rule whatever was asked; any other keeps ``decision`` (the paper's rule when there is none)."""
    if predicts_with_s(estimator):
        return FittedDecision(POST_PROCESSING)
    return decision or FittedDecision()


def _groups(s, n: int, rule: DecisionRule) -> np.ndarray:
    if s is None:
        raise FairDashError(f"This model decides with s ({rule.name}): it needs every row's group to decide, "
                            "and none was given.")
    s = np.asarray(s).astype(int).ravel()
    if s.size != n:
        raise FairDashError(f"The groups (s) have {s.size} rows, the features {n}.")
    return s


def fit_decision(rule: str, estimator, X, y, s, group_targets, overall: float,
                 criterion: Criterion = DP, seed: int = 0) -> FittedDecision:
    """Choose the cuts of ``rule`` on the training rows ``X`` (labels ``y``, groups ``s``).

    ``group_targets`` are the groups' targets for the ``criterion``'s rate (demographic parity: positive rates;
    equality of opportunity: true positive rates, counted among each group's positives); ``overall``
    is the overall target positive rate (``TargetSpec.rate_targets``), which ``overall-rate`` cuts at. A
    model that decides by its own rule (post-processing) keeps it. A block of tied scores at a cut is
    split by each row's draw (:func:`row_draws` with ``seed``; :func:`cut_with_ties`), so that the rule meets its
    rate on the training rows exactly (within one row)."""
    rule = RULES[check_rule(rule)]
    if predicts_with_s(estimator) or not rule.aims_at_target:
        return carried_decision(estimator)
    scores = np.asarray(estimator.predict_proba(X))[:, 1]
    seed = 0 if seed is None else int(seed)
    if rule.cuts is Cuts.OVERALL:
        cut, tie = cut_with_ties(scores, overall, _tied_draws(X, scores, seed))
        return FittedDecision(rule.name, (cut,), (tie,) if tie else (), seed)
    y = np.asarray(y).astype(int).ravel()
    s = np.asarray(s).astype(int).ravel()
    cuts, ties = [], []
    for g, t in enumerate(np.asarray(group_targets, dtype=float)):
        rows = (s == g) & criterion.rows(y)
        if not rows.any():
            raise FairDashError(f"Group {g} has no training rows{criterion.rows_words} to choose its decision "
                                "threshold on.")
        cut, tie = cut_with_ties(scores[rows], t, _tied_draws(X, scores, seed, rows))
        cuts.append(cut)
        ties.append(tie)
    return FittedDecision(rule.name, tuple(cuts), tuple(ties) if any(ties) else (), seed)


def _tied_draws(X, scores, seed: int, rows=None):
    """The draws of :func:`cut_with_ties` for ``rows`` (a mask; every row where ``None``): a function of the salt
    ``j`` giving each row's :func:`row_draws` with the ``j``-th salted seed, computed for the rows whose score
    another row shares (the only rows a tie at a cut can split); NaN for the others (hashing every row of a wide
    table costs more than the cut)."""
    rows = np.ones(len(scores), dtype=bool) if rows is None else rows
    X, scores = np.asarray(X)[rows], np.asarray(scores)[rows]
    _, inverse, counts = np.unique(scores, return_inverse=True, return_counts=True)
    shared = counts[inverse.ravel()] > 1

    def draws(j: int) -> np.ndarray:
        out = np.full(len(scores), np.nan)
        if shared.any():
            out[shared] = row_draws(X[shared], salted(seed, j))
        return out
    return draws


REACH_TOLERANCE = 0.01  # a rule reached a target when its training rate is this close (or one row's step)


@dataclass(frozen=True)
class Reached:
    """Whether a rule reached its targets on the training rows: ``reached`` is ``None`` for a rule that
    aims at no rate (the paper's rule: the model decides), else ``True``/``False``; ``note`` is one line
    naming each group that was missed, the rate reached and why."""

    reached: bool | None = None
    note: str = ""


def check_reached(decision: FittedDecision, estimator, X, y, s, group_targets, overall: float,
                  criterion: Criterion = DP, group_names=None) -> Reached:
    """Check on the training rows whether ``decision`` reached what it aims at (``overall-rate``: the overall
    target rate; ``group-rates``: each group's target), within :data:`REACH_TOLERANCE` or the smallest step
    the rows allow (one row of the group), and say why not: the group's scores take one value, it has too
    few rows, or a block of tied scores sits at its cut."""
    rule = RULES[decision.rule]
    if not rule.aims_at_target or predicts_with_s(estimator):
        return Reached(None)
    y = np.asarray(y).astype(int).ravel()
    s = np.asarray(s).astype(int).ravel()
    pred = decision.decide(estimator, X, s if decision.needs_s else None)
    scores = np.asarray(estimator.predict_proba(X))[:, 1]
    if rule.cuts is Cuts.OVERALL:
        checks = [("everyone", np.ones(len(pred), dtype=bool), float(overall), "positive rate")]
    else:
        checks = [(str(group_names[g]) if group_names is not None and g < len(group_names) else f"group {g}",
                   (s == g) & criterion.rows(y), float(t), criterion.rate_name)
                  for g, t in enumerate(np.asarray(group_targets, dtype=float))]
    misses = []
    for name, rows, target, words in checks:
        n = int(rows.sum())
        if n == 0:
            misses.append(f"{name} has no training rows to decide on")
            continue
        rate = float(pred[rows].mean())
        if abs(rate - target) <= max(REACH_TOLERANCE, 1.0 / n) + 1e-12:
            continue
        values = np.unique(scores[rows])
        why = ("its scores take a single value" if values.size == 1 else
               f"it has only {n} training rows" if n < 1.0 / REACH_TOLERANCE else
               "a block of tied scores sits at its cut")
        misses.append(f"{name} at {words} {rate:.3f} against its target {target:.3f} ({why})")
    if not misses:
        return Reached(True)
    return Reached(False, f"The {decision.rule} rule did not reach its target on the training rows: "
                          + "; ".join(misses) + ".")
