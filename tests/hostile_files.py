"""Small files that claim little and cost much (issue 35): each is built here, in a few kilobytes, so the tests of
the read's hard limit (tests/data/test_read_limits.py) and the benchmark of the server's memory
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


# --------------------------------------------------------------------------------------------------
# Issue 46: session files, model files and tables whose structure costs much (each made here, never checked in)
# --------------------------------------------------------------------------------------------------
def members_of(raw: bytes) -> dict:
    """A FairDash archive's members (name -> bytes), in their order."""
    with zipfile.ZipFile(io.BytesIO(raw)) as z:
        return {i.filename: z.read(i) for i in z.infolist()}


def resealed(raw: bytes, **changed: bytes) -> bytes:
    """A FairDash archive (model or session file) with members replaced (``changed``: name -> bytes; a name's dots
    as ``__``) and its manifest's sizes and checksums made to match, so that only the members' contents are odd;
    deflated, as an attacker would send it (a repetitive member packs to a few hundred kilobytes)."""
    import hashlib
    import json

    members = members_of(raw)
    for name, data in changed.items():
        members[name.replace("__", ".")] = data
    manifest = json.loads(members["manifest.json"])
    for name, data in members.items():
        if name != "manifest.json":
            manifest["members"][name] = {"size": len(data), "sha256": hashlib.sha256(data).hexdigest()}
    members["manifest.json"] = json.dumps(manifest).encode()
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as z:
        z.writestr("manifest.json", members.pop("manifest.json"))
        for name, data in members.items():
            z.writestr(name, data)
    return buf.getvalue()


def json_of_small_objects(mb: float = 20) -> bytes:
    """``[{"a1b2":7},...]``: ``mb`` megabytes of one-key objects that cost a parser about 15 times as much memory;
    their random keys keep it from deflating more than a few times (past a zip-bomb ratio check)."""
    n = int(mb * 2**20) // 12
    keys = np.random.default_rng(0).integers(0, 16**4, size=n)
    return b"[" + b",".join(b'{"%04x":7}' % int(k) for k in keys) + b"]"


def safetensors_index(tensors: int = 600_000) -> bytes:
    """A safetensors member whose index (its JSON header) names ``tensors`` one-byte tensors: small to send, large to
    parse."""
    import json

    header = {f"t{i}": {"dtype": "U8", "shape": [1], "data_offsets": [i, i + 1]} for i in range(tensors)}
    text = json.dumps(header).encode()
    return len(text).to_bytes(8, "little") + text + b"\0" * tensors


def parquet_of_results_with_a_list_column(rows: int = 2000, width: int = 200) -> bytes:
    """A results member whose rows carry a list of ``width`` numbers each: small as Parquet, large as Python lists."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    values = pa.array([list(range(width))] * rows, type=pa.list_(pa.int64()))
    table = pa.table({"model": ["lr"] * rows, "label": ["LR"] * rows, "seed": [0] * rows, "curve": values})
    buf = io.BytesIO()
    pq.write_table(table, buf)
    return buf.getvalue()


def parquet_of_plain_numbers(rows: int = 50) -> bytes:
    """A Parquet table that is not results rows (no model, label or seed): what the pages could not group."""
    import pandas as pd

    return pd.DataFrame({"x": np.arange(rows), "y": np.arange(rows) * 0.5}).to_parquet()


def parquet_of_one_row_groups(groups: int = 4000) -> bytes:
    """A table of ``groups`` rows stored one row per row group, with dictionary-encoded text: each group's footer
    entry and dictionary page are read once (a reader that reads the footer again per group takes the square)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.table({"s": pa.array(["u", "v"] * (groups // 2)), "y": pa.array(np.arange(groups) % 2),
                      "name": pa.array([f"person {i}" for i in range(groups)])})
    buf = io.BytesIO()
    pq.write_table(table, buf, row_group_size=1)
    return buf.getvalue()


def gzip_of_many_members(members: int = 300_000) -> bytes:
    """A CSV compressed as ``members`` gzip members of one row each (about 28 bytes a member), with zero padding
    between two of them: a reader that copies the rest of the file per member takes the square of its length."""
    head = gzip.compress(b"s,y,x\n", mtime=0)
    rows = [gzip.compress(b"%d,%d,%d\n" % (i % 2, (i // 2) % 2, i), mtime=0) for i in range(members)]
    return head + b"".join(rows[: members // 2]) + b"\0" * 512 + b"".join(rows[members // 2:])


def saved_session_and_model(rows: int = 400) -> tuple[bytes, bytes]:
    """``(session file bytes, model file bytes)`` of one LR run on ``rows`` COMPAS rows: the honest files the crafted
    ones are made from (the tests' and benchmarks/bench_crafted_files.py's)."""
    from fairdash import data
    from fairdash.files import session_file as sf
    from fairdash.files.export import model_bytes
    from fairdash.files.run_spec import RunSpec
    from fairdash.targeting.target_spec import make_target_spec
    from fairdash.work.runs import train_run

    df = data.load_sample("compas").sample(rows, random_state=1).reset_index(drop=True)
    spec = data.PAPER_SETUPS["compas-race"].spec
    task = data.build_task(df, spec)
    target = make_target_spec("dp", 0.35)
    plan = RunSpec(data="compas", task=spec, target=target, models=("lr",), target_rates=(0.35,), seeds=(0,),
                   group_names=task.group_names)
    run = train_run(task, plan, data_name=f"COMPAS ({rows} rows)", number=1)
    raw = sf.session_bytes(table=df, table_name=f"COMPAS ({rows} rows)", table_description="", task=task,
                           target=target, runs=[run])
    return raw, model_bytes(next(iter(run.models.values())))
