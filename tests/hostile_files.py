"""Small files that claim little and cost much (issue 35): each is built here, in a few kilobytes, so the tests of
the read's hard limit (tests/fixtures/test_read_limits.py) and the benchmark of the server's memory
(benchmarks/bench_hostile_upload.py) use the same ones. None is ever read outside a limit."""
from __future__ import annotations

import gzip
import io
import zipfile
from pathlib import Path

import numpy as np


def parquet_without_statistics(path: Path, rows_per_group: int = 2_500_000, groups: int = 4, width: int = 400) -> Path:
    """Dictionary-encoded text of ``width`` characters on every row, written without column statistics: its footer
    says nothing of the values' length (about 4 GB as a table, 46 KB on disk with the defaults)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    # the text as a dictionary and its codes, written without the Arrow schema: a reader gets plain text, while this
    # builder never makes the 400-byte values (a gigabyte held here would stay in the test process's memory)
    text = pa.DictionaryArray.from_arrays(pa.array(np.zeros(rows_per_group, dtype=np.int32)), pa.array(["x" * width]))
    chunk = pa.table({"a": text, "b": pa.array(np.zeros(rows_per_group, dtype=np.int8))})
    with pq.ParquetWriter(path, chunk.schema, write_statistics=False, compression="zstd", store_schema=False) as w:
        for _ in range(groups):
            w.write_table(chunk)
    return path


_CONTENT_TYPES = (b'<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/'
                  b'content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.'
                  b'relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/'
                  b'xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.'
                  b'main+xml"/><Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.'
                  b'openxmlformats-officedocument.spreadsheetml.worksheet+xml"/></Types>')
_RELS = (b'<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/'
         b'relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/'
         b'relationships/officeDocument" Target="xl/workbook.xml"/></Relationships>')
_BOOK = (b'<?xml version="1.0" encoding="UTF-8"?><workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/'
         b'main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><sheets><sheet name="'
         b'Sheet1" sheetId="1" r:id="rId1"/></sheets></workbook>')
_BOOK_RELS = (b'<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/'
              b'2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/'
              b'relationships/worksheet" Target="worksheets/sheet1.xml"/></Relationships>')


def xlsx_with_a_lying_dimension(path: Path, far_column: str = "ALL", far_row: int = 1_048_576) -> Path:
    """An .xlsx of about 1.5 KB whose ``<dimension>`` says A1:B2 while one cell sits in column ``far_column`` and one
    row is numbered ``far_row``: a reader that pads every row to the widest makes a grid of ``far_row`` rows."""
    sheet = ('<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/'
             '2006/main"><dimension ref="A1:B2"/><sheetData>'
             '<row r="1"><c r="A1" t="inlineStr"><is><t>a</t></is></c>'
             '<c r="B1" t="inlineStr"><is><t>b</t></is></c></row>'
             f'<row r="2"><c r="A2"><v>1</v></c><c r="B2"><v>0</v></c><c r="{far_column}2"><v>1</v></c></row>'
             f'<row r="{far_row}"><c r="A{far_row}"><v>0</v></c><c r="B{far_row}"><v>1</v></c></row>'
             '</sheetData></worksheet>').encode()
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("[Content_Types].xml", _CONTENT_TYPES)
        z.writestr("_rels/.rels", _RELS)
        z.writestr("xl/workbook.xml", _BOOK)
        z.writestr("xl/_rels/workbook.xml.rels", _BOOK_RELS)
        z.writestr("xl/worksheets/sheet1.xml", sheet)
    return path


def gzip_long_text_then_empty_fields(path: Path, columns: int = 1000, empty_mb: int = 190) -> Path:
    """A gzipped CSV whose first megabyte is long text (a few rows whose first value is a long sentence) and the rest
    rows of empty fields: sized from its first megabyte it looks small; as a table it is ``columns`` values a row."""
    header = ",".join(f"c{i}" for i in range(columns)).encode() + b"\n"
    long_row = b"a" + b"b" * (200_000) + b"," + b",".join(b"1" for _ in range(columns - 1)) + b"\n"
    empty_row = b"," * (columns - 1) + b"\n"
    rows_per_mb = (1 << 20) // len(empty_row)
    with gzip.open(path, "wb", compresslevel=9) as f:
        f.write(header)
        for _ in range(6):
            f.write(long_row)
        block = empty_row * rows_per_mb
        for _ in range(empty_mb):
            f.write(block)
    return path


def csv_of_many_columns(path: Path, columns: int = 100_000, rows: int = 200) -> Path:
    """A CSV of ``columns`` columns (about 40 MB with the defaults): cheap on disk, minutes of CPU to parse."""
    buf = io.BytesIO()
    buf.write(",".join(f"c{i}" for i in range(columns)).encode() + b"\n")
    row = ",".join("1" for _ in range(columns)).encode() + b"\n"
    for _ in range(rows):
        buf.write(row)
    path.write_bytes(buf.getvalue())
    return path
