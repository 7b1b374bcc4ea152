"""Zip archives as tables: an Excel workbook read sheet by sheet, the table found under a title or notes on the
sheet that holds the largest one (``read_zip``); any other zip (a Word document, an OpenDocument file, an archive of
files) refused in one line that says what it is.
"""
from __future__ import annotations

import io
import zipfile

import numpy as np
import pandas as pd

from ...errors import FairDashError, shorten
from . import budget


def read_zip(raw: bytes, name: str, notes: list, allowed: int, limit: int) -> pd.DataFrame:
    """An Excel workbook (refused where it would expand past ``limit`` bytes or not fit ``allowed``), or else a zip
    archive, which is said as such, naming what it holds."""
    try:
        book = zipfile.ZipFile(io.BytesIO(raw))
        members = book.infolist()
    except zipfile.BadZipFile:
        raise FairDashError(f"{name} looks like a zip/Excel file but is damaged.") from None
    names = [m.filename for m in members]
    if "xl/workbook.xml" in names:
        if sum(m.file_size for m in members) > limit:
            size = budget.size_text(limit)
            raise FairDashError(f"{name} is too large once decompressed: it expands to more than {size}, "
                                f"and the largest table FairDash accepts is {size} decompressed. Use a sample "
                                "of its rows.")
        budget.check_workbook(book, name, allowed)
        return _read_excel(raw, name, notes)
    kinds = {"word/document.xml": "a Word document", "ppt/presentation.xml": "a PowerPoint presentation"}
    for member, kind in kinds.items():
        if member in names:
            raise FairDashError(f"{name} is {kind}, not a table. Save the table as CSV, Excel (.xlsx) or Parquet.")
    if "content.xml" in names:
        raise FairDashError(f"{name} is an OpenDocument file (.ods/.odt), not a table FairDash reads. Save it as "
                            "Excel (.xlsx) or CSV.")
    files = [n for n in names if not n.endswith("/")]
    shown = ", ".join(repr(shorten(n, 40)) for n in files[:3]) + (f" and {len(files) - 3} more"
                                                                   if len(files) > 3 else "")
    raise FairDashError(f"{name} is a zip archive ({len(files)} file(s): {shown or 'none'}), not a table. Unzip it "
                        "and give FairDash the table inside (CSV, Excel or Parquet; a .csv.gz file is read as it is).")


def _read_excel(raw: bytes, name: str, notes: list) -> pd.DataFrame:
    try:
        zipfile.ZipFile(io.BytesIO(raw)).testzip()
    except zipfile.BadZipFile:
        raise FairDashError(f"{name} looks like a zip/Excel file but is damaged.") from None
    sheets = pd.read_excel(io.BytesIO(raw), sheet_name=None, header=None)
    nonempty, tables, dupes = [], {}, {}
    for sheet, grid in sheets.items():
        grid = grid.dropna(how="all").dropna(axis=1, how="all")
        if grid.empty:
            continue
        nonempty.append(sheet)
        found = _sheet_table(grid)
        if isinstance(found, list):  # a table whose header names a column twice
            dupes[sheet] = found
        elif found is not None:
            tables[sheet] = found
    if not nonempty:
        raise FairDashError(f"{name} has no sheet with data.")
    if dupes and (not tables or max(len(t[0]) for t in tables.values()) < 5):
        sheet, names = next(iter(dupes.items()))
        raise FairDashError(f"{name}, sheet {shorten(sheet, 40)!r}, has duplicate column names: "
                            f"{', '.join(repr(shorten(n, 40)) for n in names)}. Rename them.")
    if not tables:
        raise FairDashError(f"{name} has no sheet holding a table (a header row naming at least two columns, with "
                            "rows of values under it); sheets with data: "
                            f"{', '.join(repr(shorten(s, 40)) for s in nonempty)}.")
    # the sheet holding the largest table (a cover sheet of prose, a title or a few lines of "key | value" is passed
    # over; on a tie, the first); the others are named in a warning by build_task
    first = max(tables, key=lambda k: tables[k][0].size)
    df, header_row, skipped = tables[first]
    if skipped:
        notes.append(f"Sheet {shorten(first, 40)!r}: the table's header is row {header_row}; the {skipped} row(s) "
                     "above it (a title, notes or merged group headings) were left out.")
    df.attrs["sheet"] = first
    df.attrs["other_sheets"] = [k for k in nonempty if k != first]
    return df


def _sheet_table(grid: pd.DataFrame):
    """The table a sheet holds, read without a header (``grid``: blank rows and columns dropped, the
    sheet's own row numbers as index), as ``(table, header row number, rows above it left out)``, the names its
    header gives twice (a list), or ``None`` for a sheet that holds no table (prose, a title, notes: no row names
    two or more columns).

    The header is the first row that fills as many columns as the body's usual row (a title row, notes
    or merged group headings above it fill fewer), or the row just above it when that one is a row of
    values and the row above names all but one column.
    Rows of a single value after the table's last full row (notes under it) are left out."""
    filled = grid.notna().sum(axis=1)
    wide = filled[filled >= 2]
    if wide.empty:
        return None
    width = int(wide.mode().max())
    full = [i for i in grid.index if filled[i] >= max(2, width)]
    header = full[0]
    if not _names(grid.loc[header]):  # a row of values: the header may be the row above, naming one less
        above = grid.index[grid.index < header]
        if len(above) and filled[above[-1]] >= max(2, width - 1) and _names(grid.loc[above[-1]]):
            header = above[-1]
    body = grid.loc[grid.index > header]
    full = body.index[body.notna().sum(axis=1) >= 2]
    if len(full) == 0:
        return None
    body = body.loc[body.index <= full[-1]]
    names = grid.loc[header]
    keep = [c for c in grid.columns if pd.notna(names[c]) or body[c].notna().any()]
    labels = [str(names[c]).strip() if pd.notna(names[c]) else f"Unnamed: {k}" for k, c in enumerate(keep)]
    if len(set(labels)) < len(labels):  # a header naming a column twice: said by name (_read_excel)
        return sorted({v for v in labels if labels.count(v) > 1})
    # a column of numbers read cell by cell may stay 'object': read_table makes it numeric
    table = body[keep].set_axis(labels, axis=1).reset_index(drop=True).infer_objects()
    above = int((grid.index < header).sum())
    return table, int(header) + 1, above


def _names(row: pd.Series) -> bool:
    """Does a sheet row look like a header: every filled cell text, none blank? (A name given twice is still a header:
    the table is then refused by that name.)"""
    values = [v for v in row.tolist() if not (v is None or (isinstance(v, float) and np.isnan(v)))]
    return all(isinstance(v, str) and v.strip() for v in values)
