"""Limits that hold whatever a file claims (issue 35, item 1): every table from outside is read in a process of its
own under a hard memory limit of the table budget (fairdash/data/reading/isolated.py), so a file whose size the
estimates cannot see ends only that process, with one line naming the memory and the limit; the estimates, the cheap
early refusal, see the three files that got past them (a Parquet file without statistics, an .xlsx whose dimension lies,
a gzipped CSV whose first megabyte is unlike the rest); a file of too many columns or cells is refused before it is
parsed; and the refusal's reason reaches the event log."""
from __future__ import annotations

import multiprocessing
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from fairdash import data
from fairdash.data.reading import budget, isolated, read
from fairdash.errors import FairDashError
from tests import hostile_files

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _default_limits(monkeypatch):
    for env in (budget.TABLE_MB_ENV, budget.MAX_COLUMNS_ENV, budget.MAX_CELLS_ENV):
        monkeypatch.delenv(env, raising=False)


@pytest.fixture(scope="module")
def hostile(tmp_path_factory) -> dict:
    d = tmp_path_factory.mktemp("hostile")
    return {"parquet": hostile_files.parquet_without_statistics(d / "no_statistics.parquet"),
            "xlsx": hostile_files.xlsx_with_a_lying_dimension(d / "lying_dimension.xlsx"),
            "gzip": hostile_files.gzip_long_text_then_empty_fields(d / "long_text_then_empty.csv.gz"),
            "columns": hostile_files.csv_of_many_columns(d / "many_columns.csv")}


def test_the_files_are_as_small_as_the_issue_says(hostile):
    assert os.path.getsize(hostile["parquet"]) < 60_000
    assert os.path.getsize(hostile["xlsx"]) < 2_000
    assert os.path.getsize(hostile["gzip"]) < 1_000_000
    assert os.path.getsize(hostile["columns"]) < 45 * 2**20


@pytest.mark.parametrize("kind, reason, words", [
    ("parquet", "table_budget", r"no_statistics\.parquet is [\d.]+ KB of Parquet holding 10,000,000 rows, about 3\.\d "
                                r"GB as a table"),
    ("xlsx", "table_budget", r"lying_dimension\.xlsx has 1 sheet\(s\) of about 1,048,576,000 cells in all"),
    ("gzip", "table_budget", r"long_text_then_empty\.csv\.gz expands to 19\d\.\d MB of text \(from [\d.]+ KB\), about "
                             r"1\.\d GB as a table"),
    ("columns", "columns", r"many_columns\.csv has 100,000 columns; FairDash reads at most 5,000 "
                           r"\(FAIRDASH_MAX_COLUMNS\)"),
])
def test_each_file_that_got_past_the_estimates_is_refused_in_one_line_naming_size_and_limit(hostile, kind, reason,
                                                                                              words):
    with pytest.raises(FairDashError, match="^" + words) as caught:
        data.read_table(hostile[kind])
    assert "\n" not in str(caught.value)
    assert caught.value.reason == reason
    if reason == "table_budget":
        assert str(caught.value).endswith("FairDash reads at most 1.0 GB per table (FAIRDASH_TABLE_MB). Use a sample "
                                          "of its rows or fewer columns.")


def _forked(monkeypatch):
    """Read in a child forked from this process (so the patches below reach it), whatever threads run here."""
    monkeypatch.setattr(isolated, "_context_here", lambda: multiprocessing.get_context("fork"))


def _no_estimates(monkeypatch):
    """The estimates switched off: the hard limit alone stands between the file and the memory."""
    monkeypatch.setattr(budget, "_refuse", lambda *a, **k: None)
    monkeypatch.setattr(budget, "check_shape", lambda *a, **k: None)


def _rss() -> int:
    return isolated._statm(os.getpid())[1]


@pytest.mark.parametrize("kind", ["parquet", "xlsx", "gzip"])
def test_a_read_the_estimates_miss_is_ended_at_the_budget_and_refused_in_one_line(hostile, kind, monkeypatch):
    _forked(monkeypatch)
    _no_estimates(monkeypatch)
    monkeypatch.setenv(budget.TABLE_MB_ENV, "128")
    before = _rss()
    with pytest.raises(FairDashError) as caught:
        data.read_table(hostile[kind])
    text = str(caught.value)
    assert re.fullmatch(rf"{re.escape(hostile[kind].name)} needs more than 128\.0 MB of memory to read \(reading "
                        r"stopped at [\d.]+ MB\); FairDash reads at most 128\.0 MB per table \(FAIRDASH_TABLE_MB\)\. "
                        r"Use a sample of its rows or fewer columns\.", text), text
    assert caught.value.reason == "table_budget"
    stopped = float(re.search(r"stopped at ([\d.]+) MB", text).group(1))
    assert 128 <= stopped < 128 + 64  # ended within a look of the limit (the address-space cap is the backstop)
    assert _rss() - before < 64 * 2**20  # this process never held the table


def test_the_address_space_cap_holds_between_two_looks(monkeypatch):
    """One allocation far past the budget, faster than any look: the child's capped address space refuses it."""
    _forked(monkeypatch)

    def greedy(raw, name):
        return pd.DataFrame({"a": np.ones(3 * 2**30 // 8), "b": 0})  # 3 GB at once

    monkeypatch.setattr(read, "read_table", greedy)
    monkeypatch.setenv(budget.TABLE_MB_ENV, "64")
    with pytest.raises(FairDashError, match=r"^t\.csv needs more than 64\.0 MB of memory to read") as caught:
        data.read_table(b"a,b\n1,2\n", name="t.csv")
    assert caught.value.reason == "table_budget"


def test_a_table_within_the_limits_reads_as_the_reader_reads_it(tmp_path):
    df = pd.DataFrame({"age": [31, 45, 22, 60], "sex": ["F", "M", "F", "M"], "income": [1.5, np.nan, 3.25, 4.0],
                       "y": [1, 0, 1, 0]})
    path = tmp_path / "t.csv"
    df.to_csv(path, index=False)
    here = read.read_table(path)
    there = data.read_table(path)
    pd.testing.assert_frame_equal(there, here)
    assert there.attrs == here.attrs
    raw = path.read_bytes().replace(b"income", b"age")  # a column named twice
    with pytest.raises(FairDashError) as caught:  # a malformed table: the reader's own refusal, unchanged
        data.read_table(raw, name="bad.csv")
    with pytest.raises(FairDashError) as direct:
        read.read_table(raw, name="bad.csv")
    assert str(caught.value) == str(direct.value)


def test_the_notes_and_sheet_of_a_read_travel_with_the_table(tmp_path):
    path = tmp_path / "notes.csv"
    path.write_text("a,b,,\n1,2,,\n3,4,,\n")
    df = data.read_table(path)
    assert list(df.columns) == ["a", "b"]
    assert df.attrs["read_notes"] == read.read_table(path).attrs["read_notes"]


def test_a_dictionary_parquet_column_reads_as_its_values(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "dict.parquet"
    pq.write_table(pa.table({"a": pa.array(["x", "y", "x"]).dictionary_encode(), "b": [1, 0, 1]}), path)
    df = data.read_table(path)
    assert df["a"].tolist() == ["x", "y", "x"] and not isinstance(df["a"].dtype, pd.CategoricalDtype)


def test_the_parquet_estimate_sizes_dictionary_text_from_its_dictionary_and_codes(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    n = 20_000
    values = np.where(np.arange(n) % 4 == 0, "y" * 300, "x")  # a quarter of 300 characters: mean 75.75
    path = tmp_path / "text.parquet"
    pq.write_table(pa.table({"a": pa.array(values), "b": np.zeros(n, np.int8)}), path, write_statistics=False)
    rows, estimate = budget.parquet_estimate(path.read_bytes())
    per_value = (estimate.table - n) / n  # less column b's byte a row
    assert rows == n and per_value == pytest.approx(budget.STRING_BYTES + 75.75)


def test_an_xlsx_is_sized_by_the_highest_row_and_column_it_uses(hostile):
    import zipfile

    with zipfile.ZipFile(hostile["xlsx"]) as book:
        cells, columns = budget.sheet_cells(book, book.getinfo("xl/worksheets/sheet1.xml"))
    assert (cells, columns) == (1_048_576 * 1000, 1000)  # column ALL is the 1,000th


def test_a_csv_is_sized_by_its_lines_as_well_as_its_first_rows():
    head = b"a,b,c\n" + b"w" * 5000 + b",1,2\n"
    parse = read._sample_reader("t.csv")
    small = budget.text_estimate(head, 10_000_000, parse)
    counted = budget.text_estimate(head, 10_000_000, parse, lines=5_000_000)
    assert counted.table >= 5_000_000 * 3 * budget.CELL_BYTES > small.table


@pytest.mark.parametrize("env, value, reason, words", [
    (budget.MAX_COLUMNS_ENV, "3", "columns", r"t\.csv has 4 columns; FairDash reads at most 3 "
                                             r"\(FAIRDASH_MAX_COLUMNS\)"),
    (budget.MAX_CELLS_ENV, "10", "cells", r"t\.csv has about 12 cells \(3 rows of 4 columns\); FairDash reads at most "
                                          r"10 \(FAIRDASH_MAX_CELLS\)"),
])
def test_the_column_and_cell_limits_are_settings(env, value, reason, words, monkeypatch):
    monkeypatch.setenv(env, value)
    with pytest.raises(FairDashError, match="^" + words) as caught:
        data.read_table(b"a,b,c,d\n1,2,3,4\n5,6,7,8\n9,10,11,12\n", name="t.csv")
    assert caught.value.reason == reason


@pytest.mark.parametrize("value", ["0", "many", "-5"])
def test_a_malformed_limit_is_a_clear_error(value, monkeypatch):
    monkeypatch.setenv(budget.MAX_COLUMNS_ENV, value)
    said = r"^FAIRDASH_MAX_COLUMNS must be a whole number, at least 1 \(such as \d+\), not "  # (fairdash.settings)
    with pytest.raises(FairDashError, match=said):
        data.read_table(b"a,b\n1,2\n", name="t.csv")


def test_the_callers_watch_ends_a_read(hostile, monkeypatch):
    """The server's memory guard watches during a read (``watch``): its refusal ends the read, with its reason."""
    _forked(monkeypatch)
    _no_estimates(monkeypatch)

    def guard():
        raise FairDashError("The server is short of memory.", reason="memory_guard")

    with pytest.raises(FairDashError, match="short of memory") as caught:
        data.read_table(hostile["xlsx"], watch=guard)
    assert caught.value.reason == "memory_guard"


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["xlsx", "columns"])
def test_the_command_line_refuses_them_in_one_line(hostile, kind):
    proc = subprocess.run([sys.executable, "-m", "fairdash", "rates", "--data", str(hostile[kind]), "--s", "a", "--s1",
                           "1", "--y", "b", "--y1", "1", "--pr-t", "0.3"], capture_output=True, text=True, cwd=ROOT,
                          env={k: v for k, v in os.environ.items() if not k.startswith("FAIRDASH_")}, timeout=300)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {hostile[kind].name} "), proc.stderr
