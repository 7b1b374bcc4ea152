"""The Train page's rules (glue without widgets): its widgets' defaults (``DEFAULTS``), the models and
decision rules it offers with their words, the sweep's grid, the :class:`~fairdash.files.run_spec.RunSpec`
built from the widgets' values, the plan's count of fits and why Train is unavailable. The page lays out
the widgets and calls these; the training itself starts in :mod:`fairdash.app.server.jobs`."""
from __future__ import annotations

import os
from dataclasses import dataclass

from ..files.run_spec import RunSpec
from ..models.registry import MODELS
from ..targeting.criteria import Criterion
from ..targeting.decision import PAPER_RULE, RULES, choosable, left_out_note
from ..targeting.target_spec import TargetSpec
from ..work import runs
from . import target_state
from .ui import training, upload


@dataclass(frozen=True)
class Defaults:
    """What the Train page's widgets show until the analyst changes them."""
    include_other: bool = False  # models made for another criterion are not offered
    models: tuple = runs.DEFAULT_MODELS  # the method and its baseline (those of them that are offered)
    repeats: int = 1
    mode: str = "single"  # "single" (the current target) or "sweep"
    sweep_points: int = 5
    parallel_jobs: int = 1

    @staticmethod
    def sweep_range(presets) -> tuple[float, float]:
        """The sweep's default from and to: the lower and the higher base rate, three decimals."""
        return target_state.round_rate(presets["min"]), target_state.round_rate(presets["max"])


DEFAULTS = Defaults()
MODES = {"single": "The current target", "sweep": "A sweep over targets (what-if)"}
SINGLE = (None,)  # the grid of a training at the current target
NOT_SWEEPABLE = "A sweep moves one PR_t; this target is not one PR_t."


# --------------------------------------------------------------------------------------------------
# Models
# --------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ModelChoices:
    """The models the Train page offers for ``criterion``: the available ones, those that cannot be loaded
    (with why), those offered and the labels of those left out (made for another criterion)."""
    criterion: Criterion
    available: tuple
    unavailable: tuple  # "label (why)"
    offered: tuple
    hidden: tuple  # labels of available models not offered

    def default(self) -> list[str]:
        return [m for m in DEFAULTS.models if m in self.offered]

    def keep(self, chosen) -> list[str]:
        """The chosen models that are still offered."""
        return [m for m in chosen if m in self.offered]

    def words(self, name: str) -> str:
        """A model in the list: label, what it serves, and whether it serves the criterion."""
        return MODELS[name].choice_words(self.criterion)

    def note(self) -> str:
        """The caption under the list: what is not offered and what is not available ("" for nothing)."""
        notes = []
        if self.hidden:
            notes.append(f"Not offered for {self.criterion.words}: {', '.join(self.hidden)} "
                         "(made for another criterion).")
        if self.unavailable:
            notes.append(f"Not available yet: {', '.join(self.unavailable)}.")
        return " ".join(notes)

    def lines(self) -> list[str]:
        """One Markdown line per available model (library text, not user text): label, name, what it serves,
        what it is."""
        return [f"- **{MODELS[m].label}** (`{m}`, {MODELS[m].serves_words()}): {MODELS[m].description}"
                for m in self.available]


def model_choices(criterion: Criterion, include_other: bool) -> ModelChoices:
    """The models offered for ``criterion`` (every available one with ``include_other``)."""
    available, unavailable = [], []
    for name, info in MODELS.items():
        ok, why = training.model_available(name)
        (available if ok else unavailable).append(name if ok else f"{info.label} ({why})")
    offered = runs.offered_models(available, criterion, include_other)
    hidden = [MODELS[m].label for m in available if m not in offered]
    return ModelChoices(criterion, tuple(available), tuple(unavailable), tuple(offered), tuple(hidden))


# --------------------------------------------------------------------------------------------------
# Decision rules
# --------------------------------------------------------------------------------------------------
def offered_rules(task, criterion: Criterion) -> list[str]:
    """The decision rules offered: with a legitimate factor, those that combine with it."""
    return list(runs.offered_rules(task, criterion))


def first_rule(decision: str, rules) -> str:
    """The rule the radio starts at: the target's, where it is offered."""
    return decision if decision in rules else PAPER_RULE


def rule_words(rule: str) -> str:
    return RULES[rule].words


def rules_help() -> str:
    return ("The target sets the rate of the target labels; a model that does not see s, cut at 1/2, can land far "
            "from it. " + " ".join(f"{r}: {RULES[r].explanation}" for r in choosable()))


def rule_caption(rule: str, rules) -> str:
    """The chosen rule explained, and why a rule is missing where one is (``decision.left_out_note``)."""
    note = left_out_note(rules)
    return RULES[rule].explanation + (" " + note if note else "")


# --------------------------------------------------------------------------------------------------
# Targets, the run's request and its plan
# --------------------------------------------------------------------------------------------------
def target_words(target: TargetSpec | None, rates) -> str:
    """The target in the page's header line (library words; the page shows them literally)."""
    return target.describe(target.rate_for(rates.base_rates)) if target is not None else ""


def sweepable(target: TargetSpec | None) -> bool:
    return runs.sweepable(target)


def sweep_grid(start: float, stop: float, points: int) -> list[float]:
    return runs.sweep_grid(start, stop, points)


def grid_caption(grid) -> str:
    return ("Targets: " + ", ".join(f"{t:.3f}" for t in grid)
            + ". The Compare page's slider scrubs through them with no waiting.")


def max_jobs() -> int:
    """The most parallel jobs offered: one per CPU."""
    return max(1, os.cpu_count() or 1)


def delta_caption(target: TargetSpec | None) -> str:
    return f"Keep-rate delta: {target.delta if target is not None else 1.0:.2f} (set on the Target page)."


def run_spec(task, target: TargetSpec | None, models, grid, repeats: int, options: dict, *,
             data: str | None = None, decisions=()) -> RunSpec | None:
    """The training's request from the page's values (``None`` while the target is not valid): the data
    (``data``, by default the session's, as the command line names it) and task, the target, the chosen
    models, the grid of PR_t, one seed per repeat, the models' settings, the groups' names, and ``decisions``:
    several decision rules, every model under each, the target's own first (fewer than two: the target's rule)."""
    if target is None:
        return None
    rules = tuple(dict.fromkeys([target.decision, *decisions])) if len(decisions) > 1 else ()
    return RunSpec(data=upload.data_source() if data is None else data, task=task.spec, target=target,
                   models=tuple(models),
                   target_rates=tuple(grid), seeds=tuple(range(int(repeats))), options=options,
                   group_names=task.group_names, decisions=rules)


EVERY_RULE_WORDS = ("Train every model under each of these rules, in one training: the price of deciding without s "
                    "needs a rule that decides with s beside one that decides without")


def n_fits(spec: RunSpec | None, include_other: bool) -> int:
    """The number of fits the training of ``spec`` will run (:func:`fairdash.work.runs.plan_training`)."""
    return runs.plan_training(spec, only_serving=not include_other).n_fits if spec is not None else 0


def fits_caption(count: int) -> str:
    return f"{count} fit(s). Fits already made with the same data and settings come from the cache at once."


def why_not(job, pending, chosen, target: TargetSpec | None) -> str | None:
    """Why Train is unavailable (``None``: it is available): a training running, an upload waiting for its
    columns, no model chosen, or a target that is not valid, in that order."""
    if job is not None:
        return "a training is running (its progress and a Cancel button are in the sidebar)"
    if pending is not None:
        return "a new upload waits for you to confirm its columns on the Data page"
    if not chosen:
        return "choose at least one model"
    if target is None:
        return "the target is not valid"
    return None


def already_here(last_run, task, spec: RunSpec) -> bool:
    """Whether the last run has the same data and settings as ``spec`` (a repeated Train press)."""
    return last_run is not None and last_run.key == runs.run_key(task, spec)


def job_title(count: int) -> str:
    return f"Training {count} fit(s) on {training.device_text()}"
