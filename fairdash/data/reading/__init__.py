"""Reading a table from outside: the reader (``read``: CSV/TSV in any common encoding and separator, gzip,
Parquet; Excel and other zips in ``workbook``; the light repairs, each said as a note, in ``repairs``), the memory it
may take, refused before reading where the estimates see it (``budget``), and every read from outside in a process
of its own under a hard memory limit (``isolated``).
"""
