"""What a target implies for a task, on its training split: the numbers behind the dashboard's
slider and ``python -m fairdash rates``. Both call :func:`rates_readout`, so they always agree."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import targets
from .data import Split, Task, split_task
from .errors import FairDashError


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


def target_table(rates: TrainingRates, target_rate: float | None = None, criterion: str = "dp",
                 delta: float = 1.0, tpr_target=None, tnr_target=None) -> targets.TransitionTable:
    """The transition table for the chosen target: demographic parity (or equality of opportunity
    judged by TPR, which trains the same way) at ``target_rate`` (default: the avg preset), or
    explicit TPR/TNR targets when both are given."""
    if criterion not in ("dp", "eo"):
        raise FairDashError("The criterion must be 'dp' (demographic parity) or 'eo' (equality of opportunity).")
    if criterion == "eo" and tpr_target is not None and tnr_target is not None:
        return targets.eo_transition_table(rates.base_rates, rates.group_shares, tpr_target, tnr_target,
                                           rates.group_names)
    t = rates.presets["avg"] if target_rate is None else target_rate
    table = targets.transition_table(rates.base_rates, rates.group_shares, t, delta, rates.group_names)
    return table if criterion == "dp" else _with_criterion(table, "eo")


def _with_criterion(table, criterion):
    from dataclasses import replace

    return replace(table, criterion=criterion)


def rates_readout(task: Task, target_rate: float | None = None, seed: int = 0, split: Split | None = None,
                  **table_options) -> dict:
    """The ``rates --json`` object: base rates, group share, target rate, presets, ``t``, transition
    probabilities, Theorem 2's bound and the split sizes. Groups are keyed "0", "1", ..."""
    split = split or split_task(task, seed=seed)
    rates = training_rates(task, split)
    table = target_table(rates, target_rate, **table_options)
    out = table.to_dict()
    out.update({
        "target_rate": float(np.mean(table.target_rates)),
        "presets": rates.presets,
        "groups": {str(j): g for j, g in enumerate(task.group_names)},
        "n_train": rates.n_train,
        "n_test": rates.n_test,
        "n_test_balanced": rates.n_test_balanced,
        "seed": seed,
    })
    return out


def describe_t(t: float, group: str) -> str:
    """Theorem 1's ``t_s`` in words."""
    if t is None or not np.isfinite(t):
        return f"For {group}, the target does not depend on the label, so every label may change."
    if t == 0:
        return f"For {group}, the target rate equals the base rate: no labels are changed."
    return (f"For {group}, labels whose true probability lies within {t:.3f} of 1/2 "
            f"(between {max(0.0, 0.5 - t):.3f} and {min(1.0, 0.5 + t):.3f}) are the ones the target flips: "
            "a larger value means labels further from the decision boundary are changed.")
