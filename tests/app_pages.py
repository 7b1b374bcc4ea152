"""Driving the dashboard in tests through ``streamlit.testing.v1.AppTest``: one app of the frame (``new_app``),
uploads and their confirmation, what is shown (errors, the sidebar, metrics, tables, the PR_t box), a run made by
hand, and a session opened at an address. Shared by the page tests of every folder; their two fixtures (``cpu_only``,
``app_frame``) are in tests/conftest.py."""
import re
from pathlib import Path

from streamlit.testing.v1 import AppTest

from fairdash.app.server.session import (
    FORGOTTEN,
    LINK_DELETED,
    LINK_FOREIGN,
    LINK_NOT_KEPT,
    LINK_RESTARTED,
    LINK_UNKNOWN,
    SNAPSHOT_OPENED,
)

import app_state

ROOT = Path(__file__).resolve().parents[1]
LINK_NOTES = {FORGOTTEN, LINK_DELETED, LINK_FOREIGN, LINK_NOT_KEPT, LINK_RESTARTED, LINK_UNKNOWN, SNAPSHOT_OPENED}


APP = str(ROOT / "app.py")


CEILING = "Accuracy ceiling (Theorem 2, training split)"


TIMEOUT = 120


# --------------------------------------------------------------------------------------------------
# Compare: the target view and the moved-away sentence (issue 18, item 6), on a hand-made run
# --------------------------------------------------------------------------------------------------
def hand_made_run(at, results, target_rate):
    from fairdash.files.run_spec import RunSpec
    from fairdash.targeting.target_spec import make_target_spec
    from fairdash.work.runs import Run

    task = app_state.get(at, "task")
    spec = RunSpec(data="adult", task=task.spec, target=make_target_spec("dp", target_rate), models=("fair-lr", "lr"),
                   target_rates=(target_rate,), seeds=tuple(sorted(set(results["seed"]))), group_names=task.group_names)
    run = Run(spec, task, "Adult", results, number=1)
    app_state.put(at, "runs", [run])
    app_state.put(at, "run", run)
    at.switch_page("pages/compare.py").run()
    ok(at)


def frame(at: AppTest, column: str):
    """The first st.dataframe holding ``column`` (AppTest does not expose dataframe keys)."""
    for d in at.dataframe:
        if column in d.value.columns:
            return d.value
    raise AssertionError(f"no dataframe with a {column!r} column")


def metric(at: AppTest, label: str) -> str:
    found = [m.value for m in at.metric if m.label == label]
    assert found, f"no metric {label!r}; metrics: {[m.label for m in at.metric]}"
    return found[0]


def sidebar(at: AppTest) -> str:
    return " ".join(m.value for m in at.sidebar.markdown)


def pr_t_box(at: AppTest):
    """The PR_t number box (its widget key changes whenever the slider or a preset moves PR_t; the
    stable key "pr_t_input" is on its container)."""
    boxes = [n for n in at.number_input if n.label == "PR_t (exact value)"]
    assert len(boxes) == 1, [n.label for n in at.number_input]
    return boxes[0]


def errors(at: AppTest) -> list[str]:
    return [shown(e.value) for e in at.error]


def shown(markdown: str) -> str:
    """What a reader sees of ``markdown`` that holds user text (``text.literal``): without its backslash escapes
    and the invisible word joiners that keep a URL or shortcode from being turned into a link."""
    return re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", markdown).replace("\u2060", "")


def use(at: AppTest, answer: str = "favourable") -> AppTest:
    """Press "Use ... with these choices" on a pending upload, answering first (``answer``) whether a positive label
    is favourable for the person where the page asks it (the label's words do not say; issue 36, item 5)."""
    if at.radio(key="positive_is").value is None:
        at.radio(key="positive_is").set_value(answer).run()
    at.button(key="confirm_task").click().run()
    ok(at)
    return at


def upload(at: AppTest, name: str, table) -> AppTest:
    """Upload ``table`` (CSV bytes or a DataFrame, written as CSV) on the Data page as ``name``."""
    payload = table if isinstance(table, bytes) else table.to_csv(index=False).encode()
    at.radio(key="data_source").set_value("Upload a file").run()
    at.file_uploader(key="upload_file").set_value((name, payload, "text/csv")).run()
    ok(at)
    return at


def ok(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]


def new_app() -> AppTest:
    return AppTest.from_file(APP, default_timeout=TIMEOUT).run()


def train_lr(at, pr_t=None):
    if pr_t is not None:
        at.switch_page("pages/target.py").run()
        app_state.pr_t_slider(at).set_value(pr_t).run()
    at.switch_page("pages/train.py").run()
    at.multiselect(key="train_models").set_value(["lr"]).run()
    at.button(key="train_button").click().run(timeout=300)
    ok(at)


def notes(at) -> list[str]:
    """The session's notes on the page (what an address opened), not the data's."""
    return [n.value for n in (*at.warning, *at.info) if n.value in LINK_NOTES]


def address_of(at: AppTest) -> dict:
    return {k: (v[0] if isinstance(v, list) else v) for k, v in at.query_params.items()}


def open_address(query: dict) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    for k, v in query.items():
        at.query_params[k] = v
    return at.run()
