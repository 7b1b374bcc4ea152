"""Reading tables: CSV/TSV (any common encoding and separator), gzip, Parquet and Excel (:mod:`.workbook`), with
clear refusals for what is not a table, and the light repairs said as notes (:mod:`.repairs`)."""
from __future__ import annotations

import csv
import io
import re
from pathlib import Path

import pandas as pd

from ...errors import FairDashError
from ..onehot import add_whole_columns
from . import budget
from .repairs import numbers_from_objects, plain_values
from .workbook import read_zip

MAX_BYTES = 200 * 1024 * 1024  # the largest table accepted (also Streamlit's upload cap)
EXPANSION = 4  # a compressed table may expand to EXPANSION * MAX_BYTES
_PIECE = 1 << 20  # decompression works in pieces of this many bytes
_IN_PIECE = 1 << 14  # and reads the compressed file this many bytes at a time (what a member's end hands back)


def table_bytes(source) -> tuple[bytes, str]:
    """A table file's bytes and its name, from a path, bytes or a file-like object (refused in one line where they
    cannot be had, or pass :data:`MAX_BYTES`)."""
    if isinstance(source, (str, Path)):
        path = Path(source)
        if not path.exists():
            raise FairDashError(f"No such file: {path}")
        if path.is_dir():
            raise FairDashError(f"{path} is a folder, not a table file.")
        size = path.stat().st_size
        if size > MAX_BYTES:
            raise FairDashError(too_big(path.name, size))
        try:
            return path.read_bytes(), path.name
        except OSError as e:  # permission denied, a device, a vanished network file ...
            raise FairDashError(f"{path.name} could not be opened ({e.strerror or type(e).__name__}).") from None
    if isinstance(source, (bytes, bytearray)):
        return bytes(source), "upload"
    if hasattr(source, "read"):
        data = source.read()
        return (data.encode() if isinstance(data, str) else data), getattr(source, "name", "upload")
    raise FairDashError("Cannot read a table from this kind of input.")


_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")


_size = budget.size_text


def too_big(name: str, size: int) -> str:
    return (f"{name} is {_size(size)}; the largest table FairDash accepts is {_size(MAX_BYTES)}. Use a sample of "
            "its rows, leave out columns you do not need, or save it as compressed CSV (.csv.gz) or Parquet.")


def _decode(raw: bytes, notes: list | None = None) -> str:
    """The file's text: UTF-8 (with or without a byte-order mark), UTF-16 with a byte-order mark, or
    Windows-1252. A file whose lines mix UTF-8 and Windows-1252 is decoded line by line, with a note."""
    if raw[:2] in _UTF16_BOMS:
        try:
            return raw.decode("utf-16")
        except UnicodeDecodeError:
            raise FairDashError("The file starts like UTF-16 text but is not valid UTF-16; save it as UTF-8 "
                                "CSV.") from None
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        pass
    lines = raw.split(b"\n")
    bad = []
    for i, line in enumerate(lines):
        try:
            line.decode("utf-8")
        except UnicodeDecodeError:
            bad.append(i)
    if len(bad) < len(lines) and any(max(lines[i]) >= 128 for i in range(len(lines)) if i not in set(bad) and lines[i]):
        # some lines are UTF-8 with accented letters, others are not: mixed encodings
        bad_set = set(bad)
        text = "\n".join(ln.decode("cp1252", errors="replace") if i in bad_set else ln.decode("utf-8")
                         for i, ln in enumerate(lines))
        if text.startswith("\ufeff"):
            text = text[1:]
        if notes is not None:
            shown = ", ".join(str(i + 1) for i in bad[:5]) + (" ..." if len(bad) > 5 else "")
            notes.append(f"The file mixes text encodings: {len(bad)} line(s) (line {shown}) were not UTF-8 and were "
                         "read as Windows-1252. Check accented letters in those lines; saving the file as UTF-8 "
                         "avoids this.")
        return text
    for enc in ("cp1252", "latin-1"):
        try:
            return raw.decode(enc)
        except UnicodeDecodeError:
            continue
    raise FairDashError("The file's text encoding could not be recognised.")  # pragma: no cover


def _looks_binary(raw: bytes) -> bool:
    if raw[:2] in _UTF16_BOMS:
        return False
    head = raw[:4096]
    if b"\x00" in head:
        return True
    text = sum(32 <= b < 127 or b in (9, 10, 13) or b >= 128 for b in head)
    return text < 0.9 * len(head)


def _blank(content) -> bool:
    """Only white space? (looks at the start first, so a large file is not copied to find out)"""
    return not content[:65536].strip() and not content.strip()


def _read_text_table(text: str, name: str, notes: list | None = None) -> pd.DataFrame:
    if _blank(text):
        raise FairDashError(f"{name} is empty.")
    start = text[:65536].lstrip()[:200].lower()
    if start.startswith(("<!doctype", "<html", "<?xml", "<head", "<body", "<table", "<!--")):
        raise FairDashError(f"{name} is a web page or XML document, not a table. If it came from a download link, "
                            "save the table itself as CSV or Excel.")
    if start.startswith(("{", "[")) and text.rstrip()[-1:] in ("}", "]"):
        raise FairDashError(f"{name} holds JSON, not a table. Save it as CSV, Excel or Parquet.")
    sample = text[:65536]
    lines = [ln for ln in sample.splitlines() if ln.strip()]
    try:
        dialect = csv.Sniffer().sniff("\n".join(lines[:50]), delimiters=",;\t|")
        sep = dialect.delimiter
    except csv.Error:
        counts = {d: lines[0].count(d) for d in ",;\t|"}
        sep = max(counts, key=counts.get)
        if counts[sep] == 0:
            first = lines[0].strip()
            first = first if len(first) <= 60 else first[:57] + "..."
            raise FairDashError(
                f"{name} does not look like a table: no column separator (comma, semicolon, tab or "
                f"|) was found in its first line ({first!r}). Save it with commas or tabs between columns."
            ) from None
    _refuse_running_text(lines[:50], sep, name)
    header = next(csv.reader([lines[0]], delimiter=sep))
    header = [h.strip() for h in header]
    trailing = 0
    while trailing < len(header) - 1 and header[len(header) - 1 - trailing] == "":
        trailing += 1
    named = header[:len(header) - trailing]  # unnamed columns at the end: a spreadsheet's trailing separators
    dupes = sorted({h for h in named if named.count(h) > 1})
    if dupes:
        raise FairDashError(f"{name} has duplicate column names: {', '.join(map(repr, dupes))}. Rename them.")
    if any(h == "" for h in named):
        at = ", ".join(str(i + 1) for i, h in enumerate(named) if h == "")
        raise FairDashError(f"{name} has a column with no name in its header line (column {at}): name it.")
    try:
        df = pd.read_csv(io.BytesIO(text.encode("utf-8")), encoding="utf-8", sep=sep, skipinitialspace=True,
                         thousands=None, na_values=["?", "NA", "N/A", "null", "NULL", ""], keep_default_na=True)
    except (pd.errors.ParserError, ValueError) as e:
        raise FairDashError(_parser_message(name, str(e), sep)) from None
    df.columns = [str(c).strip() for c in df.columns]
    if trailing:
        tail = df.iloc[:, len(named):]
        if tail.notna().any().any():
            raise FairDashError(f"{name} has {trailing} column(s) with no name at the end of its header line that hold "
                                "values: name them.")
        df = df.iloc[:, :len(named)]
        if notes is not None:
            notes.append(f"{trailing} empty column(s) with no name at the end of each line (trailing separators) "
                         "were left out.")
    return df


def _refuse_running_text(lines: list, sep: str, name: str) -> None:
    """Prose (a letter or notes saved as .txt) with commas in it is not a table: a table's lines hold
    the same number of values, except for a few broken ones; running text's do not. Refused here, with
    one message, before a header check would complain about a column name."""
    try:
        widths = [len(row) for row in csv.reader(io.StringIO("\n".join(lines)), delimiter=sep)]
    except csv.Error:
        return  # quoting trouble: pandas' parser names the line
    if len(widths) < 3:
        return
    common = max(set(widths), key=widths.count)
    if widths.count(common) * 2 >= len(widths):
        return
    sep_name = {",": "commas", ";": "semicolons", "\t": "tabs", "|": "| characters"}.get(sep, repr(sep))
    shown = ", ".join(map(str, widths[:6])) + (", ..." if len(widths) > 6 else "")
    raise FairDashError(
        f"{name} does not look like a table: its lines hold different numbers of values separated by "
        f"{sep_name} ({shown}), as running text does. A table has its column names in the first line and "
        "one row per line, each with the same number of values."
    )


def _parser_message(name: str, error: str, sep: str) -> str:
    """pandas' tokenizer errors in words, naming the line."""
    import re

    first = (error.strip().splitlines() or [""])[0]
    sep_name = {",": "commas", ";": "semicolons", "\t": "tabs", "|": "| characters"}.get(sep, repr(sep))
    m = re.search(r"Expected (\d+) fields in line (\d+), saw (\d+)", first)
    if m:
        want, line, saw = m.groups()
        return (f"{name}: line {line} has {saw} values but the header has {want} columns (separated by {sep_name}). "
                "Check that line for an extra separator, or put quotes around values that contain one.")
    m = re.search(r"EOF inside string starting at row (\d+)", first)
    if m:
        return (f"{name}: a quotation mark opened near line {int(m.group(1)) + 1} is never closed, so the rest of "
                "the file would be read as one value. Check the quotes on that line.")
    return f"{name} could not be read as a table: {first[:200]}"


def _gunzip_pieces(raw: bytes, name: str):
    """The decompressed bytes of a gzip file (every member), in pieces of at most ``_PIECE`` bytes. The file is fed
    to the decompressor :data:`_IN_PIECE` bytes at a time from a view of it, so that the time taken grows with the
    file's length whatever its number of members (never a copy of the rest of the file per member)."""
    import zlib

    view, pos, end = memoryview(raw), 0, len(raw)
    try:
        while pos < end:
            d = zlib.decompressobj(16 + zlib.MAX_WBITS)
            while not d.eof:
                buf = d.unconsumed_tail  # (what the last call left for want of room in its output)
                if not buf:
                    if pos >= end:
                        break
                    buf = view[pos:pos + _IN_PIECE]
                    pos += len(buf)
                piece = d.decompress(buf, _PIECE)
                if piece:
                    yield piece
            if not d.eof:
                raise FairDashError(f"{name} looks gzip-compressed but is damaged or incomplete (it ends too soon).")
            pos -= len(d.unused_data)  # the next member's first bytes, handed back
            pos = _after_zeros(raw, pos)
    except zlib.error:
        raise FairDashError(f"{name} looks gzip-compressed but is damaged.") from None


_NOT_ZERO = re.compile(rb"[^\x00]")


def _after_zeros(raw: bytes, pos: int) -> int:
    """The first byte at or after ``pos`` that is not zero padding (``len(raw)`` where none is)."""
    m = _NOT_ZERO.search(raw, pos)
    return m.start() if m else len(raw)


def _gunzip(raw: bytes, name: str, limit: int, allowed: int) -> bytes:
    """Decompress gzip in a stream, refusing a file that expands past ``limit`` bytes or whose table would
    not fit ``allowed`` bytes of memory. A first pass counts the decompressed size piece by piece and keeps
    only the first :data:`budget.SAMPLE_BYTES` (to size the table from its first rows), so a small file
    that expands enormously (a "zip bomb") is refused with about one piece in memory; only a file within
    both limits is decompressed again and kept."""
    size, head, lines, last = 0, bytearray(), 0, b"\n"
    for piece in _gunzip_pieces(raw, name):
        size += len(piece)
        lines += piece.count(b"\n")
        last = piece[-1:]
        if len(head) < budget.SAMPLE_BYTES:
            head += piece[:budget.SAMPLE_BYTES - len(head)]
        if size > limit:
            raise FairDashError(f"{name} is too large once decompressed: it expands to more than {_size(limit)} (from "
                                f"{_size(len(raw))} compressed), and the largest table FairDash accepts is "
                                f"{_size(limit)} decompressed. Use a sample of its rows.")
    if _is_text(bytes(head)):
        _check_text(bytes(head), size, name, allowed, packed=len(raw), lines=lines + (last != b"\n"))
    else:
        budget.check_held(name, size, len(raw), allowed)
    return b"".join(_gunzip_pieces(raw, name))


def _is_text(head: bytes) -> bool:
    """Does a file starting with ``head`` hold text (not Parquet, Excel or other binary data)?"""
    return head[:4] not in (b"PAR1", b"PK\x03\x04") and not _looks_binary(head)


def _sample_reader(name: str):
    """The reader :func:`read_table` uses for text, on a sample's bytes: what the budget sizes a table with."""
    return lambda sample: _read_text_table(_decode(sample), name)


def text_estimate(raw: bytes, name: str = "table") -> budget.Estimate:
    """The memory reading the text table ``raw`` takes (:class:`budget.Estimate`), from a parse of its
    first rows by the reader :func:`read_table` uses."""
    return budget.text_estimate(raw[:budget.SAMPLE_BYTES], len(raw), _sample_reader(name))


def _check_text(head: bytes, total: int, name: str, allowed: int, packed: int | None = None,
                lines: int | None = None) -> None:
    """Refuse text whose table would not fit ``allowed`` bytes, sized from ``head`` (its first bytes) and its
    ``lines``, or that has too many columns or cells."""
    budget.check_text(name, head, total, _sample_reader(name), allowed, packed, lines)


def _parse(raw: bytes, name: str, allowed: int, checked: bool) -> tuple[pd.DataFrame, list]:
    """``(table, notes)``: the table in ``raw`` by its first bytes: Parquet, Excel (a zip), or text (refused first
    where it would not fit ``allowed``, unless ``checked`` already); a library's parse error becomes one sentence."""
    notes: list = []
    try:
        if raw[:4] == b"PAR1":
            budget.check_parquet(raw, name, allowed)
            try:
                # without pyarrow's thread pool: after reading a Parquet file with no rows, that pool
                # could abort the process at exit ("terminate called without an active exception")
                df = pd.read_parquet(io.BytesIO(raw), use_threads=False)
            except Exception:
                raise FairDashError(f"{name} starts like a Parquet file but could not be read: it is damaged or "
                                    "incomplete. Save or download it again.") from None
        elif raw[:4] == b"PK\x03\x04":
            df = read_zip(raw, name, notes, allowed, EXPANSION * MAX_BYTES)
        elif raw[:8] == b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1":
            raise FairDashError(f"{name} is an old-style .xls workbook; save it as .xlsx or CSV.")
        else:
            if _looks_binary(raw):
                raise FairDashError(f"{name} is not a table: it holds binary data, not text, Parquet or Excel.")
            if not checked:
                _check_text(raw[:budget.SAMPLE_BYTES], len(raw), name, allowed,
                            lines=raw.count(b"\n") + (raw[-1:] != b"\n"))
            df = _read_text_table(_decode(raw, notes), name, notes)
    except FairDashError:
        raise
    except Exception as e:  # a library's parse error on a malformed file
        first = (str(e).strip().splitlines() or [type(e).__name__])[0][:200]
        raise FairDashError(f"{name} could not be read as a table: {first}") from None
    return df, notes


def read_table(source, name: str | None = None) -> pd.DataFrame:
    """Read CSV/TSV (delimiter and encoding sniffed; gzip too), Parquet or Excel into a DataFrame.

    ``source`` is a path, bytes or a file-like object (such as a Streamlit upload). Every failure is a
    :class:`FairDashError` saying what is wrong with the file.
    """
    raw, default_name = table_bytes(source)
    name = name or default_name
    if len(raw) > MAX_BYTES:
        raise FairDashError(too_big(name, len(raw)))
    if _blank(raw):
        raise FairDashError(f"{name} is empty.")
    allowed, checked = budget.table_budget(), False
    if raw[:2] == b"\x1f\x8b":
        raw, checked = _gunzip(raw, name, EXPANSION * MAX_BYTES, allowed), True
        if _blank(raw):
            raise FairDashError(f"{name} is empty.")
    df, notes = _parse(raw, name, allowed, checked)
    if df.shape[1] < 2:
        raise FairDashError(
            f"{name} has {df.shape[1]} column(s); a table needs at least a label and a sensitive "
            "attribute. Is the separator right?"
        )
    if len(df) == 0:
        raise FairDashError(f"{name} has a header but no rows.")
    df.columns = [str(c) for c in df.columns]
    plain_values(df)
    if df.columns.duplicated().any():
        raise FairDashError(f"{name} has duplicate column names; rename them.")
    _refuse_names_alike(df.columns, name)
    numbers_from_objects(df, notes)
    df, whole = add_whole_columns(df)  # one-hot groups made whole: Race_White, Race_Black, ... as 'Race'
    notes.extend(whole)
    if notes:
        df.attrs["read_notes"] = notes
    return df


def _refuse_names_alike(columns, name: str) -> None:
    """Two columns whose names differ only by case or surrounding spaces would be two features that look
    like one: refused, naming both."""
    seen: dict = {}
    for c in columns:
        key = str(c).strip().casefold()
        if key in seen:
            raise FairDashError(f"{name} has two columns whose names differ only by case or surrounding spaces: "
                                f"{seen[key]!r} and {c!r}. Rename one of them, or leave one out of the file.")
        seen[key] = c


# --------------------------------------------------------------------------------------------------
# Profiling
# --------------------------------------------------------------------------------------------------
