"""Reading tables: CSV/TSV (any common encoding and separator), gzip, Parquet and Excel, with clear
refusals for what is not a table, and the light repairs (thousands separators, infinities) said as notes."""
from __future__ import annotations

import csv
import io
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import FairDashError

MAX_BYTES = 200 * 1024 * 1024  # the largest table accepted (also Streamlit's upload cap)


def _read_bytes(source) -> tuple[bytes, str]:
    if isinstance(source, (str, Path)):
        path = Path(source)
        if not path.exists():
            raise FairDashError(f"No such file: {path}")
        if path.is_dir():
            raise FairDashError(f"{path} is a folder, not a table file.")
        size = path.stat().st_size
        if size > MAX_BYTES:
            raise FairDashError(_too_big(path.name, size))
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


def _size(n: float) -> str:
    for unit in ("bytes", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GB"  # pragma: no cover


def _too_big(name: str, size: int) -> str:
    return (f"{name} is {_size(size)}; the largest table FairDash accepts is {_size(MAX_BYTES)}. Use a sample of "
            "its rows, leave out columns you do not need, or save it as compressed CSV (.csv.gz) or Parquet.")


def _decode(raw: bytes, notes: list | None = None) -> str:
    """The file's text: UTF-8 (with or without a byte-order mark), UTF-16 with a byte-order mark, or
    Windows-1252. A file whose lines mix UTF-8 and Windows-1252 is decoded line by line, with a note."""
    if raw[:2] in _UTF16_BOMS:
        try:
            return raw.decode("utf-16")
        except UnicodeDecodeError:
            raise FairDashError("The file starts like UTF-16 text but is not valid UTF-16; save it as UTF-8 CSV.") from None
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
                         "read as Windows-1252. Check accented letters in those lines; saving the file as UTF-8 avoids this.")
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


def _read_text_table(text: str, name: str) -> pd.DataFrame:
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
    dupes = sorted({h for h in header if header.count(h) > 1})
    if dupes:
        raise FairDashError(f"{name} has duplicate column names: {', '.join(map(repr, dupes))}. Rename them.")
    if any(h == "" for h in header):
        raise FairDashError(f"{name} has a column with no name in its header line.")
    try:
        df = pd.read_csv(io.BytesIO(text.encode("utf-8")), encoding="utf-8", sep=sep, skipinitialspace=True, thousands=None,
                         na_values=["?", "NA", "N/A", "null", "NULL", ""], keep_default_na=True)
    except (pd.errors.ParserError, ValueError) as e:
        raise FairDashError(_parser_message(name, str(e), sep)) from None
    df.columns = [str(c).strip() for c in df.columns]
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


def _gunzip(raw: bytes, name: str, limit: int) -> bytes:
    """Decompress gzip (every member) without ever holding more than ``limit + 1`` bytes, so that a
    small file that expands enormously (a "zip bomb") is refused instead of filling the memory."""
    import zlib

    out, rest = [], raw
    size = 0
    try:
        while rest:
            d = zlib.decompressobj(16 + zlib.MAX_WBITS)
            chunk = d.decompress(rest, limit + 1 - size)
            out.append(chunk)
            size += len(chunk)
            if size > limit:
                break
            if not d.eof:
                raise FairDashError(f"{name} looks gzip-compressed but is damaged or incomplete (it ends too soon).")
            rest = d.unused_data.lstrip(b"\x00")
    except zlib.error:
        raise FairDashError(f"{name} looks gzip-compressed but is damaged.") from None
    return b"".join(out)


def read_table(source, name: str | None = None) -> pd.DataFrame:
    """Read CSV/TSV (delimiter and encoding sniffed; gzip too), Parquet or Excel into a DataFrame.

    ``source`` is a path, bytes or a file-like object (such as a Streamlit upload). Every failure is a
    :class:`FairDashError` saying what is wrong with the file.
    """
    raw, default_name = _read_bytes(source)
    name = name or default_name
    if len(raw) > MAX_BYTES:
        raise FairDashError(_too_big(name, len(raw)))
    if _blank(raw):
        raise FairDashError(f"{name} is empty.")
    if raw[:2] == b"\x1f\x8b":
        raw = _gunzip(raw, name, 4 * MAX_BYTES)
        if len(raw) > 4 * MAX_BYTES:
            raise FairDashError(f"{name} is too large once decompressed ({_size(len(raw))}; the limit is "
                                f"{_size(4 * MAX_BYTES)}). Use a sample of its rows.")
        if _blank(raw):
            raise FairDashError(f"{name} is empty.")
    notes: list = []
    try:
        if raw[:4] == b"PAR1":
            try:
                # without pyarrow's thread pool: after reading a Parquet file with no rows, that pool
                # could abort the process at exit ("terminate called without an active exception")
                df = pd.read_parquet(io.BytesIO(raw), use_threads=False)
            except Exception:
                raise FairDashError(f"{name} starts like a Parquet file but could not be read: it is damaged or "
                                    "incomplete. Save or download it again.") from None
        elif raw[:4] == b"PK\x03\x04":
            df = _read_excel(raw, name)
        elif raw[:8] == b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1":
            raise FairDashError(f"{name} is an old-style .xls workbook; save it as .xlsx or CSV.")
        else:
            if _looks_binary(raw):
                raise FairDashError(f"{name} is not a table: it holds binary data, not text, Parquet or Excel.")
            df = _read_text_table(_decode(raw, notes), name)
    except FairDashError:
        raise
    except Exception as e:  # a library's parse error on a malformed file
        first = (str(e).strip().splitlines() or [type(e).__name__])[0][:200]
        raise FairDashError(f"{name} could not be read as a table: {first}") from None
    if df.shape[1] < 2:
        raise FairDashError(
            f"{name} has {df.shape[1]} column(s); a table needs at least a label and a sensitive "
            "attribute. Is the separator right?"
        )
    if len(df) == 0:
        raise FairDashError(f"{name} has a header but no rows.")
    df.columns = [str(c) for c in df.columns]
    if df.columns.duplicated().any():
        raise FairDashError(f"{name} has duplicate column names; rename them.")
    if notes:
        df.attrs["read_notes"] = notes
    return df


def _read_excel(raw: bytes, name: str) -> pd.DataFrame:
    try:
        zipfile.ZipFile(io.BytesIO(raw)).testzip()
    except zipfile.BadZipFile:
        raise FairDashError(f"{name} looks like a zip/Excel file but is damaged.") from None
    sheets = pd.read_excel(io.BytesIO(raw), sheet_name=None)
    nonempty = {k: _sheet_table(v) for k, v in sheets.items() if not v.dropna(how="all").empty}
    if not nonempty:
        raise FairDashError(f"{name} has no sheet with data.")
    tables = [k for k, v in nonempty.items() if v.shape[1] >= 2 and len(v) > 0]
    if not tables:
        raise FairDashError(f"{name} has no sheet holding a table of at least two columns with a header row "
                            f"(sheets with data: {', '.join(map(repr, nonempty))}).")
    # the first sheet holding a table (a cover sheet with a title is passed over); the others are named
    # in a warning by build_task
    first = tables[0]
    df = nonempty[first]
    df.attrs["sheet"] = first
    df.attrs["other_sheets"] = [k for k in nonempty if k != first]
    return df


def _sheet_table(df: pd.DataFrame) -> pd.DataFrame:
    """A sheet's table when blank rows or columns stand above or left of it (pandas then names every
    column 'Unnamed: k' and reads the real header as a row): the first non-blank row becomes the header."""
    unnamed = np.array([str(c).startswith("Unnamed:") for c in df.columns])
    if len(df) == 0 or not unnamed.all():
        return df
    df = df.dropna(how="all").dropna(axis=1, how="all")
    if len(df) == 0:
        return df
    header = [str(v).strip() if pd.notna(v) else f"Unnamed: {i}" for i, v in enumerate(df.iloc[0])]
    if len(set(header)) < len(header):
        return df
    return df.iloc[1:].set_axis(header, axis=1).reset_index(drop=True).infer_objects()


# --------------------------------------------------------------------------------------------------
# Profiling
# --------------------------------------------------------------------------------------------------
def _numeric_text(col: pd.Series) -> pd.Series | None:
    """A text column of numbers with thousands separators (``1,234``), converted, else None."""
    if not (col.dtype == object or pd.api.types.is_string_dtype(col)):  # pandas 3 reads text as "str"
        return None
    v = col.dropna()
    pattern = r"[-+]?\d{1,3}(,\d{3})+(\.\d+)?|[-+]?\d+(\.\d+)?"
    # a quick look at the first values first, so a big text column is rejected without a full scan
    for part in (v.iloc[:1000], v):
        part = part.astype(str).str.strip()
        if part.empty or not part.str.fullmatch(pattern).all():
            return None
        if len(part) == len(v):
            break
    if not v.astype(str).str.contains(",", regex=False).any():
        return None  # plain numbers stored as text: not this repair
    return pd.to_numeric(col.astype(str).str.strip().str.replace(",", "", regex=False).where(col.notna()),
                         errors="coerce")


_PANDAS_MAJOR = int(pd.__version__.split(".")[0])


def clean_table(df: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    """Light repairs with a note for each: numbers stored as text with thousands separators become
    numbers; infinite values become missing."""
    # pandas >= 3 copies on write, so a shallow copy never changes the caller's table (and saves a copy
    # of every column of a big table); older pandas needs the deep copy
    notes, df = [], df.copy(deep=_PANDAS_MAJOR < 3)
    for c in df.columns:
        conv = _numeric_text(df[c])
        if conv is not None:
            df[c] = conv
            notes.append(f"Column {c!r} held numbers written as text with thousands separators; read as numbers.")
        if pd.api.types.is_numeric_dtype(df[c]) and not pd.api.types.is_bool_dtype(df[c]):
            inf = np.isinf(df[c].to_numpy(dtype=float, na_value=np.nan))
            if inf.any():
                df.loc[inf, c] = np.nan
                notes.append(f"Column {c!r} had {int(inf.sum())} infinite value(s); treated as missing.")
    return df, notes
