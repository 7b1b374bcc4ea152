"""Who pays for deciding without s, in words an analyst can quote (issue 49): the people decided differently in each
group, the feature the rule without s finds s through, and the within-group disparity on it. The same paragraph is
printed by the CLI, shown on Compare and written in the report, beside the price's sentence.
"""
from __future__ import annotations

import numpy as np

from ...data import meaning
from ..blindness import group_name
from ..intervals import OVER_SPLITS_WORDS
from .table import WITHIN, who_pays_tables

PROXY_AUC = 0.6  # a feature that tells the groups apart with at least this AUC alone is said to stand in for s


def _pct(v: float) -> str:
    return f"{100 * v:.1f}%"


def _points(ci) -> str:
    return f"{100 * ci[1]:+.1f} to {100 * ci[2]:+.1f} points"


def _share_ci(ci) -> str:
    return f"95% interval {100 * ci[1]:.1f}% to {100 * ci[2]:.1f}%"


def _count(v: float) -> str:
    return f"{v:,.0f}" if np.isfinite(v) else "?"


GENERIC = ("given a positive decision", "given a negative decision")  # without the task's words for its decisions


def moves_words(row: dict, name: str, s_name: str, over: str, words=GENERIC) -> str:
    """One group's people decided differently, ``words`` being the positive and negative decisions
    (:func:`fairdash.data.meaning.outcome_words`): "Of the 813 people in group B in a split's test rows, deciding with
    race, 335 are flagged as reoffending; without race, 71 of those are cleared (...) and 75 others are flagged as
    reoffending instead (...): net ..."."""
    pos, neg = words
    net = row["net_accepted_without_s"]
    side = ("" if not np.isfinite(net[1]) else
            ", the interval holding zero" if net[1] <= 0 <= net[2] else ", wholly above zero" if net[1] > 0 else
            ", wholly below zero")
    refused, accepted = _count(row["refused"]), _count(row["accepted"])
    return (f"Of the {_count(row['n'])} people in group {name} in {over}, deciding with {s_name}, "
            f"{_count(row['with_s_accepts'])} are {pos}; without {s_name}, {refused} of those "
            f"{'is' if refused == '1' else 'are'} {neg} ({_pct(row['refused_without_s'][0])} of the group, "
            f"{_share_ci(row['refused_without_s'])}) and {accepted} {'other is' if accepted == '1' else 'others are'}"
            f" {pos} instead ({_pct(row['accepted_without_s'][0])}, {_share_ci(row['accepted_without_s'])}): "
            f"net {100 * net[0]:+.1f} points of the group {pos} ({_points(net)}{side}).")


def _high_words(feature: str) -> str:
    return f"people with {feature}" if " = " in feature else f"people above their group's median {feature}"


def lean_words(table: dict, s_name: str, words=GENERIC) -> str:
    """The feature the rule without s leans on most beyond the rule with s, and whether it stands in for s."""
    if "feature" not in table:
        return (f"No feature tells whom the rule without {s_name} decides otherwise among people the rule with "
                f"{s_name} scores alike (the two rules never disagree within such a band).")
    f, auc, n = table["feature"], table["auc"], table["splits"]
    lean = (f"AUC {auc[0]:.2f}, 95% interval {auc[1]:.2f} to {auc[2]:.2f}"
            + (f"; named first on {table['first_on']} of {n} splits" if n > 1 else ""))
    how = "more" if auc[0] >= 0.5 else "less"
    proxy = table.get("s_auc", 0.5)
    if not table["clear"] or proxy < PROXY_AUC:
        why = ("its interval holds 0.5" if not table["clear"] else
               f"and it tells {s_name} apart with AUC {proxy:.2f} only, under {PROXY_AUC:.2f}")
        return (f"The table cannot tell which feature the rule without {s_name} finds {s_name} through: the one it "
                f"leans on most beyond the rule with {s_name} is {f} ({lean}), but {why}.")
    others = "; ".join(f"{o[0]} (AUC {o[1]:.2f})" for o in table.get("others", [])[:2])
    return (f"Without {s_name}, the rule leans most on {f}: among people of one group whom the rule with {s_name} "
            f"scores alike, {_high_words(f)} are {words[0]} {how} often without {s_name} ({lean}); {f} alone "
            f"tells {s_name} apart with AUC {proxy:.2f}." + (f" It also leans on {others}." if others else ""))


def within_words(table: dict, s_name: str, group_names, words=GENERIC) -> str:
    """The within-group disparity on the feature leaned on most, per group."""
    rows = [(g, r[WITHIN]) for g, r in enumerate(table["groups"]) if WITHIN in r and np.isfinite(r[WITHIN][0])]
    if "feature" not in table or not rows:
        return ""
    def one(g, ci) -> str:
        side = ", an interval holding zero" if ci[1] <= 0 <= ci[2] else ""
        how = "more" if ci[0] >= 0 else "less"
        return (f"{abs(100 * ci[0]):.1f} points {how} often than the others in group {group_name(group_names, g)} "
                f"(95% interval {_points(ci)}{side})")

    return (f"Within each group, among people in the same band of the rule with {s_name}'s score, without {s_name} "
            f"{_high_words(table['feature'])} are {words[0]} " + "; ".join(one(g, ci) for g, ci in rows) + ".")


def decision_meaning(spec) -> str:
    """What a positive decision is for the task ``spec`` (a :class:`~fairdash.data.TaskSpec`), in words: "a positive
    decision predicts two-year-recid = 1, unfavourable for the person"."""
    label = " or ".join(f"{spec.y_column} = {v}" for v in spec.y1_values) if spec.y1_values else (
        f"{spec.y_column} > {spec.y_threshold:g}")
    fav, how = meaning.label_favourable(spec)
    return (f"a positive decision predicts {label}, {meaning.WORDS[fav]} for the person"
            + (", assumed as nothing says otherwise" if how == meaning.ASSUMED else ""))


def who_pays_sentences(results, s_name: str = "s", group_names=None, spec=None) -> list[str]:
    """Per target rate with a price, the paragraph: the people decided differently in each group, with counts and
    95% intervals, the feature leaned on instead of s and the within-group disparity on it; with the task's ``spec``,
    what a positive decision means for the person."""
    out = []
    for t, table in who_pays_tables(results):
        n = table["splits"]
        over = "a split's test rows" + (f" (means of {n} splits; intervals by {OVER_SPLITS_WORDS.format(n=n)})"
                                         if n > 1 else " (intervals over those rows only)")
        at = f" at PR_t {t:.2f}" if t is not None and np.isfinite(t) else ""
        parts = [f"Who pays for deciding without {s_name}{at}" + (f" ({decision_meaning(spec)})" if spec else "")
                 + ":"]
        words = meaning.outcome_words(spec)[:2] if spec is not None else GENERIC
        parts += [moves_words(r, group_name(group_names, g), s_name, over if g == 0 else "a split's test rows", words)
                  for g, r in enumerate(table["groups"])]
        parts += [lean_words(table, s_name, words), within_words(table, s_name, group_names, words)]
        out.append(" ".join(p for p in parts if p))
    return out

