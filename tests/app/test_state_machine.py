"""No exception on any combination a user can reach (issue 47, item 1), found by search rather than by example: a
Hypothesis rule-based state machine drives the dashboard through Streamlit's AppTest. It uploads one of several
generated tables (two or three groups, a favourable or an unfavourable label, names with markup, spaces and
non-Latin letters), sets PR_t, trains random sets of models under random rules, opens every page, chooses and
un-chooses runs on Compare and switches the run on Export and Score new data; after every step no page shows an
exception and Compare's figures are drawn. This is the suite's short version (a few sequences);
``benchmarks/bench_state_machine.py`` runs the long one and records what it explored."""
from __future__ import annotations

import json
import os

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

import app_state
from app_pages import new_app, ok, upload, use

pytestmark = pytest.mark.usefixtures("cpu_only", "app_frame")

PAGES = ("data", "target", "train", "compare", "export", "audit", "how_it_works")
MODELS = ("lr", "target-reduction", "threshold-optimizer", "fair-lr")
RULES = ("threshold", "group-rates")
ODD = ("<b>grp</b>", "zip / code", "Zoë's area", "y (outcome)")


def generated_table(seed: int, groups: int, favourable: bool, odd: bool) -> tuple[str, pd.DataFrame, str, str]:
    """A small table of ``groups`` groups whose label says whether a positive is favourable (``approved``) or not
    (``denied``), a proxy of s and two features; with ``odd``, column and group names that look like markup."""
    rng = np.random.default_rng(seed)
    n = 600
    names = ["Zoë", "<i>north</i>", "A & B"][:groups] if odd else ["a", "b", "c"][:groups]
    s = rng.integers(0, groups, n)
    x = rng.normal(size=n) + 0.6 * s
    y = rng.random(n) < 1 / (1 + np.exp(-(1.2 * x - 0.4)))
    s_col, y_col = (ODD[0], ODD[3]) if odd else ("group", "outcome")
    word = ("approved", "refused") if favourable else ("denied", "granted")
    df = pd.DataFrame({s_col: np.asarray(names, dtype=object)[s], "x": x.round(3),
                       ODD[1] if odd else "zone": s + rng.integers(0, 2, n), ODD[2] if odd else "w": rng.normal(size=n),
                       y_col: np.where(y, word[0], word[1])})
    return f"table_{seed}.csv", df, s_col, y_col


# the suite's short version; the benchmark sets more sequences and steps, a random search and a file for the steps
EXAMPLES, STEPS = int(os.environ.get("FAIRDASH_STATE_EXAMPLES", "3")), int(os.environ.get("FAIRDASH_STATE_STEPS", "8"))
LOG = os.environ.get("FAIRDASH_STATE_LOG")  # each sequence's steps, one JSON line a sequence (the benchmark's record)


class Dashboard(RuleBasedStateMachine):
    def __init__(self):
        super().__init__()
        self.at = new_app()
        self.runs = 0
        self.steps = []

    def _page(self, name: str):
        self.at.switch_page(f"pages/{name}.py").run(timeout=300)

    @rule(seed=st.integers(0, 3), groups=st.sampled_from([2, 3]), favourable=st.booleans(), odd=st.booleans())
    def upload_a_table(self, seed, groups, favourable, odd):
        name, df, s_col, y_col = generated_table(seed, groups, favourable, odd)
        self.steps.append(f"upload {name} groups={groups} favourable={favourable} odd={odd}")
        self._page("data")
        upload(self.at, name, df)
        if not [b for b in self.at.button if b.key == "confirm_task"]:  # the same file again: it is the table already
            self.steps.append("  -> already the current table")
            return
        self.at.selectbox(key="s_column").set_value(s_col).run()
        self.at.selectbox(key="y_column").set_value(y_col).run()
        if self.at.radio(key="positive_is").value is None:  # the page asks whether a positive is favourable
            self.at.radio(key="positive_is").set_value("favourable" if favourable else "unfavourable").run()
        if self.at.button(key="confirm_task").disabled:  # the page says why in one line: no exception is the check
            self.steps.append("  -> not usable: " + " | ".join(w.value[:80] for w in self.at.warning))
            return
        use(self.at, "favourable" if favourable else "unfavourable")

    @rule(pr_t=st.sampled_from([0.05, 0.2, 0.5, 0.8, 0.95]))
    def set_pr_t(self, pr_t):
        self.steps.append(f"PR_t {pr_t}")
        self._page("target")
        app_state.pr_t_slider(self.at).set_value(pr_t).run()

    @rule(models=st.lists(st.sampled_from(MODELS), min_size=1, max_size=3, unique=True),
          decision=st.sampled_from(RULES))
    def train(self, models, decision):
        self.steps.append(f"train {models} under {decision}")
        self._page("train")
        offered = set(self.at.multiselect(key="train_models").options)
        chosen = [m for m in models if m in offered] or [self.at.multiselect(key="train_models").options[0]]
        self.at.multiselect(key="train_models").set_value(chosen).run()
        self.at.radio(key="decision").set_value(decision).run()
        before = len(app_state.get(self.at, "runs", []) or [])
        if self.at.button(key="train_button").disabled:  # a pending upload, no model offered...: the page says why
            assert self.at.info or self.at.warning or self.at.caption, self.steps
            self.steps.append("  -> training disabled")
            return
        self.at.button(key="train_button").click().run(timeout=600)
        self.runs = len(app_state.get(self.at, "runs", []) or [])
        assert self.runs >= before
        self.steps.append(f"  -> {self.runs} run(s)")

    @rule(page=st.sampled_from(PAGES))
    def open_a_page(self, page):
        self.steps.append(f"open {page}")
        self._page(page)

    @precondition(lambda self: self.runs > 0)
    @rule(data=st.data())
    def choose_runs_on_compare(self, data):
        self._page("compare")
        numbers = [r.number for r in app_state.get(self.at, "runs", [])]
        chosen = data.draw(st.lists(st.sampled_from(numbers), min_size=1, unique=True))
        self.steps.append(f"compare {chosen}")
        self.at.multiselect(key="compare_runs").set_value(chosen).run(timeout=300)
        ok(self.at)
        if [r for r in self.at.radio if r.key == "compare_table"]:  # runs of several tables: one at a time
            self.steps.append("compare: runs of several tables")
        if not [w for w in self.at.warning if "different criteria" in w.value]:
            assert len(self.at.get("plotly_chart")) >= 2, self.steps  # its figures are drawn

    @precondition(lambda self: self.runs > 1)
    @rule(data=st.data(), page=st.sampled_from(["export", "audit"]))
    def switch_the_run(self, data, page):
        self._page(page)
        key = "export_run" if page == "export" else "audit_run"
        boxes = [b for b in self.at.selectbox if b.key == key]
        if not boxes:
            return
        number = data.draw(st.sampled_from([r.number for r in app_state.get(self.at, "runs", [])]))
        self.steps.append(f"{page}: run {number}")
        boxes[0].set_value(number).run(timeout=300)

    def teardown(self):
        if LOG:
            with open(LOG, "a", encoding="utf-8") as f:
                f.write(json.dumps({"steps": self.steps, "runs": self.runs}) + "\n")

    @invariant()
    def no_exception(self):
        assert not self.at.exception, (self.steps, [e.value for e in self.at.exception])
        assert not [e for e in self.at.error if "Traceback" in e.value], self.steps


Dashboard.TestCase.settings = settings(max_examples=EXAMPLES, stateful_step_count=STEPS, deadline=None,
                                       suppress_health_check=list(HealthCheck), derandomize=LOG is None)
TestDashboard = Dashboard.TestCase
