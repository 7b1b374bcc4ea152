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
tests/test_read_budget.py, which also holds the text estimate to within 0.5x-2x of pandas' own count).
"""
from __future__ import annotations

import io
import os
import re
from typing import Callable, NamedTuple

from ..errors import FairDashError

TABLE_MB_ENV = "FAIRDASH_TABLE_MB"
DEFAULT_TABLE_MB = 1024
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
    text = os.environ.get(TABLE_MB_ENV, "").strip()
    if not text:
        return DEFAULT_TABLE_MB * 2**20
    try:
        mb = float(text)
    except ValueError:
        mb = float("nan")
    if not mb > 0 or mb == float("inf"):
        raise FairDashError(f"{TABLE_MB_ENV} must be a positive number of megabytes (such as 1024), not {text!r}.")
    return int(mb * 2**20)


def _refuse(found: str, estimate: Estimate, budget: int, as_table: bool = True) -> None:
    """Raise the one-line refusal when ``estimate.peak`` passes ``budget``; ``found`` says what the file is."""
    if estimate.peak <= budget:
        return
    cost = (f"about {size_text(estimate.table)} as a table ({size_text(estimate.peak)} of memory while it is read)"
            if as_table else f"about {size_text(estimate.peak)} of memory to read")
    raise FairDashError(f"{found}, {cost}; FairDash reads at most {size_text(budget)} per table ({TABLE_MB_ENV}). "
                        "Use a sample of its rows or fewer columns.")


# --------------------------------------------------------------------------------------------------
# text
# --------------------------------------------------------------------------------------------------
def text_estimate(head: bytes, total: int, parse: Callable) -> Estimate:
    """The memory a text table of ``total`` bytes takes, from ``head`` (its first bytes) parsed by
    ``parse`` (bytes -> DataFrame, the real reader): the first rows' size per byte of text, scaled.
    A head that does not parse on its own (a quoted value running past it, a line longer than it) is
    sized at :data:`UNSAMPLED_FACTOR` bytes per byte; the full read then says what is wrong, if anything."""
    sample = head[:SAMPLE_BYTES]
    if total > len(sample):  # whole lines only
        sample = sample[:sample.rfind(b"\n") + 1]
    per_byte = UNSAMPLED_FACTOR
    if sample:
        try:
            per_byte = float(parse(sample).memory_usage(deep=True).sum()) / len(sample)
        except Exception:  # noqa: BLE001 - any failure of the sample means "not sized from it"
            pass
    table = per_byte * total
    return Estimate(table, TEXT_COPIES * total + PARSE_FACTOR * table)


def check_text(name: str, head: bytes, total: int, parse: Callable, budget: int, packed: int | None = None) -> None:
    """Refuse text of ``total`` bytes (``packed``: the compressed size, for a gzip) whose table would not
    fit ``budget``."""
    found = (f"{name} expands to {size_text(total)} of text (from {size_text(packed)})" if packed is not None
             else f"{name} holds {size_text(total)} of text")
    _refuse(found, text_estimate(head, total, parse), budget)


def check_held(name: str, total: int, packed: int, budget: int) -> None:
    """Refuse a gzip whose decompressed bytes (not text: a Parquet or Excel file inside) alone pass the budget."""
    _refuse(f"{name} expands to {size_text(total)} (from {size_text(packed)})", Estimate(total, total), budget,
            as_table=False)


# --------------------------------------------------------------------------------------------------
# Parquet
# --------------------------------------------------------------------------------------------------
def parquet_estimate(raw: bytes) -> tuple[int, Estimate] | None:
    """``(rows, Estimate)`` of a Parquet file from its footer alone (no page is read), or None when the
    footer cannot be read (the read itself then says the file is damaged)."""
    import pyarrow.parquet as pq

    try:
        f = pq.ParquetFile(io.BytesIO(raw))
        meta, schema = f.metadata, f.schema_arrow
    except Exception:  # noqa: BLE001 - a damaged footer
        return None
    table = 0.0
    for i in range(meta.num_row_groups):
        group = meta.row_group(i)
        for j in range(group.num_columns):
            chunk = group.column(j)
            top = chunk.path_in_schema.split(".")[0]
            kind = schema.field(top).type if top in schema.names else None
            table += group.num_rows * _value_bytes(kind, chunk)
    return meta.num_rows, Estimate(table, PARQUET_FACTOR * table + len(raw))


def _value_bytes(kind, chunk) -> float:
    """The bytes one value of a Parquet column chunk takes in pandas, by its arrow type (``kind``)."""
    import pyarrow as pa

    if kind is None:
        return OBJECT_BYTES
    if pa.types.is_dictionary(kind):  # becomes a categorical: its codes (the categories are few)
        return max(1, kind.index_type.bit_width // 8)
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
        _refuse(f"{name} is {size_text(len(raw))} of Parquet holding {rows:,} rows", estimate, budget)


# --------------------------------------------------------------------------------------------------
# Excel
# --------------------------------------------------------------------------------------------------
_DIMENSION = re.compile(rb'<(?:\w+:)?dimension\s+ref="\$?([A-Z]{1,3})\$?(\d+)(?::\$?([A-Z]{1,3})\$?(\d+))?"')


def _column_number(letters: bytes) -> int:
    n = 0
    for ch in letters:
        n = n * 26 + ch - 64
    return n


def sheet_cells(book, info) -> int:
    """The cells a worksheet member holds: the larger of what its ``<dimension>`` says (read from the
    first :data:`_SHEET_HEAD` bytes of the member, decompressed only that far) and what its XML's size
    allows at :data:`EXCEL_XML_PER_CELL` bytes a cell (a sheet without a dimension, or with a wrong one)."""
    from_xml = info.file_size // EXCEL_XML_PER_CELL
    try:
        with book.open(info) as member:
            head = member.read(_SHEET_HEAD)
    except Exception:  # noqa: BLE001 - a damaged member: the read itself says so
        return from_xml
    m = _DIMENSION.search(head)
    if not m:
        return from_xml
    c1, r1, c2, r2 = m.groups()
    rows = abs(int(r2 or r1) - int(r1)) + 1
    cols = abs(_column_number(c2 or c1) - _column_number(c1)) + 1
    return max(rows * cols, from_xml)


def check_workbook(book, name: str, budget: int) -> None:
    """Refuse an .xlsx whose sheets (pandas reads them all) would not fit ``budget``, before a cell is read.
    ``book``: the open :class:`zipfile.ZipFile`."""
    sheets = [m for m in book.infolist() if re.fullmatch(r"xl/worksheets/[^/]+\.xml", m.filename)]
    cells = sum(sheet_cells(book, m) for m in sheets)
    peak = cells * EXCEL_CELL_BYTES
    _refuse(f"{name} has {len(sheets)} sheet(s) of about {cells:,} cells in all", Estimate(peak, peak), budget,
            as_table=False)
