"""Work made in the test's own process and opened in the browser as a session file (issue 35, item 5: "Open a
session file" on the Data page), for browser tests whose subject is a page that shows several runs, not the
training that made them. Training ten runs through the Train page took most of such a test's time; the Train page's
own path (the button, the worker, the run history) is what ``test_decisions``, ``test_navigation`` and
``test_dashboard`` drive, and ``test_session_file_e2e`` checks that a saved session opens with the same numbers.

- :func:`session_file`: a ``.fairdash-session`` file of a table, its task and target, and one run per request,
  each trained with :func:`fairdash.work.runs.train_run` (the function the Train page's worker runs).
- :func:`open_session_file`: open it with the Data page's "Open a session file"; the outcome's text."""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from fairdash import data
from fairdash.app.server import state
from fairdash.files import session_file as sf
from fairdash.files.run_spec import RunSpec
from fairdash.targeting.target_spec import TargetSpec
from fairdash.work.runs import train_run

OPEN = f'.st-key-{state.OPEN_SESSION_FILE} input[type="file"]'


def session_file(folder: Path, table: pd.DataFrame, spec: data.TaskSpec, target: TargetSpec, requests, *,
                 name: str) -> Path:
    """``folder / (name + .fairdash-session)``: ``table`` (named ``name``) with the task ``spec`` and ``target``, and
    runs 1, 2, ... of ``requests``: each a dict of :class:`RunSpec` settings (``models``, ``seeds``, ``target``,
    ``decisions``) for that run."""
    task = data.build_task(table, spec)
    runs = tuple(train_run(task, RunSpec(data=name, task=spec, group_names=task.group_names,
                                         **{"target": target, **request}), data_name=name, number=number)
                 for number, request in enumerate(requests, 1))
    raw = sf.session_bytes(table=table, table_name=name, table_description="", task=task, target=target, runs=runs)
    path = Path(folder) / f"{Path(name).stem}{sf.SUFFIX}"
    path.write_bytes(raw)
    return path


def open_session_file(page, st_ui, path: Path) -> str:
    """Open ``path`` with the Data page's "Open a session file"; its outcome's text (a success or an error box)."""
    st_ui.goto_page(page, "Data")
    page.get_by_text("Open a session file", exact=True).first.click()  # the expander
    page.locator(OPEN).set_input_files(str(path))
    outcome = page.locator('[data-testid="stAlertContentSuccess"], [data-testid="stAlertContentError"]').filter(
        has_text=path.name)
    outcome.first.wait_for(timeout=120_000)
    st_ui.wait_idle(page, timeout=120)
    return outcome.first.inner_text()
