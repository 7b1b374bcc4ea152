"""Building the report: one self-contained HTML page (plotly.js inlined, no network, prints to A4) from a
sweep's tidy results, rendered by a Jinja2 template with autoescaping, so that every text from the data
(column names, category values, group names, file names, the command) is escaped; the page carries a
Content-Security-Policy that forbids every network request."""
from __future__ import annotations

import datetime as _dt
from functools import lru_cache

import numpy as np
import pandas as pd

from .. import data
from .._version import software_versions
from ..analysis.rates import evaluation_rates, rates_readout, training_rates
from ..errors import FairDashError
from ..evaluation.calibration import reliability
from ..evaluation.metrics import summarize
from ..files.run_spec import RunSpec
from ..models.registry import MODELS
from ..progress import utc_now
from ..targeting.criteria import DEFAULT, Criterion, criterion_info
from ..targeting.decision import positive_scores
from . import content
from .figures import figure_html, make_figures, plotly_js

CSP = ("default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data: blob:; "
       "font-src data:; connect-src 'none'; frame-src 'none'; object-src 'none'; base-uri 'none'; form-action 'none'")


@lru_cache(maxsize=1)
def _template():
    import jinja2

    env = jinja2.Environment(loader=jinja2.PackageLoader("fairdash.report", "templates"),
                             autoescape=True, undefined=jinja2.StrictUndefined, trim_blocks=False)
    return env.get_template("report.html.j2"), env.loader.get_source(env, "report.css")[0]


def _readable_time(iso: str) -> str:
    try:
        t = _dt.datetime.fromisoformat(str(iso))
    except ValueError:
        return str(iso)
    return t.strftime("%d %b %Y, %H:%M") + (" UTC" if t.utcoffset() == _dt.timedelta(0) else "")


def _reported_rows(results: pd.DataFrame) -> pd.DataFrame:
    """A copy of the results a report can read (refused without rows, a model or an accuracy), each row with its
    label and a numeric target rate (empty where it had none)."""
    if not isinstance(results, pd.DataFrame) or results.empty:
        raise FairDashError("There are no results to report; run a sweep first.")
    if "model" not in results.columns or "accuracy" not in results.columns:
        raise FairDashError("These results lack the 'model' and 'accuracy' columns a report needs.")
    results = results.copy()
    if "label" not in results.columns:
        results["label"] = [MODELS[m].label if m in MODELS else m for m in results["model"].astype(str)]
    if "target_rate" not in results.columns:
        results["target_rate"] = np.nan
    results["target_rate"] = pd.to_numeric(results["target_rate"], errors="coerce")
    return results


def build_report(results: pd.DataFrame, *, task_description: dict, readout: dict | None = None,
                 command: str | None = None, criterion: Criterion | None = None, seeds=None,
                 data_fingerprint: str | None = None, versions: dict | None = None, config: dict | None = None,
                 eval_rates=None, title: str | None = None, created: str | None = None,
                 population_rates=None, calibration=None) -> str:
    """One self-contained HTML page for a sweep's ``results``.

    ``task_description``: :func:`describe_task`'s dict (any subset of its keys). ``readout``:
    :func:`fairdash.analysis.rates.rates_readout` at the chosen target. ``command``: the command line that
    reproduces ``results``. ``criterion`` defaults to the results' own; ``seeds`` to those in the
    results; ``eval_rates``/``population_rates`` (base rates, group shares) of the evaluation rows and
    of the population draw the ceilings in the accuracy/fairness figures.
    """
    results = _reported_rows(results)
    desc = dict(task_description or {})
    if criterion is None:  # the results' own, by the name their criterion column holds
        criterion = criterion_info(str(results["criterion"].dropna().iloc[0]) if "criterion" in results.columns
                                   and results["criterion"].notna().any() else DEFAULT)  # unknown: a FairDashError
    seeds = list(seeds) if seeds is not None else (sorted(map(int, results["seed"].dropna().unique()))
                                                    if "seed" in results.columns else [])
    group_names = desc.get("group_names") or ([readout["groups"][k] for k in sorted(readout["groups"], key=int)]
                                              if readout and "groups" in readout else ["s=0", "s=1"])
    summary = content.with_worst_groups(summarize(results, by=("model", "label", "target_rate")), results,
                                        ("model", "label", "target_rate"))
    if created is None:
        created = utc_now()
    title = title or f"FairDash report: {desc.get('dataset') or 'results'}"
    figures = [{"title": t, "html": figure_html(fig, f"fig{i + 1}"), "caption": caption}
               for i, (t, fig, caption) in enumerate(make_figures(results, summary, criterion, readout, group_names,
                                                                  eval_rates, population_rates,
                                                                  s_name=desc.get("s_column") or "s",
                                                                  calibration=calibration))]
    template, css = _template()
    return template.render(
        csp=CSP, css=css, plotly_js=plotly_js(), title=title, created=_readable_time(created),
        criterion_words=criterion.words,
        sections=[content.section_data(desc), content.section_choices(readout, criterion, results, seeds),
                  content.section_readout(desc, readout, results),
                  content.section_results(summary, criterion, group_names, results, desc.get("s_column") or "s",
                                          bool(desc.get("positive_favourable", True)), desc.get("error_words"))],
        figures=figures, summary=content.plain_summary(summary, criterion, readout, desc),
        repro=content.repro_blocks(command, seeds, data_fingerprint or desc.get("data_fingerprint"),
                                   versions or software_versions(("plotly",)), results, config, created),
    ) + "\n"


def eval_rates_for(task, criterion: Criterion, seed: int = 0):
    """Base rates and group shares of the evaluation rows (see :func:`fairdash.analysis.rates.evaluation_rates`)."""

    return evaluation_rates(task, criterion, seed)


def readout_target(spec, results: pd.DataFrame, task, seed: int = 0):
    """The target the report's readout shows for ``results`` trained at ``spec``: the spec itself where
    it names no single ``PR_t`` (explicit TPR/TNR targets, each stratum's own preset) or where no target
    rate was recorded; else the swept ``PR_t`` nearest to the spec's own (its preset resolved on the
    training split of ``seed``), so the readout is always one of the targets the results were trained at."""

    tried = sorted({float(t) for t in pd.to_numeric(results.get("target_rate", pd.Series(dtype=float)),
                                                    errors="coerce").dropna()})
    if not tried or spec.explicit or (spec.conditional and spec.target_rate is None):
        return spec
    want = spec.rate_for(training_rates(task, seed=seed).base_rates)
    return spec.with_rate(min(tried, key=lambda t: abs(t - want)))


def calibration_of(run) -> tuple | None:
    """``(words, reliability curve)`` of the model a run offers first (``Run.default_model``) on its split's
    population, for the report's calibration figure; ``None`` for a run without fitted models."""
    models = getattr(run, "models", None) or {}
    key = run.default_model() if models else None
    if key is None:
        return None
    trained = models[key]
    arrays = data.split_arrays(run.task, int(key[2]))
    scores = positive_scores(trained.estimator, arrays.X_test, arrays.s_test)
    return run.model_words(key), reliability(scores, arrays.y_test, arrays.s_test, run.task.n_groups)


def _report_for_task(results: pd.DataFrame, run_spec, task, desc: dict, calibration=None) -> str:
    seeds = list(run_spec.seeds)
    seed0 = seeds[0] if seeds else 0
    criterion = run_spec.target.criterion_info
    readout = rates_readout(task, readout_target(run_spec.target, results, task, seed0), seed=seed0)
    return build_report(results, task_description=desc, readout=readout, command=run_spec.command,
                        criterion=criterion, seeds=seeds, config=run_spec.to_dict(),
                        eval_rates=eval_rates_for(task, criterion, seed0),
                        population_rates=evaluation_rates(task, criterion, seed0, population=True),
                        calibration=calibration)


def report_for_run(run) -> str:
    """The report of one training run: anything with ``spec`` (a :class:`fairdash.files.run_spec.RunSpec`),
    ``task``, ``results``, ``data_name`` and ``data_description``, such as :class:`fairdash.work.runs.Run`
    (the dashboard's Export page). The report reads the run; it never trains."""
    desc = content.describe_task(run.task, dataset=run.data_name, description=run.data_description,
                                 positive_meaning=run.task.spec.positive_meaning)
    return _report_for_task(run.results, run.spec, run.task, desc, calibration_of(run))


def report_for_runs(runs, results: pd.DataFrame | None = None) -> str:
    """The report of several runs of one task together (the Compare page's shown runs): their results rows
    side by side (``results``, as the caller priced them together: :func:`fairdash.work.runs.rows_together`, so
    that a rule deciding with s and a blind one are priced together; default: the rows as they are). The readout
    and the configuration shown are the first run's. Runs of different tasks are refused: a report describes one
    task."""
    runs = list(runs)
    if not runs:
        raise FairDashError("Choose at least one run for the report.")
    first = runs[0]
    if len(runs) == 1:
        return report_for_run(first)
    if any(r.task is not first.task for r in runs):
        raise FairDashError("These runs were trained on different tables or tasks, and a report describes one task: "
                            "choose runs of one task on Compare, or download each run's report on Export.")
    if results is None:
        results = pd.concat([r.results for r in runs], ignore_index=True, sort=False)
    desc = content.describe_task(first.task, dataset=first.data_name, description=first.data_description,
                                 positive_meaning=first.task.spec.positive_meaning)
    return _report_for_task(results, first.spec, first.task, desc, calibration_of(first))


def build_report_from_sweep(results: pd.DataFrame, config) -> str:
    """The report for a results CSV and its configuration JSON (:class:`fairdash.files.run_spec.RunSpec`'s
    format, written alike by ``python -m fairdash sweep`` and the dashboard's Export page).

    The configuration names the data (a sample, a file or a ``paper`` set-up), the task and the target;
    the data is read again for the group table, the readout and the fingerprint. If it cannot be read
    (moved, deleted) the report is still built from the results alone, with a note saying so. A
    malformed configuration is a :class:`FairDashError`."""

    run = RunSpec.from_dict(config)
    results = results.copy()
    if "target_rate" in results.columns:
        results["target_rate"] = pd.to_numeric(results["target_rate"], errors="coerce")
    try:
        task = run.load_task()
    except (FairDashError, OSError) as e:
        desc = {"dataset": str(run.data or run.paper or "unknown"), "group_names": list(run.group_names),
                "warnings": [f"The data could not be read again ({e}); the readouts below are missing."]}
        return build_report(results, task_description=desc, readout=None, command=run.command,
                            criterion=run.target.criterion_info, seeds=list(run.seeds), config=run.to_dict())
    source = data.paper_setup(run.paper).sample if run.paper else str(run.data)
    sample = data.SAMPLES.get(source)
    desc = content.describe_task(task, dataset=sample.title if sample else source,
                                 description=sample.description if sample else "",
                                 positive_meaning=(run.task.positive_meaning
                                                   or (sample.positive_meaning if sample else None)),
                                 source=source)
    return _report_for_task(results, run, task, desc)
