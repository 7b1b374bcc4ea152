"""Who pays for deciding without s (issue 49; docs/METHOD.md, "Who pays for deciding without s").

The price (:mod:`fairdash.evaluation.matched_price`) compares a rule that decides without s with the best rule that
uses s, at the same rates, on the same test rows. Both reach each group's rate; they do not reach it with the same
people. A rule that cannot see s finds it in features that stand in for it, and so treats people of one group
differently by how much they look like the other group (Lipton, Chouldechova and McAuley, "Does mitigating ML's
impact disparity require treatment disparity?", NeurIPS 2018). This module measures, on one split's test rows:

- :func:`decided_differently`: per group, the people the rule with s accepts and the rule without s refuses, and
  the reverse, as counts and shares of the group with Wilson intervals, and the net change of the group's
  acceptances with Newcombe's paired interval (both rules decide the same people);
- :func:`leaned_on`: the features the rule without s leans on *beyond the rule with s*: among people of one group
  whose with-s scores fall in one band (the with-s rule sees them alike), how well a feature tells whom the blind
  rule accepts (a stratified AUC: 0.5 is not at all; above, a higher value is accepted more often without s);
- :func:`within_group`: for one such feature, the blind rule's acceptance of people with a high and a low value of
  it, in each group and with-s score band (the figure), and its difference pooled over the bands with an interval:
  the within-group disparity of Lipton et al.
"""
from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np
from scipy.special import ndtri

from ..intervals import DRAWS, LEVEL, SEED, paired_difference_interval, wilson_interval

BANDS = 10  # the figure's with-s score bands a group is cut into (quantiles of its with-s scores) ...
MIN_BAND_ROWS = 40  # ... fewer where a band would hold fewer rows than this
LEAN_BAND_ROWS = 10  # rows a band when asking what the blind rule leans on: people the with-s rule sees alike
NAMED = 5  # the features :func:`leaned_on` keeps (strongest first)


@dataclass(frozen=True)
class GroupMoves:
    """One group's test rows as the two rules decide them: ``n`` people, ``with_s_accepts`` of them accepted by the
    rule with s, ``refused_without`` of those refused by the rule without s, ``accepted_without`` others accepted by
    it instead; each share of the group with its 95% interval, and the net change of the group's acceptances
    (``accepted_without - refused_without`` over ``n``) with its paired interval."""

    n: int
    with_s_accepts: int
    refused_without: int
    accepted_without: int
    refused_ci: tuple
    accepted_ci: tuple
    net_ci: tuple

    @property
    def refused_share(self) -> float:
        return self.refused_without / self.n if self.n else float("nan")

    @property
    def accepted_share(self) -> float:
        return self.accepted_without / self.n if self.n else float("nan")

    @property
    def net_share(self) -> float:
        return (self.accepted_without - self.refused_without) / self.n if self.n else float("nan")


def decided_differently(pred_with, pred_blind, s, n_groups: int, level: float = LEVEL) -> tuple[GroupMoves, ...]:
    """Per group, the people the two rules decide differently (:class:`GroupMoves`), from both rules' decisions on
    the same rows."""
    w, b, s = (np.asarray(v).astype(int).ravel() for v in (pred_with, pred_blind, s))
    out = []
    for g in range(n_groups):
        rows = s == g
        both, out_, in_, neither = (int(np.sum(rows & (w == i) & (b == j))) for i, j in ((1, 1), (1, 0), (0, 1),
                                                                                          (0, 0)))
        n = int(rows.sum())
        refused, accepted = (tuple(float(v) for v in wilson_interval(k, n, level)) for k in (out_, in_))
        net = paired_difference_interval(both, in_, out_, neither, level)  # without s minus with s
        out.append(GroupMoves(n, both + out_, out_, in_, refused, accepted, net))
    return tuple(out)


def score_bands(score, s, n_groups: int, rows_a_band: int = MIN_BAND_ROWS, most: int | None = BANDS) -> np.ndarray:
    """Each row's stratum: its group and its with-s score's band within the group (quantile bands of about
    ``rows_a_band`` rows, at most ``most`` of them a group; ``None``: no limit), numbered group by group."""
    score, s = np.asarray(score, dtype=float).ravel(), np.asarray(s).astype(int).ravel()
    strata = np.zeros(score.size, dtype=np.int64)
    start = 0
    for g in range(n_groups):
        rows = np.flatnonzero(s == g)
        k = max(1, rows.size // rows_a_band)
        k = int(min(k, most)) if most else int(k)
        order = np.argsort(score[rows], kind="stable")
        band = np.empty(rows.size, dtype=np.int64)
        band[order] = (np.arange(rows.size) * k) // max(rows.size, 1)
        strata[rows] = start + band
        start += k
    return strata


@dataclass(frozen=True)
class Lean:
    """How much the rule without s leans on ``feature`` beyond the rule with s: the AUC of the feature at telling
    whom the blind rule accepts among people of one group and nearly the same with-s score (:data:`LEAN_BAND_ROWS`
    rows a band), pooled over those strata, with its 95% interval, and ``pairs`` (accepted, refused) compared. Above
    0.5: a higher value (for a level: having it) is accepted more often without s; below: less often. ``s_auc``: how
    well the feature alone tells the groups apart on the same rows (:func:`s_strengths`, 0.5 to 1)."""

    feature: str
    auc: float
    lo: float
    hi: float
    pairs: int
    s_auc: float = 0.5
    column: str = ""  # the table's column it comes from (a level's column)

    @property
    def strength(self) -> float:
        return abs(self.auc - 0.5)

    @property
    def carries_s(self) -> float:
        """How much of s the blind rule carries through the feature: its lean times how well it tells the groups
        apart, ``4 |auc - 0.5| (s_auc - 0.5)``, 0 (not leaned on, or no proxy) to 1 (decides by it, and it is s)."""
        return 4.0 * self.strength * (self.s_auc - 0.5)

    @property
    def clear(self) -> bool:
        """Whether the interval leaves out 0.5 (the rule is seen to lean on it)."""
        return bool(self.lo > 0.5 or self.hi < 0.5)


def leaned_on(X, names, score, s, pred_blind, n_groups: int, level: float = LEVEL, keep: int = NAMED,
              draws: int = DRAWS, seed: int = SEED) -> list[Lean]:
    """The ``keep`` features (columns of ``X``, ``names`` giving each one's ``(table column, words)``) the blind rule's
    decisions ``pred_blind`` depend on most among people of one group with nearly the same with-s ``score``,
    those that carry s most first (:attr:`Lean.carries_s`: a feature the blind rule weighs otherwise than the with-s
    rule but that says nothing of s is not how it finds s), one a table column (its strongest level: a column's levels
    mirror each other). Each band of
    :data:`LEAN_BAND_ROWS` rows where the blind rule accepts some and refuses others gives a Mann-Whitney count per
    feature; the AUC pools them (their sum over the bands' pairs), and its interval resamples the bands (a cluster
    bootstrap: a band's rows are compared only with each other). Bands so narrow that the with-s rule sees their
    rows alike leave what the blind rule adds: the features through which it finds s."""
    from scipy.stats import rankdata  # lazy: heavy, scipy.stats takes seconds on a page's first figure

    X = np.asarray(X, dtype=float)
    b = np.asarray(pred_blind).astype(int).ravel()
    strata = score_bands(score, s, n_groups, LEAN_BAND_ROWS, None)
    counts, pairs = [], []
    for k in np.unique(strata):
        rows = np.flatnonzero(strata == k)
        n1 = int(b[rows].sum())
        n0 = rows.size - n1
        if not n1 or not n0:
            continue
        ranks = rankdata(X[rows], axis=0)
        counts.append(ranks[b[rows] == 1].sum(axis=0) - n1 * (n1 + 1) / 2.0)
        pairs.append(n1 * n0)
    if not pairs:
        return []
    U, P = np.array(counts), np.array(pairs, dtype=float)
    auc = U.sum(axis=0) / P.sum()
    w = np.random.default_rng(seed).multinomial(len(P), np.full(len(P), 1.0 / len(P)), size=draws).astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        boot = (w @ U) / (w @ P)[:, None]
    lo, hi = np.nanpercentile(boot, [50 * (1 - level), 50 * (1 + level)], axis=0)
    tells_s = s_strengths(X, s, n_groups)
    leans = sorted((Lean(str(names[j][1]), float(auc[j]), float(lo[j]), float(hi[j]), int(P.sum()), float(tells_s[j]),
                         str(names[j][0])) for j in range(X.shape[1])),
                   key=lambda x: (-round(x.carries_s, 9), -round(x.strength, 9), x.feature))  # mirrored levels tie
    seen, out = set(), []
    for lean in leans:
        if lean.column not in seen:
            seen.add(lean.column)
            out.append(lean)
    return out[:keep]


def s_strengths(X, s, n_groups: int) -> np.ndarray:
    """How well each column of ``X`` alone tells the groups apart: its AUC for being in a group against the rest, as
    ``max(auc, 1 - auc)``, the largest over the groups (0.5: not at all; 1: it is s)."""
    from scipy.stats import rankdata  # lazy: heavy, scipy.stats takes seconds on a page's first figure

    X, s = np.asarray(X, dtype=float), np.asarray(s).astype(int).ravel()
    ranks = rankdata(X, axis=0)
    best = np.full(X.shape[1], 0.5)
    for g in range(n_groups):
        n1 = int(np.sum(s == g))
        n0 = s.size - n1
        if n1 and n0:
            a = (ranks[s == g].sum(axis=0) - n1 * (n1 + 1) / 2.0) / (n1 * n0)
            best = np.maximum(best, np.maximum(a, 1.0 - a))
    return best


def high_values(x, s, n_groups: int) -> np.ndarray:
    """Which rows have a high value of the feature ``x`` within their group: above the group's median, or, for a
    feature with two values in the group (a level), the larger one."""
    x, s = np.asarray(x, dtype=float).ravel(), np.asarray(s).astype(int).ravel()
    high = np.zeros(x.size, dtype=bool)
    for g in range(n_groups):
        rows = s == g
        values = np.unique(x[rows])
        if values.size == 2:
            high[rows] = x[rows] == values[1]
        elif values.size > 2:
            high[rows] = x[rows] > np.median(x[rows])
    return high


@dataclass(frozen=True)
class WithinGroup:
    """The within-group disparity on ``feature``: per group, the blind rule's acceptance of people with a high value
    minus a low one at the same with-s score band, pooled over the bands (``gap``, with its 95% interval ``ci``;
    NaN where no band holds both), and ``curve``: per group, per band, the band's mean with-s score, the rows and
    the blind rule's acceptance among the high and the low, and the rule with s's acceptance in the band."""

    feature: str
    gap: tuple
    ci: tuple
    curve: tuple

    def to_json(self) -> str:
        return json.dumps({"feature": self.feature, "curve": [list(map(list, c)) for c in self.curve]})


def within_group(feature: str, x, strata, s, score, pred_with, pred_blind, n_groups: int,
                 level: float = LEVEL) -> WithinGroup:
    """:class:`WithinGroup` for the feature ``x`` (a column of the test rows). The pooled difference weighs each band
    as Mantel and Haenszel do (``n_high * n_low / (n_high + n_low)``), with each band's variance from Agresti and
    Caffo's adjusted shares (one acceptance and one refusal added to each side), so a band where everyone is
    accepted still counts its uncertainty."""
    z = float(ndtri(0.5 + level / 2.0))
    s, strata = np.asarray(s).astype(int).ravel(), np.asarray(strata).ravel()
    score = np.asarray(score, dtype=float).ravel()
    w, b = np.asarray(pred_with).astype(int).ravel(), np.asarray(pred_blind).astype(int).ravel()
    high = high_values(x, s, n_groups)
    gaps, cis, curves = [], [], []
    for g in range(n_groups):
        num = den = var = 0.0
        curve = []
        for k in np.unique(strata[s == g]):
            rows = strata == k
            hi, lo = rows & high, rows & ~high
            nh, nl = int(hi.sum()), int(lo.sum())
            curve.append((round(float(score[rows].mean()), 4), nh, round(float(b[hi].mean()), 4) if nh else None,
                          nl, round(float(b[lo].mean()), 4) if nl else None, round(float(w[rows].mean()), 4)))
            if not nh or not nl:
                continue
            weight = nh * nl / (nh + nl)
            num += weight * (b[hi].mean() - b[lo].mean())
            ph, pl = (b[hi].sum() + 1) / (nh + 2), (b[lo].sum() + 1) / (nl + 2)
            var += weight ** 2 * (ph * (1 - ph) / (nh + 2) + pl * (1 - pl) / (nl + 2))
            den += weight
        gap = num / den if den else float("nan")
        half = z * np.sqrt(var) / den if den else float("nan")
        gaps.append(float(gap))
        cis.append((float(max(gap - half, -1.0)), float(min(gap + half, 1.0))) if den else (np.nan, np.nan))
        curves.append(tuple(curve))
    return WithinGroup(feature, tuple(gaps), tuple(cis), tuple(curves))


@dataclass(frozen=True)
class WhoPays:
    """Who pays on one split: the people decided differently per group, the features leaned on (strongest first) and
    the within-group disparity on the first of them."""

    moves: tuple
    leans: tuple
    within: WithinGroup | None

    def leans_json(self) -> str:
        return json.dumps([[x.column, x.feature, round(x.auc, 4), round(x.lo, 4), round(x.hi, 4), x.pairs,
                            round(x.s_auc, 4)] for x in self.leans])


def who_pays(X, names, s, score_with, pred_with, pred_blind, n_groups: int) -> WhoPays:
    """:class:`WhoPays` from one split's test rows: their features ``X`` (``names``: each one's ``(table column,
    words)``), groups, the with-s rule's
    scores and both rules' decisions."""
    strata = score_bands(score_with, s, n_groups)
    leans = leaned_on(X, names, score_with, s, pred_blind, n_groups)
    within = None
    if leans:
        j = [w for _, w in names].index(leans[0].feature)
        within = within_group(leans[0].feature, np.asarray(X)[:, j], strata, s, score_with, pred_with, pred_blind,
                              n_groups)
    return WhoPays(decided_differently(pred_with, pred_blind, s, n_groups), tuple(leans), within)
