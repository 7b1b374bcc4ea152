"""The session's target: one :class:`~fairdash.targeting.target_spec.TargetSpec` in session state.

The Target page's controls (criterion, PR_t slider, number box, presets, keep-rate delta, TPR/TNR
targets, the strata mode) and the Train page's decision rule each edit that one object through
:func:`edit` (validated again by ``make_target_spec``); everything downstream (readouts, training,
the run's configuration, the report, the model file, the link) reads it with :func:`current`. An
edit that makes the target invalid keeps the last valid one and stores the reason, which
:func:`current` raises until a valid edit clears it, so no page shows readouts of a target the
analyst did not ask for.

The Target page has three modes (``MODES``): demographic parity and equality of opportunity with
one PR_t, or opportunity with explicit TPR/TNR targets. The PR_t is held by the target alone: beside explicit
targets or a preset it keeps the PR_t the analyst last chose (``TargetSpec.chosen_rate``, which nothing but the
dashboard reads), so a switch back restores it; the slider, the number box and the link are drawn from it
(:func:`slider_from_target`, :func:`pr_t_box_key`, :func:`link_params`) and :func:`round_rate` is their one rounding.
The other dials a mode drops (TPR/TNR targets, delta) come back from the widgets' kept values
(:func:`fairdash.app.server.session.remember`).
"""
from __future__ import annotations

from ..data import strata_candidates
from ..errors import FairDashError
from ..targeting.criteria import DEFAULT, DP, EO, EXPLICIT_MODE, mode_criterion  # noqa: F401 (mode_criterion re-exported)
from ..targeting.decision import PAPER_RULE, choosable
from ..targeting.target_spec import DEFAULT_TNR_TARGET, DEFAULT_TPR_TARGET, TargetSpec, make_target_spec
from .server import session, state

KEY = state.TARGET  # the TargetSpec
ERROR = state.TARGET_ERROR  # the reason the last edit was refused (then ``current`` raises it)

MODES = {  # the modes of criteria.MODES in words
    DP.name: "Demographic parity (equal positive rates)",
    EO.name: "Equality of opportunity: one target rate, judged by true positive rates",
    EXPLICIT_MODE: "Equality of opportunity: explicit TPR / TNR targets",
}
MODE_SHORT = {DP.name: DP.words, EO.name: EO.words + " (by PR_t)", EXPLICIT_MODE: EO.words + " (TPR/TNR)"}
MODE_NOTES = {  # what each mode means, where a sentence is needed
    EO.name: "Trained exactly as for demographic parity with one PR_t; judged by the groups' true positive rates on "
          "the ordinary test set. When PR_t is at least both base rates, every positive keeps its label, which is why "
          "the TPRs move together.",
    EXPLICIT_MODE: "Set the true positive and true negative rates the target labels should have in every group.",
}
STRATA_MODES = {"own": "Each stratum's own average (default)", "slider": "The slider's PR_t in every stratum"}
PR_T_MIN, PR_T_MAX = 0.001, 0.999  # the slider never reaches 0 or 1 (no target there: one class for everyone)

# the widgets whose last values a mode switch brings back (kept by session.remember)
TPR_WIDGET, TNR_WIDGET, DELTA_WIDGET = state.TPR_TARGET, state.TNR_TARGET, state.DELTA


def mode_of(spec: TargetSpec) -> str:
    """The Target page's mode of ``spec`` (a key of ``MODES``)."""
    return EXPLICIT_MODE if spec.explicit else spec.criterion


def strata_mode_of(spec: TargetSpec) -> str:
    """``"own"`` (each stratum's own preset) or ``"slider"`` (one PR_t in every stratum)."""
    return "own" if spec.target_rate is None else "slider"


def round_rate(value) -> float:
    """The dashboard's one rounding rule of a rate it shows or compares (PR_t, a preset, a sweep's ends): three
    decimals, the slider's and the number box's step."""
    return round(float(value), 3)


def pr_t_box_key() -> str:
    """The PR_t number box's widget key, drawn from the target's PR_t (no counter, no copy): a new PR_t (the
    slider, a preset, a new task, an opened file) is a new box showing it, never a written widget state (stale in
    the browser's next request, where Streamlit would take it for a user edit); a box of an earlier PR_t whose
    value reaches the server late is not the box on screen."""
    rate = current_or_default().target_rate
    return f"{state.PR_T_BOX}_{'none' if rate is None else f'{round_rate(rate):.3f}'}"


def slider_from_target() -> float:
    """The PR_t slider drawn from the target, before the page draws it: where the slider's state is not the target's
    PR_t (:func:`chosen_rate`; after a box entry, a preset, a link, a new task, a switch back from explicit targets, a
    page change) it is set to it; returns that PR_t. The one write of the slider's state, made in the page's run and
    only from the target, never in a callback: a move of the slider's own has set the target to its value already,
    so key presses that arrive while a rerun is in flight are never overwritten. (Keying the slider by the PR_t, as
    the box is, would draw a second slider for the length of each rerun and take the focus from the thumb.)"""
    ss = state.current()
    rate = round_rate(chosen_rate())
    if not ss.has(state.Session.pr_t_slider) or round_rate(ss.pr_t_slider) != rate:
        ss.pr_t_slider = rate
    return rate


def presets(rates) -> dict:
    """The Target page's presets (min, avg, max of the groups' base rates), three decimals."""
    return {k: round_rate(v) for k, v in rates.presets.items()}


def strata_choices(table, task) -> list[str]:
    """The legitimate factors the Target page offers: none, or a column of ``table`` that can stratify ``task``."""
    return ["(none)"] + strata_candidates(table, task)


def explicit_targets() -> tuple[float, float]:
    """The TPR and TNR targets the explicit mode's boxes start at: the target's, else the defaults."""
    spec = current_or_default()
    return float(spec.tpr_target or DEFAULT_TPR_TARGET), float(spec.tnr_target or DEFAULT_TNR_TARGET)


def clip_rate(value: float) -> float:
    """A PR_t on the slider's scale: three decimals, strictly inside (0, 1)."""
    return min(max(round_rate(value), PR_T_MIN), PR_T_MAX)


# --------------------------------------------------------------------------------------------------
def current() -> TargetSpec:
    """The session's target, consistent with the current task (:func:`follow_task`). Raises the
    :class:`FairDashError` of a refused edit until a valid one."""
    ss = state.current()
    if ss.target_error:
        raise FairDashError(ss.target_error)
    follow_task()
    return ss.target


def follow_task() -> list[str]:
    """Bring the session's target in line with the current task: its legitimate factor applies where the
    criterion allows one (a rule that cannot be combined with it goes back to the threshold; a new factor
    starts from each stratum's own average; without one, one PR_t again). Returns what it changed, in
    words (none: ``[]``), and keeps the sentence for the pages to show (:func:`take_changes`)."""
    ss = state.current()
    spec = ss.target
    if spec is None:
        spec = ss.target = _default()
    task = ss.task
    strata = task.spec.strata_column if task is not None else None
    if spec.explicit or not spec.criterion_info.supports_strata:
        strata = None
    if (spec.strata_column or None) == (strata or None):
        return []
    changes = {"strata_column": strata}
    said = [f"the legitimate factor {strata!r} applies" if strata else "no legitimate factor applies any more"]
    if strata and spec.decision not in choosable(strata=True):  # a factor came after the rule: the paper's rule
        changes["decision"] = PAPER_RULE
        said.append(f"the decision rule is the threshold again ({spec.decision} cannot be combined with a factor)")
    if strata and not spec.conditional:  # a new factor: each stratum's own average, the default
        changes.update(target_rate=None, preset="avg")
        said.append("each stratum's own average is its target")
    if not strata and spec.target_rate is None and not spec.explicit:  # back to one PR_t
        changes.update(target_rate=chosen_rate(), preset=None)
        said.append(f"PR_t is {changes['target_rate']:.3f} in every group")
    ss.target = spec.edited(**changes)
    ss.target_changed = "The task changed, so the target did: " + "; ".join(said) + "."
    return said


def take_changes() -> str | None:
    """The sentence of the target's last change by the task (:func:`follow_task`), once."""
    return state.current().pop(state.Session.target_changed)


def edit(**changes) -> bool:
    """Edit the session's target (``make_target_spec``'s arguments); ``False`` (and the reason kept for
    :func:`current`) if the edited target is invalid."""
    ss = state.current()
    base = ss.target or _default()
    try:
        ss.target = base.edited(**changes)
    except FairDashError as e:
        ss.target_error = str(e)
        return False
    del ss.target_error
    return True


def set_mode(mode: str) -> bool:
    """Switch between ``MODES``, bringing back that mode's last dials."""
    if mode == EXPLICIT_MODE:
        return edit(criterion=EO.name, tpr_target=float(session.kept_value(TPR_WIDGET, DEFAULT_TPR_TARGET)),
                    tnr_target=float(session.kept_value(TNR_WIDGET, DEFAULT_TNR_TARGET)))
    delta = float(session.kept_value(DELTA_WIDGET, 1.0)) if mode_criterion(mode).supports_strata else 1.0
    return edit(criterion=mode_criterion(mode).name, tpr_target=None, tnr_target=None, target_rate=chosen_rate(),
                preset=None, delta=delta)


def set_rate(value) -> bool:
    """A new PR_t (slider, number box, preset, link): three decimals inside (0, 1)."""
    return edit(target_rate=clip_rate(value))


def set_explicit(tpr_target, tnr_target) -> bool:
    """Explicit TPR/TNR targets (equality of opportunity)."""
    return edit(criterion=EO.name, tpr_target=float(tpr_target), tnr_target=float(tnr_target))


def set_strata_mode(mode: str) -> bool:
    """With a legitimate factor: each stratum's own average (``"own"``) or the slider's PR_t in every
    stratum (``"slider"``)."""
    if mode == "slider":
        return edit(target_rate=chosen_rate())
    return edit(target_rate=None, preset="avg")


def new_task(avg_preset: float) -> None:
    """A new task (other data, s or y): PR_t starts at its avg preset (the paper's default); beside explicit
    targets or each stratum's own preset, the target keeps it for a switch back."""
    rate = clip_rate(avg_preset)
    spec = current_or_default()
    if not spec.explicit and (spec.target_rate is not None or not spec.conditional):
        edit(target_rate=rate)
    else:  # (the target as it is, a refused edit's reason included)
        state.current().target = spec.edited(chosen_rate=rate)


def from_link(criterion: str | None, pr_t: str | None) -> None:
    """The target a link names (``criterion``, ``pr_t`` query parameters) over the saved one."""
    if criterion in MODES and criterion != mode_of(current_or_default()):
        set_mode(criterion)
    try:
        rate = float(pr_t or "")
    except ValueError:
        return
    if 0.0 < rate < 1.0 and not current_or_default().explicit:
        set_rate(rate)


def link_params() -> dict:
    """The target's part of the page's URL, drawn from the target: its mode and its PR_t (``None`` where none is in
    force, which takes ``pr_t`` out of the URL)."""
    spec = current_or_default()
    return {"criterion": mode_of(spec),
            "pr_t": None if spec.target_rate is None else f"{round_rate(spec.target_rate):.3f}"}


def current_or_default() -> TargetSpec:
    return state.current().target or _default()


def chosen_rate() -> float:
    """The PR_t the analyst last chose, held by the target (its ``chosen_rate``: its PR_t where it has one), else
    the avg preset: what the slider shows and what a switch back to one PR_t restores."""
    rate = current_or_default().chosen_rate
    return float(rate) if rate is not None else _avg_preset()


def _avg_preset() -> float:
    rates = state.current().rates
    return clip_rate(rates.value.presets["avg"]) if rates is not None else 0.5


def _default() -> TargetSpec:
    return make_target_spec(DEFAULT, _avg_preset())
