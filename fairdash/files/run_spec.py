"""One resolved request for a training run: which data, which task, which target, which models, which
seeds. The dashboard and the command line both write it as the configuration JSON (``to_dict``), the
report and the model file read it back (``from_dict``), so every artefact describes the same run.

The format (version 2)::

    {"format": "fairdash-run", "version": 2, "data": "adult" | "<file name>", "paper": null | "adult-sex",
     "task": TaskSpec.to_dict(), "target": TargetSpec.to_dict(), "models": [...],
     "target_rates": [PR_t, ...] | [null], "seeds": [...], "options": {model: {param: value}},
     "group_names": [...], "command": "python -m fairdash sweep ..." | null,
     "decisions": ["threshold", "group-rates"]}   (only for a sweep of several decision rules)

Files written before it (a top-level ``criterion``/``delta``/``tpr_target``/``tnr_target`` and no
``target``) are read too.
"""
from __future__ import annotations

import shlex
from dataclasses import dataclass, field

from .._version import software_versions
from ..errors import FairDashError
from ..targeting.decision import PAPER_RULE, check_rule
from ..targeting.target_spec import TargetSpec, make_target_spec

FORMAT = "fairdash-run"
VERSION = 2


@dataclass(frozen=True)
class RunSpec:
    data: str | None
    task: object  # fairdash.data.TaskSpec
    target: TargetSpec
    models: tuple = ()
    target_rates: tuple = (None,)
    seeds: tuple = (0,)
    options: dict = field(default_factory=dict)
    group_names: tuple = ()
    paper: str | None = None
    command: str | None = None
    decisions: tuple = ()  # several decision rules, every model under each (empty: the target's own rule)

    def to_dict(self) -> dict:
        extra = {"decisions": list(self.decisions)} if len(self.decisions) > 1 else {}
        return {**extra, "format": FORMAT, "version": VERSION, "data": self.data, "paper": self.paper,
                "task": self.task.to_dict(), "target": self.target.to_dict(), "models": list(self.models),
                "target_rates": [_rate(t) for t in self.target_rates],
                "seeds": [int(s) for s in self.seeds], "options": _plain(self.options),
                "group_names": [str(g) for g in self.group_names], "command": self.command or self.cli_command()}

    def record(self) -> dict:
        """The configuration as a run's record (beside its results, in an export): ``to_dict()`` plus
        ``computed_with``, the versions and the processor the numbers were computed with
        (``_version.software_versions``), so that a colleague re-running it can tell a difference of
        machines from a difference of code. ``from_dict`` reads it back (``computed_with`` is not a
        setting)."""
        return {**self.to_dict(), "computed_with": software_versions()}

    @classmethod
    def from_dict(cls, d) -> "RunSpec":
        """Read a configuration (this format or the command line's earlier one); anything malformed is a
        :class:`FairDashError` saying what."""
        from ..data import TaskSpec  # lazy: heavy, defers pandas

        if not isinstance(d, dict):
            raise FairDashError("The configuration is not a JSON object of named settings.")
        if d.get("format") not in (None, FORMAT):
            raise FairDashError(f"This is not a FairDash run configuration (format {d.get('format')!r}).")
        task = d.get("task")
        if not isinstance(task, dict):
            raise FairDashError("The configuration does not describe its task (a 'task' object with the s and y "
                                "columns); it may come from an older dashboard. Export the run again.")
        try:
            task_spec = TaskSpec.from_dict(task)
        except (TypeError, ValueError) as e:
            raise FairDashError(f"The configuration's task is malformed ({e}).") from None
        if "target" in d and d["target"] is not None:
            target = TargetSpec.from_dict(d["target"])
        else:  # the command line's earlier sweep configuration
            target = make_target_spec(d.get("criterion"), None, d.get("delta", 1.0), d.get("tpr_target"),
                                      d.get("tnr_target"), strata_column=task_spec.strata_column)
        try:
            rates = tuple(_rate(t) for t in (d.get("target_rates") or [None]))
            seeds = tuple(int(s) for s in (d.get("seeds") or [0]))
        except (TypeError, ValueError):
            raise FairDashError("The configuration's target rates and seeds must be lists of numbers.") from None
        return cls(data=d.get("data"), task=task_spec, target=target, models=tuple(d.get("models") or ()),
                   target_rates=rates, seeds=seeds, options=dict(d.get("options") or {}),
                   group_names=tuple(d.get("group_names") or ()), paper=d.get("paper"), command=d.get("command"),
                   decisions=tuple(_decisions(d.get("decisions"))))

    def load_task(self):
        """The task, built again from the data it names (a bundled sample, a paper set-up or a file)."""
        from .. import data  # lazy: heavy, defers pandas

        if self.paper:
            return data.paper_task(self.paper)
        if not self.data:
            raise FairDashError("The configuration does not name its data.")
        return data.build_task(data.read_table_or_sample(self.data), self.task)

    def cli_command(self) -> str:
        """A ``python -m fairdash sweep`` command line for this run."""
        q = shlex.quote
        parts = ["python", "-m", "fairdash", "sweep"]
        if self.paper:
            parts += ["--paper", q(self.paper)]
        else:
            t = self.task
            parts += ["--data", q(str(self.data)), "--s", q(t.s_column)]
            parts += [p for v in t.s1_values for p in ("--s1", q(str(v)))]
            if t.s_threshold is not None:
                parts += ["--s-threshold", q(f"{t.s_threshold:g}")]
            if t.s_multi:
                parts += ["--s-multi"]
            parts += ["--y", q(t.y_column)] + [p for v in t.y1_values for p in ("--y1", q(str(v)))]
            if t.y_threshold is not None:
                parts += ["--y-threshold", q(f"{t.y_threshold:g}")]
            if t.positive_favourable is not None:
                parts += ["--positive-is", "favourable" if t.positive_favourable else "unfavourable"]
            if t.positive_meaning:
                parts += ["--positive-meaning", q(t.positive_meaning)]
            if t.features:
                parts += ["--features", q(",".join(t.features))]
            if t.drop:
                parts += ["--drop", q(",".join(t.drop))]
            if t.missing and t.missing != "drop":
                parts += ["--missing", q(t.missing)]
            if t.strata_column:
                parts += ["--strata", q(t.strata_column)]
        g = self.target
        parts += ["--criterion", g.criterion]
        if self.models:
            parts += ["--models", q(",".join(self.models))]
        if g.explicit:
            parts += ["--tpr-target", f"{g.tpr_target:g}", "--tnr-target", f"{g.tnr_target:g}"]
        else:
            grid = [t for t in self.target_rates if t is not None]
            rates = grid or [g.target_rate if g.target_rate is not None else g.preset]
            parts += ["--pr-t", q(",".join(f"{t:g}" if isinstance(t, float) else str(t) for t in rates))]
            if g.delta != 1.0:
                parts += ["--delta", f"{g.delta:g}"]
        if len(self.decisions) > 1:
            parts += ["--decision", ",".join(self.decisions)]
        elif g.decision != PAPER_RULE:
            parts += ["--decision", g.decision]
        tolerance = (self.options.get("target-reduction") or {}).get("tolerance")
        if tolerance is not None:
            parts += ["--target-tolerance", f"{float(tolerance):g}"]
        bound = (self.options.get("agarwal") or {}).get("difference_bound")
        if bound is not None:
            parts += ["--agarwal-bound", f"{float(bound):g}"]
        if self.seeds:
            parts += ["--seed", str(self.seeds[0]), "--repeats", str(len(self.seeds))]
        return " ".join(parts + ["--out", "results.csv"])


def _decisions(value) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, (list, tuple)):
        raise FairDashError("The configuration's decisions must be a list of decision rules.")
    return [check_rule(v) for v in value]


def _rate(t):
    """A grid point: ``None`` (the target as specified), a preset name or a number."""
    return t if t is None or isinstance(t, str) else float(t)


def _plain(value):
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if hasattr(value, "item"):
        return value.item()
    return value
