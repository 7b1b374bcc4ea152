"""Runs as the dashboard keeps them: one training run with everything that describes it (the request,
the task, the data's name, results and fitted models), its title in lists, and ``train_run``, which
trains a :class:`~fairdash.files.run_spec.RunSpec` into a :class:`Run`."""
from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass, field

import pandas as pd

from ..progress import utc_now
from ..data import Task
from .experiments import run_experiment
from ..models.registry import MODELS, model_info
from ..files.run_spec import RunSpec
from ..target.target_spec import criterion_info


# --------------------------------------------------------------------------------------------------
@dataclass
class Run:
    """One training run with everything that describes it: the request (:class:`RunSpec`), the task it
    was trained on, the data's name, its results and fitted models. Export and the report describe the
    run from here, whatever is loaded later."""

    spec: RunSpec
    task: Task
    data_name: str
    results: pd.DataFrame
    models: dict = field(default_factory=dict)
    skipped: list = field(default_factory=list)
    data_description: str = ""
    seconds: float = 0.0
    created: str = field(default_factory=utc_now)
    number: int = 0
    leaks: tuple = ()  # feature columns that gave s or y away when it was trained
    same_as: int = 0  # the number of an earlier run of the session with the very same description

    @property
    def key(self) -> str:
        return run_key(self.task, self.spec)

    def summary_parts(self) -> list[str]:
        names = list(dict.fromkeys(self.spec.models)) or ["no models"]
        labels = ", ".join(model_info(m).label if m in MODELS else m for m in names)
        g = self.spec.target
        grid = [t for t in self.spec.target_rates if isinstance(t, float)]
        target = (f"TPR {g.tpr_target:.2f} / TNR {g.tnr_target:.2f}" if g.explicit
                  else f"PR_t {grid[0]:.3f}–{grid[-1]:.3f}" if len(grid) > 1
                  else f"PR_t {(grid or [g.target_rate])[0]:.3f}" if grid or g.target_rate is not None
                  else f"{g.preset} preset")
        t = self.spec.task
        crit = criterion_info(g.criterion).words + (f" given {g.strata_column}" if g.conditional else "")
        parts = [labels, self.data_name, f"s = {t.s_column}" + (f" × {t.s_with}" if t.s_with else "")
                 + f", y = {t.y_column}", f"{crit}, {target}"]
        if g.decision != "threshold":
            parts.append(g.decision + (" (decides with s)" if g.decision_rule.needs_s else ""))
        if t.drop:
            parts.append("without " + ", ".join(map(str, t.drop)))
        if t.s_as_feature:
            parts.append("sees s")
        if self.leaks:
            parts.append("trained with a leak (" + ", ".join(map(str, self.leaks)) + ")")
        if len(self.spec.seeds) > 1:
            parts.append(f"{len(self.spec.seeds)} repeats")
        return parts

    @property
    def title(self) -> str:
        """The run's name in lists: number, time, models, data, s and y, criterion and target, decision
        rule, dropped features and flags; an exact repeat of an earlier run's settings says so."""
        when = self.created[11:16] if len(self.created) >= 16 else self.created
        text = f"Run {self.number} ({when} UTC): " + " · ".join(self.summary_parts())
        return text + (f" · same settings as Run {self.same_as}" if self.same_as else "")

    @property
    def description(self) -> str:
        """The full text (for hover): the title plus the target in words."""
        return f"{self.title}. Target: {self.spec.target.describe()}. Trained on {self.data_name!s}."


def run_key(task: Task, spec: RunSpec) -> str:
    """Same data and same request, same key (a repeated Train press is recognised before training)."""
    import json

    text = json.dumps(spec.to_dict(), sort_keys=True, default=str) + task.fingerprint
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def train_run(task: Task, spec: RunSpec, *, data_name: str, data_description: str = "", number: int = 0,
              only_serving: bool = True, leaks=(), **kwargs) -> Run:
    """``run_experiment`` for a :class:`RunSpec`, kept as a :class:`Run` (models kept); ``leaks`` names
    the feature columns that gave s or y away, so the run says it was trained with them."""
    t0 = time.perf_counter()
    exp = run_experiment(task, list(spec.models), spec.target_rates, spec.seeds, target=spec.target,
                         options=spec.options, keep_models=True, only_serving=only_serving, **kwargs)
    res = exp.results
    if not only_serving:  # a model run outside the criterion it was made for says so everywhere
        for i, m in res["model"].items():
            info = model_info(m)
            if not info.serves(spec.target.criterion):
                res.loc[i, "label"] = f"{res.loc[i, 'label']} (made for {'/'.join(info.criteria)})"
    return Run(spec, task, data_name, res, exp.models, exp.skipped, data_description,
               time.perf_counter() - t0, number=number, leaks=tuple(leaks))


