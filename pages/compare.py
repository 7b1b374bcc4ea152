"""Compare page: any set of this session's runs side by side, mean ± std over repeats. Positive rates per
group (diagonal = parity, crosses = targets), true positive rates per group, accuracy against fairness
with the accuracy ceiling, the target view (each group's rate against its target, the gap written
beside it), any group a fair model moved away from its target, and the results table (with the worst
gap and its group) with a CSV download (their blocks: fairdash.app.compare). Every figure says what it
was measured on: the population (the ordinary test set, as the model will meet it; the default) or the
paper's balanced test set, one click away. A slider over the swept targets rings the selected point."""
from __future__ import annotations

import streamlit as st

from fairdash.app import compare
from fairdash.app.server import session, state
from fairdash.app.ui import navigation, text, workspace

ss = state.current()
CHART = compare.CHART

st.title("Compare")
workspace.ensure_state()
history = session.runs()
if not history:
    st.info("Nothing trained yet. Train FairLR (and any baselines) on the Train page; a sweep over targets "
            "makes the what-if slider here scrub through the results.")
    st.page_link("pages/train.py", label="Go to Train", icon=":material/model_training:")
    text.end_page()

by_number = {r.number: r for r in history}
session.remember(state.COMPARE_RUNS, [])  # the choice of runs is kept for the session, across pages
navigation.set_if_changed(state.COMPARE_RUNS, compare.kept_runs(ss.compare_runs, history, ss.compare_seen))
ss.compare_seen = max(r.number for r in history)
c1, c2 = st.columns([4, 1], vertical_alignment="bottom")
chosen = c1.multiselect("Runs to compare", list(by_number), key=state.COMPARE_RUNS,
                        format_func=lambda n: by_number[n].title,
                        help="Each run's number, time, models, data, s and y, criterion and target, decision rule and "
                             "flags. " + " | ".join(r.description for r in by_number.values()))
if c2.button("Clear the run history", key="clear_runs"):
    ss.runs, ss.run = [], None
    del ss.compare_runs
    del ss.compare_seen
    session.remember_value(state.COMPARE_RUNS, [])
    st.rerun()
if not chosen:
    st.info("Choose at least one run.")
    text.end_page()
runs = compare.one_table([by_number[n] for n in chosen])  # runs of one table at a time
criterion = compare.one_criterion(runs)
if criterion is None:
    st.warning("These runs judge different criteria (parity and opportunity); compare runs of one criterion.")
    text.end_page()
first = runs[0]
names = text.figure_text(first.task.group_names)  # user text: shown literally in the figures
results = compare.filtered(compare.results_of(runs))  # each row's run as data, its label in words; by model and rule
if results is None:
    text.end_page()

view = "population"
if compare.has_balanced_view(criterion):  # the paper's balanced test set exists for this criterion
    session.remember(state.COMPARE_VIEW, "population")
    view = st.radio("Measured on", list(compare.VIEWS), key=state.COMPARE_VIEW, horizontal=True,
                    format_func=compare.VIEWS.get)
    st.caption("The population is what the model will meet, so its rates are the ones to hold against PR_t. The "
               "paper's balanced test set cuts both groups to the same base rate, which lowers the rates of the "
               "group with the higher base rate: there the points sit below the target by design.")
population = view == "population"
numbers = compare.measured(results, population)
shown, where, on = numbers.shown, numbers.where, numbers.on  # (on: the figures' subtitles)

swept = compare.swept_targets(results)
highlight = None
if len(swept) > 1:
    session.remember(state.COMPARE_TARGET, compare.nearest_target(swept))  # kept across pages (issue 47, item 6)
    if ss.compare_target not in swept:
        ss.compare_target = compare.nearest_target(swept)
    highlight = st.select_slider("Highlight target PR_t (what-if)", options=swept, key=state.COMPARE_TARGET,
                                 format_func=lambda t: f"{t:.3f}",
                                 help="Scrub through the trained targets; the ringed points in every figure "
                                      "are the models trained at this target.")
elif swept:
    highlight = swept[0]

if highlight is not None:
    compare.selected_target(shown, results, criterion, highlight, population=population, where=where)

f3, f_pr, f_tpr = compare.figures(runs, shown, criterion, population=population, highlight=highlight, names=names,
                                  on=on)
left, right = st.columns(2)
with left:
    st.plotly_chart(f_pr, key="fig_pr", config=CHART)
with right:
    st.plotly_chart(f_tpr, key="fig_tpr", config=CHART)
compare.accuracy_and_target(f3, results, criterion, population=population, names=names, highlight=highlight,
                            on=on, where=where, same_task=compare.same_task(runs))
compare.moved_away(runs)
compare.price_of_blindness(runs, results)
compare.results_table(results, numbers.summary, criterion, population=population, where=where, runs=runs)
compare.error_rates(numbers.summary, runs, results)
compare.calibration(runs, population=population, on=on)
compare.report_of_runs(runs)
