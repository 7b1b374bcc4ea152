"""Crafted files through the page (Chromium) and the command line, with another session served meanwhile (issue 46,
"what it must show"). Run by hand, not in CI:

    python -m benchmarks.bench_crafted_browser                        # every case, FAIRDASH_TABLE_MB=256
    python -m benchmarks.bench_crafted_browser --cases gzip-members --no-cli

The files are bench_crafted_files.py's (made by tests/hostile_files.py's generators). A crafted model file is given
to the page inside the honest session file, as its run's model member (the page meets model files only there).

One ``streamlit run app.py`` (bench_team_load.py's, ``FAIRDASH_TABLE_MB`` given) serves two sessions in Chromium:

- an *observer* on the Target page moves the PR_t slider (one 0.001 step at a time, ArrowRight/ArrowLeft) for as
  long as a case lasts, each move timed inside the page from keydown to the changed readout (bench_slider_latency);
- for each case a fresh *sender* session opens the Data page and gives the file to the uploader a user would use
  ("Open a session file", or "Upload a file"); the answer is the first new message on its page (or the table's
  "Use ... with these choices" button for a table read), timed from handing the file to the page.

Meanwhile a thread samples the server's process tree's proportional memory (Pss, /proc/<pid>/smaps_rollup of the
server and every descendant) every 50 ms: the peak above the level just before the file, and what the tree holds
2 s after the sender's session is closed. The command line reads the same file (``report``, ``predict --model``,
``rates --data``) in a process of its own with the same limit: exit code, its error's lines, seconds and its tree's
peak Pss.
"""
from __future__ import annotations

import argparse
import os
import select
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path
from typing import NamedTuple

from benchmarks.bench_crafted_files import _hostile, cases, descendants, tree_pss
from benchmarks.bench_hostile_upload import ALERTS, texts
from benchmarks.bench_team_load import LiveServer, launch, new_session, open_slider, slider_move, wait_idle
from benchmarks.common import ROOT, Recording

MIB = 2**20
ANSWERS = ALERTS + ", .st-key-confirm_task button"  # a message, or the table's Use button when it was read
MODEL_MEMBER = "run-1-model-0.fairdash"  # the honest session's model, where a crafted model file goes


class PssPeak(threading.Thread):
    """The peak of :func:`tree_pss` of ``pid`` since the last :meth:`reset`, sampled every 50 ms."""

    def __init__(self, pid: int):
        super().__init__(daemon=True, name="pss-peak")
        self.pid, self.peak, self._halt = pid, 0, threading.Event()

    def reset(self) -> int:
        self.peak = tree_pss(self.pid)
        return self.peak

    def run(self) -> None:
        while not self._halt.wait(0.05):
            self.peak = max(self.peak, tree_pss(self.pid))

    def stop(self) -> None:
        self._halt.set()
        self.join(timeout=5)


class Case(NamedTuple):
    uploader: str  # the Data page's uploader a user would use: "session" or "table"
    page_bytes: bytes
    page_name: str
    cli: tuple  # the command line's arguments ({file}, {table}, {out})
    cli_bytes: bytes
    cli_name: str


def browser_cases(hf) -> dict:
    """name -> :class:`Case`, from bench_crafted_files.py's files."""
    raw, _model = hf.saved_session_and_model(400)
    out = {}
    for name, (reader, data, file_name) in cases(hf).items():
        kind = reader.__name__
        if kind == "load_model":  # to the page inside the honest session, as its run's model; to the CLI alone
            out[name] = Case("session", hf.resealed(raw, **{MODEL_MEMBER.replace(".", "__"): data}),
                             f"{name}.fairdash-session",
                             ("predict", "--model", "{file}", "--data", "{table}", "--out", "{out}.csv"), data,
                             file_name)
        elif kind == "load_session":
            out[name] = Case("session", data, file_name, ("report", "{file}", "--out", "{out}.html"), data, file_name)
        else:
            out[name] = Case("table", data, file_name,
                             ("rates", "--data", "{file}", "--s", "s", "--s-multi", "--y", "y", "--y1", "1"), data,
                             file_name)
    return out


# in the sender's page: the time (Date.now()) the first answer not on the page before appeared, polled every 25 ms
WATCH_JS = """([sel, before]) => { window.__fdAnswer = null; window.__fdGiven = Date.now();
  const seen = new Set(before); const timer = setInterval(() => {
    for (const e of document.querySelectorAll(sel)) { const t = e.innerText.trim();
      if (t && !seen.has(t)) { window.__fdAnswer = Date.now(); clearInterval(timer); return; } } }, 25); }"""


def _plain(text: str) -> str:
    """An answer's words on one line, without the icon's name Streamlit writes before an alert's text."""
    words = text.split()
    return " ".join(words[1:] if words and "_" in words[0] or words[:1] in (["warning"], ["error"], ["info"])
                    else words)


def _give(page, kind: str, data: bytes, file_name: str) -> None:
    if kind == "session":
        page.get_by_text("Open a session file").first.click()
        field = page.locator('.st-key-open_session_file input[type="file"]')
    else:
        page.locator(".st-key-data_source").get_by_text("Upload a file", exact=True).click()
        wait_idle(page)
        field = page.locator('.st-key-upload_file input[type="file"]')
    field.wait_for(state="attached")
    field.set_input_files(files=[{"name": file_name, "mimeType": "application/octet-stream", "buffer": data}])


def through_page(browser, url: str, observer, sampler: PssPeak, case: Case, timeout: float) -> dict:
    """One case through the Data page of a fresh session, the observer's slider moving meanwhile."""
    ctx, page = new_session(browser, url)
    before = texts(page, ANSWERS)
    base = sampler.reset()
    page.evaluate(WATCH_JS, [ANSWERS, before])
    t0, moves, answer, key = time.monotonic(), [], None, "ArrowRight"
    _give(page, case.uploader, case.page_bytes, case.page_name)
    while answer is None and time.monotonic() - t0 < timeout:
        moves.append(slider_move(observer, key, timeout=60))
        key = "ArrowLeft" if key == "ArrowRight" else "ArrowRight"
        new = [t for t in texts(page, ANSWERS) if t not in before]
        if new:
            wait_idle(page, timeout=60)
            answer = ([t for t in texts(page, ANSWERS) if t not in before] or new)[0]
    marks = page.evaluate("() => [window.__fdGiven, window.__fdAnswer]")
    seconds = (marks[1] - marks[0]) / 1000 if marks[1] else time.monotonic() - t0
    peak = sampler.peak - base
    ctx.close()
    time.sleep(2.0)  # (what the tree still holds once the sender's session is gone)
    done = sorted(m for m in moves if m is not None)
    return {"answer": _plain(answer or f"no answer within {timeout:g} s")[:200], "seconds": round(seconds, 1),
            "tree_peak_mib": round(peak / MIB, 1), "kept_mib": round((tree_pss(sampler.pid) - base) / MIB, 1),
            "observer_moves": len(moves), "observer_lost": len(moves) - len(done),
            "observer_median_ms": round(1000 * done[len(done) // 2]) if done else None,
            "observer_max_ms": round(1000 * done[-1]) if done else None}


def through_cli(case: Case, work: Path, table_mb: float, table: Path) -> dict:
    """The same file read by the command line in a process of its own, its tree's Pss sampled."""
    path = work / f"cli-{case.cli_name}"
    path.write_bytes(case.cli_bytes)
    argv = [a.format(file=path, table=table, out=work / "cli-out") for a in case.cli]
    env = dict(os.environ, FAIRDASH_TABLE_MB=f"{table_mb:g}")
    t0 = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-m", "fairdash", *argv], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    sampler = PssPeak(proc.pid)
    sampler.start()
    out, err = proc.communicate(timeout=600)
    sampler.stop()
    path.unlink()
    lines = [line for line in err.splitlines() if line.strip()]
    return {"exit": proc.returncode, "error_lines": len(lines), "said": (lines[0] if lines else out[:120])[:200],
            "seconds": round(time.monotonic() - t0, 1), "tree_peak_mib": round(sampler.peak / MIB, 1)}


def _put(url: str, session: str, cookie: str, xsrf: str, size: int) -> dict:
    """One PUT of a multipart form holding ``size`` zero bytes, sent a megabyte at a time; the answer is read as soon
    as the server gives one (a refusal comes before the body is read): ``{status, sent_mb, seconds}``."""
    boundary = uuid.uuid4().hex
    head = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"x.csv\"\r\n"
            "Content-Type: text/csv\r\n\r\n").encode()
    tail = f"\r\n--{boundary}--\r\n".encode()
    host, port = url.removeprefix("http://").split(":")
    request = (f"PUT /_stcore/upload_file/{session}/{uuid.uuid4()} HTTP/1.1\r\nHost: {host}:{port}\r\n"
               f"Cookie: {cookie}\r\nX-Xsrftoken: {xsrf}\r\nContent-Type: multipart/form-data; boundary={boundary}"
               f"\r\nContent-Length: {len(head) + size + len(tail)}\r\nConnection: close\r\n\r\n").encode()
    t0, sent, answer = time.monotonic(), 0, b""
    with socket.create_connection((host, int(port)), timeout=300) as conn:
        try:
            conn.sendall(request + head)
            while sent < size and not select.select([conn], [], [], 0)[0]:
                piece = min(MIB, size - sent)
                conn.sendall(b"0" * piece)
                sent += piece
            if sent == size:
                conn.sendall(tail)
        except OSError:  # the server answered and closed while the body was on its way
            pass
        try:
            answer = conn.recv(200)
        except OSError:
            pass
    status = int(answer.split()[1]) if answer.startswith(b"HTTP/1.1 ") else -1
    return {"status": status, "sent_mb": round(sent / MIB), "seconds": round(time.monotonic() - t0, 1)}


def _page_session(browser, url: str) -> tuple[str, str, str]:
    """``(Streamlit session id, Cookie header, XSRF token)`` of a new browser session that uploaded a small table
    through the page (so the endpoint knows the session); its context stays open."""
    ctx, page = new_session(browser, url)
    seen = []
    page.on("request", lambda r: seen.append(r.url) if "/_stcore/upload_file/" in r.url and r.method == "PUT"
            else None)
    _give(page, "table", b"s,y,x\n" + b"".join(b"%d,%d,%d\n" % (i % 2, i % 3 == 0, i) for i in range(200)),
          "small.csv")
    end = time.monotonic() + 120
    while not seen and time.monotonic() < end:  # the page's own PUT names its session
        page.wait_for_timeout(100)
    jar = {c["name"]: c["value"] for c in ctx.cookies()}
    return seen[0].split("/_stcore/upload_file/")[1].split("/")[0], "; ".join(f"{k}={v}" for k, v in jar.items()), \
        jar.get("_streamlit_xsrf", "")


def _temporary_files(pid: int, folder: Path) -> int:
    """Files the server's process tree holds open under ``folder`` (an unnamed temporary file among them)."""
    found = 0
    for p in descendants(pid):
        try:
            for fd in os.listdir(f"/proc/{p}/fd"):
                target = os.readlink(f"/proc/{p}/fd/{fd}")
                found += target.startswith(str(folder)) and not target.endswith(".sock")
        except OSError:
            continue
    return found


def through_endpoint(url: str, pid: int, tmp: Path, who: tuple, puts: int, mb: float) -> dict:
    """``puts`` PUTs of ``mb`` MB straight to the endpoint as ``who`` = (session, cookie, xsrf): their answers, the
    server tree's peak Pss above its level before and after, the most files it held open under its temporary
    folder at any sample (every 50 ms), and the files left there."""
    held, halt = [0], threading.Event()

    def watch():
        while not halt.wait(0.05):
            held[0] = max(held[0], _temporary_files(pid, tmp))

    sampler, watcher = PssPeak(pid), threading.Thread(target=watch, daemon=True)
    base = sampler.reset()
    sampler.start()
    watcher.start()
    answers = [_put(url, *who, int(mb * MIB)) for _ in range(puts)]
    halt.set()
    watcher.join()
    sampler.stop()
    time.sleep(1.0)
    return {"answers": answers, "tree_before_mib": round(base / MIB),
            "tree_peak_mib": round((sampler.peak - base) / MIB), "tree_after_mib": round((tree_pss(pid) - base) / MIB),
            "temporary_files_open": held[0],
            "files_left": sum(1 for p in tmp.rglob("*") if p.is_file())}


def endpoint_servers(browser, work: Path, args) -> dict:
    """The endpoint from one session of a safe server, from a visitor who has not signed in where sign-in is on,
    and under an unsafe setting (an upload cap of 5,000 MB the team did not choose)."""
    secrets = work / "secrets.toml"
    secrets.write_text('[auth]\nredirect_uri = "http://127.0.0.1/oauth2callback"\ncookie_secret = "bench"\n'
                       'client_id = "bench"\nclient_secret = "bench"\n'
                       'server_metadata_url = "http://127.0.0.1:9/.well-known/openid-configuration"\n')
    out = {}
    for name, env in (("one session", {}), ("not signed in", {"STREAMLIT_SECRETS_FILES": str(secrets)}),
                      ("unsafe setting", {"STREAMLIT_SERVER_MAX_UPLOAD_SIZE": "5000"})):
        tmp = work / f"tmp-{len(out)}"
        tmp.mkdir()
        server = LiveServer(ROOT, work, {"TMPDIR": str(tmp), **env})
        try:
            server.wait()
            who = _page_session(browser, server.url) if not env else ("any-session", "", "")
            out[name] = through_endpoint(server.url, server.proc.pid, tmp, who, args.puts, args.put_mb)
        finally:
            server.stop()
        print(name, out[name], flush=True)
    return out


def _markdown(rec, args) -> str:
    rows = [f"Crafted files through the page and the command line, FAIRDASH_TABLE_MB={args.table_mb:g}. "
            f"{rec.machine_line()}", "",
            "| file | MB | page: answer | s | server tree peak MiB | kept MiB | other session: moves, median / max "
            "ms, lost | CLI: exit, lines, s, peak MiB |", "|---|---|---|---|---|---|---|---|"]
    for name, r in rec.results["cases"].items():
        p, c = r["page"], r.get("cli") or {}
        cli = f"{c['exit']}, {c['error_lines']}, {c['seconds']}, {c['tree_peak_mib']}" if c else "-"
        rows.append(f"| {name} | {r['mb']} | {p['answer'][:110].replace('|', '/')} | {p['seconds']} | "
                    f"{p['tree_peak_mib']} | {p['kept_mib']} | {p['observer_moves']}, {p['observer_median_ms']} / "
                    f"{p['observer_max_ms']}, {p['observer_lost']} | {cli} |")
    rows += ["", f"Streamlit's upload endpoint: {args.puts} PUTs of {args.put_mb:g} MB each", "",
             "| who | answers (status, MB sent before it) | tree before MiB | peak above MiB | after MiB | temporary "
             "files open (most) | files left |", "|---|---|---|---|---|---|---|"]
    for who, r in rec.results.get("endpoint", {}).items():
        answers = ", ".join(f"{a['status']} ({a['sent_mb']})" for a in r["answers"])
        rows.append(f"| {who} | {answers} | {r['tree_before_mib']} | {r['tree_peak_mib']} | {r['tree_after_mib']} | "
                    f"{r['temporary_files_open']} | {r['files_left']} |")
    return "\n".join(rows)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", nargs="*",
                        help="which files (default: all of bench_crafted_files.py's; none: the endpoint only)")
    parser.add_argument("--table-mb", type=float, default=256, help="FAIRDASH_TABLE_MB of the server and the CLI")
    parser.add_argument("--timeout", type=float, default=120, help="seconds to wait for the page's answer")
    parser.add_argument("--no-cli", action="store_true", help="the page only")
    parser.add_argument("--puts", type=int, default=8, help="PUTs straight to the upload endpoint (0: none)")
    parser.add_argument("--put-mb", type=float, default=190, help="MB in each PUT")
    args = parser.parse_args(argv)
    from playwright.sync_api import sync_playwright  # lazy: --help without a browser

    hf = _hostile()
    work = Path(tempfile.mkdtemp(prefix="fairdash-crafted-"))
    table = work / "compas.csv"
    import fairdash.data as data  # lazy: the files and the table are made here, after --help

    data.load_sample("compas").head(200).to_csv(table, index=False)
    found = browser_cases(hf)
    server = LiveServer(ROOT, work, {"FAIRDASH_TABLE_MB": f"{args.table_mb:g}"})
    with Recording("bench_crafted_browser", vars(args), browser=True) as rec, sync_playwright() as p:
        rec.results = {"cases": {}, "server_start_s": round(server.wait(), 1)}
        browser = launch(p)
        sampler = PssPeak(server.proc.pid)
        sampler.start()
        try:
            _obs_ctx, observer = open_slider(browser, server.url)
            for name in [] if args.cases == ["none"] else args.cases or list(found):
                case = found[name]
                row = {"mb": round(len(case.page_bytes) / MIB, 2),
                       "page": through_page(browser, server.url, observer, sampler, case, args.timeout)}
                if not args.no_cli:
                    row["cli"] = through_cli(case, work, args.table_mb, table)
                rec.results["cases"][name] = row
                print(name, row, flush=True)
            rec.results["server_alive"] = server.alive()
        finally:
            sampler.stop()
            server.stop()
        try:
            if args.puts:
                rec.results["endpoint"] = endpoint_servers(browser, work, args)
        finally:
            browser.close()
        rec.markdown = _markdown(rec, args)
        print(rec.markdown)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
