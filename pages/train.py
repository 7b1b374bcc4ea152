"""Train page: choose FairLR / FairGP and baselines (each labelled with the criterion it serves),
repeats, the current target or a sweep over a grid of targets (the what-if mode), advanced settings.
Training runs in the background (``fairdash.app.jobs``), so it goes on while the analyst uses other pages; the
sidebar shows its progress and a Cancel button on every page. Each finished run is added to the
session's run history (the Compare page shows any set of them); fitted models go into the fit cache, so
a repeated request is instant. The page's settings are kept for the session."""
from __future__ import annotations

import os

import streamlit as st

from fairdash.app import compare, jobs, state, target_state, ui, views
from fairdash.work import runs
from fairdash.target.decision import PAPER_RULE, RULES, choosable
from fairdash.errors import FairDashError
from fairdash.target.target_spec import criterion_info
from fairdash.models.registry import MODELS
from fairdash.files.run_spec import RunSpec

ss = st.session_state

st.title("Train")
ui.ensure_state()
task = ui.current_task()
rates = ui.task_rates()
try:
    target = ui.target_spec()
    target_error = None
except FairDashError as e:
    target, target_error = None, str(e)
criterion = (target or target_state.current_or_default()).criterion
views.target_changes()

st.markdown(f"**Device:** {ui.device_text()} · **Target:** "
            + (ui.literal(target.describe(target.rate_for(rates.base_rates))) if target is not None else "not valid"))
if target_error:
    st.error("The target set on the Target page is not valid: " + ui.literal(target_error) + " Change it there before "
             "training.", icon=":material/warning:")
    st.page_link("pages/target.py", label="Go to Target", icon=":material/tune:")


def _serves(info) -> str:
    if not info.criteria:
        return "plain model (reference for every criterion)"
    return "serves " + " and ".join(criterion_info(c).words for c in info.criteria)


available, unavailable = [], []
for name, info in MODELS.items():
    ok, why = ui.model_available(name)
    (available if ok else unavailable).append(name if ok else f"{info.label} ({why})")

ui.remember(state.INCLUDE_OTHER, False)
include_other = st.checkbox("Also offer models made for another criterion (they are labelled as such)",
                            key=state.INCLUDE_OTHER)
offered = runs.offered_models(available, criterion, include_other)
hidden = [MODELS[m].label for m in available if m not in offered]
ui.remember(state.TRAIN_MODELS, [m for m in runs.DEFAULT_MODELS if m in offered])
ss[state.TRAIN_MODELS] = [m for m in ss[state.TRAIN_MODELS] if m in offered]
st.multiselect("Models to train", offered, key=state.TRAIN_MODELS,
               format_func=lambda m: f"{MODELS[m].label}: {_serves(MODELS[m])}"
               + ("" if MODELS[m].serves(criterion) else f" (NOT {criterion_info(criterion).words})"),
               help="FairLR and FairGP are the paper's method; the others are the paper's baselines.")
chosen = list(ss[state.TRAIN_MODELS])
notes = []
if hidden:
    notes.append(f"Not offered for {criterion_info(criterion).words}: {', '.join(hidden)} (made for another criterion).")
if unavailable:
    notes.append(f"Not available yet: {', '.join(unavailable)}.")
if notes:
    st.caption(" ".join(notes))
with st.expander("What each model is"):
    for m in available:
        info = MODELS[m]
        st.markdown(f"- **{info.label}** (`{m}`, {_serves(info)}): {info.description}")

c1, c2 = st.columns(2)
with c1:
    ui.remember(state.REPEATS, 1)
    repeats = st.number_input("Repeats (random splits; the paper uses 10)", min_value=1, max_value=20, step=1,
                              key=state.REPEATS)
sweepable = runs.sweepable(target)
with c2:
    ui.remember(state.TRAIN_MODE, "single")
    mode = st.radio("What to train", ["single", "sweep"], key=state.TRAIN_MODE, horizontal=True,
                    format_func={"single": "The current target", "sweep": "A sweep over targets (what-if)"}.get,
                    disabled=not sweepable,
                    help=None if sweepable else "A sweep moves one PR_t; this target is not one PR_t.")
if not sweepable:
    mode = "single"

rules = list(runs.offered_rules(task, criterion))  # with a legitimate factor, the rules that combine with it
decision = target_state.current_or_default().decision
ui.restore(state.DECISION, decision if decision in rules else PAPER_RULE)
st.radio("How scores become decisions", rules, key=state.DECISION, horizontal=True,
         format_func=lambda r: RULES[r].words, on_change=lambda: target_state.edit(decision=ss[state.DECISION]),
         help="The target sets the rate of the target labels; a model that does not see s, cut at 1/2, can land far "
              "from it. " + " ".join(f"{r}: {RULES[r].explanation}" for r in choosable()))
if ss[state.DECISION] != decision and target is not None:  # the widget kept another rule than the target's
    target_state.edit(decision=ss[state.DECISION])
    target = ui.target_spec()
st.caption(RULES[ss[state.DECISION]].explanation + ("" if len(rules) == len(choosable()) else
           " (One cut per group is not offered with a legitimate factor: it would need one per stratum and group.)"))

grid: list = [None]
if mode == "sweep":
    s1, s2, s3 = st.columns(3)
    ui.remember(state.SWEEP_FROM, round(float(rates.presets["min"]), 3))
    ui.remember(state.SWEEP_TO, round(float(rates.presets["max"]), 3))
    ui.remember(state.SWEEP_POINTS, 5)
    lo = s1.number_input("Sweep from PR_t", target_state.PR_T_MIN, target_state.PR_T_MAX, step=0.01, format="%.3f", key=state.SWEEP_FROM)
    hi = s2.number_input("Sweep to PR_t", target_state.PR_T_MIN, target_state.PR_T_MAX, step=0.01, format="%.3f", key=state.SWEEP_TO)
    n = s3.number_input("Number of targets", 2, 25, step=1, key=state.SWEEP_POINTS)
    grid = runs.sweep_grid(lo, hi, n)
    st.caption("Targets: " + ", ".join(f"{t:.3f}" for t in grid)
               + ". The Compare page's slider scrubs through them with no waiting.")

with st.expander("Advanced settings"):
    ui.remember(state.PARALLEL_JOBS, 1)
    n_jobs = st.number_input("Parallel jobs", 1, max(1, os.cpu_count() or 1), step=1, key=state.PARALLEL_JOBS,
                             help="Independent fits (model x target x repeat) run in parallel worker processes.")
    st.caption(f"Keep-rate delta: {target.delta if target is not None else 1.0:.2f} (set on the Target page).")
    views.s_as_feature_option(task)
    model_opts = views.model_option_inputs(chosen)

spec = None if target is None else RunSpec(
    data=ui.data_source(), task=task.spec, target=target, models=tuple(chosen), target_rates=tuple(grid),
    seeds=tuple(range(int(repeats))), options=model_opts, group_names=task.group_names)
n_fits = runs.plan_training(spec, only_serving=not include_other).n_fits if spec is not None else 0
st.caption(f"{n_fits} fit(s). Fits already made with the same data and settings come from the cache at once.")

pending = ss.get(state.PENDING)
job = jobs.current()
why_not = ("a training is running (its progress and a Cancel button are in the sidebar)" if job is not None
           else "a new upload waits for you to confirm its columns on the Data page" if pending is not None
           else "choose at least one model" if not chosen else "the target is not valid" if target is None else None)
if why_not:
    st.caption(f"Train is unavailable: {why_not}.")
leak_columns = views.leak_warnings(task)  # leaks of y, and of s unless the run sees s on purpose
if st.button("Train", key="train_button", type="primary", disabled=why_not is not None):
    last = ss.get(state.RUN)
    if last is not None and last.key == runs.run_key(task, spec):
        st.success("These results are already here (same data and settings).")
    else:
        job = None
        with ui.guard("Training was not started: "):  # (the server's memory guard)
            job = jobs.start_training(task, spec, title=f"Training {n_fits} fit(s) on {ui.device_text()}",
                                         data_name=str(ss.get(state.TABLE_NAME, "?")), leaks=leak_columns,
                                         data_description=str(ss.get(state.TABLE_DESC) or ""),
                                         only_serving=not include_other, cache=ui.fit_cache(), n_jobs=int(n_jobs))
        if job is not None and jobs.outcome() is None:  # (not already collected: tests may wait for the job)
            st.rerun()  # every part of the app (the sidebar's progress box, this button) sees the job
if job is not None and job.running:
    st.status(f"{job.title}: you can use other pages meanwhile; the progress and a Cancel button are in the "
              "sidebar.", state="running")
elif jobs.outcome() is not None:  # the training that ended just now (in this script run)
    done = jobs.outcome()
    with st.status("Training failed" if done.kind == "failed" else done.text,
                   state="complete" if done.kind == "done" else "error"):
        if done.kind == "failed":  # (the sidebar shows it too, on every page, until dismissed)
            st.error(ui.literal(done.text), icon=":material/warning:")

run = ss.get(state.RUN)
if run is not None:
    if run.task is not task:
        st.info(ui.literal(f"Showing {run.title}: trained on {run.data_name}, which is not the current task."))
    for m, why in run.skipped:
        st.info(ui.literal(f"Skipped {m}: {why}."))
    compare.run_results(run)
    st.page_link("pages/compare.py", label="Compare the models", icon=":material/bar_chart:")
