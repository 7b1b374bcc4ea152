"""Hostile uploads against one live server (issue 25): small files that expand to huge tables, uploaded
through the browser on the Data page. Run by hand, not in CI:

    python -m benchmarks.bench_hostile_upload                       # both files, one fresh server each
    python -m benchmarks.bench_hostile_upload --cases gzip --out /tmp/hostile.json
    python -m benchmarks.bench_hostile_upload --env FAIRDASH_TABLE_MB=500 --repo /path/to/checkout

The files are generated in a temporary folder, streaming (never held whole in memory here):

- ``gzip``: a gzip CSV of highly repetitive rows (columns ``s`` with 2 values, ``y`` 0/1, two integers and
  a short text) that expands to ``--gzip-mib`` (780) MiB, about 1 MB compressed: under the reader's
  4 x 200 MB limit on decompressed size, so it is parsed.
- ``parquet``: a Parquet file of a few MB whose table is several GB: a column of long strings (a
  dictionary of 4 values of ``--string-bytes`` bytes) plus ``s``, ``y`` and an integer, written as
  ``--row-groups`` row groups of ``--rows-per-group`` rows with ``pyarrow.parquet.ParquetWriter``, without
  the Arrow schema (so a reader gets plain strings, not a dictionary).

For each, a fresh ``streamlit run app.py`` (as bench_team_load.py starts it), one browser session: Data
page -> "Upload a file" -> the file. Recorded: the first new message on the page (an alert's text, or
the "New table ..." note when the file was accepted), the time from handing the file to the page to that
message, the server's peak RSS (process tree, /proc, every ``--rss-interval`` s) and whether the server
still serves afterwards (a new session loads the Target page and reads the accuracy ceiling).

SAFETY: the sampler kills the server's process group as soon as its RSS exceeds ``--kill-gib`` (6) GiB
and the outcome is then "killed at > 6 GiB after X s". Every wait is bounded (``--timeout``).
"""
from __future__ import annotations

import argparse
import gzip
import shutil
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.bench_team_load import (
    GIB,
    METRIC,
    LiveServer,
    RssSampler,
    git_commit,
    goto,
    launch,
    new_session,
    parse_env,
    wait_idle,
)
from benchmarks.common import ROOT, Recording, load_average

MIB = 2 ** 20
BLOCK_LINES = 4  # the gzip CSV repeats a block this long (both values of s and of y): a short period compresses best
ALERTS = '[data-testid="stMain"] [data-testid="stAlert"], [data-testid="stMain"] [data-testid="stException"]'


# --------------------------------------------------------------------------------------------------
# The files
# --------------------------------------------------------------------------------------------------
def make_gzip(path: Path, target_mib: float) -> dict:
    """A gzip CSV expanding to ``target_mib`` MiB: a header, then one BLOCK_LINES-row block repeated."""
    import random

    rnd = random.Random(25)
    block = "".join(f"{'FM'[i % 2]},{(i // 2) % 2},{rnd.randint(17, 90)},{rnd.randint(1, 99)},"
                    f"{rnd.choice(['clerk', 'nurse', 'driver', 'cook'])}\n" for i in range(BLOCK_LINES)).encode()
    header = b"s,y,age,hours,job\n"
    target = int(target_mib * MIB)
    chunk = block * max(1, MIB // len(block))
    written, rows = len(header), 0
    with gzip.open(path, "wb", compresslevel=9) as f:
        f.write(header)
        while written + len(chunk) <= target:
            f.write(chunk)
            written += len(chunk)
            rows += chunk.count(b"\n")
        rest = target - written
        whole_lines = block[:rest].rsplit(b"\n", 1)[0] + b"\n" if rest > 0 else b""
        if whole_lines.strip():
            f.write(whole_lines)
            written += len(whole_lines)
            rows += whole_lines.count(b"\n")
    return {"file_bytes": path.stat().st_size, "expanded_bytes": written, "rows": rows}


def make_parquet(path: Path, row_groups: int, rows_per_group: int, string_bytes: int) -> dict:
    """A Parquet file whose table holds ``row_groups * rows_per_group`` rows of a ``string_bytes``-byte
    string column (4 distinct values, dictionary-encoded in the file) plus s, y and an integer."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(25)
    words = pa.array([(w * (string_bytes // len(w) + 1))[:string_bytes]
                      for w in ("alpha ", "bravo ", "charlie ", "delta ")])
    schema = pa.schema([("s", pa.dictionary(pa.int8(), pa.string())), ("y", pa.int8()), ("age", pa.int16()),
                        ("note", pa.dictionary(pa.int8(), pa.string()))])
    sexes = pa.array(["F", "M"])
    with pq.ParquetWriter(path, schema, compression="zstd", use_dictionary=True, store_schema=False) as w:
        for _ in range(row_groups):
            idx = rng.integers(0, 4, rows_per_group, dtype=np.int8)  # the long strings: 2 random bits a row
            i = np.arange(rows_per_group)
            s_idx = (i % 2).astype(np.int8)  # s, y and age: periodic, so they compress to almost nothing
            y = ((i // 2) % 2).astype(np.int8)
            age = (17 + i % 64).astype(np.int16)
            t = pa.table({"s": pa.DictionaryArray.from_arrays(pa.array(s_idx), sexes), "y": pa.array(y),
                          "age": pa.array(age), "note": pa.DictionaryArray.from_arrays(pa.array(idx), words)},
                         schema=schema)
            w.write_table(t, row_group_size=rows_per_group)
    rows = row_groups * rows_per_group
    return {"file_bytes": path.stat().st_size, "rows": rows, "row_groups": row_groups,
            "expanded_bytes": rows * (string_bytes + 1 + 1 + 2 + 8)}  # strings (+ their offsets) and the numbers


# --------------------------------------------------------------------------------------------------
# One upload
# --------------------------------------------------------------------------------------------------
def texts(page, selector: str = ALERTS) -> list:
    """The texts of what ``selector`` finds on the page (the main area's alerts), empty ones left out."""
    try:
        return [t.strip() for t in page.locator(selector).all_inner_texts() if t.strip()]
    except Exception:  # noqa: BLE001 - the page may be gone with its server, or being redrawn
        return []


def serves(browser, url: str, timeout: float) -> tuple[bool, str]:
    """Whether a new session can load the Target page and read its accuracy ceiling (and the text read)."""
    ctx = None
    try:
        ctx, page = new_session(browser, url, timeout)
        goto(page, "Target", timeout)
        page.locator(METRIC).first.wait_for(timeout=timeout * 1000)
        return True, page.locator(METRIC).first.inner_text().strip()
    except Exception as e:  # noqa: BLE001
        return False, f"{type(e).__name__}: {str(e).splitlines()[0][:200]}"
    finally:
        if ctx is not None:
            ctx.close()


def upload_case(browser, args, env: dict, work: Path, path: Path, mime: str) -> dict:
    out: dict = {"file": path.name, "load_before": load_average()}
    server = LiveServer(Path(args.repo), work, env)
    sampler = None
    try:
        out["server_start_s"] = server.wait()
        sampler = RssSampler(server, interval=args.rss_interval, kill_above=args.kill_gib * GIB,
                             max_s=args.timeout + 600)
        sampler.start()
        ctx, page = new_session(browser, server.url)
        try:
            page.locator(".st-key-data_source").get_by_text("Upload a file").click()
            wait_idle(page)
            page.locator('.st-key-upload_file input[type="file"]').wait_for(state="attached")
            before = set(texts(page))
            out["rss_before_upload"] = sampler.peak
            sampler.mark()
            t0 = time.monotonic()
            page.locator('.st-key-upload_file input[type="file"]').set_input_files(
                files=[{"name": path.name, "mimeType": mime, "buffer": path.read_bytes()}])
            message, end = None, t0 + args.timeout
            while time.monotonic() < end:
                if sampler.killed_at is not None or not server.alive():
                    break
                new = [t for t in texts(page) if t and t not in before]
                if new:
                    try:  # the message of a finished run (not a half-drawn one)
                        page.wait_for_selector('[data-testid="stApp"][data-test-script-state="notRunning"]',
                                               timeout=2000)
                    except Exception:  # noqa: BLE001
                        pass
                    new = [t for t in texts(page) if t and t not in before] or new
                    message = new[0]
                    break
                time.sleep(0.25)
            out["seconds_to_outcome"] = time.monotonic() - t0
            if sampler.killed_at is not None:
                t, rss = sampler.killed_at
                out["outcome"] = f"killed at > {args.kill_gib:g} GiB after {t:.1f} s"
                out["killed_after_s"], out["killed_rss_gib"] = t, rss / GIB
                out["seconds_to_outcome"] = t
            elif not server.alive():
                out["outcome"] = f"server exited by itself (code {server.proc.returncode})"
            elif message is None:
                out["outcome"] = f"no message within {args.timeout:g} s"
            else:
                out["outcome"] = "message"
            out["message"] = message
            out["messages_all"] = [t for t in texts(page) if t not in before][:5]
        finally:
            try:
                ctx.close()
            except Exception:  # noqa: BLE001
                pass
        time.sleep(1.0)
        if server.alive():
            out["serves_after"], out["serves_detail"] = serves(browser, server.url, args.serve_timeout)
        else:
            out["serves_after"], out["serves_detail"] = False, "the server process is gone"
    finally:
        try:
            if sampler is not None:
                sampler.stop()
                out["rss_peak_gib"] = sampler.peak / GIB
                out["rss_series"] = sampler.samples[::max(1, len(sampler.samples) // 200)]
            out["server_alive_at_end"] = server.alive()
            out["server_log_tail"] = server.log_tail(1500)
        finally:
            server.stop()  # whatever failed above, the server this case started goes
        out["load_after"] = load_average()
    return out


def _issue_35_files() -> dict:
    """Issue 35's small files that got past the estimates (tests/hostile_files.py builds them): case -> (make,
    file name, MIME type)."""
    from tests import hostile_files as h  # (the tests' own builders, one definition of each file; run from the root)

    return {"nostats": (h.parquet_without_statistics, "no-statistics.parquet", "application/octet-stream"),
            "dimension": (h.xlsx_with_a_lying_dimension, "lying-dimension.xlsx",
                          "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"),
            "tail": (h.gzip_long_text_then_empty_fields, "long-text-then-empty.csv.gz", "application/gzip"),
            "columns": (h.csv_of_many_columns, "100000-columns.csv", "text/csv")}


ISSUE_35 = _issue_35_files()


def _f(x, fmt="{:.1f}"):
    return "-" if x is None else fmt.format(x)


def markdown(res: dict, rec) -> str:
    env = " ".join(f"{k}={v}" for k, v in res["env"].items()) or "(none)"
    rows = [f"Hostile uploads (issue 25), `python -m benchmarks.bench_hostile_upload {' '.join(res['argv'])}`",
            f"code {res['repo_commit'][:10]} ({res['repo']}), env {env}; {rec.machine_line()}", "",
            "| file | size | expands to | outcome / message | time to it | server peak RSS | serves afterwards | load "
            "average |",
            "|---|---:|---:|---|---:|---:|---|---|"]
    for name, c in res["cases"].items():
        f = res["files"][name]
        msg = c.get("message") if c.get("outcome") == "message" else c.get("outcome")
        msg = (msg or "").replace("\n", " ").replace("|", "\\|")[:300]
        rows.append(f"| {name}: {c['file']} | {f['file_bytes'] / MIB:.2f} MiB | {f['expanded_bytes'] / MIB:,.0f} MiB "
                    f"({f['rows']:,} rows) | {msg} | {_f(c.get('seconds_to_outcome'))} s | "
                    f"{_f(c.get('rss_peak_gib'), '{:.2f}')} GiB | {'yes' if c.get('serves_after') else 'no'} "
                    f"({(c.get('serves_detail') or '')[:80]}) | {' / '.join(map(str, c['load_before']))} -> "
                    f"{' / '.join(map(str, c['load_after']))} |")
    return "\n".join(rows) + "\n"


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repo", default=str(ROOT), help="the checkout whose app.py is served (default: this one)")
    ap.add_argument("--env", action="append", default=[], metavar="KEY=VALUE",
                    help="extra server environment (repeatable)")
    ap.add_argument("--cases", default="gzip,parquet", help="which files: gzip, parquet, and issue 35's nostats "
                    "(Parquet without statistics), dimension (.xlsx whose dimension lies), tail (gzip CSV whose first "
                    "MB is unlike the rest), columns (100,000 columns) (comma-separated)")
    ap.add_argument("--gzip-mib", type=float, default=780.0, help="decompressed size of the gzip CSV")
    ap.add_argument("--row-groups", type=int, default=20)
    ap.add_argument("--rows-per-group", type=int, default=1_000_000)
    ap.add_argument("--string-bytes", type=int, default=400, help="length of the Parquet file's long strings")
    ap.add_argument("--kill-gib", type=float, default=6.0, help="kill the server's process group above this RSS")
    ap.add_argument("--rss-interval", type=float, default=0.25,
                    help="seconds between RSS samples (0.25: the kill switch must not overshoot by much)")
    ap.add_argument("--timeout", type=float, default=300.0, help="seconds to wait for a message after the upload")
    ap.add_argument("--serve-timeout", type=float, default=120.0, help="seconds for the afterwards check")
    ap.add_argument("--out", default=None, help="JSON result (default benchmarks/results/bench_hostile_upload.json)")
    args = ap.parse_args(argv)
    cases = [c.strip() for c in args.cases.split(",") if c.strip()]
    bad = set(cases) - {"gzip", "parquet"} - set(ISSUE_35)
    if bad:
        ap.error(f"unknown case(s) {bad}")
    env = parse_env(args.env)
    res = {"repo": str(Path(args.repo).resolve()), "repo_commit": git_commit(Path(args.repo)), "env": env,
           "argv": list(sys.argv[1:] if argv is None else argv), "files": {}, "cases": {}}
    rec = Recording("bench_hostile_upload", vars(args), browser=True,
                    extra_software=("streamlit", "pyarrow", "playwright"))
    if args.out:
        rec.path = Path(args.out)
    work = Path(tempfile.mkdtemp(prefix="fairdash-hostile-"))
    with rec:
        rec.results = res
        try:
            from playwright.sync_api import sync_playwright

            with sync_playwright() as p:
                browser = launch(p)
                try:
                    for case in cases:
                        if case in ISSUE_35:
                            make, file_name, mime = ISSUE_35[case]
                            path = work / file_name
                            t = time.monotonic()
                            make(path)
                            res["files"][case] = {"file_bytes": path.stat().st_size, "expanded_bytes": 0, "rows": 0}
                        elif case == "gzip":
                            path, mime = work / "expands-780mib.csv.gz", "application/gzip"
                            t = time.monotonic()
                            res["files"][case] = make_gzip(path, args.gzip_mib)
                        else:
                            path, mime = work / "expands-several-gb.parquet", "application/octet-stream"
                            t = time.monotonic()
                            res["files"][case] = make_parquet(path, args.row_groups, args.rows_per_group,
                                                              args.string_bytes)
                        res["files"][case]["made_in_s"] = time.monotonic() - t
                        print(f"{case}: {path.name}, {res['files'][case]}", flush=True)
                        c = res["cases"][case] = upload_case(browser, args, env, work, path, mime)
                        print(f"{case}: {c.get('outcome')}: {c.get('message')!r} after {c.get('seconds_to_outcome')} "
                              f"s; peak {c.get('rss_peak_gib')} GiB; serves afterwards {c.get('serves_after')}",
                              flush=True)
                        path.unlink(missing_ok=True)
                finally:
                    browser.close()
        finally:
            rec.markdown = markdown(res, rec)
            print(rec.markdown, flush=True)
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
