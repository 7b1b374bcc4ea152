"""An uploaded table: read in the capped reader and cached by its content, the reason a file was refused, its
profile, where the current table came from, and CSV bytes for downloads (each export logged)."""
from __future__ import annotations

import hashlib
import time

import pandas as pd
import streamlit as st

from ... import data
from ...errors import FairDashError
from ...events import log_event
from ...files.safe_csv import results_csv
from ..server import state
from ..server.limits import check_memory

# results tables: the model's name is read whole ("Kamiran & Calders · run 2"), never cut
RESULTS_COLUMNS = {"model": st.column_config.TextColumn("model", width="large", pinned=True)}


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


def data_source() -> str:
    """How the command line names the current data: a sample's name, or the uploaded file's name."""
    ss = state.current()
    table_id = str(ss.get(state.Session.table_id, ""))
    if table_id.startswith("sample:"):
        return table_id.split(":", 1)[1]
    return str(ss.get(state.Session.table_name, "upload"))


def csv_bytes(df: pd.DataFrame) -> bytes:
    """CSV for download; formula-like cells are neutralised (``files.safe_csv.results_csv``)."""
    return results_csv(df).encode("utf-8")
