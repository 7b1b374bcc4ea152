"""The table and the task of this session: its defaults on first visit (or the saved session), choosing and checking
the task, the bundled samples, the seed-0 split's rates, the target and what it implies (the readouts), strata, and
forgetting it all."""
from __future__ import annotations

import hashlib
import json
from dataclasses import replace

import pandas as pd
import streamlit as st

from ... import data
from ...analysis.proxies import column_groups as proxy_column_groups
from ...analysis.proxies import task_leaks_and_proxies
from ...analysis.rates import TrainingRates, rates_readout, training_rates
from ...analysis.rates import readout_and_table as readout_and_table_of
from ...data.meaning import label_favourable
from ...events import log_event
from ...targeting import targets
from ...targeting.target_spec import TargetSpec
from .. import target_state
from ..server import session, state
from .navigation import ensure_router
from .upload import _parsed_upload, _profile

DEFAULT_SAMPLE = "adult"


SPLIT_SEED = 0  # the readouts use the same seed-0 split as `python -m fairdash rates`


def forget_session(training_cancelled: bool = False) -> None:
    """"Forget this session" (after its training was cancelled: ``views.forget_session``): its saved state,
    table, runs, cached fits and every snapshot made from it are deleted at once (the session's other tabs,
    and every address and snapshot link it had, say that the owner deleted it); the session starts again
    (new token, the default sample). Cached parses and scores of uploads go too."""
    ss = state.current()
    token = ss.token
    cache = ss.fit_cache
    if cache is not None:
        cache.clear()
    gone = session.forget_saved(token)
    for f in (_parsed_upload, _profile, _leaks_and_proxies, _column_groups):
        f.clear()  # content-keyed caches of tables and what was derived from them (uploads among them)
    session.reset(session.FORGOTTEN)  # (the browser stays the same browser, the tab the same tab)
    log_event("forget", session=token, snapshots=max(len(gone) - 1, 0), training_cancelled=training_cancelled)


def _task_key(table_id: str, spec: data.TaskSpec) -> str:
    return hashlib.sha256((table_id + json.dumps(spec.to_dict(), sort_keys=True, default=str))
                          .encode()).hexdigest()[:16]


def set_task(df: pd.DataFrame, table_id: str, table_name: str, spec: data.TaskSpec,
             task: data.Task | None = None) -> data.Task:
    """Build the task (or take the prebuilt ``task``); on success it becomes the session's current
    task (table included). On a :class:`FairDashError` nothing changes and the error propagates."""
    ss = state.current()
    key = _task_key(table_id, spec)
    if ss.task_key == key and ss.task is not None:
        return ss.task
    task = task if task is not None else data.build_task(df, spec)
    # the readouts' split and rates must exist too, before anything is committed (a table whose
    # smallest (group, label) cell has one row builds, but cannot be split)
    split = data.split_task(task, seed=SPLIT_SEED)
    rates = training_rates(task, split)
    old = ss.spec
    same_target = (old is not None and ss.table_id == table_id and old.s_column == spec.s_column
                   and old.y_column == spec.y_column and old.s1_values == spec.s1_values
                   and old.y1_values == spec.y1_values)
    if ss.table_id != table_id:
        ss.table_desc = ""  # a sample's description belongs to the sample (load_sample_task sets it)
    ss.table, ss.table_id, ss.table_name = df, table_id, table_name
    ss.spec, ss.task, ss.task_key = spec, task, key
    ss.rates, ss.split0 = state.Keyed(key, rates), state.Keyed(key, split)
    if not same_target:
        target_state.new_task(rates.presets["avg"])
    if str(table_id).startswith("upload:"):
        log_event("confirm", session=ss.token, rows=len(df), columns=df.shape[1], groups=task.n_groups)
    return task


def candidate_task(df: pd.DataFrame, table_id: str, spec: data.TaskSpec) -> data.Task:
    """The task these choices would make, built and checked (split included) but not committed: an
    upload's choices become the session's task only when the user confirms them."""
    key = _task_key(table_id, spec)
    cached = state.current().candidate
    if cached is not None and cached.key == key:
        return cached.value
    task = data.build_task(df, spec)
    data.split_task(task, seed=SPLIT_SEED)  # a table too small to split is refused now, not at training
    state.current().candidate = state.Keyed(key, task)
    return task


@st.cache_data(show_spinner=False, max_entries=16)
def _leaks_and_proxies(task_key: str, _df: pd.DataFrame, _task: data.Task) -> tuple[list, pd.DataFrame]:
    leaks, proxy = task_leaks_and_proxies(_df, _task)
    return leaks, pd.DataFrame(proxy, columns=["column", "score"])


def leaks_and_proxies(df: pd.DataFrame, table_id: str, task: data.Task) -> tuple[list, pd.DataFrame]:
    """The task's leaks and its proxy table (``proxies.task_leaks_and_proxies``: one scoring pass), once
    per task."""
    return _leaks_and_proxies(_task_key(table_id, task.spec), df, task)


@st.cache_data(show_spinner=False, max_entries=8)
def _column_groups(table_id: str, _df: pd.DataFrame, columns: tuple) -> dict:
    return proxy_column_groups(_df[list(columns)])


def column_groups(df: pd.DataFrame, table_id: str, columns) -> dict:
    """Columns grouped by name prefix (one-hot siblings first), for selecting many columns at once."""
    return _column_groups(table_id, df, tuple(columns))


def sample_spec(name: str, df: pd.DataFrame) -> data.TaskSpec:
    """The sample's standard task (Adult: s = sex with Male as group 1, y = salary with >50K positive)."""
    smp = data.SAMPLES[name]
    feats = data.default_features(df, data.profile_columns(df), smp.s_column, smp.y_column, smp.drop)
    return data.TaskSpec(smp.s_column, smp.y_column, tuple(smp.s1_values), tuple(smp.y1_values),
                         features=tuple(feats), positive_meaning=smp.positive_meaning,
                         positive_favourable=smp.positive_favourable)


@st.cache_resource(show_spinner=False, max_entries=4)
def _sample_task(name: str) -> tuple[pd.DataFrame, data.TaskSpec, data.Task]:
    """A bundled sample's table, standard spec and task, built once per process and shared read-only
    by every session (bundled data, nobody's upload): a new session opens at once."""
    df = data.load_sample(name)
    spec = sample_spec(name, df)
    task = data.build_task(df, spec)
    session.share(df, task)  # the session store does not charge sessions for what they all share
    return df, spec, task


def sample_task_spec(name: str) -> data.TaskSpec:
    """The standard spec of a bundled sample (what "Load this sample" sets)."""
    return _sample_task(name)[1]


def load_sample_task(name: str) -> data.Task:
    df, spec, prebuilt = _sample_task(name)
    task = set_task(df, f"sample:{name}", data.SAMPLES[name].title, spec, task=prebuilt)
    state.current().table_desc = data.SAMPLES[name].description
    return task


def ensure_state() -> None:
    """First open: the session saved under the URL's token (a reload or a shared link), else the Adult
    sample with s = sex and y = salary, so every page is useful at once. Every later run (a fragment's too)
    follows the session: another tab's newer save, or its deletion (then the whole page is drawn afresh with
    the note)."""
    ensure_router()
    ss = state.current()
    if not ss.has(state.Session.token):
        if session.open_session():
            # the URL's target wins over the saved one (an address edited at another PR_t)
            target_state.from_link(st.query_params.get("criterion"), st.query_params.get("pr_t"))
    else:
        session.follow_session()
    note = session.link_note()
    if note:
        (st.info if note in (session.SNAPSHOT_OPENED, session.FORGOTTEN) else st.warning)(note, icon=":material/link:")
    if ss.task is None:
        load_sample_task(DEFAULT_SAMPLE)


def current_task() -> data.Task:
    ensure_state()
    return state.current().task


def task_rates() -> TrainingRates:
    """Training-split rates of the current task (seed-0 split, as the command line); computed once per task."""
    ss = state.current()
    key = ss.task_key
    cached = ss.rates
    if cached is not None and cached.key == key:
        return cached.value
    task = ss.task
    split = data.split_task(task, seed=SPLIT_SEED)
    rates = training_rates(task, split)
    ss.rates = state.Keyed(key, rates)
    ss.split0 = state.Keyed(key, split)
    return rates


def split0() -> data.Split:
    task_rates()
    return state.current().split0.value


def set_strata(column: str | None) -> None:
    """Conditional parity: rebuild the task with ``column`` as the legitimate factor (or none)."""
    ss = state.current()
    spec = ss.spec
    if (spec.strata_column or None) == (column or None):
        return
    new = replace(spec, strata_column=column or None)  # the factor stays a feature unless the user drops it
    set_task(ss.table, ss.table_id, ss.table_name, new)


def target_spec() -> TargetSpec:
    """The session's target (:func:`fairdash.app.target_state.current`): raises the
    :class:`FairDashError` of an invalid one (e.g. TPR_t + TNR_t not above 1)."""
    return target_state.current()


def group_role(names, base_rates, spec=None) -> tuple[int, str]:
    """The group the wording singles out, and its word: the protected group the analyst named on the Data
    page, else the disadvantaged group: the lowest base rate where a positive label of ``spec`` (default:
    the current task's) is favourable for the person, the highest where it is unfavourable."""
    chosen = state.current().protected
    if chosen in tuple(names):
        return tuple(names).index(chosen), "the protected group"
    favourable, _ = label_favourable(spec if spec is not None else state.current().spec)
    return targets.disadvantaged_group(base_rates, favourable), "the disadvantaged group"


def readout(spec: TargetSpec | None = None) -> dict:
    """``rates_readout`` for the current task and target: exactly what ``python -m fairdash rates`` prints."""
    return rates_readout(state.current().task, spec or target_spec(), seed=SPLIT_SEED, split=split0())


def readout_and_table(spec: TargetSpec | None = None):
    """:func:`readout` and the transition table behind it, computed once."""
    return readout_and_table_of(state.current().task, spec or target_spec(), seed=SPLIT_SEED, split=split0())
