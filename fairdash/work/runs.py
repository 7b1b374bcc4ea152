"""Runs as the dashboard keeps them: one training run with everything that describes it (the request,
the task, the data's name, results and fitted models), its title in lists, and ``train_run``, which
trains a :class:`~fairdash.files.run_spec.RunSpec` into a :class:`Run`."""
from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..data import Task
from ..figures.plot_style import RUN
from ..files.run_spec import RunSpec
from ..models.registry import MODELS, model_info
from ..progress import utc_now
from ..targeting.criteria import Criterion
from ..targeting.decision import choosable, rule_info
from ..targeting.target_spec import TargetSpec
from .experiments import ExperimentPlan, PlannedFit, plan_fits, priced, run_experiment, serving_models

PAPER_METHOD = ("fair-lr", "fair-gp")  # the paper's own models: offered first for download
DEFAULT_MODELS = ("fair-lr", "lr")  # a training's models until the analyst picks others: the method and its baseline


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
    sides: list = field(default_factory=list)  # each fit as the price of deciding without s sees it (priced_together)
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
        crit = g.criterion_info.words + (f" given {g.strata_column}" if g.conditional else "")
        parts = [labels, self.data_name, f"s = {t.s_column}" + (f" × {t.s_with}" if t.s_with else "")
                 + f", y = {t.y_column}", f"{crit}, {target}"]
        if g.decision_rule.aims_at_target:
            parts.append(g.decision_rule.named)
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

    def model_words(self, key) -> str:
        """A fitted model of the run in a list: its label, its PR_t where it has one, its repeat."""
        name, t, seed = key[:3]
        tt = "" if t is None or (isinstance(t, float) and np.isnan(t)) else f", PR_t {float(t):.3f}"
        rule = f", decided by {rule_info(key[3]).named}" if len(key) > 3 else ""  # a run of several rules
        return f"{self.models[key].label}{tt}{rule}, repeat {seed}"

    def default_model(self, target_rate: float | None = None):
        """The fitted model offered first for download: one of the paper's method (``PAPER_METHOD``), at the
        PR_t nearest ``target_rate`` (a model without one after those with one), the first repeat."""
        def order(key):
            name, t, seed = key[:3]
            swept = t is not None and not np.isnan(t)
            return (name not in PAPER_METHOD, not swept,
                    abs(float(t) - float(target_rate or 0)) if swept else 0.0, seed)
        return min(self.models, key=order, default=None)

    @property
    def description(self) -> str:
        """The full text (for hover): the title plus the target in words."""
        return f"{self.title}. Target: {self.spec.target.describe()}. Trained on {self.data_name!s}."


# --------------------------------------------------------------------------------------------------
# The job plan: what a training may sweep, the rules and models it offers, its grid, its fits
# --------------------------------------------------------------------------------------------------
def sweepable(target: TargetSpec | None) -> bool:
    """Whether a training may sweep PR_t over a grid: a target of one PR_t (not explicit TPR/TNR targets,
    not each stratum's own preset)."""
    return target is not None and not target.explicit and not (target.conditional and target.target_rate is None)


def sweep_grid(start: float, stop: float, points: int) -> list[float]:
    """The sweep's targets: ``points`` PR_t evenly from ``start`` to ``stop`` (either order), three decimals,
    each once."""
    return sorted({round(float(t), 3) for t in np.linspace(min(start, stop), max(start, stop), int(points))})


def offered_rules(task: Task, criterion: Criterion) -> tuple:
    """The decision rules a training offers: with a legitimate factor the criterion applies, those that
    combine with it."""
    return choosable(bool(task.spec.strata_column and criterion.supports_strata))


def offered_models(available, criterion: Criterion, include_other: bool = False) -> list[str]:
    """The models a training offers: those that serve ``criterion`` (or every available one)."""
    return [m for m in available if include_other or MODELS[m].serves(criterion)]


@dataclass(frozen=True)
class TrainingPlan:
    """What a training of a :class:`RunSpec` will do: its fits in order and the models it skips."""
    fits: tuple  # of experiments.PlannedFit
    skipped: tuple = ()

    @property
    def n_fits(self) -> int:
        return len(self.fits)


def plan_training(spec: RunSpec, *, only_serving: bool = True) -> TrainingPlan:
    """The plan of :func:`train_run` for ``spec``: the same fits :func:`run_experiment` runs (both read
    :func:`fairdash.work.experiments.plan_fits`)."""
    models, skipped = serving_models(spec.models, spec.target.criterion_info, only_serving)
    fits: list[PlannedFit] = plan_fits(models, spec.target, spec.target_rates, spec.seeds, spec.decisions or None)
    return TrainingPlan(tuple(fits), tuple(skipped))


def side_by_side(runs) -> pd.DataFrame:
    """The results rows of several runs drawn together: with more than one run, each row carries its run's
    number as data (the ``run`` column, :data:`fairdash.figures.plot_style.RUN`, which the figures' styles read) and
    its label says it in words (``FairLR · run 2``)."""
    runs = list(runs)
    frames = []
    for r in runs:
        f = r.results.copy()
        if len(runs) > 1:
            f["label"] = f["label"].astype(str) + f" · run {r.number}"
            f[RUN] = r.number
        frames.append(f)
    return priced_together(runs, pd.concat(frames, ignore_index=True))


def rows_together(runs) -> pd.DataFrame:
    """The results rows of ``runs`` as they are, one after the other, priced together (:func:`priced_together`)."""
    runs = list(runs)
    return priced_together(runs, pd.concat([r.results for r in runs], ignore_index=True, sort=False))


def priced_together(runs, results: pd.DataFrame) -> pd.DataFrame:
    """``results`` (the rows of ``runs`` together) with the price of deciding without s measured over the runs' fits
    together (:func:`fairdash.work.experiments.priced`: a rule with s in one run, a blind one in another, on the same
    splits and target), where they are runs of one task; as they are otherwise."""
    runs = list(runs)
    if len(runs) < 2 or any(r.task is not runs[0].task for r in runs):
        return results
    return priced(runs[0].task, results, [x for r in runs for x in r.sides], runs[0].spec.target.criterion_info)


def run_key(task: Task, spec: RunSpec) -> str:
    """Same data and same request, same key (a repeated Train press is recognised before training)."""
    import json

    text = json.dumps(spec.to_dict(), sort_keys=True, default=str) + task.fingerprint
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def train_run(task: Task, spec: RunSpec, *, data_name: str, data_description: str = "", number: int = 0,
              only_serving: bool = True, leaks=(), device="auto", **kwargs) -> Run:
    """``run_experiment`` for a :class:`RunSpec`, kept as a :class:`Run` (models kept); ``leaks`` names
    the feature columns that gave s or y away, so the run says it was trained with them; ``kwargs`` say how the
    fits run (``cache``, ``n_jobs``, ``progress``, ``dask_address``: :func:`run_experiment`)."""
    t0 = time.perf_counter()
    plan = ExperimentPlan(task, list(spec.models), spec.target_rates, spec.seeds, target=spec.target,
                          decisions=spec.decisions or None, options=spec.options, device=device,
                          only_serving=only_serving, price=True, keep_models=True)
    exp = run_experiment(plan, **kwargs)
    res = exp.results
    if not only_serving:  # a model run outside the criterion it was made for says so everywhere
        for i, m in res["model"].items():
            info = model_info(m)
            if not info.serves(spec.target.criterion_info):
                res.loc[i, "label"] = f"{res.loc[i, 'label']} (made for {'/'.join(info.criteria)})"
    return Run(spec, task, data_name, res, exp.models, exp.skipped, data_description,
               time.perf_counter() - t0, number=number, leaks=tuple(leaks), sides=exp.sides)


