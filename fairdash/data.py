"""Data layer: reading tables, profiling columns, the Task (which column is s, which is y, what counts
as 1, which features), splits, the balanced test set and preprocessing (docs/METHOD.md, "Evaluation
protocol"). No model code here.
"""
from __future__ import annotations

import csv
import io
import threading
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from .errors import FairDashError

# The bundled samples ship inside the package (package data), so they are found from any working folder
# and in a non-editable install alike.
ASSETS = Path(__file__).resolve().parent / "datasets"

MAX_CATEGORIES = 50  # one-hot levels kept per categorical column; rarer levels share one column
HIGH_CARDINALITY = 100  # categorical columns with more distinct values than this get a warning
MAX_BYTES = 200 * 1024 * 1024  # the largest table accepted (also Streamlit's upload cap)


# --------------------------------------------------------------------------------------------------
# Samples
# --------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Sample:
    name: str
    file: str
    title: str
    description: str
    s_column: str
    s1_values: tuple
    y_column: str
    y1_values: tuple
    positive_meaning: str
    drop: tuple = ()


SAMPLES: dict[str, Sample] = {
    "adult": Sample(
        "adult", "adult.csv.gz", "Adult (UCI Census Income)",
        "45,222 people from the 1994 US census; the label is whether income exceeds $50K a year.",
        "sex", ("Male",), "salary", (">50K",), "income above $50K a year (a favourable outcome)",
        ("fnlwgt",),
    ),
    "compas": Sample(
        "compas", "compas.csv.gz", "COMPAS (ProPublica two-year recidivism)",
        "6,167 defendants from Broward County, Florida; the label is whether the person was "
        "rearrested within two years.",
        "race", ("Caucasian",), "two-year-recid", ("1",),
        "rearrested within two years (NOT a favourable outcome for the person; it is what the paper "
        "calls positive)",
    ),
}


def load_sample(name: str) -> pd.DataFrame:
    """A bundled data set by name (``adult`` or ``compas``), read from the package's ``datasets`` folder."""
    if name not in SAMPLES:
        raise FairDashError(f"Unknown sample {name!r}. Bundled samples: {', '.join(SAMPLES)}.")
    return read_table(ASSETS / SAMPLES[name].file)


def read_table_or_sample(source: str) -> pd.DataFrame:
    """A bundled sample by name (``adult``, ``compas``), or else a table file at that path."""
    if source in SAMPLES and not Path(source).exists():
        return load_sample(source)
    return read_table(source)


# --------------------------------------------------------------------------------------------------
# Reading tables
# --------------------------------------------------------------------------------------------------
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


def profile_columns(df: pd.DataFrame) -> pd.DataFrame:
    """One row per column: kind, missing values, distinct values, examples and flags
    (``id-like``, ``constant``, ``empty``, ``high-cardinality``)."""
    rows = []
    n = len(df)
    for c in df.columns:
        col = df[c]
        missing = int(col.isna().sum())
        n_nonnull = n - missing
        distinct = int(col.nunique(dropna=True))  # no copy of the column: this runs on million-row tables
        numeric = pd.api.types.is_numeric_dtype(col) and not pd.api.types.is_bool_dtype(col)
        kind = "numeric" if numeric else "categorical"
        if distinct == 2:
            kind = "binary"
        flags = []
        if n_nonnull == 0:
            flags.append("empty")
        elif distinct == 1:
            flags.append("constant")
        if n > 20 and distinct >= 0.95 * n_nonnull and (not numeric or pd.api.types.is_integer_dtype(col)):
            flags.append("id-like")
        if not numeric and distinct > HIGH_CARDINALITY:
            flags.append("high-cardinality")
        head = col.iloc[:5000].dropna().drop_duplicates().head(4)
        if len(head) < min(4, distinct):  # rare values further down
            head = col.dropna().drop_duplicates().head(4)
        examples = ", ".join(map(str, head.tolist()))
        rows.append({
            "column": c, "kind": kind, "dtype": str(col.dtype), "missing": missing,
            "distinct": distinct, "examples": examples, "flags": ", ".join(flags),
        })
    return pd.DataFrame(rows)


def left_out_by_default(prof: pd.DataFrame, exclude=()) -> dict[str, str]:
    """Columns the default feature set leaves out, each with why (its ``id-like``/``constant``/``empty``
    flags), from :func:`profile_columns`'s table."""
    flagged = prof.loc[prof["flags"].str.contains("id-like|constant|empty"), ["column", "flags"]]
    return {c: why for c, why in flagged.itertuples(index=False) if c not in exclude}


def left_out_note(column: str, why: str) -> str:
    return f"Column {column!r} was left out of the features ({why})."


def column_values(df: pd.DataFrame, column: str, limit: int = 200) -> list[str]:
    """The distinct values of a column as text (what ``--s1``/``--y1`` and the UI match against)."""
    _check_column(df, column)
    vals = df[column].dropna()
    counts = _as_text(vals).value_counts()
    return counts.index[:limit].tolist()


# --------------------------------------------------------------------------------------------------
# The task
# --------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class TaskSpec:
    """The user's choices. Values match the column's values as text (``"1"`` selects an integer 1).

    ``s1_values``: values of ``s_column`` that form group 1 (all others form group 0, the protected
    group). With ``s_multi=True`` every value is its own group instead (sorted; group 0 first).
    ``y1_values`` or ``y_threshold`` (y = 1 where the value is > threshold) say what a positive label is.
    ``missing`` is ``"drop"`` (rows with a missing feature are dropped) or ``"impute"``.
    ``s_with``: a second column crossed with ``s_column`` (intersectional groups, e.g. race × sex): every
    combination is its own group, and neither column is a feature. ``group_labels``: names for the
    groups in group order (e.g. ``("female", "male")`` for a column coded 0/1), shown everywhere.
    """

    s_column: str
    y_column: str
    s1_values: tuple = ()
    y1_values: tuple = ()
    y_threshold: float | None = None
    s_threshold: float | None = None
    s_multi: bool = False
    features: tuple | None = None  # None = every other column except flagged ones
    drop: tuple = ()
    missing: str = "drop"
    strata_column: str | None = None  # the "legitimate" column for conditional parity
    positive_meaning: str = ""
    s_with: str | None = None
    group_labels: tuple = ()

    def to_dict(self) -> dict:
        d = self.__dict__.copy()
        return {k: (list(v) if isinstance(v, tuple) else v) for k, v in d.items()}

    @classmethod
    def from_dict(cls, d: dict) -> "TaskSpec":
        known = {k: (tuple(v) if isinstance(v, list) else v) for k, v in d.items() if k in cls.__dataclass_fields__}
        return cls(**known)


@dataclass
class Task:
    """A table turned into ``X`` (raw feature columns), ``y`` and ``s`` (integer codes)."""

    spec: TaskSpec
    X: pd.DataFrame
    y: np.ndarray
    s: np.ndarray
    group_names: tuple
    label_names: tuple  # (name of y=0, name of y=1)
    numeric_features: tuple
    categorical_features: tuple
    strata: np.ndarray | None = None  # integer stratum codes for conditional parity
    strata_names: tuple = ()
    n_rows_read: int = 0
    n_dropped_missing_sy: int = 0
    n_dropped_missing_features: int = 0
    warnings: list = field(default_factory=list)

    @property
    def n_groups(self) -> int:
        return len(self.group_names)

    @property
    def features(self) -> tuple:
        return tuple(self.X.columns)

    def group_table(self) -> pd.DataFrame:
        """Group sizes and base rates on the whole table (the readouts use the training split)."""
        from .targets import group_counts

        n, n_pos = group_counts(self.y, self.s, self.n_groups)
        return pd.DataFrame({
            "group": [f"s={j}: {g}" for j, g in enumerate(self.group_names)],
            "rows": n, "positives": n_pos,
            "base rate": np.where(n > 0, n_pos / np.maximum(n, 1), 0.0),
            "share": n / max(len(self.y), 1),
        })


def _as_text(col: pd.Series) -> pd.Series:
    """Values as text; whole floats print without ``.0`` so ``1.0`` matches ``"1"``."""
    if pd.api.types.is_float_dtype(col):
        v = col.to_numpy()
        whole = np.isfinite(v) & (v == np.round(v)) & (np.abs(v) < 2.0**53)  # larger ones would overflow int64
        out = col.astype(str)
        out[whole] = pd.Series(v[whole].astype(np.int64), index=col.index[whole]).astype(str)
        return out
    if pd.api.types.is_bool_dtype(col):
        return col.map({True: "True", False: "False"})
    return col.astype(str).str.strip()


def _short(values, k: int = 3) -> str:
    values = sorted(map(str, values))
    return ", ".join(map(repr, values[:k])) + (f" and {len(values) - k} more" if len(values) > k else "")


def _label_words(spec: TaskSpec) -> list[str]:
    """What a positive label is, in words: the chosen values or the threshold."""
    if spec.y1_values:
        return [f"{spec.y_column} = {v}" for v in spec.y1_values]
    return [f"{spec.y_column} > {spec.y_threshold:g}"]


def _check_column(df: pd.DataFrame, column: str, role: str = "column") -> None:
    if column not in df.columns:
        close = [c for c in df.columns if c.lower() == str(column).lower()]
        hint = f" Did you mean {close[0]!r}?" if close else ""
        raise FairDashError(f"The {role} {column!r} is not in the table.{hint}")


_TRUE_WORDS = ("true", "1", "1.0")
_FALSE_WORDS = ("false", "0", "0.0")


def _canonical_value(value, present: set, col: pd.Series) -> str | None:
    """The column's own text (as :func:`_as_text` writes it) for a value the user typed, or None where
    no value of the column matches: the same text (spaces around it ignored); for a column of booleans
    (pandas reads ``TRUE``/``false`` in a file as booleans) also true/false in any case and 1/0; for a
    numeric column also another spelling of the same number (``1.0`` for 1, ``.5`` for 0.5)."""
    v = str(value).strip()
    if v in present:
        return v
    if present and present <= {"True", "False"}:
        low = v.lower()
        word = "True" if low in _TRUE_WORDS else "False" if low in _FALSE_WORDS else None
        return word if word in present else None
    if pd.api.types.is_numeric_dtype(col):
        try:
            f = float(v)
        except ValueError:
            return None
        whole = np.isfinite(f) and f == round(f) and abs(f) < 2.0**53
        text = str(int(f)) if whole else str(f)
        return text if text in present else None
    return None


def _match_values(values, present: set, col: pd.Series) -> tuple[list, list]:
    """``(matched, missing)``: the column's own text for each value found (in order, once each) and
    the values typed that match none of ``present``."""
    matched, missing = [], []
    for v in values:
        c = _canonical_value(v, present, col)
        if c is None:
            missing.append(str(v).strip())
        else:
            matched.append(c)
    return list(dict.fromkeys(matched)), missing


def _binarise(col: pd.Series, values: tuple, threshold, role: str, column: str, dropped: int = 0) -> np.ndarray:
    if threshold is not None:
        if not pd.api.types.is_numeric_dtype(col):
            raise FairDashError(f"The {role} column {column!r} is not numeric, so it cannot be split by a threshold.")
        return (col.to_numpy(dtype=float) > float(threshold)).astype(int)
    if not values:
        raise FairDashError(f"Choose which values of {column!r} count as {'group 1' if role == 'sensitive' else 'positive'}.")
    text = _as_text(col)
    present = set(text.unique())
    wanted, missing = _match_values(values, present, col)
    if missing:
        shown = ", ".join(sorted(present, key=str)[:12])
        if dropped:
            raise FairDashError(f"Value {missing[0]!r} of column {column!r} occurs only in the {dropped} row(s) dropped "
                                "because they had a missing value. Fill in the missing values, or choose to impute "
                                f"them instead of dropping rows. The rows left have: {shown}.")
        raise FairDashError(f"Value {missing[0]!r} does not occur in column {column!r}. Its values include: {shown}.")
    return text.isin(wanted).to_numpy().astype(int)


def build_task(df: pd.DataFrame, spec: TaskSpec) -> Task:
    """Check the user's choices against the table and build the :class:`Task`."""
    if df is None or len(df) == 0:
        raise FairDashError("The table has no rows.")
    _check_column(df, spec.s_column, "sensitive attribute")
    _check_column(df, spec.y_column, "label")
    if spec.s_column == spec.y_column:
        raise FairDashError("The sensitive attribute and the label must be different columns.")
    if spec.s_with is not None:
        _check_column(df, spec.s_with, "second sensitive attribute")
        if spec.s_with in (spec.s_column, spec.y_column):
            raise FairDashError("The column crossed with the sensitive attribute must be another column than s and y.")
    if spec.missing not in ("drop", "impute"):
        raise FairDashError("Missing-value handling must be 'drop' or 'impute'.")
    df, warnings = clean_table(df)
    n_read = len(df)
    for role, c in (("sensitive attribute", spec.s_column), ("label", spec.y_column)):
        if df[c].isna().all():
            raise FairDashError(f"The {role} column {c!r} is empty (every value is missing).")
    keep = df[spec.s_column].notna() & df[spec.y_column].notna()
    if spec.s_with is not None:
        keep &= df[spec.s_with].notna()
    n_drop_sy = int((~keep).sum())
    if n_drop_sy:
        warnings.append(f"{n_drop_sy} row(s) with a missing sensitive attribute or label were dropped.")
    df = df.loc[keep]

    # features
    if spec.features is not None:
        for c in spec.features:
            _check_column(df, c, "feature")
        feats = [c for c in dict.fromkeys(spec.features) if c not in (spec.s_column, spec.y_column, spec.s_with)]
    else:
        skip = left_out_by_default(profile_columns(df), exclude=(spec.s_column, spec.y_column))
        warnings.extend(left_out_note(c, why) for c, why in sorted(skip.items()))
        # the legitimate factor stays a feature (conditioning on it is the point) unless the user drops it
        feats = [c for c in df.columns if c not in (spec.s_column, spec.y_column, spec.s_with) and c not in skip]
    feats = [c for c in feats if c not in spec.drop]
    if not feats:
        raise FairDashError("No feature columns are left to learn from.")
    X = df[feats]
    empty = [c for c in feats if X[c].isna().all()]
    if empty:
        raise FairDashError(f"Feature column {empty[0]!r} is empty (every value is missing); leave it out.")
    n_drop_x = 0
    if spec.missing == "drop":
        ok = X.notna().all(axis=1)
        n_drop_x = int((~ok).sum())
        if n_drop_x:
            warnings.append(f"{n_drop_x} row(s) with a missing feature value were dropped.")
        df, X = df.loc[ok], X.loc[ok]
    if len(df) == 0:
        raise FairDashError("No rows are left after dropping rows with missing values; try imputing instead.")

    # y
    n_dropped = n_drop_sy + n_drop_x
    hint = (f" ({n_dropped} row(s) with missing values were dropped first; imputing them may keep more rows.)"
            if n_dropped else "")
    y = _binarise(df[spec.y_column], spec.y1_values, spec.y_threshold, "label", spec.y_column, n_drop_x)
    y_chosen = ()
    if spec.y1_values:
        y_values = set(_as_text(df[spec.y_column]).unique())
        y_chosen = tuple(_match_values(spec.y1_values, y_values, df[spec.y_column])[0])
        if len(y_values) > 2:
            others = y_values - set(y_chosen)
            hint += (f" Column {spec.y_column!r} holds {len(y_values)} different values ({_short(y_values, 6)}); "
                     "check which of them mean positive.")
            warnings.append(f"The label {spec.y_column!r} has {len(y_values)} different values: "
                            f"{_short(spec.y1_values, 6)} count as positive, {_short(others, 6)} as negative.")
    if y.min() == y.max():
        raise FairDashError(
            f"After binarising, the label {spec.y_column!r} has only one value ({'positive' if y[0] else 'negative'} "
            "for every row); there is nothing to learn. Choose other positive values." + hint
        )
    # s
    s_text = _as_text(df[spec.s_column])
    if spec.s_with is not None:
        s_text = s_text + " × " + _as_text(df[spec.s_with])
    if spec.s_multi or spec.s_with is not None:
        names = tuple(sorted(s_text.unique(), key=str))
        s = pd.Categorical(s_text, categories=names).codes.astype(int)
    else:
        s = _binarise(df[spec.s_column], spec.s1_values, spec.s_threshold, "sensitive", spec.s_column, n_drop_x)
        if spec.s_threshold is not None:
            names = (f"{spec.s_column} <= {spec.s_threshold:g}", f"{spec.s_column} > {spec.s_threshold:g}")
        else:
            # each group named by exactly the values it holds, in the column's own text (a value typed
            # with a space after it, or TRUE for True, names the value it matched)
            present = set(s_text.unique())
            chosen = _match_values(spec.s1_values, present, df[spec.s_column])[0]
            g1 = ", ".join(chosen)
            rest = sorted(present - set(chosen), key=str)
            g0 = ", ".join(rest[:3]) + (" ..." if len(rest) > 3 else "") if rest else "(none)"
            names = (g0, g1)
    if len(names) < 2 or np.bincount(s, minlength=len(names)).min() == 0:
        if spec.s_multi or spec.s_with is not None:
            what = "two groups are needed to compare"
        else:
            empty = "group 1 (the values chosen as group 1)" if s.max() == 0 else "group 0 (every other value)"
            what = f"{empty} has no rows. Choose group-1 values so that both groups have rows"
        raise FairDashError(
            f"The sensitive attribute {spec.s_column!r} has only one group after binarising: every row has "
            f"{spec.s_column} = {_short(s_text.unique())}, and {what}." + hint
        )
    for j, g in enumerate(names):
        yj = y[s == j]
        if yj.min() == yj.max():
            what = "no positive" if yj.max() == 0 else "only positive"
            raise FairDashError(f"Group {g!r} of column {spec.s_column!r} has {what} labels ({yj.size} row(s), "
                                f"{'none' if yj.max() == 0 else 'all'} with {' or '.join(_label_words(spec))}), so its base rate is "
                                f"{int(yj.max())} and no target rate can be reached from it. Choose other positive "
                                "values or other groups." + hint)
    if spec.group_labels:
        if len(spec.group_labels) != len(names):
            raise FairDashError(f"{len(spec.group_labels)} group name(s) were given for {len(names)} groups "
                                f"({_short(names, 6)}); give one name per group, in group order.")
        if len(set(map(str, spec.group_labels))) != len(spec.group_labels) or not all(str(g).strip()
                                                                                    for g in spec.group_labels):
            raise FairDashError("Group names must be different from each other and not empty.")
        names = tuple(str(g).strip() for g in spec.group_labels)
    strata, strata_names = None, ()
    if spec.strata_column:
        _check_column(df, spec.strata_column, "legitimate-factor column")
        st = _as_text(df[spec.strata_column].fillna("(missing)"))
        strata_names = tuple(sorted(st.unique(), key=str))
        strata = pd.Categorical(st, categories=strata_names).codes.astype(int)

    num = tuple(c for c in feats if pd.api.types.is_numeric_dtype(X[c]) and not pd.api.types.is_bool_dtype(X[c]))
    cat = tuple(c for c in feats if c not in num)
    for c in cat:
        k = X[c].nunique()
        if k > HIGH_CARDINALITY:
            warnings.append(f"Column {c!r} has {k} distinct values; only its {MAX_CATEGORIES} most frequent are encoded.")
    warnings[:0] = list(df.attrs.get("read_notes", ()))
    if "other_sheets" in df.attrs and df.attrs.get("other_sheets"):
        warnings.append(f"Only the sheet {df.attrs['sheet']!r} was read (the first that holds a table); other sheets: "
                        + ", ".join(map(repr, df.attrs["other_sheets"])))
    if spec.y1_values:
        label_names = ("not " + "/".join(y_chosen), "/".join(y_chosen))
    else:
        label_names = (f"{spec.y_column} <= {spec.y_threshold:g}", f"{spec.y_column} > {spec.y_threshold:g}")
    return Task(
        spec=spec, X=X.reset_index(drop=True), y=y, s=s, group_names=tuple(map(str, names)),
        label_names=label_names, numeric_features=num, categorical_features=cat, strata=strata,
        strata_names=strata_names, n_rows_read=n_read, n_dropped_missing_sy=n_drop_sy,
        n_dropped_missing_features=n_drop_x, warnings=warnings,
    )


# --------------------------------------------------------------------------------------------------
# Splits
# --------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Split:
    """Row indices into the task: training, test and the balanced test subset (indices into the task too)."""

    seed: int
    train: np.ndarray
    test: np.ndarray
    balanced_test: np.ndarray

    @property
    def n_balanced_dropped(self) -> int:
        return int(len(self.test) - len(self.balanced_test))


def balanced_subset(y, s, idx, seed: int = 0) -> np.ndarray:
    """METHOD.md's balanced test set: for each ``y``, cut every ``(s, y)`` cell of ``idx`` down to the
    size of the smallest cell with that ``y``, so that ``P(s=j | y=i)`` is equal across groups."""
    rng = np.random.default_rng(seed + 7919)
    y = np.asarray(y)[idx]
    s = np.asarray(s)[idx]
    groups = np.unique(s)
    keep = []
    for yv in (0, 1):
        cells = [np.flatnonzero((y == yv) & (s == g)) for g in groups]
        m = min(len(c) for c in cells)
        for c in cells:
            keep.append(rng.choice(c, size=m, replace=False) if len(c) > m else c)
    return np.sort(np.asarray(idx)[np.concatenate(keep)]) if keep else np.asarray(idx)[:0]


def split_task(task_or_y, s=None, seed: int = 0, test_size: float = 0.2) -> Split:
    """80/20 split stratified by the ``(s, y)`` cell, with the balanced test subset.

    Each cell's rows are shuffled with the seed and ``round(test_size * n_cell)`` of them (at least one)
    go to the test set, so every cell keeps its share in both parts."""
    if isinstance(task_or_y, Task):
        y, s = task_or_y.y, task_or_y.s
    else:
        y = np.asarray(task_or_y)
    y, s = np.asarray(y), np.asarray(s)
    cell = s * 2 + y
    counts = np.bincount(cell)
    if counts[counts > 0].min() < 2:
        raise FairDashError("Some (group, label) combination has fewer than 2 rows, so the data cannot be split "
                            "into training and test sets. More rows are needed.")
    rng = np.random.default_rng(seed)
    test = []
    for c in np.flatnonzero(counts):
        rows = rng.permutation(np.flatnonzero(cell == c))
        k = min(max(1, int(round(test_size * len(rows)))), len(rows) - 1)
        test.append(rows[:k])
    test = np.sort(np.concatenate(test))
    train = np.setdiff1d(np.arange(len(y)), test, assume_unique=True)
    return Split(seed, train, test, balanced_subset(y, s, test, seed))


# --------------------------------------------------------------------------------------------------
# Preprocessing
# --------------------------------------------------------------------------------------------------
def make_preprocessor(task: Task):
    """A scikit-learn ``ColumnTransformer``: numeric columns scaled (and median-imputed), categorical
    columns one-hot encoded with unknown categories ignored and rare levels capped. Fit it on the
    training split only."""
    from sklearn.compose import ColumnTransformer
    from sklearn.impute import SimpleImputer
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    num = Pipeline([("impute", SimpleImputer(strategy="median")), ("scale", StandardScaler())])
    cat = Pipeline([
        ("impute", SimpleImputer(strategy="constant", fill_value="(missing)")),
        ("onehot", OneHotEncoder(handle_unknown="infrequent_if_exist", max_categories=MAX_CATEGORIES,
                                 sparse_output=False, dtype=np.float64)),
    ])
    return ColumnTransformer(
        [("num", num, list(task.numeric_features)), ("cat", cat, list(task.categorical_features))],
        remainder="drop", sparse_threshold=0.0, verbose_feature_names_out=True,
    )


def categorical_as_text(X: pd.DataFrame, categorical) -> pd.DataFrame:
    """Categorical feature columns as text, so that integer-coded categories one-hot encode cleanly."""
    X = X.copy()
    for c in categorical:
        X[c] = X[c].where(X[c].isna(), X[c].astype(str))
    return X


@dataclass
class Arrays:
    """A task on one split, preprocessed: what the models train and are scored on."""

    X_train: np.ndarray
    y_train: np.ndarray
    s_train: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray
    s_test: np.ndarray
    balanced_test: np.ndarray  # indices into the test arrays
    feature_names: list
    preprocessor: object
    split: Split
    strata_train: np.ndarray | None = None
    strata_test: np.ndarray | None = None


def prepare_arrays(task: Task, split: Split) -> Arrays:
    """Fit the preprocessor on the training rows and transform both splits."""
    pre = make_preprocessor(task)
    X = categorical_as_text(task.X, task.categorical_features)
    import warnings as _w

    with _w.catch_warnings():
        _w.simplefilter("ignore", UserWarning)
        Xtr = pre.fit_transform(X.iloc[split.train])
        Xte = pre.transform(X.iloc[split.test])
    pos = {r: i for i, r in enumerate(split.test)}
    bal = np.array([pos[r] for r in split.balanced_test], dtype=int)
    st = task.strata
    arrays = Arrays(
        np.asarray(Xtr, dtype=np.float64), task.y[split.train], task.s[split.train],
        np.asarray(Xte, dtype=np.float64), task.y[split.test], task.s[split.test], bal,
        list(pre.get_feature_names_out()), pre, split,
        None if st is None else st[split.train], None if st is None else st[split.test],
    )
    # read-only: nothing downstream may change them, and the fit cache remembers their digests, so a
    # repeated request on the same arrays is answered without hashing the matrix again
    for name in ("X_train", "y_train", "s_train", "X_test", "y_test", "s_test", "balanced_test",
                 "strata_train", "strata_test"):
        a = getattr(arrays, name)
        if isinstance(a, np.ndarray):
            a.setflags(write=False)
    return arrays


# A few recently prepared splits, per live task object: asking again for the same task and seed (the
# dashboard's second Train press, a cached request) reuses them instead of refitting the preprocessing,
# which is most of such a request's time (about 0.5 s on Adult). Entries go with their task; at most
# SPLIT_MEMO_SIZE are kept in all (each Adult split is about 36 MB), least recently used first out.
SPLIT_MEMO_SIZE = 4
_SPLIT_MEMO: dict = {}  # (id(task), seed) -> (weakref to task, Arrays), in use order
_SPLIT_MEMO_LOCK = threading.RLock()


def split_arrays(task: Task, seed: int = 0) -> Arrays:
    """``prepare_arrays(task, split_task(task, seed))``, remembered for the live task object.

    The arrays are read-only, so sharing them is safe; a task is never changed after ``build_task``.
    Safe from several threads (the dashboard's sessions): at worst two threads prepare the same split."""
    import weakref

    key = (id(task), int(seed))
    with _SPLIT_MEMO_LOCK:
        hit = _SPLIT_MEMO.pop(key, None)
        if hit is not None and hit[0]() is task:
            _SPLIT_MEMO[key] = hit  # most recently used last
            return hit[1]
    arrays = prepare_arrays(task, split_task(task, seed=seed))

    def forget(_ref, k=key):
        with _SPLIT_MEMO_LOCK:
            _SPLIT_MEMO.pop(k, None)

    with _SPLIT_MEMO_LOCK:
        _SPLIT_MEMO[key] = (weakref.ref(task, forget), arrays)
        while len(_SPLIT_MEMO) > SPLIT_MEMO_SIZE:
            _SPLIT_MEMO.pop(next(iter(_SPLIT_MEMO)))
    return arrays


# --------------------------------------------------------------------------------------------------
# The paper's set-ups
# --------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class PaperSetup:
    name: str
    sample: str
    spec: TaskSpec
    criterion: str  # "dp": balanced test set; "eo": ordinary test set


PAPER_SETUPS: dict[str, PaperSetup] = {
    "adult-sex": PaperSetup("adult-sex", "adult", TaskSpec("sex", "salary", ("Male",), (">50K",), drop=("fnlwgt",)), "dp"),
    "adult-race": PaperSetup("adult-race", "adult", TaskSpec("race", "salary", ("White",), (">50K",), drop=("fnlwgt",)), "dp"),
    "compas-sex": PaperSetup("compas-sex", "compas", TaskSpec("sex", "two-year-recid", ("Male",), ("1",)), "eo"),
    "compas-race": PaperSetup("compas-race", "compas", TaskSpec("race", "two-year-recid", ("Caucasian",), ("1",)), "eo"),
}


def paper_setup(name: str) -> PaperSetup:
    if name not in PAPER_SETUPS:
        raise FairDashError(f"Unknown paper set-up {name!r}. Known: {', '.join(PAPER_SETUPS)}.")
    return PAPER_SETUPS[name]


_TASK_CACHE: dict = {}


def paper_task(name: str) -> Task:
    """The paper's task for a set-up name (cached per process)."""
    if name not in _TASK_CACHE:
        setup = paper_setup(name)
        _TASK_CACHE[name] = build_task(load_sample(setup.sample), setup.spec)
    return _TASK_CACHE[name]


def paper_arrays(setup: str, seed: int = 0) -> Arrays:
    """The paper's preprocessed train/test arrays for a set-up and seed."""
    return split_arrays(paper_task(setup), seed)
