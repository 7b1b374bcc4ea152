"""The memory budget for reading one table (``FAIRDASH_TABLE_MB``), checked before the memory is spent.

Each kind of file is sized from what can be learned cheaply, and refused with one line when reading it
would take more than the budget:

- text (CSV/TSV, also inside gzip): the first rows (at most :data:`SAMPLE_BYTES` of text) are parsed
  by the real reader and the table's size per byte of text is scaled to the whole text; while pandas
  parses, the text is held three times (the file's bytes, the decoded text, the bytes pandas reads)
  and the table about 1.5 times (its pieces are joined at the end);
- Parquet: the footer alone (rows, column types, string lengths from the statistics), before any page
  is decoded; pyarrow's table and pandas' copy of it are held together;
- Excel: the sheets' ``<dimension>`` elements and the sizes of their XML, before openpyxl reads a cell.

The factors were measured with pandas 3 on tables of numbers, of text and of both (see
tests/data/test_read_budget.py, which also holds the text estimate to within 0.5x-2x of pandas' own count).
"""
from __future__ import annotations

import io
import re
from typing import Callable, NamedTuple

from ...errors import FairDashError
from ...settings import env_number

TABLE_MB_ENV = "FAIRDASH_TABLE_MB"
DEFAULT_TABLE_MB = 1024
MIN_TABLE_MB = 0.001  # the least budget FAIRDASH_TABLE_MB may give (about 1 KB)
SAMPLE_BYTES = 1 << 20  # text parsed to learn a table's size per byte of text
TEXT_COPIES = 3  # the file's bytes, the decoded text and the bytes handed to pandas, all held during a parse
PARSE_FACTOR = 1.5  # the table, and its pieces while pandas joins them
UNSAMPLED_FACTOR = 8.0  # table bytes per byte of text when the first rows cannot be parsed on their own
PARQUET_FACTOR = 2.2  # pyarrow's table and pandas' copy of it (measured: 2.0-2.4)
STRING_BYTES = 8  # per text value in pandas' pyarrow-backed str column, besides its characters
OBJECT_BYTES = 64  # per value that becomes a Python object (bytes, decimals, dates, lists)
EXCEL_CELL_BYTES = 200  # memory per cell while openpyxl and pandas read a sheet (measured: about 170)
EXCEL_XML_PER_CELL = 25  # bytes of sheet XML per cell, at the most compact (``<c r="B7"><v>1.5</v></c>``)
_SHEET_HEAD = 65536  # the start of a sheet's XML, where its <dimension> element is
CELL_BYTES = 8  # the least a cell of a text table takes in pandas (a number, a missing value, a text's pointer)
MAX_COLUMNS_ENV, DEFAULT_MAX_COLUMNS = "FAIRDASH_MAX_COLUMNS", 5_000
MAX_CELLS_ENV, DEFAULT_MAX_CELLS = "FAIRDASH_MAX_CELLS", 100_000_000


class Estimate(NamedTuple):
    """What reading a file would take: ``table`` (bytes of the DataFrame) and ``peak`` (bytes held at once)."""
    table: float
    peak: float


def size_text(n: float) -> str:
    """A byte count in words: ``512 bytes``, ``1.5 KB``, ``780.0 MB``, ``6.2 GB`` (units of 1024)."""
    for unit in ("bytes", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GB"  # pragma: no cover


def table_budget() -> int:
    """The budget in bytes: ``FAIRDASH_TABLE_MB`` megabytes, read now (so a change needs no restart), else
    :data:`DEFAULT_TABLE_MB`. A value that is not a positive number is a :class:`FairDashError`: a typo
    must not silently lift or lower the limit."""
    return int(env_number(TABLE_MB_ENV, DEFAULT_TABLE_MB, minimum=MIN_TABLE_MB) * 2**20)


def max_columns() -> int:
    """The most columns a table may have (``FAIRDASH_MAX_COLUMNS``, read now; default :data:`DEFAULT_MAX_COLUMNS`):
    parsing costs time per column whatever the rows, so a narrow file of 100,000 columns is refused before it."""
    return env_number(MAX_COLUMNS_ENV, DEFAULT_MAX_COLUMNS, minimum=1, whole=True)


def max_cells() -> int:
    """The most cells (rows times columns) a table may have (``FAIRDASH_MAX_CELLS``; default
    :data:`DEFAULT_MAX_CELLS`, about 0.8 GB of numbers)."""
    return env_number(MAX_CELLS_ENV, DEFAULT_MAX_CELLS, minimum=1, whole=True)


def check_shape(name: str, columns: int, rows: int | None = None, *, cells: bool = True) -> None:
    """Refuse, before parsing, a table of more than :func:`max_columns` columns or (``cells``) :func:`max_cells`
    cells (``rows``: what the file shows of its rows, where it is known); the error's ``reason`` says which."""
    most = max_columns()
    if columns > most:
        raise FairDashError(f"{name} has {columns:,} columns; FairDash reads at most {most:,} ({MAX_COLUMNS_ENV}). "
                            "Leave out the columns you do not need.", reason="columns")
    n, most = columns * (rows or 0), max_cells()
    if cells and n > most:
        raise FairDashError(f"{name} has about {n:,} cells ({rows:,} rows of {columns:,} columns); FairDash reads at "
                            f"most {most:,} ({MAX_CELLS_ENV}). Use a sample of its rows or fewer columns.",
                            reason="cells")


def _refuse(found: str, estimate: Estimate, budget: int, as_table: bool = True) -> None:
    """Raise the one-line refusal when ``estimate.peak`` passes ``budget``; ``found`` says what the file is."""
    if estimate.peak <= budget:
        return
    cost = (f"about {size_text(estimate.table)} as a table ({size_text(estimate.peak)} of memory while it is read)"
            if as_table else f"about {size_text(estimate.peak)} of memory to read")
    raise FairDashError(f"{found}, {cost}; FairDash reads at most {size_text(budget)} per table ({TABLE_MB_ENV}). "
                        "Use a sample of its rows or fewer columns.", reason="table_budget")


# --------------------------------------------------------------------------------------------------
# text
# --------------------------------------------------------------------------------------------------
def header_columns(head: bytes) -> int:
    """How many columns a text table's first line names, counted without parsing (the most common separator's
    count plus one; a lower bound where the line runs past ``head``)."""
    first = head.split(b"\n", 1)[0]
    return 1 + max(first.count(sep) for sep in (b",", b";", b"\t", b"|"))


def text_estimate(head: bytes, total: int, parse: Callable, lines: int | None = None) -> Estimate:
    """The memory a text table of ``total`` bytes takes, from ``head`` (its first bytes) parsed by
    ``parse`` (bytes -> DataFrame, the real reader): the first rows' size per byte of text, scaled.
    A head that does not parse on its own (a quoted value running past it, a line longer than it) is
    sized at :data:`UNSAMPLED_FACTOR` bytes per byte; the full read then says what is wrong, if anything.
    ``lines``: the text's line count, where it was counted: the table is then at least that many rows of the
    head's columns at :data:`CELL_BYTES` a cell, whatever its first rows hold (long text first and empty fields
    after looks small from its head alone)."""
    sample = head[:SAMPLE_BYTES]
    if total > len(sample):  # whole lines only
        sample = sample[:sample.rfind(b"\n") + 1]
    per_byte, columns = UNSAMPLED_FACTOR, header_columns(head)
    if sample:
        try:
            parsed = parse(sample)
            per_byte, columns = float(parsed.memory_usage(deep=True).sum()) / len(sample), max(parsed.shape[1], 1)
        except Exception:  # noqa: BLE001 - any failure of the sample means "not sized from it"
            pass
    table = max(per_byte * total, (lines or 0) * columns * CELL_BYTES)
    return Estimate(table, TEXT_COPIES * total + PARSE_FACTOR * table)


def check_text(name: str, head: bytes, total: int, parse: Callable, budget: int, packed: int | None = None,
               lines: int | None = None) -> None:
    """Refuse text of ``total`` bytes in ``lines`` lines (``packed``: the compressed size, for a gzip) whose table
    would have too many columns or cells (:func:`check_shape`, before any parse) or would not fit ``budget``."""
    columns, rows = header_columns(head), max((lines or 0) - 1, 0)
    check_shape(name, columns, rows, cells=False)  # before the sample is parsed: parsing costs time per column
    found = (f"{name} expands to {size_text(total)} of text (from {size_text(packed)})" if packed is not None
             else f"{name} holds {size_text(total)} of text")
    _refuse(found, text_estimate(head, total, parse, lines), budget)
    check_shape(name, columns, rows)


def check_held(name: str, total: int, packed: int, budget: int) -> None:
    """Refuse a gzip whose decompressed bytes (not text: a Parquet or Excel file inside) alone pass the budget."""
    _refuse(f"{name} expands to {size_text(total)} (from {size_text(packed)})", Estimate(total, total), budget,
            as_table=False)


# --------------------------------------------------------------------------------------------------
# Parquet
# --------------------------------------------------------------------------------------------------
def parquet_estimate(raw: bytes) -> tuple[int, Estimate] | None:
    """``(rows, Estimate)`` of a Parquet file from its footer (read once, whatever its number of row groups), and
    for text kept as a dictionary from the dictionaries and the codes alone (one read per such column; no value is
    made), or None when the footer cannot be read (the read itself then says the file is damaged)."""
    import pyarrow.parquet as pq

    try:
        f = pq.ParquetFile(io.BytesIO(raw))
        meta, schema = f.metadata, f.schema_arrow
    except Exception:  # noqa: BLE001 - a damaged footer
        return None
    table, dictionary_text = 0.0, set()
    for i in range(meta.num_row_groups):
        group = meta.row_group(i)
        for j in range(group.num_columns):
            chunk = group.column(j)
            top = chunk.path_in_schema.split(".")[0]
            kind = schema.field(top).type if top in schema.names else None
            if _text_dictionary(kind, chunk):
                dictionary_text.add(top)
                continue
            table += group.num_rows * _value_bytes(kind, chunk)
    for column in dictionary_text:  # (a column kept as a dictionary in some row groups: all of it measured so)
        table += meta.num_rows * STRING_BYTES + _dictionary_text_bytes(raw, column)
    return meta.num_rows, Estimate(table, PARQUET_FACTOR * table + len(raw))


def _text_dictionary(kind, chunk) -> bool:
    """A text column chunk kept as a dictionary and codes: its size on disk says nothing of its values' length."""
    import pyarrow as pa

    if kind is not None and pa.types.is_dictionary(kind):
        kind = kind.value_type
    return (kind is not None and (pa.types.is_string(kind) or pa.types.is_large_string(kind))
            and bool(chunk.has_dictionary_page) and "." not in chunk.path_in_schema)


def _dictionary_text_bytes(raw: bytes, column: str) -> float:
    """A dictionary-encoded text column's total value length, exactly: each dictionary entry's length times how
    often its code occurs (the codes take 4 bytes a row; no value is made). 0 where it cannot be read this way (the
    read then sizes it, under its hard limit: ``isolated``)."""
    import numpy as np
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    try:
        codes = pq.ParquetFile(io.BytesIO(raw), read_dictionary=[column]).read(
            columns=[column], use_threads=False).column(0)
        total = 0
        for part in codes.chunks:
            lengths = pc.binary_length(part.dictionary).to_numpy(zero_copy_only=False)
            idx = part.indices.drop_null().to_numpy(zero_copy_only=False)
            total += int(np.bincount(idx, minlength=len(lengths)).astype(np.int64) @ lengths.astype(np.int64))
    except Exception:  # noqa: BLE001 - not kept as a dictionary after all, or damaged
        return 0.0
    return float(total)


def _value_bytes(kind, chunk) -> float:
    """The bytes one value of a Parquet column chunk takes in pandas, by its arrow type (``kind``)."""
    import pyarrow as pa

    if kind is None:
        return OBJECT_BYTES
    if pa.types.is_dictionary(kind):  # a categorical, made plain by the read (``repairs.plain_values``)
        return STRING_BYTES + _mean_length(chunk)
    if pa.types.is_string(kind) or pa.types.is_large_string(kind):
        return STRING_BYTES + _mean_length(chunk)
    if pa.types.is_decimal(kind) or pa.types.is_date(kind) or not _fixed_width(kind):
        return OBJECT_BYTES + _mean_length(chunk)
    stats = chunk.statistics if chunk.is_stats_set else None
    if pa.types.is_integer(kind) and stats is not None and (stats.null_count or 0) > 0:
        return 8  # integers with missing values become float64
    return max(1, kind.bit_width // 8)


def _fixed_width(kind) -> bool:
    try:
        return kind.bit_width > 0
    except ValueError:  # a variable-width type
        return False


def _mean_length(chunk) -> float:
    """A text column chunk's typical value length: from its statistics' min and max, or from its plain
    (not dictionary) encoded size, whichever is larger. A dictionary-encoded chunk is tiny on disk
    whatever its values, so the statistics matter there; without either, 0."""
    stats = chunk.statistics if chunk.is_stats_set else None
    from_stats = 0.0
    if stats is not None and stats.has_min_max and isinstance(stats.min, (str, bytes)):
        from_stats = (len(stats.min) + len(stats.max)) / 2
    plain = chunk.total_uncompressed_size / chunk.num_values - 4 if chunk.num_values else 0.0
    return max(from_stats, plain, 0.0)


def check_parquet(raw: bytes, name: str, budget: int) -> None:
    """Refuse a Parquet file whose table would not fit ``budget``, before any of its data is read."""
    found = parquet_estimate(raw)
    if found is not None:
        rows, estimate = found
        check_shape(name, _parquet_columns(raw), rows, cells=False)
        _refuse(f"{name} is {size_text(len(raw))} of Parquet holding {rows:,} rows", estimate, budget)
        check_shape(name, _parquet_columns(raw), rows)


def _parquet_columns(raw: bytes) -> int:
    import pyarrow.parquet as pq

    return len(pq.ParquetFile(io.BytesIO(raw)).schema_arrow.names)


# --------------------------------------------------------------------------------------------------
# Excel
# --------------------------------------------------------------------------------------------------
_DIMENSION = re.compile(rb'<(?:\w+:)?dimension\s+ref="\$?([A-Z]{1,3})\$?(\d+)(?::\$?([A-Z]{1,3})\$?(\d+))?"')


def _column_number(letters: bytes) -> int:
    n = 0
    for ch in letters:
        n = n * 26 + ch - 64
    return n


_CELL_REF = re.compile(rb'<(?:\w+:)?c\b[^>]*?\sr="\$?([A-Z]{1,3})\$?(\d+)"')
_ROW = re.compile(rb'<(?:\w+:)?row\b[^>]*?\sr="(\d+)"')
_OVERLAP = 256  # bytes a piece keeps of the one before, so a tag cut in two is still seen


def _extent(member) -> tuple[int, int]:
    """The highest row and column a sheet's XML actually uses (from every cell's and row's reference, read in pieces:
    the reader pads every row to the widest and makes every row up to the last), whatever its ``<dimension>`` says."""
    rows = cols = 0
    tail = b""
    while piece := member.read(1 << 20):
        text = tail + piece
        for m in _CELL_REF.finditer(text):
            cols = max(cols, _column_number(m.group(1)))
            rows = max(rows, int(m.group(2)))
        for m in _ROW.finditer(text):
            rows = max(rows, int(m.group(1)))
        tail = text[-_OVERLAP:]
    return rows, cols


def sheet_cells(book, info) -> tuple[int, int]:
    """``(cells, columns)`` a worksheet member holds: the cells are the largest of what its ``<dimension>`` says,
    what its XML's size allows at :data:`EXCEL_XML_PER_CELL` bytes a cell (a sheet without a dimension, or with a
    wrong one), and the grid up to the highest row and column its cells actually use (a dimension that lies)."""
    from_xml = info.file_size // EXCEL_XML_PER_CELL
    try:
        with book.open(info) as member:
            head = member.read(_SHEET_HEAD)
        with book.open(info) as member:
            rows, cols = _extent(member)
    except Exception:  # noqa: BLE001 - a damaged member: the read itself says so
        return from_xml, 0
    used = rows * cols
    m = _DIMENSION.search(head)
    if not m:
        return max(from_xml, used), cols
    c1, r1, c2, r2 = m.groups()
    claimed = (abs(int(r2 or r1) - int(r1)) + 1) * (abs(_column_number(c2 or c1) - _column_number(c1)) + 1)
    return max(claimed, from_xml, used), cols


def check_workbook(book, name: str, budget: int) -> None:
    """Refuse an .xlsx whose sheets (pandas reads them all) would not fit ``budget``, before a cell is read.
    ``book``: the open :class:`zipfile.ZipFile`."""
    sheets = [m for m in book.infolist() if re.fullmatch(r"xl/worksheets/[^/]+\.xml", m.filename)]
    sizes = [sheet_cells(book, m) for m in sheets]
    check_shape(name, max((c for _, c in sizes), default=0))
    cells = sum(c for c, _ in sizes)
    peak = cells * EXCEL_CELL_BYTES
    _refuse(f"{name} has {len(sheets)} sheet(s) of about {cells:,} cells in all", Estimate(peak, peak), budget,
            as_table=False)
