"""The HTML report: content, escaping of everything from the user's data, self-containedness."""
from __future__ import annotations

import re
from html import unescape
from html.parser import HTMLParser

import numpy as np
import pandas as pd
import pytest

from fairdash import FairDashError, data
from fairdash.analysis.rates import rates_readout
from fairdash.report import build_report, build_report_from_sweep, describe_task, eval_rates_for, figure_html
from fairdash.targeting.criteria import DP
from fairdash.work.experiments import ExperimentPlan, run_experiment

import app_state

EVIL_COLUMN = "<script>alert(1)</script>"
EVIL_GROUP = "</script><script>alert(2)</script>"
EVIL_LEVEL = "<img src=x onerror=alert(3)>"
EVIL_COMMAND = "python -m fairdash sweep --data 'x.csv' --s '</script><script>alert(4)</script>'"


@pytest.fixture(scope="module")
def evil():
    """A small COMPAS table whose names and values try to inject HTML, and a two-seed sweep on it."""
    df = data.load_sample("compas").sample(700, random_state=1).reset_index(drop=True)
    df = df.rename(columns={"sex": EVIL_COLUMN})
    df["race"] = df["race"].replace({"Caucasian": EVIL_GROUP})
    df["age-cat"] = df["age-cat"].replace({"25 - 45": EVIL_LEVEL})
    task = data.build_task(df, data.TaskSpec("race", "two-year-recid", (EVIL_GROUP,), ("1",)))
    exp = run_experiment(ExperimentPlan(task, ["fair-lr", "lr", "kamiran"], [0.35, 0.45], seeds=[0, 1], device="cpu"))
    readout = rates_readout(task, target_rate=0.45)
    desc = describe_task(task, dataset="COMPAS <b>subsample</b>", source="evil<script>.csv")
    html = build_report(exp.results, task_description=desc, readout=readout, command=EVIL_COMMAND,
                        eval_rates=eval_rates_for(task, DP))
    return task, exp.results, readout, html


class _Scripts(HTMLParser):
    """Collects tags and script bodies the way a browser's tokenizer splits them."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags, self.scripts, self.text, self._in_script = [], [], [], False

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        self._in_script = tag == "script"
        if self._in_script:
            self.scripts.append("")

    def handle_endtag(self, tag):
        if tag == "script":
            self._in_script = False

    def handle_data(self, d):
        if self._in_script:
            self.scripts[-1] += d
        else:
            self.text.append(d)


def test_everything_from_the_data_is_escaped(evil):
    task, results, readout, html = evil
    p = _Scripts()
    p.feed(html)
    # no element other than ours: no img, no injected script
    assert not [t for t, _ in p.tags if t in ("img", "iframe", "object", "embed", "link", "base", "form")]
    n_figures = html.count("Plotly.newPlot(")
    # rates and accuracy (and the target view, for results with per-group targets) on the population and
    # on the balanced test set, and the ceiling
    from fairdash.figures.plots import target_view_note

    assert n_figures == 5 + 2 * (target_view_note(results) is None)
    assert sum(1 for t, _ in p.tags if t == "script") == 1 + n_figures  # plotly.js once, one per figure
    for body in p.scripts[1:]:
        assert "Plotly.newPlot(" in body and "</" not in body and "<" not in body  # plotly.io.to_html
    for body in p.scripts:
        assert "alert(" not in body or "\\u003c" in body  # in the figure JSON only in escaped form
    # the user's strings show as text
    text = "".join(p.text)
    for s in (EVIL_COLUMN, EVIL_GROUP, "COMPAS <b>subsample</b>", EVIL_COMMAND):
        assert s in text, s
    assert "<script>alert" not in html and "<img" not in html and "<b>subsample" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html


def test_a_figure_cannot_close_the_script_element():
    """The figures come from plotly.io.to_html: whatever text a trace carries (here unescaped, as a
    figure built elsewhere might), its JSON cannot end the script element or open a comment."""
    import plotly.graph_objects as go

    name = "</script><script>alert(1)</script><!--\u2028"
    out = figure_html(go.Figure(go.Scatter(x=[1.5, float("nan")], y=[1, 2], name=name)), "fig1")
    body = out[out.index("<script") + len("<script"):out.rindex("</script>")]
    assert "</script" not in body.lower() and "<!--" not in body and "\u2028" not in body
    assert "alert(1)" in body  # the text is there, as data that cannot close the element


def test_self_contained_and_printable(evil):
    _, _, _, html = evil
    assert html.startswith("<!DOCTYPE html>")
    assert "Content-Security-Policy" in html and "default-src 'none'" in html
    # no external resources in our markup (plotly.js's own bundle mentions URLs it never loads here;
    # the browser test checks that no request leaves the page): no src/href, CSS imports or web fonts
    head, rest = html.split("<script>", 1)
    ours = head + rest.split("</script>", 1)[1]
    assert not re.search(r"""\b(src|href)\s*=\s*["']?(https?:|//)""", ours, re.I)
    assert "@import" not in ours and "@font-face" not in ours and "url(" not in ours
    from plotly.offline import get_plotlyjs

    assert html.count(get_plotlyjs()[:400]) == 1  # plotly.js inlined exactly once
    assert "@page" in html and "A4" in html and "@media print" in html


def test_report_sections(evil):
    task, results, readout, html = evil
    text = re.sub(r"<[^>]+>", " ", html.split("</head>", 1)[1])
    for needle in ("The data and its groups", "Choices", "What the target rate means", "Results against the baselines",
                   "Figures", "The trade-off in plain words", "Reproducibility", "Theorem 2 ceiling",
                   "Measured accuracy beside the ceiling", "PR_t = 0.4500", "Data fingerprint", "Seeds",
                   "FairLR", "Kamiran &amp; Calders", "LR", "±", "t_s", "P(ȳ=1|y=1)"):
        assert needle in text, needle
    assert f"{readout['ceiling_at_target']:.4f}" in text
    # t_s in words, with the one-sided region it flips (rates.describe_t; METHOD.md's third fix)
    assert "whose chance of a positive label is between" in text and "labels move from" in text
    assert "lies within" not in text  # the paper's two-sided summary is gone
    assert describe_task(task)["data_fingerprint"] in text
    for pkg in ("numpy", "scikit-learn", "torch", "plotly"):
        assert pkg in text
    # one results row per model and target
    rows = re.findall(r'<tr class="fair">', html)
    assert len(rows) == 4  # FairLR at two targets, in the population's table and in the balanced test set's


def test_build_report_from_sweep_config(tmp_path):
    """What ``python -m fairdash report`` does with the two files ``sweep`` writes."""
    task = data.paper_task("compas-sex")
    results = run_experiment(ExperimentPlan(task, ["fair-lr", "lr"], [0.4], seeds=[0], device="cpu")).results
    path = tmp_path / "r.csv"
    from fairdash.files.safe_csv import results_csv

    path.write_text(results_csv(results))
    config = {"task": task.spec.to_dict(), "data": "compas", "paper": "compas-sex", "criterion": "eo",
              "models": ["fair-lr", "lr"], "target_rates": [0.4], "seeds": [0], "group_names": list(task.group_names),
              "command": None}
    html = build_report_from_sweep(pd.read_csv(path), config)
    assert "equality of opportunity" in html and "TPR ratio" in html
    assert "python -m fairdash sweep --paper compas-sex --criterion eo --models fair-lr,lr --pr-t 0.4" in html
    assert "COMPAS" in html
    # the data moved away: still a report, with a note
    gone = dict(config, paper=None, data=str(tmp_path / "missing.csv"))
    html2 = build_report_from_sweep(pd.read_csv(path), gone)
    assert "could not be read again" in html2 and "Results against the baselines" in html2


def test_empty_results_are_a_clear_error():
    with pytest.raises(FairDashError, match="no results"):
        build_report(pd.DataFrame(), task_description={}, readout=None, command=None)
    with pytest.raises(FairDashError, match="lack"):
        build_report(pd.DataFrame({"x": [1]}), task_description={}, readout=None, command=None)


def test_minimal_inputs_still_build():
    res = pd.DataFrame({"model": ["lr", "lr"], "seed": [0, 1], "accuracy": [0.8, 0.82], "pr_0": [0.2, 0.25],
                        "pr_1": [0.4, 0.38], "pr_ratio": [0.5, 0.66]})
    html = build_report(res, task_description={}, readout=None, command=None)
    assert "0.810 ±\u00a00.014" in html and "No target-rate readout" in html
    assert np.isfinite(len(html))


# --------------------------------------------------------------------------------------------------
# issue 19, item 1: the report describes the run's own data; a sample's description only for the sample
# --------------------------------------------------------------------------------------------------
def _report_text(task, **kw) -> str:
    desc = describe_task(task, **kw)
    results = run_experiment(ExperimentPlan(task, ["lr"], [None], seeds=[0], device="cpu")).results
    html = build_report(results, task_description=desc, readout=None)
    return re.sub(r"\s+", " ", unescape(re.sub(r"<[^>]+>", " ", html.split("</head>", 1)[1])))


ADULT_WORDS = "45,222 people from the 1994 US census"


def test_an_upload_is_not_described_as_the_sample_it_replaced():
    """A 1,000-row upload built while the session still held the Adult sample's description."""
    df = data.load_sample("adult").sample(1000, random_state=0).reset_index(drop=True)
    task = data.build_task(df, data.TaskSpec("sex", "salary", ("Male",), (">50K",)))
    text = _report_text(task, dataset="my_upload.csv", description=data.SAMPLES["adult"].description)
    assert ADULT_WORDS not in text
    groups = task.group_table()
    assert "This run's data: 1,000 rows; sensitive attribute s = sex, groups " in text
    for _, g in groups.iterrows():
        assert f"{g['group']} ({int(g['rows']):,} rows)" in text
    assert "label y = salary (positive: >50K" in text


@pytest.mark.parametrize("change", ["another label", "part of it"])
def test_the_sample_with_another_label_or_a_part_of_it_drops_the_samples_words(change):
    df = data.load_sample("compas")
    if change == "part of it":
        df = df.iloc[:3000]
        spec = data.TaskSpec("race", "two-year-recid", ("Caucasian",), ("1",))
    else:
        spec = data.TaskSpec("race", "sex", ("Caucasian",), ("Male",))
    task = data.build_task(df, spec)
    assert data.sample_of(task) is None
    desc = describe_task(task, dataset="COMPAS", description=data.SAMPLES["compas"].description)
    assert desc["description"] == ""


def test_the_sample_itself_keeps_its_description():
    task = data.paper_task("compas-race")
    assert data.sample_of(task) is data.SAMPLES["compas"]
    text = _report_text(task, dataset="COMPAS", description=data.SAMPLES["compas"].description)
    assert "6,167 defendants" in text and "This run's data: 6,167 rows" in text
    assert data.SAMPLES["adult"].n_rows == len(data.load_sample("adult"))
    assert data.SAMPLES["compas"].n_rows == len(data.load_sample("compas"))


def test_the_dashboard_forgets_the_samples_description_when_a_table_is_uploaded():
    from app_pages import new_app, upload

    at = new_app()
    assert app_state.get(at, "table_desc").startswith("45,222 people")
    df = data.load_sample("compas").iloc[:800]
    at = upload(at, "mine.csv", df)
    at.button(key="confirm_task").click().run()
    assert app_state.get(at, "table_name") == "mine.csv"
    assert app_state.get(at, "table_desc") == ""


@pytest.mark.slow
def test_a_report_of_several_runs_prices_deciding_without_s_and_refuses_two_tasks(adult_task, compas_task):
    """The Compare page's report of its shown runs (issue 26, item 2): one run with a rule deciding with s and
    one blind run of the same task are priced together in one report; runs of two tasks are refused."""
    from types import SimpleNamespace

    from fairdash.errors import FairDashError
    from fairdash.files.run_spec import RunSpec
    from fairdash.report import report_for_runs
    from fairdash.targeting.target_spec import make_target_spec
    from fairdash.work.experiments import ExperimentPlan, run_experiment
    from fairdash.work.runs import rows_together

    def run(task, model, decision, data_name):
        target = make_target_spec("dp", 0.30, decision=decision)
        exp = run_experiment(ExperimentPlan(task, [model], target_rates=[0.30], seeds=[0], target=target, price=True))
        spec = RunSpec(data=data_name, task=task.spec, target=target, models=(model,), target_rates=(0.30,),
                       seeds=(0,), group_names=task.group_names)
        return SimpleNamespace(task=task, results=exp.results, spec=spec, data_name=data_name, data_description="",
                               sides=exp.sides)

    with_s, blind = (run(adult_task, "lr", "group-rates", "adult"),
                     run(adult_task, "target-reduction", "threshold", "adult"))
    html = report_for_runs([with_s, blind], rows_together([with_s, blind]))
    assert "Price of deciding without s" in html and "Deciding without sex costs" in html
    assert "Accuracy of the rules that land on the target, with and without sex" in html
    with pytest.raises(FairDashError, match="different tables or tasks"):
        report_for_runs([with_s, run(compas_task, "lr", "threshold", "compas")])
