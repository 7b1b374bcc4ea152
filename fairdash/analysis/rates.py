"""What a target implies for a task, on its training split: the numbers behind the dashboard's
slider and ``python -m fairdash rates``. Both call :func:`rates_readout`, so they always agree."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..data import Split, Task, split_task
from ..data.meaning import GENERIC_RATE, label_favourable
from ..errors import FairDashError
from ..targeting import targets
from ..targeting.criteria import Criterion
from ..targeting.target_spec import TargetSpec, make_target_spec
from .separability import JOINT_LEAK_AUC, s_predictability


@dataclass(frozen=True)
class TrainingRates:
    """Base rates and group shares of a task's training split (what every readout starts from)."""

    base_rates: np.ndarray
    group_shares: np.ndarray
    n_train: int
    n_test: int
    n_test_balanced: int
    group_names: tuple

    @property
    def presets(self) -> dict:
        return targets.presets(self.base_rates)


def training_rates(task: Task, split: Split | None = None, seed: int = 0) -> TrainingRates:
    split = split or split_task(task, seed=seed)
    y, s = task.y[split.train], task.s[split.train]
    r = targets.base_rates(y, s, task.n_groups)
    return TrainingRates(r, targets.group_shares(s, task.n_groups), len(split.train), len(split.test),
                         len(split.balanced_test), task.group_names)


def target_table(rates: TrainingRates, spec: TargetSpec | None = None) -> targets.TransitionTable:
    """The transition table of ``spec`` (default: demographic parity at the avg preset) on the training
    split's rates."""
    spec = spec or make_target_spec()
    return spec.table(rates.base_rates, rates.group_shares, rates.group_names)


def _strata_readout(task: Task, split: Split, spec: TargetSpec) -> dict:
    """Per-stratum readout of conditional parity: ``{stratum: {base_rates, group_share, target_rates, t,
    transition, flips, ceiling_at_target, rows}}`` on the training split, plus the share-weighted ceiling."""
    tr = split.train
    ct = spec.conditional_tables(task.y[tr], task.s[tr], task.strata[tr], task.strata_names, task.n_groups)
    out = {}
    for k, tb in enumerate(ct.tables):
        d = tb.to_dict()
        d = {key: d[key] for key in ("base_rates", "group_share", "target_rates", "t", "transition", "flips",
                                     "ceiling_at_target")}
        d["rows"] = {str(j): int(ct.cell_counts[k, j]) for j in range(tb.n_groups)}
        out[str(ct.strata[k])] = d
    return {"strata": out, "strata_ceiling_at_target": ct.accuracy_ceiling, "strata_warnings": list(ct.warnings)}


def rates_readout(task: Task, spec: TargetSpec | None = None, seed: int = 0, split: Split | None = None,
                  target_rate=None) -> dict:
    """The ``rates --json`` object: base rates, group share, target rate, presets, ``t``, the flipped
    regions, transition probabilities, Theorem 2's bound and the split sizes, on the training split.
    Groups are keyed "0", "1", ... With a legitimate factor, ``strata`` holds the same per stratum and
    ``strata_ceiling_at_target`` the share-weighted ceiling the conditional model must respect.

    ``s_predictability`` is the cross-validated ROC AUC of a logistic regression predicting ``s`` from
    the features on the training split (:func:`fairdash.analysis.separability.s_predictability`; remembered per
    task and split, so a readout asked again costs nothing).

    ``spec`` is the :class:`~fairdash.targeting.target_spec.TargetSpec` (default: parity at the avg preset); a bare
    ``target_rate`` is shorthand for ``make_target_spec(target_rate=...)``."""
    if spec is not None and not isinstance(spec, TargetSpec):  # a bare rate or preset name in its place
        if target_rate is not None:
            raise FairDashError("Give the target either as a specification or as a rate, not both.")
        spec, target_rate = None, spec
    if spec is None:
        spec = make_target_spec(target_rate=target_rate, strata_column=task.spec.strata_column)
    elif target_rate is not None:
        raise FairDashError("Give the target either as a specification or as a rate, not both.")
    if spec.conditional and spec.strata_column != task.spec.strata_column:
        raise FairDashError(f"The target is conditional on {spec.strata_column!r}, but the task's legitimate "
                            f"factor is {task.spec.strata_column!r}.")
    return readout_and_table(task, spec, seed, split)[0]


def readout_and_table(task: Task, spec: TargetSpec, seed: int = 0, split: Split | None = None):
    """:func:`rates_readout`'s dict for a :class:`TargetSpec` and the transition table it was read from,
    computed once (the Target page draws both on every slider move)."""
    split = split or split_task(task, seed=seed)
    rates = training_rates(task, split)
    table = target_table(rates, spec)
    out = table.to_dict()
    resolved = spec.rate_for(rates.base_rates)
    out.update({
        "target_rate": float(np.mean(table.target_rates)) if resolved is None and not spec.conditional else resolved,
        "target": spec.to_dict(),
        "target_text": spec.describe(resolved),
        "presets": rates.presets,
        "groups": {str(j): g for j, g in enumerate(task.group_names)},
        # is a positive label favourable for the person (said, read from its meaning, or assumed), and so
        # which group is the disadvantaged one on the training split (lowest base rate, or highest)
        "positive_favourable": label_favourable(task.spec)[0],
        "disadvantaged_group": str(targets.disadvantaged_group(rates.base_rates, label_favourable(task.spec)[0])),
        "n_train": rates.n_train,
        "n_test": rates.n_test,
        "n_test_balanced": rates.n_test_balanced,
        "seed": seed,
        # how well the features (s left out) tell the groups apart: computed once per task and split
        "s_predictability": s_predictability(task, split),
    })
    if spec.criterion_info.positives_only and not spec.explicit and not spec.conditional:
        # equality of opportunity with one PR_t: every group is held to the target labels' TPR over all groups
        pos = np.asarray(table.group_shares) * np.asarray(table.base_rates)
        tprs = np.asarray(table.p_ybar1_given_y)[:, 1]
        common = float(np.dot(tprs, pos) / pos.sum()) if pos.sum() > 0 else float(np.mean(tprs))
        out["common_tpr"] = common
        out["positive_rate_floor"] = {str(j): float(common * b) for j, b in enumerate(table.base_rates)}
    if spec.explicit:
        out["target_rate"] = None  # no single PR_t was asked for; target_rates holds each group's implied rate
    if spec.conditional:
        if out["target_rate"] is None:
            out["target_rate"] = float(np.mean(table.target_rates))  # the reference table's (whole split) PR_t
        out.update(_strata_readout(task, split, spec))
    return out, table


def common_tpr_words(out: dict, names) -> str:
    """Under equality of opportunity with one PR_t, the one TPR every group is held to and the positive rates it
    implies before anything is trained ("" otherwise): each group's positives times that TPR are decided positive
    at the least, and a model's false positives add to it."""
    if "common_tpr" not in out:
        return ""
    c = out["common_tpr"]
    floors = ", ".join(f"{names[int(k)]} {v:.3f}" for k, v in out["positive_rate_floor"].items())
    return (f"Under equality of opportunity every group is held to one true positive rate, {c:.3f} (the target labels' "
            f"TPR over all groups at PR_t {out['target_rate']:.3f}). That alone decides at least this share of each "
            f"group positive: {floors} (its base rate times {c:.3f}); a model's false positives add to it, so the "
            "positive rates will be higher than these and need not be near PR_t.")


def _moved_words(moved: dict | None, direction: int) -> str:
    """The label transition's own changes in words: the share of the group's labels it moves each way,
    drawn at random from the whole class, at every chance of a positive label."""
    if moved is None:
        pool = "negatives" if direction == 0 else "positives"
        return (f" The target labels themselves move from {direction} to {1 - direction} at random among the group's "
                f"{pool}, at every chance of a positive label, not only in that band.")
    up, down = float(moved["0_to_1"]), float(moved["1_to_0"])
    parts = []
    for share, a, b, pool in ((up, 0, 1, "negatives"), (down, 1, 0, "positives")):
        if share > 1e-12:
            parts.append(f"{share:.1%} of the group's labels move from {a} to {b} (at random among its {pool})")
    if not parts:
        return " No labels are changed."
    return (" The target labels themselves change: " + " and ".join(parts)
            + ", at every chance of a positive label, not only in that band.")


def decisions_words(base_rate: float, target_rate: float, people: int | None = None,
                    outcome: tuple[str, str, str] | None = None) -> str:
    """The least share of a group whose decisions differ from its labels under a model that meets the
    target: ``|PR_t - PR_b|``, in words; with ``people`` (the group's rows) also as a count of people, and with
    ``outcome`` (:func:`fairdash.data.meaning.outcome_words`: "denied", "approved", "denial rate") in the label's
    words: "... (31 of 750 people in the training rows) differently from its labels: 31 more people denied than by
    the labels (denial rate 0.200 to 0.241)"."""
    share = abs(target_rate - base_rate)
    positive, _, rate = outcome or ("given a positive decision", "", GENERIC_RATE)
    if people is None:
        return (f" A model that meets the target decides at least {share:.1%} of the group "
                f"differently from its labels ({rate} {base_rate:.3f} to {target_rate:.3f}).")
    moved = int(round(share * people))
    more = "more" if target_rate > base_rate else "fewer"
    count = f": {moved:,} {more} {'person' if moved == 1 else 'people'} {positive} than by the labels" if moved else ""
    of = f"{moved:,} of {people:,} {'person' if people == 1 else 'people'} in the training rows"
    return (f" A model that meets the target decides at least {share:.1%} of the group ({of}) differently from its "
            f"labels{count} ({rate} {base_rate:.3f} to {target_rate:.3f}).")


def describe_t(t, group: str, flip: dict | None = None, moved: dict | None = None) -> str:
    """Theorem 1's ``t_s`` in words: the one-sided band ``(c_s, 1/2)`` where the Bayes *decision* for the
    target label differs from the one for the observed label (METHOD.md, third fix), and what the label
    transition itself moves: ``moved`` (the readout's ``labels_moved`` of the group: shares of the group's
    labels moved ``0_to_1`` and ``1_to_0``, for ``delta = 1`` one of them ``|PR_t - PR_b^s|``), spread over
    every chance of a positive label, not only over the band."""
    if flip is None or t is None or not np.isfinite(t):
        return (f"For {group}, the target labels do not follow the observed labels, so no threshold "
                "describes which labels change.")
    if flip["from"] is None or t == 0:
        moves = _moved_words(moved, 0) if moved is not None else " No labels are changed."
        if moves == " No labels are changed.":
            return f"For {group}, the target rate equals the base rate: no labels are changed."
        return f"For {group}, the target rate equals the base rate: no decision changes." + moves
    lo, hi = flip["eta_low"], flip["eta_high"]
    if flip["from"] == 0:
        who = ("everyone the data would call negative (chance of a positive label below 1/2)" if lo <= 0.0
               else f"people whose chance of a positive label is between {lo:.3f} and 1/2")
        return (f"For {group} (t_s = {t:.3f}), the decision changes for {who}: a model of the target label calls "
                "them positive, a model of the observed label negative." + _moved_words(moved, 0))
    who = ("everyone the data would call positive (chance of a positive label above 1/2)" if hi >= 1.0
           else f"people whose chance of a positive label is between 1/2 and {hi:.3f}")
    return (f"For {group} (t_s = {t:.3f}), the decision changes for {who}: a model of the target label calls "
            "them negative, a model of the observed label positive." + _moved_words(moved, 1))


# what a model that does not see s can do, by how well the features tell the groups apart
APART, PARTLY = 0.8, 0.7


def s_predictability_text(auc: float | None, s_name: str, n_groups: int = 2) -> str:
    """``s_predictability`` in one sentence: what a model that does not see ``s`` (named ``s_name``) can
    do, given how well the features tell the groups apart (cut-offs: ``JOINT_LEAK_AUC``, ``APART``,
    ``PARTLY``)."""
    both = "both groups" if n_groups == 2 else "all groups"
    if auc is None:
        return f"The features carry nothing about {s_name}: a model that does not see {s_name} moves {both} together."
    if auc >= JOINT_LEAK_AUC:
        return (f"The features give {s_name} away (AUC {auc:.2f}): a model that does not see {s_name} can treat "
                f"the groups as differently as one that does.")
    if auc >= APART:
        return (f"The features tell the groups apart with AUC {auc:.2f}: a model that does not see {s_name} can "
                f"still treat the groups differently.")
    if auc >= PARTLY:
        return (f"The features tell the groups apart only partly (AUC {auc:.2f}): a model that does not see "
                f"{s_name} can move the groups' rates apart, but not far.")
    other = "the other's" if n_groups == 2 else "the others'"
    return (f"The features tell the groups apart only with AUC {auc:.2f}: a model that does not see {s_name} "
            f"moves {both} together (lowering one group's rate lowers {other}).")


def evaluation_rates(task: Task, criterion: Criterion, seed: int = 0, population: bool = False):
    """Base rates and group shares of the rows a seed's metrics are measured on: the balanced test set
    for demographic parity, the test set for opportunity, or (``population``) the ordinary test set.
    The ceilings drawn beside measured accuracy are computed on these."""
    split = split_task(task, seed=seed)
    idx = split.balanced_test if criterion.balanced_eval and not population else split.test
    return targets.base_rates(task.y[idx], task.s[idx], task.n_groups), targets.group_shares(task.s[idx], task.n_groups)
