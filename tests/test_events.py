"""The server's event log (fairdash/events.py): one JSON line per event, the session hashed, never data
or column names, an optional file sink that never breaks the caller, whole lines from many threads."""
from __future__ import annotations

import hashlib
import json
import logging
import threading
from datetime import datetime

import numpy as np
import pytest

from fairdash import events as E

TOKEN = "s3cr3t-session-token-0123456789abcdef"
COLUMN = "Annual Income of Ms Example"


@pytest.fixture
def lines(caplog):
    caplog.set_level(logging.INFO, logger=E.LOGGER_NAME)

    def read() -> list[str]:
        return [r.getMessage() for r in caplog.records if r.name == E.LOGGER_NAME and r.levelno == logging.INFO]
    return read


@pytest.fixture(autouse=True)
def no_file(monkeypatch):
    monkeypatch.delenv(E.EVENT_LOG_ENV, raising=False)


def test_a_line_is_json_with_utc_time_event_hashed_session_and_fields(lines):
    record = E.log_event("upload", session=TOKEN, bytes=2048, rows=100, columns=7, format="csv", seconds=0.25)
    (line,) = lines()
    assert json.loads(line) == record
    assert list(record)[:3] == ["ts", "event", "session"] and record["event"] == "upload"
    assert datetime.fromisoformat(record["ts"].replace("Z", "+00:00")).utcoffset().total_seconds() == 0
    assert record["session"] == hashlib.sha256(TOKEN.encode()).hexdigest()[:12]  # stable across restarts
    assert TOKEN not in line and TOKEN[:8] not in line
    assert {k: record[k] for k in ("bytes", "rows", "columns", "format", "seconds")} == \
        {"bytes": 2048, "rows": 100, "columns": 7, "format": "csv", "seconds": 0.25}
    assert "dropped" not in record and "dropped_unknown" not in record
    assert E.log_event("server_start", version="0.1.0")["session"] is None


def test_every_documented_event_is_known():
    for event in E.EVENTS:
        assert f"``{event}``" in E.__doc__
        assert E.log_event(event)["event"] == event


def test_a_column_name_never_reaches_the_log(lines, tmp_path, monkeypatch):
    monkeypatch.setenv(E.EVENT_LOG_ENV, str(tmp_path / "events.log"))
    records = [
        E.log_event("confirm", session=TOKEN, rows=10, **{COLUMN: 1}),  # an unknown field named by the data
        E.log_event("confirm", session=TOKEN, income=COLUMN),  # an unknown field holding a column name
        E.log_event("refusal", session=TOKEN, reason=COLUMN, kind="upload"),  # a sentence in a word field
        E.log_event("refusal", session=TOKEN, reason="Income"),  # not a lower-case code either
        E.log_event("upload", session=TOKEN, rows=COLUMN, columns=[COLUMN], seconds=True),  # wrong kinds
        E.log_event(COLUMN, session=TOKEN),  # not an event
    ]
    written = "\n".join(lines()) + (tmp_path / "events.log").read_text()
    for text in (COLUMN, "Annual", "income", "Income", TOKEN):
        assert text not in written
    assert records[0]["dropped_unknown"] == 1 and records[0]["rows"] == 10 and "dropped" not in records[0]
    assert records[1]["dropped_unknown"] == 1
    assert records[2]["dropped"] == ["reason"] and records[2]["kind"] == "upload"
    assert records[3]["dropped"] == ["reason"]
    assert records[4]["dropped"] == ["rows", "columns", "seconds"]
    assert records[5]["event"] == "unknown" and records[5]["dropped"] == ["event"]


def test_values_are_plain_json(lines):
    record = E.log_event("training_end", seconds=float("nan"), rows=np.int64(5), bytes=np.float32(1.5),
                         gpu=np.bool_(True), dask=False, model="fair-lr", outcome=None, cached=0)
    assert record["seconds"] is None and record["rows"] == 5 and type(record["rows"]) is int
    assert record["bytes"] == 1.5 and record["gpu"] is True and record["dask"] is False
    assert record["model"] == "fair-lr" and record["outcome"] is None and record["cached"] == 0
    assert json.loads(lines()[0]) == record


def test_the_file_sink_appends_one_line_per_event(tmp_path, monkeypatch):
    path = tmp_path / "events.log"
    path.write_text('{"earlier": "line"}\n')
    monkeypatch.setenv(E.EVENT_LOG_ENV, str(path))
    E.log_event("training_start", session=TOKEN, models=2, criterion="eo")
    E.log_event("training_end", session=TOKEN, seconds=1.5, runs=2)
    got = [json.loads(line) for line in path.read_text().splitlines()]
    assert got[0] == {"earlier": "line"}
    assert [g["event"] for g in got[1:]] == ["training_start", "training_end"]
    assert got[1]["session"] == got[2]["session"] == E.session_id(TOKEN)


def test_an_unwritable_file_is_warned_once_and_never_raises(tmp_path, monkeypatch, caplog):
    caplog.set_level(logging.INFO, logger=E.LOGGER_NAME)
    bad = tmp_path / "no such folder" / "events.log"
    monkeypatch.setenv(E.EVENT_LOG_ENV, str(bad))
    for _ in range(3):
        assert E.log_event("export", format="html")["event"] == "export"
    warned = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING and r.name == E.LOGGER_NAME]
    assert len(warned) == 1 and str(bad) in warned[0] and "No such file or directory" in warned[0]
    assert sum(r.levelno == logging.INFO for r in caplog.records if r.name == E.LOGGER_NAME) == 3  # still logged
    monkeypatch.setenv(E.EVENT_LOG_ENV, str(tmp_path))  # a directory: also warned (once), never raised
    E.log_event("export")
    E.log_event("export")
    warned = [r for r in caplog.records if r.levelno == logging.WARNING and r.name == E.LOGGER_NAME]
    assert len(warned) == 2


def test_many_threads_write_whole_lines(tmp_path, monkeypatch):
    path = tmp_path / "events.log"
    monkeypatch.setenv(E.EVENT_LOG_ENV, str(path))
    threads, each = 8, 150
    start = threading.Barrier(threads)

    def work(t):
        start.wait()
        for i in range(each):
            E.log_event("snapshot", session=f"token-{t}", columns=t, rows=i, bytes=10 ** 6 + i, kind="session")

    pool = [threading.Thread(target=work, args=(t,)) for t in range(threads)]
    for p in pool:
        p.start()
    for p in pool:
        p.join()
    got = [json.loads(line) for line in path.read_text().splitlines()]  # every line parses: none interleaved
    assert len(got) == threads * each
    assert sorted((g["columns"], g["rows"]) for g in got) == [(t, i) for t in range(threads) for i in range(each)]
    assert all(g["session"] == E.session_id(f"token-{g['columns']}") for g in got)
