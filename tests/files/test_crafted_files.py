"""Issue 46, items 1, 2, 4 and 5: files that pass the cheap checks and cost much, or mean nothing, each made by a
generator (tests/hostile_files.py), never a checked-in blob.

- A session file or model file is parsed in the reading process (``isolated.call_limited``), under the table's
  memory limit and the processor-time limit: this process grows by little whatever the file holds (measured here
  by its resident memory; the server's process tree in benchmarks/bench_hostile_upload.py).
- The readers are linear in the file's structure: a Parquet of 4,000 one-row row groups and a gzip of 30,000
  members are read, with every row right (their time is a benchmark's, not a test's).
- A session file whose results member is not results rows is refused in one line before any page reads it.
- A read past ``FAIRDASH_READ_SECONDS`` is ended and refused in one line naming the limit.
"""
from __future__ import annotations

import io
import json

import numpy as np
import pandas as pd
import pytest

from fairdash import FairDashError, data
from fairdash.app.server.limits import process_rss_bytes
from fairdash.cli.main import main
from fairdash.data.reading import isolated
from fairdash.files import session_file as sf
from fairdash.files.export import load_model

import hostile_files as hf

GROWTH_MB = 80  # this process may grow by at most this while a crafted file is refused (the parse is elsewhere)


@pytest.fixture(scope="module")
def saved():
    """``(session file bytes, model file bytes, results member's name)``: one LR run on 400 COMPAS rows."""
    raw, model = hf.saved_session_and_model(400)
    return raw, model, next(n for n in hf.members_of(raw) if n.endswith("-results.parquet"))


def _refused(load, raw: bytes, words: str) -> str:
    before = process_rss_bytes()
    with pytest.raises(FairDashError, match=words) as e:
        load(raw)
    grown = (process_rss_bytes() - before) / 2**20
    text = str(e.value)
    assert "\n" not in text and "Traceback" not in text, text
    assert grown < GROWTH_MB, f"this process grew by {grown:.0f} MB"
    return text


def test_a_session_json_of_1_7_million_objects_is_refused_before_parsing(saved):
    raw, _, _ = saved
    bomb = hf.resealed(raw, session__json=hf.json_of_small_objects(20))
    _refused(sf.load_session, bomb, "its session holds more than 1,000,000 objects and lists")


def test_a_model_file_whose_metadata_is_millions_of_objects_is_refused(saved):
    _, model, _ = saved
    _refused(load_model, hf.resealed(model, meta__json=hf.json_of_small_objects(20)),
             "its metadata holds more than 1,000,000 objects and lists")


def test_a_safetensors_index_of_600000_tensors_is_refused_before_parsing(saved):
    _, model, _ = saved
    crafted = hf.resealed(model, arrays__safetensors=hf.safetensors_index(600_000))
    _refused(load_model, crafted, "its arrays' index claims")


def test_a_results_member_with_a_list_column_is_refused(saved):
    raw, _, results = saved
    crafted = hf.resealed(raw, **{results.replace(".", "__"): hf.parquet_of_results_with_a_list_column()})
    _refused(sf.load_session, crafted, r"is not a FairDash results table \('curve' holds ndarray values\)")


def test_a_results_member_that_is_not_results_is_refused_in_one_line_also_by_the_cli(saved, tmp_path, capsys):
    raw, _, results = saved
    crafted = hf.resealed(raw, **{results.replace(".", "__"): hf.parquet_of_plain_numbers()})
    _refused(sf.load_session, crafted, r"is not a FairDash results table \(no model, label, seed column\)")
    path = tmp_path / "odd.fairdash-session"
    path.write_bytes(crafted)
    assert main(["report", str(path), "--out", str(tmp_path / "r.html")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: odd.fairdash-session") and err.count("\n") == 1, err


def test_a_parquet_of_4000_one_row_groups_is_read_whole():
    df = data.read_table(hf.parquet_of_one_row_groups(4000), "groups.parquet")
    assert df.shape == (4000, 3) and df["name"].iloc[-1] == "person 3999"


def test_a_gzip_of_30000_members_with_padding_is_read_whole():
    df = data.read_table(hf.gzip_of_many_members(30_000), "members.csv.gz")
    assert df.shape == (30_000, 3)
    np.testing.assert_array_equal(df["x"].to_numpy(), np.arange(30_000))


def test_a_read_past_the_processor_time_limit_is_ended_in_one_line(monkeypatch):
    monkeypatch.setenv(isolated.READ_SECONDS_ENV, "1")
    with pytest.raises(FairDashError, match=r"took more than 1 s of processor time to read and was stopped; "
                                            r"FairDash spends at most 1 s reading one file \(FAIRDASH_READ_SECONDS\)"):
        isolated.call_limited(sum, (range(10**12),), "slow.bin", what="session file")


def test_the_time_limit_is_a_setting_with_a_clear_refusal(monkeypatch):
    monkeypatch.setenv(isolated.READ_SECONDS_ENV, "soon")
    with pytest.raises(FairDashError, match="FAIRDASH_READ_SECONDS must be a number"):
        isolated.read_seconds()
    monkeypatch.setenv(isolated.READ_SECONDS_ENV, "")
    assert isolated.read_seconds() == isolated.DEFAULT_READ_SECONDS


def test_an_honest_session_and_model_still_open(saved):
    raw, model, _ = saved
    opened = sf.load_session(raw)
    assert len(opened.runs) == 1 and list(opened.runs[0].results["model"]) == ["lr"]
    rows = opened.table.head(50)
    np.testing.assert_array_equal(load_model(model).predict(rows),
                                  next(iter(opened.runs[0].models.values())).predict(rows))
    assert json.loads(hf.members_of(raw)["manifest.json"])["format"] == sf.FORMAT_NAME
    assert isinstance(pd.read_parquet(io.BytesIO(hf.members_of(raw)["table.parquet"])), pd.DataFrame)
