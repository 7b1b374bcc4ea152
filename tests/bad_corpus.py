"""The bad-input corpus (``tests/fixtures/bad/``) and what each file must give, shared by the command line's and the
Data page's tests."""
from pathlib import Path

BAD = Path(__file__).resolve().parent / "fixtures" / "bad"

# file -> (group-1 value of 'sex', expected exit status, what the message must say).
# Exit 0 rows: the pattern is a warning the repair must give (None: usable as it is, no warning needed).
CASES = {
    "empty.csv": ("M", 2, r"empty\.csv is empty"),
    "percent_numbers.csv": ("M", 0, r"Column 'share' held percentages \('45%'\); read as numbers \(45% as 0\.45\)"),
    "trailing_empty_columns.csv": ("M", 0, r"2 empty column\(s\) with no name at the end of each line"),
    "cover_page_of_key_value_lines.xlsx": ("M", 0, r"Only the sheet 'Data' was read \(the one holding the largest "
                                                   r"table\); other sheets: 'Cover'"),
    "group_too_small_to_split.csv": ("M", 2, r"group 'M' of 'sex' has 1 row with label 'yes' \(of 3 rows in the "
                                             r"group\)"),
    "duplicate_column_in_a_sheet.xlsx": ("M", 2, r"sheet 'Data', has duplicate column names: 'age'\. Rename them"),
    "whitespace_only.csv": ("M", 2, r"is empty"),
    "header_only.csv": ("M", 2, r"has a header but no rows"),
    "binary_junk.bin": ("M", 2, r"not a table: it holds binary data"),
    "wrong_delimiter.csv": ("M", 2, r"no column separator .* \('age:hours:sex:label'\)"),
    "single_column.csv": ("M", 2, r"no column separator"),
    "semicolon_separated.csv": ("M", 0, None),
    "mixed_encoding.csv": ("Mé", 0, r"mixes text encodings: 8 line\(s\) \(line 6, 11"),
    "latin1_encoded.csv": ("Mé", 0, None),
    "utf16_with_bom.csv": ("M", 0, None),
    "duplicate_columns.csv": ("M", 2, r"duplicate column names: 'age'\. Rename them"),
    "unnamed_column.csv": ("M", 2, r"a column with no name in its header line"),
    "one_valued_label.csv": ("M", 2, r"label 'label' has only one value \(positive for every row\)"),
    "one_valued_s.csv": ("F", 2, r"'sex' has only one group .* every row has sex = 'F'"),
    "group_without_positives.csv": ("M", 2, r"Group 'F' of column 'sex' has no positive labels "
                                            r".*none with label = yes"),
    "all_missing_column.csv": ("M", 0, r"Column 'notes' was left out of the features \(empty\)"),
    "all_missing_label.csv": ("M", 2, r"label column 'label' is empty \(every value is missing\)"),
    "missing_values_drop_a_whole_group.csv": ("M", 2, r"Value 'M' of column 'sex' occurs only in the 20 row\(s\) "
                                                      r"dropped"),
    "thousands_separators.csv": ("M", 0, r"Column 'income' held numbers written as text with thousands separators"),
    "inf_and_nan.csv": ("M", 0, r"Column 'age' had 4 infinite value\(s\); treated as missing"),
    "label_with_text_and_numbers.csv": ("M", 2, r"no positive labels .*'label' holds 4 different values "
                                                r"\('0', '1', 'no', 'yes'\)"),
    "ragged_rows.csv": ("M", 2, r"line 7 has 6 values but the header has 4 columns"),
    "unbalanced_quote.csv": ("M", 2, r"quotation mark opened near line 9 is never closed"),
    "html_page.csv": ("M", 2, r"web page or XML document, not a table"),
    "prose_with_commas.txt": ("M", 2, r"does not look like a table: its lines hold different numbers of values "
                                      r"separated by commas"),
    "json_instead_of_table.csv": ("M", 2, r"holds JSON, not a table"),
    "truncated.csv.gz": ("M", 2, r"gzip-compressed but is damaged"),
    "old_excel_97.xls": ("M", 2, r"old-style \.xls workbook; save it as \.xlsx or CSV"),
    "several_sheets.xlsx": ("M", 0, r"Only the sheet 'People' was read \(the one holding the largest table\); "
                                    r"other sheets: 'Notes'"),
    "excel_cover_sheet_and_table_not_at_a1.xlsx": ("M", 0, r"Only the sheet 'People' was read .*other sheets: 'Cover'"),
    "damaged.xlsx": ("M", 2, r"zip/Excel file but is damaged"),
    "parquet_no_rows.parquet": ("M", 2, r"has a header but no rows"),
    "damaged.parquet": ("M", 2, r"starts like a Parquet file but could not be read"),
    # issue 19, item 17: tables read as something they are not
    "excel_title_row_and_merged_headings.xlsx": ("M", 0, r"Sheet 'Data': the table's header is row 4; the 2 row\(s\) "
                                                         r"above it .* were left out"),
    "excel_prose_cover_sheet.xlsx": ("M", 0, r"Only the sheet 'People' was read .*other sheets: 'About'"),
    "parquet_decimal_column.parquet": ("M", 0, None),
    "numbers_with_placeholders.csv": ("M", 0, r"Column 'hours' holds numbers with placeholder values for missing ones "
                                              r"\('-' \(3 row\(s\)\), 'missing' \(1 row\(s\)\)\)"),
    "names_differ_only_by_case.csv": ("M", 2, r"two columns whose names differ only by case or surrounding spaces: "
                                              r"'age' and 'Age'"),
    "zip_archive_named.csv": ("M", 2, r"is a zip archive \(1 file\(s\): 'people\.csv'\), not a table"),
    "very_long_column_name.csv": ("M", 2, r"very_long_column_name\.csv has duplicate column names: "
                                          r"'x{60}… \(10,000 characters\)'\. Rename them\."),
}
