"""The Export page's files (glue without widgets): one run's trained model (:mod:`fairdash.files.export`), its
HTML report (:mod:`fairdash.report`), its results and its configuration, each as the bytes and the file name
the page offers for download."""
from __future__ import annotations

import json

from ..files import export as files
from ..files.results_file import to_file
from ..report import report_for_run
from . import target_state
from .ui import text, upload

REPORT_FILE = "fairdash_report.html"
RESULTS_FILE = "fairdash_results.csv"
CONFIG_FILE = RESULTS_FILE + ".json"  # beside the results, `fairdash report --results` reads it


def first_model(run) -> int:
    """The index (in ``run.models``) of the model offered first: the paper's method nearest the session's PR_t."""
    return list(run.models).index(run.default_model(target_state.current_or_default().target_rate))


def model_download(run, i: int) -> tuple[object, bytes, str]:
    """The ``i``-th fitted model of ``run``: the model, its ``.fairdash`` file's bytes and its file name. Raises
    where the model cannot be saved."""
    trained = run.models[list(run.models)[i]]
    return trained, files.model_bytes(trained), files.model_file_name(trained, run.number)


def model_note(trained) -> str:
    """What the model file is and what it needs (Markdown; the sensitive attribute's name shown literally)."""
    return (f"Fitted at {trained.fitted_at} (UTC) in {trained.fit_seconds:.2f} s. A `.fairdash` file: load it "
            "with `fairdash.load_model(path)` or `fairdash predict`; "
            + ("it needs the feature columns and the sensitive attribute "
               f"{text.literal(trained.spec.s_column, code=True)}: it decides with s." if trained.decides_with_s else
               "it needs the feature columns, not the sensitive attribute."))


def report_html(run) -> str:
    """The run's HTML report (:func:`fairdash.report.report_for_run`)."""
    return report_for_run(run)


def results_csv(run) -> bytes:
    """The run's results as the results file writes them, formula-like cells neutralised."""
    return upload.csv_bytes(to_file(run.results))


def config_json(run) -> bytes:
    """The run's configuration, in the format the command line's ``sweep`` writes beside its results (with
    the versions and processor it was computed with: ``RunSpec.record``)."""
    return json.dumps(run.spec.record(), indent=2).encode("utf-8")
