"""Display helpers of the dashboard: the sidebar's task box and the target's readouts.
A UI-helper module: it imports Streamlit."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from ..analysis.rates import common_tpr_words, decisions_words, describe_t, s_predictability_text
from ..analysis.separability import s_predictability
from ..data import MAX_BYTES
from ..data.meaning import outcome_words
from ..data.reading import isolated
from ..errors import FairDashError
from ..events import log_event
from ..figures import plots
from ..models.registry import MODELS, PARAMETER_NAMES
from . import tables, target_state
from .server import jobs, session, state
from .server.limits import ALLOW_INSECURE_ENV, insecure_allowed, insecure_settings
from .server.settings_help import setting_help
from .ui import navigation, text, training, workspace

CEILING_LABEL = "Accuracy ceiling (Theorem 2, training split)"
_INSECURE_LOGGED: set = set()  # the insecure settings this server process has logged (once each)


@st.cache_resource(show_spinner=False)
def warm_processes() -> bool:
    """Once per server process: the fork server that reads uploads and runs trainings starts in the background
    (:func:`fairdash.data.reading.isolated.warm`), so the first upload does not wait for its imports."""
    isolated.warm()
    return True


def refuse_insecure_server() -> None:
    """Serve nothing where a setting switches a protection off (XSRF, CORS, an upload cap above FairDash's:
    ``limits.insecure_settings``), however it was set, unless ``FAIRDASH_ALLOW_INSECURE=1`` says the team chose
    it; either way the event log says it once per server process (``insecure_settings``: which, and whether it
    served)."""
    found = insecure_settings(st.get_option, MAX_BYTES / 2**20)
    if not found:
        return
    allowed = insecure_allowed()
    codes = "+".join(code for code, _ in found)
    if codes not in _INSECURE_LOGGED:
        _INSECURE_LOGGED.add(codes)
        log_event("insecure_settings", reason=codes, outcome="served" if allowed else "refused")
    if allowed:
        return
    st.error("This server refuses to serve: " + "; ".join(words for _, words in found) + ". Start it with the "
             f"settings of .streamlit/config.toml, or set {ALLOW_INSECURE_ENV}=1 to run without these protections on "
             "purpose.", icon=":material/gpp_bad:")
    st.stop()



def sidebar_frame() -> None:
    """The sidebar's "Current task" box, drawn before the page runs and filled after it (so it shows
    what the page just changed). The PR_t line is its own placeholder, which the Target page's
    fragment rewrites on every slider move. Drawn once per run (app.py, before anything resets the session);
    its slots are the tab's (``state.TAB``), so a session's reset later in the run keeps them."""
    box = st.sidebar.container(key="sidebar_task")
    with box:
        st.markdown("**Current task**")
        lines = st.container(gap=None)  # the three slots read as one list
        with lines:
            slots = {"task": st.empty(), "target": st.empty(), "rest": st.empty()}
    state.current().sidebar = slots
    with st.sidebar.popover("Share a snapshot", icon=":material/share:", key="share_popover"):
        share_snapshot()
    with st.sidebar.popover("Forget this session", icon=":material/delete:", key="forget_popover"):
        st.caption("Deletes this session's table, run history, cached fits and every snapshot link made from it from "
                   "the server now, stops its training, and starts afresh with the bundled sample. Its address and "
                   "snapshot links then say that you deleted it. Copies that others already opened from a snapshot "
                   "link are theirs and stay; downloads you made are not affected.")
        st.button("Delete my data from the server", key="forget_session", type="primary", on_click=forget_session)


def forget_session() -> None:
    """"Forget this session": its training stops at once, then everything of it is deleted
    (``workspace.forget_session``)."""
    workspace.forget_session(training_cancelled=jobs.forget(state.current().token))


SNAPSHOT_KEY = state.SNAPSHOT_LINK  # the last snapshot link made in this tab


def share_snapshot() -> None:
    """The "Share a snapshot" box: a link to a frozen copy of this session as it is now."""
    st.caption("Your address opens this session only in this browser. To share it, make a snapshot link: whoever "
               "opens it gets their own session, a copy of this one as it is now (table, task, target and runs). "
               "Your later work never reaches them, and theirs never reaches you.")
    if st.button("Make a snapshot link", key="make_snapshot", icon=":material/link:"):
        snap = session.make_snapshot()
        if snap is None:
            del state.current().snapshot_link
            st.warning("The server has no room left to keep a snapshot of this session.", icon=":material/warning:")
        else:
            base = (st.context.url or "/").split("?")[0]  # (the page the owner is on: the opener lands there)
            state.current().snapshot_link = f"{base}?snapshot={snap}"
    link = state.current().snapshot_link
    if link:
        with st.container(key="snapshot_link"):
            st.code(link, language=None, wrap_lines=True)
        st.caption("A snapshot of the session as it was when the link was made. Forget this session deletes it too.")


def _target_line() -> str:
    try:
        spec = workspace.target_spec()
    except FairDashError as e:
        return f"- **Target:** not valid ({text.literal(e)})"
    if spec.mode == "rate":
        return f"- **PR_t:** {spec.target_rate:.3f}" + (" in every stratum" if spec.conditional else "")
    return f"- **Target:** {text.literal(spec.describe().split(': ', 1)[1])}"


def sidebar_target() -> None:
    """Rewrite the sidebar's target line and keep the session (called from the Target page's fragment,
    whose reruns do not reach the end of app.py)."""
    slots = state.current().sidebar
    if slots is not None:
        slots["target"].markdown(_target_line())
    navigation.save_session()


def sidebar_summary() -> None:
    """Fill the sidebar's task box (drawn by :func:`sidebar_frame` earlier in this run): data set, s, y, PR_t,
    criterion, device."""
    ss = state.current()
    slots = ss.sidebar
    if slots is None:  # (never drawn again here: its keyed box, drawn once already, would be a duplicate; the
        return  # slots survive a session's reset, state.TAB)
    task = ss.task
    if task is None:
        slots["task"].caption("No data loaded.")
        return
    spec = task.spec
    lit, names = text.literal, [text.literal(g) for g in task.group_names]  # user text, shown literally
    try:
        j, role = workspace.group_role(task.group_names, workspace.task_rates().base_rates, task.spec)
        names[j] += f", {role.split()[-2]}"  # "disadvantaged" or "protected"
    except FairDashError:
        pass
    rows = [
        ("Data set", lit(ss.get(state.Session.table_name, "?"))),
        ("Sensitive s", lit(spec.s_column, code=True) + (f" × {lit(spec.s_with, code=True)}" if spec.s_with else "")
         + (f" (group 1: {names[1]}; group 0: {names[0]})" if task.n_groups == 2
            else f" ({task.n_groups} groups: {', '.join(names[:6])}{' ...' if task.n_groups > 6 else ''})")),
        ("Label y", f"{lit(spec.y_column, code=True)} (positive: {lit(task.label_names[1])})"),
    ]
    slots["task"].markdown("\n".join(f"- **{k}:** {v}" for k, v in rows))
    slots["target"].markdown(_target_line())
    rest = [("Criterion", target_state.MODE_SHORT[target_state.mode_of(target_state.current_or_default())])]
    if spec.strata_column:
        rest.append(("Legitimate factor", text.literal(spec.strata_column, code=True)))
    rest.append(("Rows", f"{len(task.y):,}"))
    rest.append(("Device", training.device_text()))
    slots["rest"].markdown("\n".join(f"- **{k}:** {v}" for k, v in rest))


# --------------------------------------------------------------------------------------------------
# The target's readouts (Target page)
# --------------------------------------------------------------------------------------------------
def target_changes() -> None:
    """What the last change of the task did to the target (``target_state.follow_task``), said once."""
    try:
        target_state.follow_task()
    except FairDashError:  # (a target the task refuses: the page shows ``target_state.current``'s error)
        pass
    note = target_state.take_changes()
    if note:
        st.info(text.literal(note), icon=":material/sync:")


def target_readouts(spec, rates, names) -> None:
    """Every readout of ``spec`` on the training split (the Target page), or the reason it is not valid:
    the ceiling, ``t_s`` with the flipped region in words, the transition table and the ceiling curve, or
    with a legitimate factor the per-stratum table."""
    try:
        out, tb = workspace.readout_and_table(spec)
    except FairDashError as e:
        st.error(text.literal(e), icon=":material/warning:")
        return
    st.markdown(f"**Target:** {text.literal(out['target_text'])}")
    if common_tpr_words(out, names):
        st.text(common_tpr_words(out, names))  # (names are user text: plain text, never markup)
    if spec.conditional:
        _conditional_readouts(out, names)
        return
    _readouts(out, tb, None if spec.explicit else out["target_rate"], rates, names)


def s_predictability_note(task) -> None:
    """How well the features tell the groups apart (``rates_readout``'s ``s_predictability``), in one
    sentence, shown as plain text. Computed once per task and split (remembered), not per slider move."""

    auc = s_predictability(task, workspace.split0())
    name = task.spec.s_column + (f" × {task.spec.s_with}" if task.spec.s_with else "")
    with st.container(key="s_predictability"):
        st.text(s_predictability_text(auc, name, task.n_groups),
                help="The cross-validated ROC AUC of a logistic regression predicting s from the features (s itself "
                     "left out) on the training split: 0.5 = the features say nothing about s, 1 = they give it "
                     "away. The same number as `s_predictability` in `python -m fairdash rates --json`.")


def _rates_table(tb, names) -> pd.DataFrame:
    g = range(tb.n_groups)
    return pd.DataFrame({
        "group": [f"s={j}: {names[j]}" for j in g],  # what a decision rests on first (t_s within 1280 px)
        "share": tb.group_shares, "base rate PR_b": tb.base_rates, "target P(ybar=1)": tb.target_rates,
        "t_s": [float(t) for t in tb.t], "labels that move": tb.labels_moved.sum(axis=1),
        "P(ybar=1 | y=1)": tb.p_ybar1_given_y[:, 1], "P(ybar=1 | y=0)": tb.p_ybar1_given_y[:, 0],
        "P(y=1 | ybar=1)": tb.d[:, 1], "P(y=1 | ybar=0)": tb.d[:, 0],
    })


def _readouts(out: dict, tb, marked: float | None, rates, names) -> None:
    """The readout ``out`` (``rates_readout``'s dict) with its table ``tb``; ``marked`` is the PR_t the
    ceiling curve marks (``None`` where the target is not one PR_t for every group)."""
    shown = tb.n_groups if tb.n_groups <= 4 else 0  # with many groups, the shares are read from the sentences
    moved = tb.labels_moved.sum(axis=1)
    singled, role = workspace.group_role(names, tb.base_rates)
    with st.container(key="ceiling_readout"):
        cols = st.columns([2] + [1] * max(shown, 2))
        cols[0].metric(CEILING_LABEL, f"{tb.accuracy_ceiling:.4f}",
                       help=("Every classifier that meets the TPR and TNR targets has exactly this accuracy on the "
                             "training split: sum_s P(s) (TPR_t PR_b^s + TNR_t (1 - PR_b^s))."
                             if (out.get("target") or {}).get("tpr_target") is not None else
                             "No classifier with the target's positive rates can be more accurate than this on the "
                             "training split (Theorem 2: 1 - sum_s P(s) |target rate_s - PR_b^s|)."))
        for j in range(shown):
            t = float(tb.t[j])
            cols[1 + j].metric(f"s={j}: labels that move", f"{moved[j]:.1%}",
                               help=f"Group {j} ({text.literal(names[j])}" + (f", {role}" if j == singled else "")
                                    + "): the share of its training rows whose target "
                                    "label differs from the observed one. Theorem 1's t_s: "
                                    + ("∞" if t == float("inf") else f"{t:.4f}") + " (the table below).")
    for j in range(tb.n_groups):
        t = float(tb.t[j])
        st.markdown("- " + text.literal(describe_t(t if t != float("inf") else None, f"s={j} ({names[j]})"
                                                 + (f", {role}" if j == singled and role else ""),
                                                 out["flips"][str(j)], out["labels_moved"][str(j)])
                                      + decisions_words(float(tb.base_rates[j]), float(tb.target_rates[j]),
                                                        int(round(out["n_train"] * float(tb.group_shares[j]))),
                                                        outcome_words(state.current().task.spec))))
    st.dataframe(_rates_table(tb, names), key="transition_table", hide_index=True,
                 column_config={c: st.column_config.NumberColumn(format="%.4f")
                                for c in _rates_table(tb, names).columns if c != "group"})
    st.caption("Rates of the training split (seed 0, 80%), the same numbers as `python -m fairdash rates`. "
               "P(ybar=1 | y) is how likely a row's target label is positive given its observed label; "
               "P(y=1 | ybar) is the reverse, which the fair likelihood uses.")
    st.plotly_chart(plots.ceiling_curve_figure(rates.base_rates, rates.group_shares, marked, text.figure_text(names)),
                    key="ceiling_curve", config={"displayModeBar": False})
    if marked is None:
        st.caption("The curve is the ceiling when every group gets the same PR_t. Explicit TPR/TNR targets give each "
                    "group its own rate (the table's target column), so they are not a point on the curve; the "
                    f"accuracy of a classifier meeting them is the number above ({tb.accuracy_ceiling:.4f}).")


def _conditional_readouts(out: dict, names) -> None:
    with st.container(key="ceiling_readout"):
        st.metric(CEILING_LABEL, f"{out['strata_ceiling_at_target']:.4f}",
                  help="Theorem 2 in every stratum at its own target, weighted by the stratum's share of the "
                       "training rows.")
    rows = []
    for stratum, sd in out["strata"].items():
        for j in range(len(names)):
            k = str(j)
            rows.append({"stratum": stratum, "group": f"s={j}: {names[j]}", "rows": sd["rows"][k],
                         "base rate": sd["base_rates"][k], "target P(ybar=1)": sd["target_rates"][k],
                         "t_s": sd["t"][k], "P(ybar=1 | y=1)": sd["transition"][k]["p_ybar1_given_y1"],
                         "P(ybar=1 | y=0)": sd["transition"][k]["p_ybar1_given_y0"],
                         "ceiling in stratum": sd["ceiling_at_target"]})
    tables.show_numbers(pd.DataFrame(rows), "strata_table", digits=4)
    st.caption("Per stratum of the training split: the target holds within each stratum, so each row's target "
               "label comes from its own (stratum, group) cell.")
    if out["strata_warnings"]:
        with st.expander(f"{len(out['strata_warnings'])} warning(s) about small or one-sided cells"):
            for w in out["strata_warnings"]:
                st.warning(text.literal(w))


# --------------------------------------------------------------------------------------------------
# Model settings (Train page)
# --------------------------------------------------------------------------------------------------
def model_option_inputs(models) -> dict:
    """A number box for every numeric setting of each chosen model (kept for the session); returns only
    the settings changed from their defaults, ``{model: {parameter: value}}``."""

    changed_all: dict = {}
    for m in models:
        params = training.model_options(m)
        if not params:
            continue
        st.markdown(f"**{MODELS[m].label}**")
        cols = st.columns(min(4, len(params)))
        values = {}
        for i, (p, default) in enumerate(params.items()):
            key = f"opt_{m}_{p}"
            session.remember(key, default)
            label = f"{PARAMETER_NAMES[p]} ({p})" if p in PARAMETER_NAMES else p
            v = cols[i % len(cols)].number_input(label, value=None, step=1 if isinstance(default, int) else None,
                                                 format=None if isinstance(default, int) else "%g", key=key,
                                                 help=setting_help(m, p))
            values[p] = default if v is None else type(default)(v)
        changed = {p: v for p, v in values.items() if v != params[p]}
        if changed:
            changed_all[m] = changed
    return changed_all


def leak_warnings(task) -> list[str]:
    """Before training (Train page): a warning for the leaks of y, and for those of s unless the run sees
    s on purpose (``s_as_feature``), as the command line's ``train`` and ``sweep`` print them. Returns the
    columns warned about (a run trained with them says so)."""
    ss = state.current()
    leaks = workspace.leaks_and_proxies(ss.table, ss.table_id, task)[0]
    y_leaks = list(dict.fromkeys(x["column"] for x in leaks if x["of"] == "y"))
    s_leaks = [] if task.spec.s_as_feature else list(dict.fromkeys(x["column"] for x in leaks if x["of"] == "s"))
    if y_leaks:
        st.warning("Before you train: " + ", ".join(text.literal(c, code=True) for c in y_leaks)
                   + " give(s) the label away "
                   "almost exactly, so the model would learn that instead of the task. Drop them on the Data page.",
                   icon=":material/warning:")
    if s_leaks:
        st.warning("Before you train: " + ", ".join(text.literal(c, code=True) for c in s_leaks)
                   + " give(s) the sensitive attribute "
                   "s away almost exactly, so a model meant not to see s would use s through them. Drop them on the "
                   "Data page, or let the model see s on purpose under Advanced settings.", icon=":material/warning:")
    return y_leaks + s_leaks


def s_as_feature_option(task) -> None:
    """The advanced option to let the model see ``s``: it rebuilds the task with ``s`` among the features."""
    from dataclasses import replace

    sees = st.checkbox("Let the model see s (direct use of the protected attribute)", key="s_as_feature",
                       value=task.spec.s_as_feature,
                       help="The model gets s as a feature and needs it to predict. Lawful only in some settings; it "
                            "shows how much of the target gap comes from the proxies' weakness. Runs made so are "
                            "labelled '(sees s)' in every table, figure and report.")
    if sees != task.spec.s_as_feature:
        ss = state.current()
        workspace.set_task(ss.table, ss.table_id, ss.table_name, replace(task.spec, s_as_feature=sees))
        st.rerun()

