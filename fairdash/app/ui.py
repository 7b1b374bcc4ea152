"""Streamlit glue for the dashboard: session state, cached loaders, error display.

The one module of ``fairdash`` that imports Streamlit. Pages call these helpers and the library; no
maths lives here or in the pages.

Session state (per browser session; nothing here is shared between sessions):

- ``fd_table`` / ``fd_table_id`` / ``fd_table_name``: the current valid table and where it came from.
- ``fd_spec`` / ``fd_task`` / ``fd_task_key``: the current valid :class:`~fairdash.data.Task`.
- ``fd_rates`` (keyed by ``fd_task_key``): training-split rates of the seed-0 split, the same split the
  command line's ``rates`` uses.
- ``fd_target``: the target, one :class:`~fairdash.targeting.target_spec.TargetSpec` (:mod:`fairdash.app.target_state`).
- ``fd_run``: the last training run (results table, fitted models, configuration).

Shared between sessions (keyed by content only, so no session can see another's choices): the
bundled samples, parsed uploads (by their bytes) and the :class:`~fairdash.work.fit_cache.FitCache`.
"""
from __future__ import annotations

import contextlib
import hashlib
import html
import inspect
import json
import re
import time
from dataclasses import replace

import pandas as pd
import streamlit as st

from .. import data
from ..analysis.proxies import column_groups as proxy_column_groups
from ..analysis.proxies import task_leaks_and_proxies
from ..analysis.rates import TrainingRates, rates_readout, training_rates
from ..analysis.rates import readout_and_table as readout_and_table_of
from ..data.meaning import label_favourable
from ..device import device_description, device_hint
from ..errors import FairDashError
from ..events import log_event
from ..files.export import results_csv
from ..models.registry import model_info
from ..targeting import targets
from ..targeting.target_spec import TargetSpec
from ..work.fit_cache import FitCache
from . import session, state, target_state
from .limits import check_memory
from .session import add_run, keep_widgets, remember, remember_value, runs  # noqa: F401 (the pages' one facade)

DEFAULT_SAMPLE = "adult"


SPLIT_SEED = 0  # the readouts use the same seed-0 split as `python -m fairdash rates`
# results tables: the model's name is read whole ("Kamiran & Calders · run 2"), never cut
RESULTS_COLUMNS = {"model": st.column_config.TextColumn("model", width="large", pinned=True)}


# --------------------------------------------------------------------------------------------------
# User text
# --------------------------------------------------------------------------------------------------
_WORD_JOINER = "\u2060"  # invisible and unbreakable: splits a would-be URL, e-mail or shortcode for the parser
_LINK_BREAKS = re.compile(r"(?<=:)(?=\S)|(?<=@)|(?i:(?<=www)(?=\.))")
_MARKUP = re.compile(r"([\\`*\[\]<>~$])|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])|&(?=#?\w+;)")
_BLOCK_START = re.compile(r"^(?:([#>+=|*-])|(\d+)([.)]))")


def literal(text, code: bool = False) -> str:
    """User text (column, group and label names, file names, meanings, messages that quote them) as
    Markdown that shows it literally: no link, image, emphasis, heading, LaTeX or emoji comes from it.

    Every Streamlit element that takes Markdown (``st.markdown``, ``st.caption``, ``st.info`` and its
    siblings, widget labels and ``help`` texts) gets user text through this. Markup characters are
    backslash-escaped; since the Markdown renderer turns a bare ``http://...``, ``www.`` or e-mail
    address into a link *after* resolving escapes, an invisible word joiner (U+2060) is put after
    ``:`` and ``@`` and between ``www`` and ``.``, which no autolink or shortcode pattern matches
    across; a word joiner of the text itself is written ``&#8288;``. ``code=True`` gives an inline code span
    instead (for column names): always literal."""
    s = " ".join(str(text).splitlines()).strip()
    if code:
        if not s:
            return ""
        fence = "`" * (max((len(r) for r in re.findall(r"`+", s)), default=0) + 1)
        pad = " " if s[0] == "`" or s[-1] == "`" else ""
        return f"{fence}{pad}{s}{pad}{fence}"
    # the text's own word joiners become a character reference (shown as the character), so that they stay
    # apart from the ones put in here (which only break links): neither is lost nor taken for the other
    s = "&#8288;".join(_MARKUP.sub(lambda m: "\\" + m.group(0), _LINK_BREAKS.sub(_WORD_JOINER, part))
                       for part in s.split(_WORD_JOINER))
    return _BLOCK_START.sub(lambda m: "\\" + m.group(1) if m.group(1) else m.group(2) + "\\" + m.group(3), s)


def figure_text(names) -> list[str]:
    """User text for Plotly figures (group names in legends, axes and labels): Plotly reads a subset of HTML
    (``<a href>``, ``<b>``, ``<br>``) in its text, so ``<``, ``>`` and ``&`` are given as entities, which it
    shows as the characters themselves."""
    return [html.escape(str(n), quote=False) for n in names]


# --------------------------------------------------------------------------------------------------
# Errors
# --------------------------------------------------------------------------------------------------
def error_text(exc: BaseException, prefix: str = "") -> str:
    """The message a person can act on for ``exc`` (one line, never a traceback)."""
    if isinstance(exc, FairDashError):
        return prefix + str(exc)
    if isinstance(exc, MemoryError):
        return prefix + "Out of memory: try a smaller table or fewer repeats."
    first = (str(exc).strip().splitlines() or [""])[0][:300]
    return (f"{prefix}Something unexpected went wrong ({type(exc).__name__}: {first}). "
            "Your data and choices are kept; please try again or change a setting.")


def show_error(exc: BaseException, prefix: str = "") -> None:
    """An error box with :func:`error_text`'s message; never a traceback."""
    st.error(literal(error_text(exc, prefix)), icon=":material/warning:")  # messages quote user text


@contextlib.contextmanager
def guard(prefix: str = ""):
    """``with guard(): ...``: any error inside is shown with :func:`show_error`; the page goes on."""
    try:
        yield
    except PageEnded:
        raise
    except Exception as exc:  # noqa: BLE001 - the user sees a message, never a trace
        if type(exc).__module__.startswith("streamlit."):
            raise  # Streamlit's own control flow (st.rerun, st.stop) and its API errors pass through
        show_error(exc, prefix)


class PageEnded(Exception):
    """A page has nothing more to draw (:func:`end_page`); ``app.py`` catches it around ``page.run()``."""


def end_page():
    """End the page here, as ``st.stop()`` would, but let the frame's work after the page run: the sidebar, the
    kept widgets and the saved session with its address (``app.py``'s ``finally``). ``st.stop()`` would skip those:
    once a stop is requested, Streamlit ends the script at the next element it sends, the frame's included, so a
    first visit to a page that stops early never got its ``?session=`` address. Not inside a fragment (a fragment's
    rerun does not run ``app.py``): there, return instead."""
    raise PageEnded


# --------------------------------------------------------------------------------------------------
# Shared, content-keyed caches
# --------------------------------------------------------------------------------------------------
@st.cache_resource(show_spinner=False)
def _samples_fit_cache():
    """The fit cache on disk (``FAIRDASH_CACHE_DIR``), shared by every session: bundled samples only."""

    return FitCache()


def fit_cache():
    """The fit cache for the current table, keyed by data content + configuration + code version. The
    bundled samples share one on disk; an upload is personal data, so its fitted models (an SVM's support
    vectors are rows of the table) stay in this session's memory only, and go with the session or with
    "Forget this session"."""
    ss = state.current()
    if str(ss.get(state.Session.table_id, "")).startswith("sample:"):
        return _samples_fit_cache()
    if ss.fit_cache is None:  # (kept with the session: a reload keeps it, Forget deletes it)

        ss.fit_cache = FitCache(directory=False, memory_items=32)
    return ss.fit_cache


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


@st.cache_resource(show_spinner=False)
def _device_text() -> str:
    try:
        return device_description()
    except Exception:  # noqa: BLE001
        return "CPU"


def device_text() -> str:
    """The training device in words; on a first page, without importing torch where that can be avoided."""

    return device_hint() or _device_text()


@st.cache_data(show_spinner=False, max_entries=8, ttl=3600)
def _parsed_upload(digest: str, _raw: bytes, name: str) -> pd.DataFrame:  # keyed by the digest, not the bytes
    # in a process of its own under the table budget's hard limit, the server's memory guard watching as it reads
    return data.read_table(_raw, name, watch=lambda: check_memory("uploads"))


def read_upload_file(up) -> tuple[pd.DataFrame, str]:
    """:func:`read_upload` for the uploader's file, once: every later rerun with the same file (its
    ``file_id``) reuses the table instead of hashing and parsing its bytes again."""
    ss = state.current()
    seen = ss.upload_read
    if seen is not None and seen.file_id == up.file_id:
        return seen.df, seen.table_id
    started, token = time.monotonic(), ss.token
    try:
        check_memory("uploads")  # the server's guard, before a byte is parsed
        df, table_id = read_upload(up.getvalue(), up.name)
    except FairDashError as e:
        log_event("refusal", session=token, reason=refusal_reason(e), kind="upload", bytes=up.size,
                  seconds=round(time.monotonic() - started, 3))
        raise
    log_event("upload", session=token, bytes=up.size, rows=len(df), columns=df.shape[1],
              seconds=round(time.monotonic() - started, 3))
    ss.upload_read = state.UploadRead(up.file_id, df, table_id)
    return df, table_id


def refusal_reason(error: BaseException) -> str:
    """The event log's code for a refused input: the rule that refused it (``table_budget``, ``memory_guard``,
    ``columns``, ``cells``, ...), else ``malformed`` (a file that is not a table FairDash reads)."""
    return getattr(error, "reason", None) or "malformed"


def log_export(kind: str, nbytes: int) -> None:
    """A download's event (``on_click`` of the Export page's buttons): what kind, how large; never what."""
    log_event("export", session=state.current().token, kind=kind, bytes=int(nbytes))


def read_upload(raw: bytes, name: str) -> tuple[pd.DataFrame, str]:
    """A parsed upload and its content id (``upload:<sha256 prefix>``)."""
    digest = hashlib.sha256(raw).hexdigest()
    return _parsed_upload(digest, raw, name), f"upload:{digest[:16]}"


@st.cache_data(show_spinner=False, max_entries=8)
def _profile(table_id: str, _df: pd.DataFrame) -> pd.DataFrame:
    return data.profile_columns(_df)


def profile(df: pd.DataFrame | None = None, table_id: str | None = None) -> pd.DataFrame:
    """The column profile of ``df`` (default: the current table), computed once per table id."""
    ss = state.current()
    df = ss.table if df is None else df
    return _profile(table_id or ss.get(state.Session.table_id, "?"), df)


# --------------------------------------------------------------------------------------------------
# The table and the task
# --------------------------------------------------------------------------------------------------
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


PAGES = (("pages/data.py", "Data", ":material/table_view:", "data"),
         ("pages/target.py", "Target", ":material/tune:", "target"),
         ("pages/train.py", "Train", ":material/model_training:", "train"),
         ("pages/compare.py", "Compare", ":material/bar_chart:", "compare"),
         ("pages/export.py", "Export", ":material/download:", "export"),
         ("pages/audit.py", "Score new data", ":material/fact_check:", "score"),
         ("pages/how_it_works.py", "How it works", ":material/menu_book:", "how_it_works"))


def navigation(position: str = "sidebar"):
    """The dashboard's pages as ``st.navigation`` (app.py's frame; the first is the default page)."""
    return st.navigation([st.Page(path, title=title, icon=icon, url_path=url, default=i == 0)
                          for i, (path, title, icon, url) in enumerate(PAGES)], position=position)


def in_frame() -> None:
    """Called by app.py on every run: the page that follows runs inside the frame."""
    state.current().in_frame = True


def ensure_router() -> None:
    """Make sure the page runs inside app.py's ``st.navigation`` frame.

    A fresh server that is first asked for a page URL (``/target``) before any session has run app.py
    runs the page file alone (Streamlit treats a ``pages/`` folder as its old multipage layout until
    ``st.navigation`` has run once). Then the page declares the navigation itself and reruns: from then
    on every run goes through app.py, so the same URL opens inside the frame."""
    if state.current().in_frame:
        return
    navigation(position="hidden")
    st.rerun()


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


# --------------------------------------------------------------------------------------------------
# The target
# --------------------------------------------------------------------------------------------------
def target_spec() -> TargetSpec:
    """The session's target (:func:`fairdash.app.target_state.current`): raises the
    :class:`FairDashError` of an invalid one (e.g. TPR_t + TNR_t not above 1)."""
    return target_state.current()


def save_session() -> None:
    """Keep the session under its token, with its token and its target in the URL."""
    session.save_session(target_state.link_params())


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


# --------------------------------------------------------------------------------------------------
# Widgets helpers
# --------------------------------------------------------------------------------------------------
def restore(key: str, value) -> None:
    """Give widget ``key`` the value ``value`` if the widget has no state yet (first render, or after
    Streamlit dropped it on a page switch). Call before the widget is drawn."""
    ss = state.current()
    if not ss.has_widget(key):
        ss.set_widget(key, value)


def set_if_changed(key: str, value) -> None:
    """Write widget ``key``'s state only where it differs from ``value``. Any write marks the value as the
    script's, and the browser then draws it over whatever the user picked while this run was going: written
    on every run, a pick made during a slow rerun (a busy server) would vanish."""
    ss = state.current()
    if not ss.has_widget(key) or ss.widget(key) != value:
        ss.set_widget(key, value)


def data_source() -> str:
    """How the command line names the current data: a sample's name, or the uploaded file's name."""
    ss = state.current()
    table_id = str(ss.get(state.Session.table_id, ""))
    if table_id.startswith("sample:"):
        return table_id.split(":", 1)[1]
    return str(ss.get(state.Session.table_name, "upload"))


def model_options(name: str) -> dict:
    """Numeric constructor settings of a model class that a user may change (name -> default); the
    target, seed, device and progress are set by FairDash itself. Empty if the model is not available."""

    try:
        cls = model_info(name).load_class()
    except Exception:  # noqa: BLE001 - a model still being written is simply not offered
        return {}
    skip = {"self", "target_rate", "criterion", "tpr_target", "tnr_target", "delta", "seed", "device", "progress",
            "stratum_target_rates", "random_state", "verbose", "n_jobs"}
    out = {}
    for p in inspect.signature(cls.__init__).parameters.values():
        if p.name in skip or p.kind in (p.VAR_KEYWORD, p.VAR_POSITIONAL):
            continue
        d = p.default
        if isinstance(d, bool) or not isinstance(d, (int, float)):
            continue
        out[p.name] = d
    return out


def model_available(name: str) -> tuple[bool, str]:
    try:
        model_info(name).load_class()
        return True, ""
    except Exception as e:  # noqa: BLE001
        return False, f"not installed yet ({type(e).__name__})"


def csv_bytes(df: pd.DataFrame) -> bytes:
    """CSV for download; formula-like cells are neutralised (``files.export.results_csv``)."""
    return results_csv(df).encode("utf-8")
