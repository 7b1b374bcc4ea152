"""The Score new data page's glue (issue 36, item 3): a table uploaded there is read as the Data page reads an
upload (the same reader, its budget and the server's memory guard: ``upload.read_upload_file``), scored by a model
of a run of the session's history exactly as ``fairdash predict`` scores a file (:mod:`fairdash.files.audit`),
and its decisions are read per group against the run's target, with the figures of the Compare page.

The upload and all that is derived from it stay in this browser session's memory (``state.AUDITED``, which the
session store never saves): nothing of it is written to disk. User text (column names, group names, values
quoted by the scoring contract) is shown literally (``text.literal``, ``text.figure_text``)."""
from __future__ import annotations

import numpy as np
import streamlit as st

from ..evaluation.metric_table import TRAIN, column_of
from ..figures import plots
from ..files import audit as library
from ..files.drift import shown_drift
from . import export, tables
from .server import state
from .ui import text, upload

CHART = {"displayModeBar": False}
DECISIONS_FILE = "fairdash_decisions.csv"
UPLOAD_TYPES = ["csv", "tsv", "txt", "gz", "parquet", "pq", "xlsx", "xls"]  # the Data page's


def first_model(run) -> int:
    """The model offered first: the one Export offers first (the paper's method nearest the session's PR_t)."""
    return export.first_model(run)


def targets_of(trained, n_groups: int) -> list:
    """Each group's target as the run trained the model for it (NaN where it has none)."""
    return [float(trained.metrics.get(column_of("target", TRAIN, j), np.nan)) for j in range(n_groups)]


def model_caption(run, trained) -> str:
    """What the chosen model needs of a new table (Markdown; names shown literally)."""
    spec, lit = trained.spec, text.literal
    need = (f"the feature columns it was trained on and the sensitive attribute {lit(spec.s_column, code=True)}"
            " (it decides with s)" if trained.decides_with_s else
            f"the feature columns it was trained on; the sensitive attribute {lit(spec.s_column, code=True)} to "
            "read the rates per group")
    return (f"Trained on {lit(run.data_name)} for {lit(run.spec.target.describe())}. A new table needs "
            f"{need}, and the label {lit(spec.y_column, code=True)} for the error rates.")


def audited(up, run, i: int) -> library.Audit:
    """The uploaded file ``up`` scored by the ``i``-th model of ``run`` (once per file, run and model in this
    session). Raises :class:`~fairdash.errors.FairDashError` with one line where the file cannot be read or the
    model refuses the table."""
    ss = state.current()
    key = list(run.models)[i]
    wanted = (up.file_id, run.key, run.number, key)
    kept = ss.audited
    if kept is not None and kept.key == wanted:
        return kept.value
    del ss.audited
    df, _ = upload.read_upload_file(up)  # the Data page's reader, budget and memory guard
    trained = run.models[key]
    result = library.audit_table(trained, df, targets_of(trained, len(trained.group_names)),
                                 run.spec.target.criterion_info)
    ss.audited = state.Keyed(wanted, result)
    return result


def show_warnings(result: library.Audit) -> None:
    """The scoring contract's warnings, one line each, and the sentences about rows left out of the rates."""
    scored = result.scored
    n, k = len(scored.decisions), int(scored.decided.sum())
    st.success(f"Scored {n:,} rows: {k:,} positive decisions ({k / n:.1%}).", icon=":material/check:")
    if scored.notes:
        st.markdown(f"**{len(scored.notes)} warning(s)**: the rows were scored, but read these first.")
        for note in scored.notes:
            st.warning(text.literal(note), icon=":material/warning:")
    for note in result.notes:
        st.info(text.literal(note), icon=":material/info:")
    if len(scored.drift):
        st.markdown("**Drift against the training rows**, feature by feature")
        tables.show_numbers(shown_drift(scored.drift), key="audit_drift")
        st.caption("Out of range: the share of rows outside the training minimum and maximum (Wilson's 95% "
                   "interval). Shift: the Kolmogorov-Smirnov distance between the new rows and the training rows "
                   "(numbers) or the total variation distance between their categories' shares (text). Drifted: "
                   "more rows out of range, or a shift, than chance gives at a 5% level for the whole table "
                   "(shared among its features).")


def show_rates(result: library.Audit, run) -> None:
    """The decisions' rates per group against the run's target (a sentence, a table, the Compare page's target
    view and rate figures), with the error rates where the new table has labels."""
    if result.rates is None:
        return
    criterion = run.spec.target.criterion_info
    rates = result.rates
    st.subheader("Rates per group on the new rows")
    st.markdown(text.literal(library.rates_sentence(rates, criterion) + "."))
    tables.show_numbers(library.shown_rates(rates), key="audit_rates")
    st.caption("Rates measured from the model's decisions on the uploaded rows; the target is the run's. "
               + ("TPR, FPR, FNR and accuracy come from the rows with a label. " if result.labelled else "")
               + "n/a: the group has no row to measure that rate on.")
    if criterion.positives_only and not result.labelled:
        st.caption("The run's target is on the true positive rate, measured on the rows with a positive label: without "
                   "the label this table has no gap to the target, only its positive rates.")
    names = text.figure_text(rates["group"])
    row = library.as_results(rates, "new rows", run.spec.target.target_rate)
    if not criterion.positives_only or result.labelled:  # a TPR target needs labels
        view = plots.target_view(row, criterion, population=True, group_names=names,
                                 title="Each group's rate on the new rows against its target")
        st.plotly_chart(_legend_below_axis(view), key="audit_fig_target", config=CHART)  # full width, as on Compare
        st.caption("Each point is one group's rate on the new rows, the dashed line that group's target in the run; "
                   "the number beside it is the gap, rate minus target (negative: short of it).")
    left, right = st.columns(2)
    left.plotly_chart(plots.pr_scatter(row, group_names=names, title="Positive rates per group on the new rows"),
                      key="audit_fig_pr", config=CHART)
    if result.labelled:
        right.plotly_chart(plots.tpr_scatter(row, group_names=names,
                                             title="True positive rates per group on the new rows"),
                           key="audit_fig_tpr", config=CHART)


def _legend_below_axis(fig, gap_px: int = 40):
    """The target view of a few rows: its legend moved below the x axis's title (placed for Compare's taller
    view, as a share of the plot's height, it would sit on the title of a short one)."""
    height, margin = fig.layout.height, fig.layout.margin
    if height is None or margin.b is None or margin.t is None:
        return fig
    bottom = margin.b + gap_px
    plot = height - margin.t - margin.b  # the plot area's height in pixels, which the legend's y is a share of
    fig.update_layout(height=height + gap_px, margin=dict(b=bottom), legend=dict(y=-(bottom - 25) / plot))
    return fig


def decisions_download(result: library.Audit) -> bytes:
    """The decisions' CSV, as ``fairdash predict`` writes it for the same table and model."""
    return library.decisions_csv(result.scored).encode("utf-8")
