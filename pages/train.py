"""Train page: choose FairLR / FairGP and baselines (each labelled with the criterion it serves),
repeats, the current target or a sweep over a grid of targets (the what-if mode), advanced settings.
Training runs in the background (``fairdash.app.server.jobs``), so it goes on while the analyst uses other pages; the
sidebar shows its progress and a Cancel button on every page. Each finished run is added to the
session's run history (the Compare page shows any set of them); fitted models go into the fit cache, so
a repeated request is instant. The page's settings are kept for the session."""
from __future__ import annotations

import streamlit as st

from fairdash.app import compare, target_state, views
from fairdash.app import train_form as form
from fairdash.app.server import jobs, session, state
from fairdash.app.ui import navigation, text, training, workspace
from fairdash.errors import FairDashError

ss = state.current()

st.title("Train")
workspace.ensure_state()
task = workspace.current_task()
rates = workspace.task_rates()
try:
    target = workspace.target_spec()
    target_error = None
except FairDashError as e:
    target, target_error = None, str(e)
criterion = (target or target_state.current_or_default()).criterion_info
views.target_changes()

st.markdown(f"**Device:** {training.device_text()} · **Target:** "
            + (text.literal(form.target_words(target, rates)) if target is not None else "not valid"))
if target_error:
    st.error("The target set on the Target page is not valid: " + text.literal(target_error)
             + " Change it there before training.", icon=":material/warning:")
    st.page_link("pages/target.py", label="Go to Target", icon=":material/tune:")

session.remember(state.INCLUDE_OTHER, form.DEFAULTS.include_other)
include_other = st.checkbox("Also offer models made for another criterion (they are labelled as such)",
                            key=state.INCLUDE_OTHER)
models = form.model_choices(criterion, include_other)
session.remember(state.TRAIN_MODELS, models.default())
navigation.set_if_changed(state.TRAIN_MODELS, models.keep(ss.train_models))
st.multiselect("Models to train", list(models.offered), key=state.TRAIN_MODELS, format_func=models.words,
               help="FairLR and FairGP are the paper's method; the others are the paper's baselines.")
chosen = list(ss.train_models)
if models.note():
    st.caption(models.note())
with st.expander("What each model is"):
    for line in models.lines():
        st.markdown(line)

c1, c2 = st.columns(2)
with c1:
    session.remember(state.REPEATS, form.DEFAULTS.repeats)
    repeats = st.number_input("Repeats (random splits; the paper uses 10)", min_value=1, max_value=20, step=1,
                              key=state.REPEATS)
sweepable = form.sweepable(target)
with c2:
    session.remember(state.TRAIN_MODE, form.DEFAULTS.mode)
    mode = st.radio("What to train", list(form.MODES), key=state.TRAIN_MODE, horizontal=True,
                    format_func=form.MODES.get, disabled=not sweepable,
                    help=None if sweepable else form.NOT_SWEEPABLE)
if not sweepable:
    mode = "single"

rules = form.offered_rules(task, criterion)  # with a legitimate factor, the rules that combine with it
decision = target_state.current_or_default().decision
navigation.restore(state.DECISION, form.first_rule(decision, rules))
st.radio("How scores become decisions", rules, key=state.DECISION, horizontal=True,
         format_func=form.rule_words, on_change=lambda: target_state.edit(decision=ss.decision),
         help=form.rules_help())
if ss.decision != decision and target is not None:  # the widget kept another rule than the target's
    target_state.edit(decision=ss.decision)
    target = workspace.target_spec()
st.caption(form.rule_caption(ss.decision, rules))
session.remember(state.EVERY_RULE, False)
every_rule = st.checkbox(form.EVERY_RULE_WORDS, key=state.EVERY_RULE, disabled=len(rules) < 2)

grid = form.SINGLE
if mode == "sweep":
    s1, s2, s3 = st.columns(3)
    sweep_from, sweep_to = form.DEFAULTS.sweep_range(rates.presets)
    session.remember(state.SWEEP_FROM, sweep_from)
    session.remember(state.SWEEP_TO, sweep_to)
    session.remember(state.SWEEP_POINTS, form.DEFAULTS.sweep_points)
    lo = s1.number_input("Sweep from PR_t", target_state.PR_T_MIN, target_state.PR_T_MAX, step=0.01, format="%.3f",
                         key=state.SWEEP_FROM)
    hi = s2.number_input("Sweep to PR_t", target_state.PR_T_MIN, target_state.PR_T_MAX, step=0.01, format="%.3f",
                         key=state.SWEEP_TO)
    n = s3.number_input("Number of targets", 2, 25, step=1, key=state.SWEEP_POINTS)
    grid = form.sweep_grid(lo, hi, n)
    st.caption(form.grid_caption(grid))

with st.expander("Advanced settings"):
    session.remember(state.PARALLEL_JOBS, form.DEFAULTS.parallel_jobs)
    n_jobs = st.number_input("Parallel jobs", 1, form.max_jobs(), step=1, key=state.PARALLEL_JOBS,
                             help="Independent fits (model x target x repeat) run in parallel worker processes.")
    st.caption(form.delta_caption(target))
    views.s_as_feature_option(task)
    model_opts = views.model_option_inputs(chosen)

spec = form.run_spec(task, target, chosen, grid, repeats, model_opts, decisions=rules if every_rule else ())
n_fits = form.n_fits(spec, include_other)
st.caption(form.fits_caption(n_fits))

job = jobs.current()
why_not = form.why_not(job, ss.pending, chosen, target)
if why_not:
    st.caption(f"Train is unavailable: {why_not}.")
leak_columns = views.leak_warnings(task)  # leaks of y, and of s unless the run sees s on purpose
if st.button("Train", key="train_button", type="primary", disabled=why_not is not None):
    if form.already_here(ss.run, task, spec):
        st.success("These results are already here (same data and settings).")
    else:
        job = None
        with text.guard("Training was not started: "):  # (the server's memory guard)
            job = jobs.start_training(task, spec, title=form.job_title(n_fits),
                                         data_name=str(ss.get(state.Session.table_name, "?")), leaks=leak_columns,
                                         data_description=str(ss.table_desc or ""),
                                         only_serving=not include_other, cache=training.fit_cache(), n_jobs=int(n_jobs))
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
            st.error(text.literal(done.text), icon=":material/warning:")

run = ss.run
if run is not None:
    if run.task is not task:
        st.info(text.literal(f"Showing {run.title}: trained on {run.data_name}, which is not the current task."))
    for m, why in run.skipped:
        st.info(text.literal(f"Skipped {m}: {why}."))
    compare.run_results(run)
    st.page_link("pages/compare.py", label="Compare the models", icon=":material/bar_chart:")
