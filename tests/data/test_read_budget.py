"""The memory budget for reading one table (FAIRDASH_TABLE_MB, fairdash/data/reading/budget.py): a hostile file (a
gzip that expands to 780 MB, a Parquet file of dictionary-encoded text, an .xlsx whose dimension claims
100 million cells) is refused before the memory is spent, with one line naming the size and the limit;
a table within the budget still reads, and the estimate stays within 0.5x-2x of pandas' own count."""
from __future__ import annotations

import gzip
import io
import os
import re
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from fairdash.data.reading import budget, read
from fairdash.errors import FairDashError

ROOT = Path(__file__).resolve().parents[2]
PEAK_RSS_LIMIT = 1.5 * 2**30  # bytes: what a refusing command line may peak at
REFUSAL = re.compile(r"^error: .+ about [\d.]+ [MG]B .+; FairDash reads at most 1\.0 GB per table "
                     r"\(FAIRDASH_TABLE_MB\)\. Use a sample of its rows or fewer columns\.$")


@pytest.fixture(autouse=True)
def _default_budget(monkeypatch):
    monkeypatch.delenv(budget.TABLE_MB_ENV, raising=False)


def _cli_refusal(path: Path) -> tuple[str, int, float]:
    """Run ``rates`` on ``path`` in a child process: (its standard error, its peak RSS in bytes, seconds),
    after checking it exits with status 2. The child's own resource use comes from ``os.wait4``."""
    env = {k: v for k, v in os.environ.items() if k != budget.TABLE_MB_ENV}
    err = path.parent / (path.name + ".stderr")
    start = time.perf_counter()
    with open(err, "w") as stderr:
        proc = subprocess.Popen([sys.executable, "-m", "fairdash", "rates", "--data", str(path),
                                 "--s", "a", "--s1", "1", "--y", "b", "--y1", "1", "--pr-t", "0.3"],
                                stdout=subprocess.DEVNULL, stderr=stderr, cwd=ROOT, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    text = err.read_text()
    assert proc.returncode == 2, text
    assert "Traceback" not in text
    return text, usage.ru_maxrss * 1024, seconds


# ----- a gzip that expands to 780 MB of CSV ---------------------------------------------------------
BOMB_TEXT = 780 * 2**20


@pytest.fixture(scope="session")
def gzip_bomb(tmp_path_factory) -> Path:
    """780 MB of CSV in about 1 MB of gzip, compressed in 1 MB chunks (the test never holds the text)."""
    path = tmp_path_factory.mktemp("budget") / "bomb.csv.gz"
    row = b"0,1,2.5,abc\n"
    chunk = row * (2**20 // len(row))
    with gzip.open(path, "wb", compresslevel=6) as f:
        f.write(b"a,b,c,d\n")
        written = 8
        while written + len(chunk) <= BOMB_TEXT:
            f.write(chunk)
            written += len(chunk)
        f.write(row * ((BOMB_TEXT - written) // len(row)))
    return path


@pytest.mark.slow
def test_a_gzip_expanding_to_780_mb_is_refused_by_the_command_line_in_little_memory(gzip_bomb):
    assert gzip_bomb.stat().st_size < 3 * 2**20
    text, peak, seconds = _cli_refusal(gzip_bomb)
    lines = text.splitlines()
    assert len(lines) == 1 and REFUSAL.match(lines[0]), text
    assert "bomb.csv.gz expands to 780.0 MB of text" in lines[0]
    assert peak < PEAK_RSS_LIMIT, (peak, text)
    print(f"\ngzip bomb: {gzip_bomb.stat().st_size:,} bytes; refused in {seconds:.1f} s, "
          f"peak RSS {peak / 2**20:.0f} MB: {text}")


# ----- Parquet: a few MB of footer and dictionary pages that become GBs --------------------------------
@pytest.fixture(scope="session")
def parquet_bomb(tmp_path_factory) -> Path:
    """20 row groups of 1,000,000 rows: four text columns of one 30-character value (dictionary-encoded,
    stored as plain text), two integer columns. Without the arrow schema, the reader builds every string."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path_factory.mktemp("budget") / "bomb.parquet"
    n = 1_000_000
    text = pa.DictionaryArray.from_arrays(pa.array(np.zeros(n, dtype=np.int8)), pa.array(["x" * 30]))
    group = pa.table({"a": np.ones(n, dtype=np.int64), "b": np.zeros(n, dtype=np.int64),
                      **{f"t{i}": text for i in range(4)}})
    schema = pa.schema([("a", pa.int64()), ("b", pa.int64()), *[(f"t{i}", pa.string()) for i in range(4)]])
    with pq.ParquetWriter(path, schema, store_schema=False) as writer:
        group = group.cast(schema)
        for _ in range(20):
            writer.write_table(group, row_group_size=n)
    return path


@pytest.mark.slow
def test_a_parquet_file_that_becomes_gigabytes_is_refused_from_its_footer(parquet_bomb):
    assert parquet_bomb.stat().st_size < 5 * 2**20
    rows, estimate = budget.parquet_estimate(parquet_bomb.read_bytes())
    assert rows == 20_000_000 and estimate.table > 3 * 2**30
    text, peak, seconds = _cli_refusal(parquet_bomb)
    lines = text.splitlines()
    assert len(lines) == 1 and REFUSAL.match(lines[0]), text
    assert "bomb.parquet is" in lines[0] and "20,000,000 rows" in lines[0]
    assert peak < PEAK_RSS_LIMIT, (peak, text)
    print(f"\nparquet bomb: {parquet_bomb.stat().st_size:,} bytes; refused in {seconds:.1f} s, peak RSS "
          f"{peak / 2**20:.0f} MB: {text}")


@pytest.mark.parametrize("shape", ["numeric", "text", "mixed", "categorical"])
def test_the_parquet_estimate_is_within_a_factor_two_of_the_table(shape):
    df = _table(shape, 50_000)
    if shape == "categorical":
        df = df.astype({c: "category" for c in df.columns if df[c].dtype != float})
    buf = io.BytesIO()
    df.to_parquet(buf, index=False)
    _, estimate = budget.parquet_estimate(buf.getvalue())
    real = read.read_table(buf.getvalue(), name="t.parquet").memory_usage(deep=True).sum()
    assert 0.5 * real <= estimate.table <= 2 * real, (shape, estimate.table, real)


# ----- Excel: the sheet's dimension says what openpyxl would build -----------------------------------------
def _xlsx(patch=None) -> bytes:
    """A small workbook written by pandas, with its sheet XML changed by ``patch`` (bytes -> bytes)."""
    buf = io.BytesIO()
    pd.DataFrame({"a": [1, 0, 1], "b": [0, 1, 1]}).to_excel(buf, index=False)
    out = io.BytesIO()
    with zipfile.ZipFile(buf) as src, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            body = src.read(info)
            if patch and info.filename == "xl/worksheets/sheet1.xml":
                body = patch(body)
            dst.writestr(info.filename, body)
    return out.getvalue()


def test_an_xlsx_whose_dimension_says_100_million_cells_is_refused_before_parsing(monkeypatch):
    raw = _xlsx(lambda xml: re.sub(rb'<dimension ref="[^"]+"', b'<dimension ref="A1:AX2000000"', xml))
    monkeypatch.setattr(pd, "read_excel", lambda *a, **k: pytest.fail("the sheet was parsed"))
    with pytest.raises(FairDashError, match=r"^huge\.xlsx has 1 sheet\(s\) of about 100,000,000 cells in all, about "
                                            r"18\.6 GB of memory to read; FairDash reads at most 1\.0 GB per table "
                                            r"\(FAIRDASH_TABLE_MB\)\."):
        read.read_table(raw, name="huge.xlsx")


def test_an_xlsx_without_a_dimension_is_sized_by_its_xml(monkeypatch):
    raw = _xlsx(lambda xml: re.sub(rb'<dimension ref="[^"]+"\s*/>', b"", xml))
    assert read.read_table(raw, name="small.xlsx")["a"].tolist() == [1, 0, 1]
    monkeypatch.setenv(budget.TABLE_MB_ENV, "0.001")  # about 1 KB: less than its sheet's XML at 8 bytes a byte
    with pytest.raises(FairDashError, match=r"small\.xlsx has 1 sheet\(s\) of about \d+ cells"):
        read.read_table(raw, name="small.xlsx")


# ----- text: the estimate, and the budget's edge ----------------------------------------------------------
def _table(shape: str, n: int) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    words = np.array(["alpha", "beta", "gamma-delta", "epsilon zeta eta", "x"])
    if shape == "numeric":
        return pd.DataFrame({**{f"x{i}": rng.normal(size=n).round(3) for i in range(6)}, "k": rng.integers(0, 100, n)})
    if shape == "text":
        return pd.DataFrame({**{f"t{i}": words[rng.integers(0, 5, n)] for i in range(5)},
                             "id": [f"person {j} of the study" for j in range(n)]})
    return pd.DataFrame({"a": rng.integers(0, 2, n), "b": rng.normal(size=n),
                         "c": np.array(["m", "f"])[rng.integers(0, 2, n)],
                         "d": [f"some text {j % 977}" for j in range(n)]})


@pytest.mark.parametrize("shape", ["numeric", "text", "mixed"])
def test_the_text_estimate_is_within_a_factor_two_of_the_table(shape):
    raw = _table(shape, 60_000).to_csv(index=False).encode()
    assert len(raw) > 2 * budget.SAMPLE_BYTES  # the estimate comes from a sample, not the whole
    estimate = read.text_estimate(raw)
    real = read.read_table(raw, name="t.csv").memory_usage(deep=True).sum()
    assert 0.5 * real <= estimate.table <= 2 * real, (shape, estimate.table, real)


def test_a_table_just_under_the_budget_reads_and_one_just_over_is_refused(monkeypatch):
    raw = _table("numeric", 24_000).to_csv(index=False).encode()  # about 0.9 MB of CSV
    assert 0.8 * 2**20 < len(raw) < 1.2 * 2**20
    peak = read.text_estimate(raw).peak
    assert peak < 5 * 2**20
    for mb in ("5", f"{1.05 * peak / 2**20:.3f}"):
        monkeypatch.setenv(budget.TABLE_MB_ENV, mb)
        assert len(read.read_table(raw, name="t.csv")) == 24_000
    monkeypatch.setenv(budget.TABLE_MB_ENV, f"{0.95 * peak / 2**20:.3f}")
    with pytest.raises(FairDashError, match=r"^t\.csv holds \d+\.\d KB of text, about .+ as a table \(.+ of memory "
                                            r"while it is read\); FairDash reads at most .+ per table "
                                            r"\(FAIRDASH_TABLE_MB\)"):
        read.read_table(raw, name="t.csv")
    packed = gzip.compress(raw)
    with pytest.raises(FairDashError, match=r"^t\.csv\.gz expands to \d+\.\d KB of text \(from .+\), about"):
        read.read_table(packed, name="t.csv.gz")


@pytest.mark.parametrize("value", ["abc", "0", "-5", "nan", "inf", "1e400"])
def test_a_malformed_budget_is_a_clear_error(monkeypatch, value):
    monkeypatch.setenv(budget.TABLE_MB_ENV, value)
    said = r"^FAIRDASH_TABLE_MB must be a number, at least 0\.001 \(such as 1024\), not "  # (fairdash.settings)
    with pytest.raises(FairDashError, match=said):
        read.read_table(b"a,b\n1,2\n", name="t.csv")


def test_the_bundled_samples_fit_the_default_budget():
    for sample in ("adult", "compas"):
        raw = (ROOT / "fairdash" / "datasets" / f"{sample}.csv.gz").read_bytes()
        text = gzip.decompress(raw)
        assert read.text_estimate(text).peak < budget.table_budget() / 4, sample
